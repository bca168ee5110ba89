#include "datapath/engine/loop_histogram.h"

#include <gtest/gtest.h>

namespace uroce::engine {
namespace {

TEST(LoopBucket_Bounds, PowersOfTwoStartABucket) {
  EXPECT_EQ(loop_bucket(0), 0u);
  EXPECT_EQ(loop_bucket(1), 1u);
  EXPECT_EQ(loop_bucket(2), 2u);
  EXPECT_EQ(loop_bucket(3), 2u);
  EXPECT_EQ(loop_bucket(1023), 10u);
  EXPECT_EQ(loop_bucket(1024), 11u);
  EXPECT_EQ(loop_bucket(TimeNs{1} << 29), 30u);
  EXPECT_EQ(loop_bucket(TimeNs{1} << 30), kLoopBuckets - 1);
  EXPECT_EQ(loop_bucket(~TimeNs{0}), kLoopBuckets - 1);
}

TEST(LoopBucketCeiling_Bounds, LargestValueOfTheBucket) {
  EXPECT_EQ(loop_bucket_ceiling_ns(0), 0u);
  EXPECT_EQ(loop_bucket_ceiling_ns(1), 1u);
  EXPECT_EQ(loop_bucket_ceiling_ns(11), 2047u);
  for (std::size_t b = 1; b + 1 < kLoopBuckets; ++b) {
    EXPECT_EQ(loop_bucket(loop_bucket_ceiling_ns(b)), b);
    EXPECT_EQ(loop_bucket(loop_bucket_ceiling_ns(b) + 1), b + 1);
  }
  // The open last bucket reports its lower bound.
  EXPECT_EQ(loop_bucket_ceiling_ns(kLoopBuckets - 1), TimeNs{1} << 30);
}

TEST(LoopQuantileNs_Values, CeilingOfTheQuantilesBucket) {
  LoopBuckets h{};
  EXPECT_EQ(loop_quantile_ns(h, 0.5), 0u);
  // 98 values of 300 ns, one of 5 us, one of 100 us.
  h[loop_bucket(300)] = 98;
  h[loop_bucket(5000)] = 1;
  h[loop_bucket(100'000)] = 1;
  EXPECT_EQ(loop_quantile_ns(h, 0.5), 511u);
  EXPECT_EQ(loop_quantile_ns(h, 0.98), 511u);
  EXPECT_EQ(loop_quantile_ns(h, 0.99), 8191u);
  EXPECT_EQ(loop_quantile_ns(h, 0.995), 131071u);
  EXPECT_EQ(loop_quantile_ns(h, 1.0), 131071u);
}

TEST(LoopAtLeast_Values, WholeBucketsFromTheBound) {
  LoopBuckets h{};
  h[loop_bucket(300)] = 5;
  h[loop_bucket(8192)] = 2;
  h[loop_bucket(70'000)] = 3;
  EXPECT_EQ(loop_at_least(h, 0), 10u);
  EXPECT_EQ(loop_at_least(h, TimeNs{1} << 13), 5u);
  EXPECT_EQ(loop_at_least(h, TimeNs{1} << 16), 3u);
  EXPECT_EQ(loop_at_least(h, TimeNs{1} << 17), 0u);
}

TEST(LoopHistogramsAdd_Sums, EveryBucketOfEveryHistogram) {
  LoopHistograms a, b;
  a.work_ns[3] = 1;
  a.idle_ns[4] = 2;
  b.work_ns[3] = 10;
  b.oversleep_ns[31] = 7;
  add(a, b);
  EXPECT_EQ(a.work_ns[3], 11u);
  EXPECT_EQ(a.idle_ns[4], 2u);
  EXPECT_EQ(a.oversleep_ns[31], 7u);
  EXPECT_EQ(total(a.work_ns), 11u);
}

}  // namespace
}  // namespace uroce::engine
