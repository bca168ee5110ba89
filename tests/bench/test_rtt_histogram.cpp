#include "bench/rtt_histogram.h"

#include <gtest/gtest.h>

namespace uroce::bench {
namespace {

TEST(RttHistogram_Quantile, EmptyGivesZero) {
  const RttHistogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.quantile_ns(0.5), 0.0);
}

TEST(RttHistogram_Quantile, MedianAndP99OfUniformSamples) {
  RttHistogram h;
  for (std::uint64_t ns = 1000; ns < 2000; ++ns) h.record(ns);  // 1000 samples
  EXPECT_EQ(h.count(), 1000u);
  EXPECT_NEAR(h.quantile_ns(0.5), 1500.0, RttHistogram::kBucketNs);
  EXPECT_NEAR(h.quantile_ns(0.99), 1990.0, RttHistogram::kBucketNs);
  EXPECT_EQ(h.min_ns(), 1000u);
  EXPECT_EQ(h.max_ns(), 1999u);
  EXPECT_DOUBLE_EQ(h.mean_ns(), 1499.5);
}

TEST(RttHistogram_Quantile, OverflowSamplesReportMax) {
  RttHistogram h;
  h.record(100);
  h.record(5 * RttHistogram::kMaxTrackedNs);
  EXPECT_EQ(h.quantile_ns(1.0), 5.0 * RttHistogram::kMaxTrackedNs);
  EXPECT_NEAR(h.quantile_ns(0.5), 100.0, RttHistogram::kBucketNs);
}

TEST(RttHistogram_Clear, ForgetsEverything) {
  RttHistogram h;
  h.record(500);
  h.clear();
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.max_ns(), 0u);
  EXPECT_EQ(h.quantile_ns(0.5), 0.0);
}

}  // namespace
}  // namespace uroce::bench
