#include "datapath/transport/responder_resources.h"

#include <gtest/gtest.h>

namespace uroce::transport {
namespace {

RdAtomicRes* add(ResponderResources& r, std::uint32_t first, std::uint32_t last) {
  RdAtomicRes* x = r.alloc();
  if (x != nullptr) {
    x->first_psn = Psn(first);
    x->last_psn = Psn(last);
  }
  return x;
}

TEST(ResponderResources_Alloc, LimitZeroGivesNone) {
  ResponderResources r(4);
  r.set_limit(0);
  EXPECT_EQ(r.alloc(), nullptr);
}

TEST(ResponderResources_Alloc, EvictsOldestOnlyWhenAnswered) {
  ResponderResources r(2);
  RdAtomicRes* a = add(r, 10, 12);
  RdAtomicRes* b = add(r, 13, 13);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(r.alloc(), nullptr);  // both still pending
  a->pending = false;
  RdAtomicRes* c = add(r, 14, 20);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(r.find(Psn(11)), nullptr);  // evicted
  EXPECT_EQ(r.find(Psn(13)), b);
  EXPECT_EQ(r.find(Psn(20)), c);
  EXPECT_EQ(r.size(), 2u);
}

TEST(ResponderResources_Find, HandlesPsnWrap) {
  ResponderResources r(4);
  RdAtomicRes* a = add(r, 0xFFFFFE, 1);
  EXPECT_EQ(r.find(Psn(0xFFFFFF)), a);
  EXPECT_EQ(r.find(Psn(1)), a);
  EXPECT_EQ(r.find(Psn(2)), nullptr);
  EXPECT_EQ(r.find(Psn(0xFFFFFD)), nullptr);
}

TEST(ResponderResources_NextPending, OldestFirst) {
  ResponderResources r(4);
  RdAtomicRes* a = add(r, 1, 1);
  RdAtomicRes* b = add(r, 2, 2);
  EXPECT_EQ(r.next_pending(), a);
  a->pending = false;
  EXPECT_EQ(r.next_pending(), b);
  b->pending = false;
  EXPECT_EQ(r.next_pending(), nullptr);
}

// A selective-repeat re-request of an older READ's responses is served
// after the streams already waiting, and cancels none of them.
TEST(ResponderResources_Requeue, ServedAfterWaitingStreams) {
  ResponderResources r(4);
  RdAtomicRes* a = add(r, 10, 12);
  RdAtomicRes* b = add(r, 13, 15);
  RdAtomicRes* c = add(r, 16, 18);
  a->pending = false;
  r.requeue(a);
  EXPECT_EQ(r.next_pending(), b);
  b->pending = false;
  EXPECT_EQ(r.next_pending(), c);
  c->pending = false;
  EXPECT_EQ(r.next_pending(), a);
}

TEST(ResponderResources_CancelAfter, StopsNewerStreams) {
  ResponderResources r(4);
  RdAtomicRes* a = add(r, 1, 1);
  RdAtomicRes* b = add(r, 2, 2);
  RdAtomicRes* c = add(r, 3, 3);
  r.cancel_after(a);
  EXPECT_TRUE(a->pending);
  EXPECT_FALSE(b->pending);
  EXPECT_FALSE(c->pending);
}

TEST(ResponderResources_SetLimit, ShrinkDropsOldest) {
  ResponderResources r(4);
  add(r, 1, 1);
  RdAtomicRes* b = add(r, 2, 2);
  r.set_limit(1);
  EXPECT_EQ(r.size(), 1u);
  EXPECT_EQ(r.find(Psn(1)), nullptr);
  EXPECT_EQ(r.find(Psn(2)), b);
  r.set_limit(9);
  EXPECT_EQ(r.limit(), 4u);
}

TEST(ResponderResources_Reserve, GrowsKeepingEntriesInOrder) {
  ResponderResources r(0);
  EXPECT_EQ(r.capacity(), 0u);
  EXPECT_EQ(r.alloc(), nullptr);  // limit 0
  r.reserve(2);
  r.set_limit(2);
  add(r, 1, 1)->pending = false;
  add(r, 2, 2);
  add(r, 3, 3);  // evicts PSN 1: the ring wrapped once
  r.reserve(4);
  r.set_limit(4);
  EXPECT_EQ(r.capacity(), 4u);
  EXPECT_EQ(r.size(), 2u);
  EXPECT_EQ(r.find(Psn(1)), nullptr);
  ASSERT_NE(r.find(Psn(2)), nullptr);
  EXPECT_EQ(r.next_pending(), r.find(Psn(2)));  // oldest first after the move
  ASSERT_NE(add(r, 4, 4), nullptr);
  EXPECT_EQ(r.size(), 3u);
  r.reserve(3);  // never shrinks
  EXPECT_EQ(r.capacity(), 4u);
}

}  // namespace
}  // namespace uroce::transport
