#include "testbed/sweep.h"

#include <gtest/gtest.h>

#include "tests/testbed/test_support.h"

namespace uroce::testbed {
namespace {

TEST(Sweep_TimeToDeadlock, GridInOrderAndIndependentOfThreads) {
  TtdSpec s;
  s.base = testing::small_loop(0, 10 * kNsPerMs);
  s.base.stop_on_deadlock = true;
  s.rates_gbps = {4, 10, 20};
  s.alphas = {{1, 16}, {1, 1}};
  s.ttls = {16};
  s.threads = 1;
  const auto one = sweep_time_to_deadlock(s);
  s.threads = 2;
  const auto two = sweep_time_to_deadlock(s);
  ASSERT_EQ(one.size(), 6u);
  EXPECT_EQ(ttd_csv(one), ttd_csv(two));
  EXPECT_EQ(one[0].rate_gbps, 4);
  EXPECT_EQ(one[3].alpha_den, 1u);
  // Below the 5 Gb/s bound: none; above it: faster at higher rate and
  // with the smaller alpha.
  EXPECT_FALSE(one[0].deadlocked);
  ASSERT_TRUE(one[1].deadlocked && one[2].deadlocked && one[4].deadlocked);
  EXPECT_LT(one[2].ttd_ms, one[1].ttd_ms);
  EXPECT_LT(one[1].ttd_ms, one[4].ttd_ms);
  const std::string md = ttd_markdown(one, s);
  EXPECT_NE(md.find("| 4 | none | none |"), std::string::npos) << md;
}

TEST(Sweep_TimeToDeadlock, OneAlphaManyTtlsTabulatesTtlsAsColumns) {
  TtdSpec s;
  s.rates_gbps = {2, 10};
  s.alphas = {{1, 16}};
  s.ttls = {16, 64};
  std::vector<TtdRow> rows;
  for (const unsigned t : s.ttls) {
    for (const double r : s.rates_gbps) {
      TtdRow row;
      row.rate_gbps = r;
      row.alpha_den = 16;
      row.ttl = t;
      row.deadlocked = r > 5;
      row.ttd_ms = 1.5;
      rows.push_back(row);
    }
  }
  const std::string md = ttd_markdown(rows, s);
  EXPECT_NE(md.find("| rate (Gb/s) | TTL 16 (5) | TTL 64 (1.25) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 2 | none | none |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 10 | 1.500 | 1.500 |"), std::string::npos) << md;
}

TEST(Sweep_MinRate, BisectsJustAboveTheBound) {
  MinRateSpec s;
  s.base = testing::small_loop(0, 20 * kNsPerMs);
  s.base.stop_on_deadlock = true;
  s.loops = {2};
  s.ttls = {16};
  s.tolerance = 0.02;
  const auto rows = sweep_min_rate(s);
  ASSERT_EQ(rows.size(), 1u);
  const MinRateRow& r = rows[0];
  ASSERT_TRUE(r.bracketed);
  EXPECT_DOUBLE_EQ(r.bound_gbps, 5.0);
  // With TTL 16 a packet crosses s1 -> s2 eight times: no deadlock at or
  // below 40 / 8 = 5 Gb/s, and the bisection closes in above it.
  EXPECT_GE(r.max_clean_gbps, 5.0);
  EXPECT_GT(r.min_rate_gbps, 5.0);
  EXPECT_LE(r.min_rate_gbps - r.max_clean_gbps, 0.02 * 5.0 + 1e-9);
  EXPECT_LT(r.ratio, 1.2);
  EXPECT_DOUBLE_EQ(r.exact_bound_gbps, 5.0);
  EXPECT_NE(min_rate_csv(rows).find("2,16,5.000000,5.000000,"), std::string::npos);
}

}  // namespace
}  // namespace uroce::testbed
