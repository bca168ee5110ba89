#include "testbed/link.h"

#include <gtest/gtest.h>

namespace uroce::testbed {
namespace {

TEST(LinkDir_Start, BackToBackFramesCarryTheFractionOfANanosecond) {
  LinkDir l(40'000'000'000ull, 1000, 0);
  // 1024 bytes at 40 Gb/s = 204.8 ns each: exact ends 204.8, 409.6, ...
  // rounded up, with no drift.
  TimeNs t = 0;
  const TimeNs expect[] = {205, 410, 615, 820, 1024};
  for (const TimeNs e : expect) {
    EXPECT_FALSE(l.busy(t));
    t = l.start(1024, false, t);
    EXPECT_EQ(t, e);
    EXPECT_TRUE(l.busy(t - 1));
  }
  EXPECT_EQ(l.counters().frames, 5u);
  EXPECT_EQ(l.counters().bytes, 5120u);
  EXPECT_EQ(l.counters().busy_ns, 1024u);
  EXPECT_EQ(l.delay(), 1000u);
}

TEST(LinkDir_Start, AnIdleGapDropsTheCarryAndOverheadCounts) {
  LinkDir l(10'000'000'000ull, 0, 20);
  // (101 + 20) bytes at 10 Gb/s = 96.8 ns, rounded up on its own.
  EXPECT_EQ(l.start(101, false, 0), 97u);
  EXPECT_EQ(l.start(101, true, 500), 597u);  // after a gap: nothing owed
  EXPECT_EQ(l.start(101, true, 597), 694u);  // exact 596.8 + 96.8 = 693.6
  EXPECT_EQ(l.counters().control_frames, 2u);
  EXPECT_EQ(l.counters().data_frames, 1u);
  EXPECT_EQ(l.counters().bytes, 303u);  // overhead is wire time only
}

// Without a loss rate nothing is lost and nothing is drawn; with one, the
// direction's own seeded stream decides, the same way for the same seed.
TEST(LinkDir_Lose, SeededRateLosesItsShareRepeatably) {
  LinkDir plain(10'000'000'000ull, 0, 0);
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(plain.lose());
  EXPECT_EQ(plain.counters().lost, 0u);
  EXPECT_EQ(plain.loss_rate(), 0.0);
  LinkDir a(10'000'000'000ull, 0, 0, 0.1, 7);
  LinkDir b(10'000'000'000ull, 0, 0, 0.1, 7);
  LinkDir c(10'000'000'000ull, 0, 0, 0.1, 8);
  std::uint64_t same = 0;
  for (int i = 0; i < 10'000; ++i) {
    const bool x = a.lose();
    EXPECT_EQ(x, b.lose());
    same += x == c.lose() ? 1 : 0;
  }
  // 10 % of 10,000: within 5 standard deviations (30).
  EXPECT_GT(a.counters().lost, 850u);
  EXPECT_LT(a.counters().lost, 1150u);
  EXPECT_EQ(a.counters().lost, b.counters().lost);
  EXPECT_LT(same, 10'000u);  // another seed, other draws
  LinkDir all(10'000'000'000ull, 0, 0, 1.0, 1);
  EXPECT_TRUE(all.lose());
  EXPECT_EQ(all.counters().lost, 1u);
}

// A link change: while down every arrival is lost and counted apart from
// random loss; back up, nothing is.
TEST(LinkDir_LoseDown, DownLosesEveryFrameUntilUp) {
  LinkDir d(10'000'000'000ull, 0, 0);
  EXPECT_FALSE(d.lose_down());
  d.set_down(true);
  EXPECT_TRUE(d.down());
  EXPECT_TRUE(d.lose_down());
  EXPECT_TRUE(d.lose_down());
  d.set_down(false);
  EXPECT_FALSE(d.lose_down());
  EXPECT_EQ(d.counters().lost_down, 2u);
  EXPECT_EQ(d.counters().lost, 0u);
}

}  // namespace
}  // namespace uroce::testbed
