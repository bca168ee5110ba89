#include "sched/flow_classifier.h"

#include <gtest/gtest.h>

namespace uroce::sched {
namespace {

TEST(FlowClassifier, Kind_FlowThatPostedNothing_NoneInTheBandwidthClass) {
  FlowClassifier c(4);
  EXPECT_EQ(c.kind(0), FlowKind::kNone);
  EXPECT_EQ(auto_class(FlowKind::kNone), kAutoClassBandwidth);
  EXPECT_STREQ(flow_kind_name(FlowKind::kNone), "none");
}

TEST(FlowClassifier, Observe_NewFlowOfSmallMessagesOneOutstanding_Latency) {
  FlowClassifier c(4);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(c.observe(0, 16, 1), FlowKind::kLatency);
}

TEST(FlowClassifier, Observe_OneLargeMessage_BandwidthAtOnce) {
  FlowClassifier c(4);
  EXPECT_EQ(c.observe(1, 1 << 20, 1), FlowKind::kBandwidth);
  // Exactly large_bytes counts as large.
  EXPECT_EQ(c.observe(2, 65536, 1), FlowKind::kBandwidth);
  EXPECT_EQ(c.observe(3, 65535, 1), FlowKind::kThroughput);  // not large, not latency
}

// The strict class has no rate cap: a flow of mid-sized messages posted one
// at a time (a storage stream of 60 KiB WRITEs) must not get it.
TEST(FlowClassifier, Observe_MidSizedMessagesOneAtATime_ThroughputNotLatency) {
  FlowClassifier c(1);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(c.observe(0, 60 * 1024, 1), FlowKind::kThroughput);
  // One frame's worth is still latency; a little more is not.
  FlowClassifier d(2);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(d.observe(0, 4096, 1), FlowKind::kLatency);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(d.observe(1, 4097, 1), FlowKind::kThroughput);
}

TEST(FlowClassifier, Observe_ManySmallOutstanding_Throughput) {
  FlowClassifier c(1);
  // ib_write_bw -s 64: the queue fills up to its depth.
  FlowKind k = FlowKind::kLatency;
  for (std::uint32_t depth = 1; depth <= 128; ++depth) k = c.observe(0, 64, depth);
  EXPECT_EQ(k, FlowKind::kThroughput);
}

TEST(FlowClassifier, Observe_DepthBetweenThresholds_KindKept) {
  FlowClassifier c(2);
  // Depth 3 is between latency_depth (2) and throughput_depth (4).
  for (int i = 0; i < 50; ++i) EXPECT_EQ(c.observe(0, 64, 3), FlowKind::kLatency);
  for (int i = 0; i < 50; ++i) c.observe(1, 64, 8);
  EXPECT_EQ(c.kind(1), FlowKind::kThroughput);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(c.observe(1, 64, 3), FlowKind::kThroughput);
}

TEST(FlowClassifier, Observe_ElephantTurnsSmall_LeavesBandwidthBelowHalfLarge) {
  FlowClassifier c(1);
  c.observe(0, 1 << 20, 1);
  // The average length after n 16 B messages is about 1 MiB x 0.75^n:
  // 33.2 KB after 12 (still at least large_bytes / 2), 24.9 KB after 13:
  // throughput while above latency_bytes (4 KiB), latency from 20 on
  // (1 MiB x 0.75^19 = 4.4 KB, x 0.75^20 = 3.3 KB).
  int small = 0;
  while (c.observe(0, 16, 1) == FlowKind::kBandwidth) ++small;
  EXPECT_EQ(small, 12);
  EXPECT_EQ(c.kind(0), FlowKind::kThroughput);
  ++small;
  while (c.observe(0, 16, 1) == FlowKind::kThroughput) ++small;
  EXPECT_EQ(small + 1, 20);
}

TEST(FlowClassifier, Observe_AverageOfMidSizedMessagesAboveHalfLarge_StaysBandwidth) {
  FlowClassifier c(1);
  c.observe(0, 1 << 20, 1);
  // 60 KiB messages are not large, but keep the average above 32 KiB.
  for (int i = 0; i < 100; ++i) EXPECT_EQ(c.observe(0, 60 * 1024, 1), FlowKind::kBandwidth);
}

TEST(FlowClassifier, Observe_ThroughputFlowDrains_BackToLatency) {
  FlowClassifier c(1);
  for (int i = 0; i < 20; ++i) c.observe(0, 64, 64);
  ASSERT_EQ(c.kind(0), FlowKind::kThroughput);
  // Depth average from 64 falls by a quarter per message towards 1.
  int n = 0;
  while (c.observe(0, 64, 1) != FlowKind::kLatency) ++n;
  EXPECT_LT(n, 20);
}

TEST(FlowClassifier, Reset_ForgetsTheFlow) {
  FlowClassifier c(1);
  c.observe(0, 1 << 20, 1);
  c.reset(0);
  EXPECT_EQ(c.kind(0), FlowKind::kNone);
  EXPECT_EQ(c.observe(0, 16, 1), FlowKind::kLatency);
}

TEST(FlowClassifier, Observe_OutOfRangeFlow_Bandwidth) {
  FlowClassifier c(1);
  EXPECT_EQ(c.observe(1, 16, 1), FlowKind::kBandwidth);
  EXPECT_EQ(c.kind(7), FlowKind::kBandwidth);
}

TEST(FlowClassifier, Observe_HugeLengthAndDepth_Saturate) {
  FlowClassifier c(1);
  EXPECT_EQ(c.observe(0, std::uint64_t{1} << 40, 1'000'000), FlowKind::kBandwidth);
  EXPECT_EQ(c.observe(0, std::uint64_t{1} << 40, 1'000'000), FlowKind::kBandwidth);
}

TEST(AutoClass, KindsToClasses) {
  EXPECT_EQ(auto_class(FlowKind::kLatency), 6);
  EXPECT_EQ(auto_class(FlowKind::kThroughput), 3);
  EXPECT_EQ(auto_class(FlowKind::kBandwidth), 0);
  EXPECT_STREQ(flow_kind_name(FlowKind::kThroughput), "throughput");
}

}  // namespace
}  // namespace uroce::sched
