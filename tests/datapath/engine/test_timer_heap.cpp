#include "datapath/engine/timer_heap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace uroce::engine {
namespace {

TEST(TimerHeap_Set, EarliestFirstAndMovesEitherWay) {
  TimerHeap h(8);
  EXPECT_EQ(h.earliest(), TimerHeap::kNever);
  h.set(3, 300);
  h.set(1, 100);
  h.set(5, 500);
  EXPECT_EQ(h.earliest(), 100);
  EXPECT_EQ(h.at(5), 500);
  EXPECT_EQ(h.at(4), 0);  // not armed
  h.set(5, 50);           // earlier
  EXPECT_EQ(h.earliest(), 50);
  h.set(5, 900);  // later
  EXPECT_EQ(h.earliest(), 100);
  EXPECT_EQ(h.size(), 3u);
  EXPECT_EQ(h.pop(), 1u);
  EXPECT_EQ(h.pop(), 3u);
  EXPECT_EQ(h.pop(), 5u);
  EXPECT_EQ(h.earliest(), TimerHeap::kNever);
}

TEST(TimerHeap_Cancel, RemovesOnlyThatIdAndIgnoresUnarmed) {
  TimerHeap h(4);
  h.set(0, 10);
  h.set(1, 20);
  h.set(2, 30);
  h.cancel(3);  // not armed
  h.cancel(0);
  EXPECT_FALSE(h.armed(0));
  EXPECT_TRUE(h.armed(1));
  EXPECT_EQ(h.earliest(), 20);
  h.cancel(2);
  EXPECT_EQ(h.pop(), 1u);
  EXPECT_EQ(h.size(), 0u);
}

// Against a plain model: random sets, moves, cancels and pops give the same
// order (ties broken by any id, so compare deadlines).
TEST(TimerHeap_Pop, MatchesAModelUnderRandomOperations) {
  constexpr std::uint32_t kIds = 200;
  TimerHeap h(kIds);
  std::vector<TimeNs> model(kIds, 0);  // 0: not armed
  std::mt19937 rng(7);
  for (int step = 0; step < 20000; ++step) {
    const std::uint32_t id = rng() % kIds;
    switch (rng() % 4) {
      case 0:
      case 1: {
        const TimeNs at = 1 + rng() % 1000;
        h.set(id, at);
        model[id] = at;
        break;
      }
      case 2:
        h.cancel(id);
        model[id] = 0;
        break;
      default: {
        if (h.size() == 0) break;
        TimeNs best = TimerHeap::kNever;
        for (const TimeNs t : model) {
          if (t != 0) best = std::min(best, t);
        }
        ASSERT_EQ(h.earliest(), best);
        const std::uint32_t got = h.pop();
        ASSERT_EQ(model[got], best);
        model[got] = 0;
        break;
      }
    }
    ASSERT_EQ(h.size(), static_cast<std::uint32_t>(std::count_if(model.begin(), model.end(),
                                                                 [](TimeNs t) { return t != 0; })));
  }
}

}  // namespace
}  // namespace uroce::engine
