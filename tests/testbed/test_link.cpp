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

}  // namespace
}  // namespace uroce::testbed
