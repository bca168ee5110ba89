#include "datapath/transport/work_queue.h"

#include <gtest/gtest.h>

namespace uroce::transport {
namespace {

TEST(WorkQueue_Push, FailsWhenFull) {
  WorkQueue<int> q(3);
  EXPECT_TRUE(q.push(1));
  EXPECT_TRUE(q.push(2));
  EXPECT_TRUE(q.push(3));
  EXPECT_TRUE(q.full());
  EXPECT_FALSE(q.push(4));
  EXPECT_EQ(q.size(), 3u);
}

TEST(WorkQueue_Pop, FifoOrderAcrossWrap) {
  WorkQueue<int> q(2);
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(q.push(i));
    EXPECT_EQ(q.front(), i);
    q.pop();
  }
  EXPECT_TRUE(q.empty());
  q.pop();  // popping an empty queue is a no-op
  EXPECT_TRUE(q.empty());
}

TEST(WorkQueue_At, CursorsStayValidWhileHeadAdvances) {
  WorkQueue<int> q(4);
  for (int i = 0; i < 4; ++i) q.push(i * 10);
  const std::uint32_t cursor = q.head() + 2;
  q.pop();
  q.pop();
  q.push(40);
  EXPECT_TRUE(q.contains(cursor));
  EXPECT_EQ(q.at(cursor), 20);
  EXPECT_FALSE(q.contains(q.tail()));
  EXPECT_FALSE(q.contains(q.head() - 1));
}

TEST(WorkQueue_Clear, EmptiesAndKeepsCapacity) {
  WorkQueue<int> q(2);
  q.push(1);
  q.push(2);
  q.clear();
  EXPECT_TRUE(q.empty());
  EXPECT_TRUE(q.push(3));
  EXPECT_EQ(q.front(), 3);
}

TEST(WorkQueue_Push, NonPowerOfTwoCapacityCrossesIndexWrap) {
  // Indices run from 2^32 - 4 across the wrap: with slot = index % 3 the
  // entries at 2^32 - 1 and 0 would share a slot.
  WorkQueue<int> q(3, 0xFFFFFFFCu);
  int next_out = 0;
  for (int i = 0; i < 12; ++i) {
    ASSERT_TRUE(q.push(i));
    if (q.full()) {
      EXPECT_EQ(q.front(), next_out++);
      q.pop();
    }
  }
  const std::uint32_t first = q.head();
  for (std::uint32_t k = 0; k < q.size(); ++k)
    EXPECT_EQ(q.at(first + k), next_out + static_cast<int>(k));
  EXPECT_EQ(q.capacity(), 3u);
  EXPECT_FALSE(q.push(99) && q.push(100) && q.push(101));
}

TEST(WorkQueue_PushSlot, AppendsInPlaceAndFailsWhenFull) {
  WorkQueue<int> q(2);
  int* a = q.push_slot();
  ASSERT_NE(a, nullptr);
  *a = 7;
  int* b = q.push_slot();
  ASSERT_NE(b, nullptr);
  *b = 8;
  EXPECT_EQ(q.push_slot(), nullptr);
  EXPECT_EQ(q.size(), 2u);
  EXPECT_EQ(q.front(), 7);
  q.pop();
  EXPECT_EQ(q.front(), 8);
  // The freed slot comes back with what it held.
  int* c = q.push_slot();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(*c, 7);
}

}  // namespace
}  // namespace uroce::transport
