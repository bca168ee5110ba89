#include "sched/unsched_cutoffs.h"

#include <gtest/gtest.h>

namespace uroce::sched::homa {
namespace {

TEST(BucketBound, FourPerOctaveFrom64Bytes) {
  EXPECT_EQ(bucket_bound(0), 64u);
  EXPECT_EQ(bucket_bound(4), 128u);
  EXPECT_EQ(bucket_bound(2), 90u);  // 64 x sqrt(2) = 90.5
  EXPECT_EQ(bucket_bound(kSizeBuckets - 1), std::uint64_t{1} << 30);
}

TEST(SizeHistogram, Bucket_FirstBoundAtLeastTheLength) {
  SizeHistogram h;
  EXPECT_EQ(h.bucket(1), 0u);
  EXPECT_EQ(h.bucket(64), 0u);
  EXPECT_EQ(h.bucket(65), 1u);
  EXPECT_EQ(h.bucket(128), 4u);
  EXPECT_EQ(h.bucket(std::uint64_t{1} << 40), kSizeBuckets - 1);
}

TEST(SizeHistogram, Age_HalvesEveryCount) {
  SizeHistogram h;
  h.add(100, 10);
  h.add(5000, 3);
  h.age();
  EXPECT_EQ(h.count(h.bucket(100)), 5u);
  EXPECT_EQ(h.count(h.bucket(5000)), 1u);
}

TEST(ComputeCutoffs, NoData_EverythingAtLevelZero) {
  const Cutoffs c = compute_cutoffs(SizeHistogram{}, 60000, 4);
  EXPECT_EQ(c.levels, 4u);
  EXPECT_EQ(c.level_of(1), 0u);
  EXPECT_EQ(c.level_of(1 << 20), 0u);
}

// Four sizes, each carrying the same unscheduled bytes: 1,000 x 64 B,
// 500 x 128 B, 250 x 256 B and 125 x 512 B (64,000 bytes each): one level
// each, shortest highest.
TEST(ComputeCutoffs, EqualUnscheduledBytesPerLevel) {
  SizeHistogram h;
  h.add(64, 1000);
  h.add(128, 500);
  h.add(256, 250);
  h.add(512, 125);
  const Cutoffs c = compute_cutoffs(h, 60000, 4);
  EXPECT_EQ(c.max_length[0], 64u);
  EXPECT_EQ(c.max_length[1], 128u);
  EXPECT_EQ(c.max_length[2], 256u);
  EXPECT_EQ(c.max_length[3], UINT64_MAX);
  EXPECT_EQ(c.level_of(50), 0u);
  EXPECT_EQ(c.level_of(100), 1u);
  EXPECT_EQ(c.level_of(200), 2u);
  EXPECT_EQ(c.level_of(400), 3u);
  EXPECT_EQ(c.level_of(1 << 20), 3u);
}

// Long messages (over unsched_bytes) take the lowest level whatever their
// weight: 10 messages of 1 MiB with unsched_bytes 1,000 weigh 10,000
// bytes, as much as the 157 messages of 64 B, yet the 64 B ones alone
// take level 0 and everything up to 1,000 bytes goes above the long ones.
TEST(ComputeCutoffs, LongMessagesTakeTheLowestLevel) {
  SizeHistogram h;
  h.add(64, 157);      // 10,048 bytes
  h.add(1 << 20, 10);  // 10 x min(1 MiB, 1,000) = 10,000 bytes
  const Cutoffs c = compute_cutoffs(h, 1000, 2);
  EXPECT_EQ(c.max_length[0], 1000u);
  EXPECT_EQ(c.level_of(64), 0u);
  EXPECT_EQ(c.level_of(1000), 0u);
  EXPECT_EQ(c.level_of(1001), 1u);
}

// With long messages present, the levels above the lowest divide the bytes
// of the messages that fit equally (as the rule without them does), and no
// cutoff goes past unsched_bytes.
TEST(ComputeCutoffs, ShortMessagesShareTheUpperLevels) {
  SizeHistogram h;
  h.add(64, 1000);
  h.add(128, 500);
  h.add(256, 250);
  h.add(1 << 20, 1000);  // 1,000 x 512 unscheduled bytes: all in level 3
  const Cutoffs c = compute_cutoffs(h, 512, 4);
  EXPECT_EQ(c.max_length[0], 64u);
  EXPECT_EQ(c.max_length[1], 128u);
  EXPECT_EQ(c.max_length[2], 512u);
  EXPECT_EQ(c.level_of(200), 2u);
  EXPECT_EQ(c.level_of(512), 2u);
  EXPECT_EQ(c.level_of(513), 3u);
}

TEST(ComputeCutoffs, LevelsClampedToOneToEight) {
  SizeHistogram h;
  h.add(64);
  EXPECT_EQ(compute_cutoffs(h, 100, 0).levels, 1u);
  EXPECT_EQ(compute_cutoffs(h, 100, 12).levels, kMaxLevels);
}

}  // namespace
}  // namespace uroce::sched::homa
