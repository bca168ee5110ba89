#include "sched/dcqcn.h"

#include <gtest/gtest.h>

namespace uroce::sched {
namespace {

constexpr TimeNs kUs = 1000;

DcqcnConfig cfg40() {
  DcqcnConfig c;
  c.line_rate_bps = 40'000'000'000;
  return c;
}

TEST(DcqcnRp_Cnp, FirstCnpAtAlphaOneHalvesTheRate) {
  DcqcnRp rp(cfg40());
  EXPECT_EQ(rp.rate_bps(), 40'000'000'000u);
  EXPECT_FALSE(rp.limited());
  EXPECT_EQ(rp.next_deadline(), 0);
  rp.on_cnp(100 * kUs);
  EXPECT_EQ(rp.rate_bps(), 20'000'000'000u);    // Rc * (1 - 1/2)
  EXPECT_EQ(rp.target_bps(), 40'000'000'000u);  // Rt = the rate before
  EXPECT_EQ(rp.alpha(), 1024u);                 // 1024 - 1024/256 + 1024/256
  EXPECT_TRUE(rp.limited());
  EXPECT_EQ(rp.next_deadline(), 155 * kUs);  // alpha and increase timers, 55 us
}

TEST(DcqcnRp_Cnp, OneDecreasePerReducePeriod) {
  DcqcnRp rp(cfg40());
  rp.on_cnp(0);
  rp.on_cnp(2 * kUs);  // within 4 us of the decrease: ignored
  EXPECT_EQ(rp.rate_bps(), 20'000'000'000u);
  EXPECT_EQ(rp.counters().cnps_ignored, 1u);
  rp.on_cnp(4 * kUs);
  EXPECT_EQ(rp.target_bps(), 20'000'000'000u);
  EXPECT_EQ(rp.rate_bps(), 10'000'000'000u);
  EXPECT_EQ(rp.counters().cnps, 3u);
  EXPECT_EQ(rp.counters().decreases, 2u);
}

TEST(DcqcnRp_Alpha, DecaysEachPeriodWithoutCnp) {
  DcqcnRp rp(cfg40());
  rp.on_cnp(0);
  rp.advance(55 * kUs);
  EXPECT_EQ(rp.alpha(), 1020u);  // 1024 - 1024/256
  rp.advance(110 * kUs);
  EXPECT_EQ(rp.alpha(), 1017u);  // 1020 - 1020/256 (3)
  // A CNP now: Rc * (1 - 1017/2048), alpha back up by g.
  const std::uint64_t rc = rp.rate_bps();
  rp.on_cnp(111 * kUs);
  EXPECT_EQ(rp.rate_bps(), rc - rc * 1017 / 2048);
  EXPECT_EQ(rp.alpha(), 1017u - 3 + 4);
}

TEST(DcqcnRp_Increase, FastRecoveryThenAdditiveAfterFStages) {
  DcqcnRp rp(cfg40());
  rp.on_cnp(0);
  rp.on_cnp(4 * kUs);  // Rt 20 G, Rc 10 G; timers from 4 us
  const TimeNs t0 = 4 * kUs;
  const std::uint64_t want[] = {15'000'000'000, 17'500'000'000, 18'750'000'000, 19'375'000'000};
  for (int i = 0; i < 4; ++i) {
    rp.advance(t0 + (i + 1) * 55 * kUs);
    EXPECT_EQ(rp.rate_bps(), want[i]) << "timer stage " << i + 1;
    EXPECT_EQ(rp.target_bps(), 20'000'000'000u);
  }
  rp.advance(t0 + 5 * 55 * kUs);  // stage 5 = F: additive
  EXPECT_EQ(rp.target_bps(), 20'005'000'000u);
  EXPECT_EQ(rp.rate_bps(), 19'690'000'000u);  // (20.005 G + 19.375 G) / 2
  EXPECT_EQ(rp.counters().fast_recovery, 4u);
  EXPECT_EQ(rp.counters().additive, 1u);
}

TEST(DcqcnRp_Increase, HyperOnceBothStagesPassF) {
  DcqcnConfig c;
  c.line_rate_bps = 100'000'000'000;
  c.increase_period_ns = 10 * kUs;
  c.alpha_period_ns = 1'000'000 * kUs;  // out of the way
  c.byte_stage = 1'000'000;
  DcqcnRp rp(c);
  rp.on_cnp(0);
  rp.on_cnp(4 * kUs);              // Rt 50 G, Rc 25 G
  rp.advance(4 * kUs + 60 * kUs);  // timer stages 1..6: 4 fast recovery, 2 additive
  EXPECT_EQ(rp.counters().fast_recovery, 4u);
  EXPECT_EQ(rp.counters().additive, 2u);
  for (int b = 1; b <= 5; ++b) rp.on_sent(1'000'000, 64 * kUs);  // byte stages 1..5: additive
  EXPECT_EQ(rp.counters().additive, 7u);
  EXPECT_EQ(rp.counters().hyper, 0u);
  const std::uint64_t rt = rp.target_bps(), rc = rp.rate_bps();
  rp.on_sent(1'000'000, 64 * kUs);  // byte stage 6: min(6, 6) > 5
  EXPECT_EQ(rp.counters().hyper, 1u);
  EXPECT_EQ(rp.target_bps(), rt + 50'000'000);  // (6 - 5) * HAI
  EXPECT_EQ(rp.rate_bps(), (rt + 50'000'000 + rc + 1) / 2);
}

TEST(DcqcnRp_Increase, RecoveryToLineRateStopsTheTimers) {
  DcqcnRp rp(cfg40());
  rp.on_cnp(0);
  TimeNs t = 0;
  while (rp.limited() && t < 1'000'000 * kUs) {
    t += 55 * kUs;
    rp.advance(t);
  }
  EXPECT_FALSE(rp.limited());
  EXPECT_EQ(rp.rate_bps(), 40'000'000'000u);
  EXPECT_EQ(rp.next_deadline(), 0);
  const std::uint64_t events = rp.counters().fast_recovery + rp.counters().additive;
  rp.advance(t + 1'000 * kUs);  // nothing runs any more
  EXPECT_EQ(rp.counters().fast_recovery + rp.counters().additive, events);
}

TEST(DcqcnRp_Bounds, RateNeverBelowTheMinimum) {
  DcqcnConfig c = cfg40();
  c.min_rate_bps = 1'000'000'000;
  DcqcnRp rp(c);
  for (int i = 0; i < 20; ++i) rp.on_cnp(i * 4 * kUs);
  EXPECT_EQ(rp.rate_bps(), 1'000'000'000u);
}

TEST(CnpLimiter_OnCe, AtMostOneCnpPerInterval) {
  CnpLimiter np(4 * kUs);
  EXPECT_TRUE(np.on_ce(10 * kUs));
  EXPECT_FALSE(np.on_ce(12 * kUs));
  EXPECT_FALSE(np.on_ce(13 * kUs));
  EXPECT_TRUE(np.on_ce(14 * kUs));
  EXPECT_EQ(np.ce_packets(), 4u);
  EXPECT_EQ(np.cnps(), 2u);
  EXPECT_EQ(np.suppressed(), 2u);
}

}  // namespace
}  // namespace uroce::sched
