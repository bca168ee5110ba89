#include "datapath/engine/stage_stamps.h"

#include <gtest/gtest.h>

namespace uroce::engine {
namespace {

std::uint64_t in_bucket(const LoopBuckets& h, TimeNs v) { return h[loop_bucket(v)]; }

TEST(StageRecorder_OnCqe, TrackedWqeLeavesEveryStage) {
  StageRecorder s(4);
  // A receive completion at 1,000 (its RX burst at 900), then the WQE.
  s.on_cqe(2, false, 0, 900, 1'000);
  s.on_post(2, 77, true, 1'500);
  s.on_served(2);
  s.on_flushed(1'800);
  s.on_cqe(2, true, 77, 9'800, 10'000);
  const StageReport r = s.report();
  ASSERT_EQ(r.recent.size(), 1u);
  const StageRecord& k = r.recent[0];
  EXPECT_EQ(k.app_ns, 500u);
  EXPECT_EQ(k.seen_tx_ns, 300u);
  EXPECT_EQ(k.tx_rx_ns, 8'000u);
  EXPECT_EQ(k.rx_cqe_ns, 200u);
  EXPECT_EQ(k.total_ns, 8'500u);
  EXPECT_EQ(in_bucket(r.hist.app_ns, 500), 1u);
  EXPECT_EQ(in_bucket(r.hist.seen_tx_ns, 300), 1u);
  EXPECT_EQ(in_bucket(r.hist.tx_rx_ns, 8'000), 1u);
  EXPECT_EQ(total(r.hist.rx_cqe_ns), 2u);  // the receive's and the send's
  EXPECT_EQ(in_bucket(r.hist.total_ns, 8'500), 1u);
}

TEST(StageRecorder_OnPost, UntrackableWqeOnlyEndsTheApplicationsTurn) {
  StageRecorder s(1);
  s.on_cqe(0, false, 0, 0, 1'000);
  s.on_post(0, 5, false, 3'000);
  s.on_served(0);
  s.on_flushed(3'100);
  s.on_cqe(0, true, 5, 4'000, 4'100);
  const StageReport r = s.report();
  EXPECT_TRUE(r.recent.empty());
  EXPECT_EQ(in_bucket(r.hist.app_ns, 2'000), 1u);
  EXPECT_EQ(total(r.hist.seen_tx_ns), 0u);
  EXPECT_EQ(total(r.hist.total_ns), 0u);
}

TEST(StageRecorder_OnPost, OneTrackedWqePerQpAtATime) {
  StageRecorder s(1);
  s.on_post(0, 1, true, 100);
  s.on_post(0, 2, true, 200);  // the first is still out: not tracked
  s.on_served(0);
  s.on_flushed(300);
  s.on_cqe(0, true, 2, 400, 450);  // not the tracked one
  EXPECT_TRUE(s.report().recent.empty());
  s.on_cqe(0, true, 1, 500, 550);
  const StageReport r = s.report();
  ASSERT_EQ(r.recent.size(), 1u);
  EXPECT_EQ(r.recent[0].total_ns, 450u);
}

TEST(StageRecorder_OnCqe, CompletionOutsideTheRxPhaseHasNoWireStage) {
  StageRecorder s(1);
  s.on_post(0, 9, true, 100);
  s.on_served(0);
  s.on_flushed(200);
  s.on_cqe(0, true, 9, 0, 700);
  const StageReport r = s.report();
  ASSERT_EQ(r.recent.size(), 1u);
  EXPECT_EQ(r.recent[0].tx_rx_ns, 0u);
  EXPECT_EQ(r.recent[0].rx_cqe_ns, 0u);
  EXPECT_EQ(r.recent[0].total_ns, 600u);
  EXPECT_EQ(total(r.hist.tx_rx_ns), 0u);
  EXPECT_EQ(total(r.hist.rx_cqe_ns), 0u);
}

TEST(StageRecorder_OnCqe, CompletedBeforeItsTxLeavesNoRecord) {
  StageRecorder s(1);
  s.on_post(0, 3, true, 100);
  s.on_cqe(0, true, 3, 0, 150);  // flushed in error before it was sent
  s.on_served(0);
  s.on_flushed(200);
  const StageReport r = s.report();
  EXPECT_TRUE(r.recent.empty());
  EXPECT_EQ(total(r.hist.seen_tx_ns), 0u);
  // The QP can be tracked again.
  s.on_post(0, 4, true, 300);
  s.on_served(0);
  s.on_flushed(310);
  s.on_cqe(0, true, 4, 400, 420);
  EXPECT_EQ(s.report().recent.size(), 1u);
}

TEST(StageRecorder_OnReset, ForgetsTheTrackedWqeAndTheLastCompletion) {
  StageRecorder s(1);
  s.on_cqe(0, false, 0, 0, 50);
  s.on_post(0, 1, true, 100);
  s.on_served(0);
  s.on_reset(0);
  s.on_flushed(200);
  s.on_cqe(0, true, 1, 300, 310);
  const StageReport r = s.report();
  EXPECT_TRUE(r.recent.empty());
  EXPECT_EQ(total(r.hist.seen_tx_ns), 0u);
  EXPECT_EQ(total(r.hist.app_ns), 1u);  // taken at the post, before the reset
}

TEST(StageRecorder_OnServed, BeyondThePendingRoomTheWqeIsUntracked) {
  StageRecorder s(StageRecorder::kPendingTx + 1);
  for (std::uint32_t q = 0; q <= StageRecorder::kPendingTx; ++q) {
    s.on_post(q, q, true, 100);
    s.on_served(q);
  }
  s.on_flushed(200);
  const StageReport r = s.report();
  EXPECT_EQ(r.untracked, 1u);
  EXPECT_EQ(total(r.hist.seen_tx_ns), StageRecorder::kPendingTx);
}

TEST(StageRecorder_Report, KeepsTheLastRecordsOldestFirst) {
  StageRecorder s(1);
  const std::uint32_t n = StageRecorder::kRecent + 10;
  for (std::uint32_t i = 0; i < n; ++i) {
    const TimeNs t = 1'000 * (i + 1);
    s.on_post(0, i, true, t);
    s.on_served(0);
    s.on_flushed(t + 10);
    s.on_cqe(0, true, i, t + 20, t + 20 + i);
  }
  const StageReport r = s.report();
  ASSERT_EQ(r.recent.size(), StageRecorder::kRecent);
  EXPECT_EQ(r.recent.front().rx_cqe_ns, 10u);
  EXPECT_EQ(r.recent.back().rx_cqe_ns, n - 1);
}

TEST(Slowest_Records, MeanAndMaxOfTheSlowestFraction) {
  std::vector<StageRecord> v(200);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = {0, 100, 1'000, 50, 1'150};
  v[17] = {0, 100, 21'000, 50, 21'150};
  v[130] = {0, 9'100, 1'000, 50, 10'150};
  const StageWorst w = slowest(v, 0.01);
  EXPECT_EQ(w.count, 2u);
  EXPECT_EQ(w.mean.tx_rx_ns, 11'000u);
  EXPECT_EQ(w.mean.seen_tx_ns, 4'600u);
  EXPECT_EQ(w.max.tx_rx_ns, 21'000u);
  EXPECT_EQ(w.max.seen_tx_ns, 9'100u);
  EXPECT_EQ(w.max.total_ns, 21'150u);
}

TEST(Slowest_Records, AtLeastOneAndNoneOfNothing) {
  EXPECT_EQ(slowest({}, 0.01).count, 0u);
  const std::vector<StageRecord> one{{1, 2, 3, 4, 10}};
  const StageWorst w = slowest(one, 0.01);
  EXPECT_EQ(w.count, 1u);
  EXPECT_EQ(w.mean.total_ns, 10u);
}

}  // namespace
}  // namespace uroce::engine
