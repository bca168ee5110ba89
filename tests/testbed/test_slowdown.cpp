#include "testbed/slowdown.h"

#include <gtest/gtest.h>

#include <limits>

namespace uroce::testbed {
namespace {

std::vector<SlowdownSample> ramp(std::uint64_t n) {
  // Lengths n..1 (reversed, so sorting matters), slowdown = length.
  std::vector<SlowdownSample> v;
  for (std::uint64_t i = n; i >= 1; --i) v.push_back({i, static_cast<double>(i), true});
  return v;
}

TEST(PercentileOfSorted, IsNearestRank) {
  const std::vector<double> v{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(percentile_of_sorted(v, 50), 5.0);
  EXPECT_EQ(percentile_of_sorted(v, 99), 10.0);
  EXPECT_EQ(percentile_of_sorted(v, 10), 1.0);
  EXPECT_EQ(percentile_of_sorted({}, 50), std::nullopt);
}

TEST(PercentileOfSorted, LandingOnAnIncompleteMessageIsNotReached) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> v(99, 1.0);
  v.push_back(inf);
  EXPECT_EQ(percentile_of_sorted(v, 99), 1.0);
  EXPECT_EQ(percentile_of_sorted(v, 100), std::nullopt);
  v.push_back(inf);  // 2 of 101: the 99th percentile is rank 100
  EXPECT_EQ(percentile_of_sorted(v, 99), std::nullopt);
}

TEST(SummarizeSlowdown, BucketsHaveEqualCountsInLengthOrder) {
  const SlowdownSummary s = summarize_slowdown(ramp(1000), 10);
  ASSERT_EQ(s.buckets.size(), 10u);
  for (std::size_t k = 0; k < 10; ++k) {
    const SlowdownStats& b = s.buckets[k];
    EXPECT_EQ(b.count, 100u);
    EXPECT_EQ(b.min_length, k * 100 + 1);
    EXPECT_EQ(b.max_length, k * 100 + 100);
    EXPECT_DOUBLE_EQ(b.cdf_lo, k / 10.0);
    EXPECT_DOUBLE_EQ(b.cdf_hi, (k + 1) / 10.0);
    EXPECT_EQ(b.p50, static_cast<double>(k * 100 + 50));
    EXPECT_EQ(b.p99, static_cast<double>(k * 100 + 99));
    EXPECT_DOUBLE_EQ(b.mean, k * 100 + 50.5);
    EXPECT_EQ(b.min, static_cast<double>(k * 100 + 1));
  }
  EXPECT_EQ(s.overall.count, 1000u);
  EXPECT_EQ(s.overall.p99, 990.0);
}

TEST(SummarizeSlowdown, UnevenCountsDifferByAtMostOne) {
  const SlowdownSummary s = summarize_slowdown(ramp(23), 10);
  std::uint64_t total = 0;
  for (const SlowdownStats& b : s.buckets) {
    EXPECT_TRUE(b.count == 2 || b.count == 3);
    total += b.count;
  }
  EXPECT_EQ(total, 23u);
  EXPECT_EQ(summarize_slowdown(ramp(3), 10).buckets.size(), 3u);
  EXPECT_TRUE(summarize_slowdown({}, 10).buckets.empty());
}

TEST(SummarizeSlowdown, TiesKeepArrivalOrderAcrossABoundary) {
  // Four messages of one length: the first two (in arrival order) make the
  // first bucket.
  std::vector<SlowdownSample> v{{7, 1, true}, {7, 2, true}, {7, 3, true}, {7, 4, true}};
  const SlowdownSummary s = summarize_slowdown(v, 2);
  EXPECT_EQ(s.buckets[0].p99, 2.0);
  EXPECT_EQ(s.buckets[1].p50, 3.0);
  EXPECT_EQ(s.buckets[0].max_length, 7u);
  EXPECT_EQ(s.buckets[1].min_length, 7u);
}

TEST(SummarizeSlowdown, IncompleteMessagesAreCountedAndLeftOutOfTheMean) {
  std::vector<SlowdownSample> v = ramp(10);
  v[0].done = false;  // length 10
  const SlowdownSummary s = summarize_slowdown(v, 1);
  EXPECT_EQ(s.overall.incomplete, 1u);
  EXPECT_EQ(s.overall.p50, 5.0);
  EXPECT_EQ(s.overall.p99, std::nullopt);
  EXPECT_DOUBLE_EQ(s.overall.mean, 5.0);
  EXPECT_EQ(s.overall.max_length, 10u);
}

TEST(SlowdownTable, OneRowPerBucketAndTheOverallRow) {
  std::vector<SlowdownSample> v = ramp(4);
  v[0].done = false;
  const std::string t = slowdown_table(summarize_slowdown(v, 2));
  EXPECT_EQ(t,
            "length (bytes)        messages         count    n/r      p50      p99     mean\n"
            "1..2                  0-50 %               2      0     1.00     2.00     1.50\n"
            "3..4                  50-100 %             2      1     3.00      n/r     3.00\n"
            "1..4                  all                  4      1     2.00      n/r     2.00\n");
}

TEST(SlowdownJson, CarriesEveryBucketAndNullForNotReached) {
  std::vector<SlowdownSample> v = ramp(4);
  v[0].done = false;
  const nlohmann::ordered_json j = slowdown_json(summarize_slowdown(v, 2));
  ASSERT_EQ(j["buckets"].size(), 2u);
  EXPECT_TRUE(j["buckets"][1]["p99"].is_null());
  EXPECT_EQ(j["buckets"][0]["p99"], 2.0);
  EXPECT_EQ(j["overall"]["count"], 4);
  EXPECT_EQ(j["overall"]["incomplete"], 1);
  EXPECT_EQ(j["buckets"][1]["cdf_hi"], 1.0);
}

}  // namespace
}  // namespace uroce::testbed
