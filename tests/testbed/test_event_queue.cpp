#include "testbed/event_queue.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "datapath/base/rng.h"

namespace uroce::testbed {
namespace {

TEST(EventQueue_Order, TimeThenSchedulingOrder) {
  EventQueue q;
  q.push(30, EventKind::kSample, 1);
  q.push(10, EventKind::kArrival, 2);
  q.push(30, EventKind::kTxDone, 3);
  q.push(10, EventKind::kWake, 4);
  q.push(20, EventKind::kSourceTick, 5);
  EXPECT_EQ(q.size(), 5u);
  EXPECT_EQ(q.top().a, 2u);
  std::vector<std::uint32_t> order;
  while (!q.empty()) order.push_back(q.pop().a);
  EXPECT_EQ(order, (std::vector<std::uint32_t>{2, 4, 5, 1, 3}));
  EXPECT_EQ(q.pushed(), 5u);
}

TEST(EventQueue_Order, MatchesAStableSortOfRandomTimes) {
  SeededRng rng(42);
  EventQueue q;
  std::vector<Event> ref;
  for (std::uint32_t i = 0; i < 5000; ++i) {
    const TimeNs t = rng.below(300);  // many equal times
    q.push(t, EventKind::kArrival, i, i * 2);
    ref.push_back(Event{t, i, EventKind::kArrival, i, i * 2});
    // Interleave pops so the heap is exercised half full.
    if (i % 3 == 2) {
      const auto it = std::min_element(ref.begin(), ref.end(), [](const Event& a, const Event& b) {
        return a.at != b.at ? a.at < b.at : a.seq < b.seq;
      });
      const Event e = q.pop();
      EXPECT_EQ(e.seq, it->seq);
      EXPECT_EQ(e.at, it->at);
      ref.erase(it);
    }
  }
  std::stable_sort(ref.begin(), ref.end(),
                   [](const Event& a, const Event& b) { return a.at < b.at; });
  for (const Event& r : ref) {
    const Event e = q.pop();
    ASSERT_EQ(e.seq, r.seq);
    EXPECT_EQ(e.b, r.b);
  }
  EXPECT_TRUE(q.empty());
}

}  // namespace
}  // namespace uroce::testbed
