#include "bench/cpu_gaps.h"

#include <gtest/gtest.h>

namespace uroce::bench {
namespace {

TEST(LostUnion, MergesOverlappingGapsOfSeveralCpus) {
  const std::vector<std::vector<Gap>> cpus{{{1'000, 2'000}, {10'000, 1'000}},
                                           {{2'500, 1'000}, {20'000, 1'000}}};
  const auto u = lost_union(cpus);
  ASSERT_EQ(u.size(), 3u);
  EXPECT_EQ(u[0], (std::pair<std::int64_t, std::int64_t>{1'000, 3'500}));
  EXPECT_EQ(u[1], (std::pair<std::int64_t, std::int64_t>{10'000, 11'000}));
  EXPECT_EQ(u[2], (std::pair<std::int64_t, std::int64_t>{20'000, 21'000}));
}

TEST(IterationShare, CountsAnIterationOnceAndTakesTheGapsOutOfTheTime) {
  // 100 us of run time, 10 us of it in two gaps: 90 us of 1 us iterations.
  // The gap at 50 us starts in iteration 45 (5 us lost before it), and
  // the other CPU's gap 200 ns later falls into the same iteration.
  const std::vector<std::vector<Gap>> cpus{{{0, 5'000}, {50'000, 5'000}}, {{50'200, 1'000}}};
  const auto lost = lost_union(cpus);
  // Gaps of 5 us or more: the one at 0 (iteration 0) and the one at 50 us.
  EXPECT_DOUBLE_EQ(iteration_share(cpus, lost, 1'000, 5'000, 100'000), 2.0 / 90.0);
  // Every gap: the one at 50.2 us starts inside the union's second
  // interval, so it shares iteration 45 with the gap at 50 us.
  EXPECT_DOUBLE_EQ(iteration_share(cpus, lost, 1'000, 1'000, 100'000), 2.0 / 90.0);
  // Nothing as long as 6 us.
  EXPECT_DOUBLE_EQ(iteration_share(cpus, lost, 1'000, 6'000, 100'000), 0.0);
}

TEST(IterationShare, LongerIterationsAreHitMoreOften) {
  std::vector<Gap> gaps;
  for (std::int64_t t = 0; t < 1'000'000; t += 10'000) gaps.push_back({t + 5'000, 2'000});
  const std::vector<std::vector<Gap>> cpus{gaps};
  const auto lost = lost_union(cpus);
  // 100 gaps in 800 us of time left: iterations of 2 us are hit 100 of
  // 400 times, of 8 us 100 of 100.
  EXPECT_DOUBLE_EQ(iteration_share(cpus, lost, 2'000, 2'000, 1'000'000), 100.0 / 400.0);
  EXPECT_DOUBLE_EQ(iteration_share(cpus, lost, 8'000, 2'000, 1'000'000), 1.0);
}

}  // namespace
}  // namespace uroce::bench
