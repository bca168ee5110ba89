#include "pfc/pause_assertion.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "tests/pfc/fake_sinks.h"

namespace uroce::pfc {
namespace {

using testing::FakeTx;

struct Counts {
  std::uint64_t xoff_sent = 0;
  std::uint64_t refresh_sent = 0;
  std::uint64_t xon_sent = 0;
  std::uint64_t refresh_late = 0;
};

constexpr TimeNs kPause = 1000;
constexpr TimeNs kRefresh = 500;
const wire::MacAddr kSrc{{2, 0, 0, 0, 0, 1}};

// Priorities 3 and 5 lossless; `over` and `under` say which are over XOFF
// and down to XON.
struct Rig {
  PauseAssertion pa{0x28, 0xffff, kPause, kRefresh};
  FakeTx tx;
  std::array<Counts, kNumPriorities> c{};
  std::uint8_t over = 0;
  std::uint8_t under = 0;

  // One evaluation at `now`: the plan's mask (0: no frame).
  std::uint8_t eval(TimeNs now) {
    PausePlan p;
    const bool any = pa.plan(
        now, [&](std::uint8_t prio) { return ((over >> prio) & 1) != 0; },
        [&](std::uint8_t prio) { return ((under >> prio) & 1) != 0; }, p);
    if (!any) return 0;
    EXPECT_TRUE(pa.send(p, kSrc, now, tx, [&](std::uint8_t prio) -> Counts& { return c[prio]; }));
    return p.mask;
  }
};

TEST(PauseAssertion_Plan, XoffOnlyForEnabledPrioritiesOverThreshold) {
  Rig r;
  r.over = 0xff;  // every priority over; only 3 and 5 are enabled
  EXPECT_EQ(r.eval(0), 0x28);
  ASSERT_EQ(r.tx.frames.size(), 1u);
  const wire::PfcFrame f = r.tx.decoded(0);
  EXPECT_EQ(f.pfc.class_enable(), 0x28);
  EXPECT_EQ(f.pfc.pause_time(3), 0xffff);
  EXPECT_EQ(f.pfc.pause_time(5), 0xffff);
  EXPECT_EQ(f.pfc.pause_time(0), 0);
  EXPECT_TRUE(r.pa.asserted(3));
  EXPECT_TRUE(r.pa.asserted(5));
  EXPECT_FALSE(r.pa.asserted(0));
  EXPECT_EQ(r.c[3].xoff_sent, 1u);
  EXPECT_EQ(r.c[0].xoff_sent, 0u);
}

TEST(PauseAssertion_Plan, NothingChangesNoFrame) {
  Rig r;
  EXPECT_EQ(r.eval(0), 0);
  EXPECT_TRUE(r.tx.frames.empty());
  EXPECT_EQ(r.pa.next_refresh(), kNoDeadline);
}

TEST(PauseAssertion_Refresh, DueAfterRefreshInterval) {
  Rig r;
  r.over = 0x08;
  ASSERT_EQ(r.eval(100), 0x08);
  EXPECT_EQ(r.pa.next_refresh(), 100 + kRefresh);
  EXPECT_EQ(r.eval(100 + kRefresh - 1), 0);  // not yet due
  EXPECT_EQ(r.eval(100 + kRefresh), 0x08);
  EXPECT_EQ(r.c[3].refresh_sent, 1u);
  EXPECT_EQ(r.c[3].refresh_late, 0u);
  EXPECT_EQ(r.tx.decoded(1).pfc.pause_time(3), 0xffff);
  EXPECT_EQ(r.pa.next_refresh(), 100 + 2 * kRefresh);
}

TEST(PauseAssertion_Refresh, LateWhenThePauseHadLapsed) {
  Rig r;
  r.over = 0x08;
  ASSERT_EQ(r.eval(0), 0x08);
  ASSERT_EQ(r.eval(kPause + 1), 0x08);
  EXPECT_EQ(r.c[3].refresh_late, 1u);
}

TEST(PauseAssertion_Xon, ZeroQuantaAndAssertedTime) {
  Rig r;
  r.over = 0x08;
  ASSERT_EQ(r.eval(100), 0x08);
  r.under = 0x08;
  EXPECT_EQ(r.pa.asserted_ns(3, 300), 200u);
  ASSERT_EQ(r.eval(400), 0x08);
  EXPECT_EQ(r.tx.decoded(1).pfc.pause_time(3), 0);
  EXPECT_FALSE(r.pa.asserted(3));
  EXPECT_EQ(r.c[3].xon_sent, 1u);
  EXPECT_EQ(r.pa.asserted_ns(3, 1000), 300u);
  EXPECT_EQ(r.pa.next_refresh(), kNoDeadline);
}

TEST(PauseAssertion_Send, NoBufferChangesNothing) {
  Rig r;
  r.over = 0x08;
  r.tx.full = true;
  PausePlan p;
  ASSERT_TRUE(r.pa.plan(
      0, [&](std::uint8_t prio) { return ((r.over >> prio) & 1) != 0; },
      [](std::uint8_t) { return false; }, p));
  EXPECT_FALSE(
      r.pa.send(p, kSrc, 0, r.tx, [&](std::uint8_t prio) -> Counts& { return r.c[prio]; }));
  EXPECT_FALSE(r.pa.asserted(3));
  EXPECT_EQ(r.c[3].xoff_sent, 0u);
}

TEST(PauseAssertion_Rules, ThresholdAndChecks) {
  EXPECT_EQ(dynamic_threshold(1000, 200, 1, 2), 400u);
  EXPECT_EQ(dynamic_threshold(1000, 1200, 1, 1), 0u);
  EXPECT_EQ(refresh_interval(0xffff, 100'000'000'000ull, 50),
            wire::pfc_quanta_to_ns(0xffff, 100'000'000'000ull) / 2);
  EXPECT_FALSE(refresh_percent_ok(0));
  EXPECT_FALSE(refresh_percent_ok(100));
  EXPECT_TRUE(refresh_percent_ok(99));
  EXPECT_FALSE(buffer_size_ok(0));
  EXPECT_FALSE(buffer_size_ok(kMaxBufferBytes + 1));
  EXPECT_TRUE(buffer_size_ok(kMaxBufferBytes));
  EXPECT_FALSE(alpha_ok(0, 1));
  EXPECT_FALSE(alpha_ok(1, kMaxAlphaTerm + 1));
  EXPECT_TRUE(alpha_ok(kMaxAlphaTerm, kMaxAlphaTerm));
}

}  // namespace
}  // namespace uroce::pfc
