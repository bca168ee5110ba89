#include "sched/traffic_classes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <vector>

namespace uroce::sched {
namespace {

// A fake port and flows: flow f has left[f] frames of frame[f] bytes each;
// a blocked flow has output but sends nothing; the port takes port_room
// frames in all. Records every call and the bytes each flow sent.
struct Flows {
  explicit Flows(std::uint32_t n) : left(n, 0), frame(n, 1000), blocked(n, false), sent(n, 0) {}
  ServeResult operator()(FlowId f, std::uint32_t budget) {
    calls.push_back(f);
    ServeResult r;
    if (port_room == 0) {
      r.more = true;
      r.stop = true;
      return r;
    }
    if (blocked[f]) {
      r.more = true;
      return r;
    }
    r.sent = std::min({budget, left[f], port_room});
    left[f] -= r.sent;
    port_room -= r.sent;
    r.bytes = static_cast<std::uint64_t>(r.sent) * frame[f];
    sent[f] += r.bytes;
    r.more = left[f] != 0;
    return r;
  }
  std::vector<std::uint32_t> left;
  std::vector<std::uint32_t> frame;
  std::vector<bool> blocked;
  std::vector<std::uint64_t> sent;
  std::vector<FlowId> calls;
  std::uint32_t port_room = 1u << 30;
};

TrafficClassConfig config(ClassMode mode5, ClassMode mode2) {
  TrafficClassConfig c;
  c.classes[5].mode = mode5;
  c.classes[2].mode = mode2;
  c.flow_quantum = 4000;
  c.class_quantum = 8000;
  c.frame_bytes = 1000;
  c.burst = 4;
  return c;
}

TEST(TrafficClasses_Strict, HigherClassStarvesLowerWhileBacklogged) {
  TrafficClasses tc(4, config(ClassMode::kStrict, ClassMode::kStrict));
  tc.set_class(0, 5);
  tc.set_class(1, 2);
  Flows fl(4);
  fl.left = {100, 100, 0, 0};
  tc.activate(1);
  tc.activate(0);
  for (int i = 0; i < 10; ++i) tc.round(fl);
  EXPECT_EQ(fl.sent[1], 0u);  // class 2 waited behind class 5 the whole time
  EXPECT_EQ(fl.sent[0], 10u * 4000);
}

TEST(TrafficClasses_Strict, LowerClassServedInTheRoundTheHigherEmpties) {
  TrafficClasses tc(4, config(ClassMode::kStrict, ClassMode::kStrict));
  tc.set_class(0, 5);
  tc.set_class(1, 2);
  Flows fl(4);
  fl.left = {2, 3, 0, 0};
  tc.activate(1);
  tc.activate(0);
  EXPECT_EQ(tc.round(fl), 5u);
  EXPECT_EQ(fl.calls, (std::vector<FlowId>{0, 1}));
  EXPECT_EQ(tc.size(), 0u);
}

TEST(TrafficClasses_Strict, StrictClassGoesBeforeWeightedOnes) {
  TrafficClasses tc(4, config(ClassMode::kWeighted, ClassMode::kStrict));
  tc.set_class(0, 5);  // weighted, higher number
  tc.set_class(1, 2);  // strict, lower number
  Flows fl(4);
  fl.left = {100, 100, 0, 0};
  tc.activate(0);
  tc.activate(1);
  for (int i = 0; i < 5; ++i) tc.round(fl);
  EXPECT_EQ(fl.sent[0], 0u);
  EXPECT_GT(fl.sent[1], 0u);
}

TEST(TrafficClasses_Weighted, BytesFollowTheWeights) {
  TrafficClassConfig c = config(ClassMode::kWeighted, ClassMode::kWeighted);
  c.classes[5].weight = 3;
  c.classes[2].weight = 1;
  TrafficClasses tc(4, c);
  tc.set_class(0, 5);
  tc.set_class(1, 2);
  Flows fl(4);
  fl.left = {1000000, 1000000, 0, 0};
  tc.activate(0);
  tc.activate(1);
  for (int i = 0; i < 1000; ++i) tc.round(fl);
  const double ratio = static_cast<double>(fl.sent[0]) / static_cast<double>(fl.sent[1]);
  EXPECT_NEAR(ratio, 3.0, 0.05);
}

TEST(TrafficClasses_Drr, FlowsOfAClassShareBytesNotFrames) {
  TrafficClasses tc(4, config(ClassMode::kWeighted, ClassMode::kWeighted));
  Flows fl(4);
  fl.left = {1000000, 1000000, 0, 0};
  fl.frame = {64, 4096, 1000, 1000};  // both in class 0
  tc.activate(0);
  tc.activate(1);
  for (int i = 0; i < 2000; ++i) tc.round(fl);
  const double ratio = static_cast<double>(fl.sent[0]) / static_cast<double>(fl.sent[1]);
  EXPECT_NEAR(ratio, 1.0, 0.02);
  // Frames differ by the size ratio: the small-frame flow sent ~64x as many.
  EXPECT_GT(1000000 - fl.left[0], 50u * (1000000 - fl.left[1]));
}

TEST(TrafficClasses_Drr, BlockedFlowSavesNothing) {
  TrafficClasses tc(4, config(ClassMode::kWeighted, ClassMode::kWeighted));
  Flows fl(4);
  fl.left = {1000, 0, 0, 0};
  fl.blocked[0] = true;
  tc.activate(0);
  for (int i = 0; i < 50; ++i) tc.round(fl);
  EXPECT_EQ(fl.sent[0], 0u);
  EXPECT_TRUE(tc.active(0));
  fl.blocked[0] = false;
  fl.calls.clear();
  tc.round(fl);
  // One pass of class 0 (class_quantum 8000) and nothing saved from the 50
  // blocked rounds: two turns of flow_quantum 4000.
  EXPECT_EQ(fl.sent[0], 8000u);
}

TEST(TrafficClasses_Round, PortStopKeepsTheFlowAtTheFront) {
  TrafficClasses tc(4, config(ClassMode::kWeighted, ClassMode::kWeighted));
  Flows fl(4);
  fl.left = {10, 10, 0, 0};
  tc.activate(0);
  tc.activate(1);
  fl.port_room = 0;
  EXPECT_EQ(tc.round(fl), 0u);
  EXPECT_EQ(fl.calls, (std::vector<FlowId>{0}));
  fl.port_room = 1u << 30;
  fl.calls.clear();
  tc.round(fl);
  ASSERT_FALSE(fl.calls.empty());
  EXPECT_EQ(fl.calls.front(), 0u);
}

// A port that takes one frame per round (a full TX queue draining one frame
// at a time) cuts every turn short; the cut turn and pass resume with what
// is left of their quanta, so flows and weighted classes still share.
TEST(TrafficClasses_Round, PortTakingOneFramePerRoundStillSharesFlowsAndClasses) {
  TrafficClassConfig c = config(ClassMode::kWeighted, ClassMode::kWeighted);
  // Not a multiple of flow_quantum: a class's pass can run out in the
  // middle of a flow's turn, which the full port then cuts.
  c.class_quantum = 6000;
  TrafficClasses tc(8, c);
  tc.set_class(0, 0);
  tc.set_class(1, 0);
  tc.set_class(2, 2);
  Flows fl(8);
  fl.left = {1000000, 1000000, 1000000, 0, 0, 0, 0, 0};
  tc.activate(0);
  tc.activate(1);
  tc.activate(2);
  // The longest run of rounds whose frame was class 0's: one pass, 6000
  // bytes plus what its last turn overdraws, at most 7 frames.
  int run = 0;
  int longest = 0;
  for (int i = 0; i < 3000; ++i) {
    fl.port_room = 1;
    const std::uint64_t before = fl.sent[2];
    tc.round(fl);
    run = fl.sent[2] == before ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  EXPECT_LE(longest, 7);
  // Class 0 and class 2 share 1:1 (weights 1), class 0's two flows 1:1.
  EXPECT_NEAR(static_cast<double>(fl.sent[2]), 1500000.0, 20000.0);
  EXPECT_NEAR(static_cast<double>(fl.sent[0]), 750000.0, 20000.0);
  EXPECT_NEAR(static_cast<double>(fl.sent[1]), 750000.0, 20000.0);
}

TEST(TrafficClasses_SetClass, MovesAQueuedFlowToItsNewClass) {
  TrafficClasses tc(4, config(ClassMode::kStrict, ClassMode::kWeighted));
  Flows fl(4);
  fl.left = {100, 100, 0, 0};
  tc.activate(0);
  tc.activate(1);
  EXPECT_EQ(tc.class_size(0), 2u);
  tc.set_class(1, 5);
  EXPECT_EQ(tc.class_size(0), 1u);
  EXPECT_EQ(tc.class_size(5), 1u);
  EXPECT_EQ(tc.class_of(1), 5u);
  tc.round(fl);
  EXPECT_EQ(fl.calls.front(), 1u);  // strict class 5 first
  tc.set_class(1, kNumClasses);     // out of range: ignored, counted
  EXPECT_EQ(tc.class_of(1), 5u);
  EXPECT_EQ(tc.bad_ids(), 1u);
}

TEST(TrafficClasses_Remove, ForgetsTheFlowAndKeepsTheOthersOrder) {
  TrafficClasses tc(8);
  Flows fl(8);
  fl.left = {1, 1, 1, 1, 0, 0, 0, 0};
  for (FlowId f : {3u, 1u, 2u, 0u}) tc.activate(f);
  tc.remove(1);
  tc.remove(1);  // not queued any more: no-op
  EXPECT_FALSE(tc.active(1));
  EXPECT_EQ(tc.size(), 3u);
  tc.round(fl);
  EXPECT_EQ(fl.calls, (std::vector<FlowId>{3, 2, 0}));
}

TEST(TrafficClasses_Activate, IdempotentAndOutOfRangeCounted) {
  TrafficClasses tc(2);
  tc.activate(1);
  tc.activate(1);
  tc.activate(2);
  EXPECT_EQ(tc.size(), 1u);
  EXPECT_EQ(tc.class_size(0), 1u);
  EXPECT_EQ(tc.bad_ids(), 1u);
}

// Class rate limits: a port that takes 12 frames of 1000 bytes every 10 us
// of virtual time (9.6 Gb/s), the engine running rounds back to back until
// the port is full or a round sends nothing.
struct RateRun {
  TrafficClasses& tc;
  Flows& flows;
  void run(TimeNs from, TimeNs ns) {
    for (TimeNs t = from; t < from + ns; t += 10'000) {
      flows.port_room = 12;
      tc.set_now(t);
      while (flows.port_room != 0 && tc.round(flows) != 0) {
      }
    }
  }
};

TEST(TrafficClasses_ClassRate, LimitedClassSendsAtItsRate) {
  TrafficClassConfig c = config(ClassMode::kWeighted, ClassMode::kWeighted);
  c.classes[2].rate_mbps = 1000;  // 1 Gb/s of the 9.6 the port takes
  TrafficClasses tc(4, c);
  Flows f(4);
  f.left[1] = 1u << 30;
  tc.set_class(1, 2);
  tc.activate(1);
  RateRun{tc, f}.run(0, 100'000'000);  // 100 ms
  // 1 Gb/s for 100 ms is 12.5 MB; a pass may overdraw by one class quantum.
  EXPECT_NEAR(static_cast<double>(f.sent[1]), 12.5e6, 12.5e6 * 0.01);
  EXPECT_GT(tc.rate_skips(2), 0u);
  EXPECT_EQ(tc.rate_skips(5), 0u);
}

TEST(TrafficClasses_ClassRate, StrictClassOverItsRateLetsLowerClassesSend) {
  TrafficClassConfig c = config(ClassMode::kStrict, ClassMode::kWeighted);
  c.classes[5].rate_mbps = 2000;
  c.class_quantum = 64000;  // a weighted pass may fill a round's port
  TrafficClasses tc(4, c);
  Flows f(4);
  f.left[0] = f.left[1] = 1u << 30;
  tc.set_class(0, 5);
  tc.set_class(1, 2);
  tc.activate(0);
  tc.activate(1);
  RateRun{tc, f}.run(0, 50'000'000);  // 50 ms of a port taking 9.6 Gb/s
  const double strict_gbps = static_cast<double>(f.sent[0]) * 8 / 50e6;
  const double lower_gbps = static_cast<double>(f.sent[1]) * 8 / 50e6;
  EXPECT_NEAR(strict_gbps, 2.0, 0.02);
  // The weighted class takes the rest: without the limit it would get
  // nothing (HigherClassStarvesLowerWhileBacklogged).
  EXPECT_NEAR(lower_gbps, 9.6 - 2.0, 0.1);
}

TEST(TrafficClasses_ClassRate, NextRateDue_WhenAHeldBackClassMaySendAgain) {
  TrafficClassConfig c = config(ClassMode::kWeighted, ClassMode::kWeighted);
  c.classes[2].rate_mbps = 8;  // 1 byte per us
  c.class_quantum = 4000;      // one flow turn per pass: no overdraw to repay
  TrafficClasses tc(4, c);
  Flows f(4);
  EXPECT_EQ(tc.next_rate_due(), ~TimeNs{0});  // nothing queued
  f.left[1] = 100;
  tc.set_class(1, 2);
  tc.activate(1);
  // Rounds at 10 ms until the class is held back: its credit is one class
  // quantum's time here (4 ms at 1 byte per us, more than kClassCreditNs),
  // so it owes (sent bytes) us less that credit.
  tc.set_now(10'000'000);
  std::uint32_t rounds = 0;
  while (tc.round(f) != 0) ++rounds;
  EXPECT_EQ(rounds, 2u);
  const TimeNs due = tc.next_rate_due();
  ASSERT_NE(due, ~TimeNs{0});
  EXPECT_EQ(due, 10'000'000 - 4'000'000 + f.sent[1] * 1000);
  tc.set_now(due - 1);
  EXPECT_EQ(tc.round(f), 0u);
  tc.set_now(due);
  EXPECT_GT(tc.round(f), 0u);
}

TEST(TrafficClasses_Reconfigure, NewRateTakesOverMidRunAndFlowsKeepTheirPlaces) {
  TrafficClassConfig c = config(ClassMode::kWeighted, ClassMode::kWeighted);
  c.classes[2].rate_mbps = 1000;
  TrafficClasses tc(4, c);
  Flows f(4);
  f.left[1] = 1u << 30;
  tc.set_class(1, 2);
  tc.activate(1);
  RateRun{tc, f}.run(0, 50'000'000);
  const std::uint64_t first = f.sent[1];
  EXPECT_NEAR(static_cast<double>(first), 6.25e6, 6.25e6 * 0.02);
  std::array<ClassConfig, kNumClasses> k = tc.config().classes;
  k[2].rate_mbps = 500;
  tc.reconfigure(k, tc.config().class_quantum, 50'000'000);
  EXPECT_EQ(tc.config().classes[2].rate_mbps, 500u);
  EXPECT_TRUE(tc.active(1));
  EXPECT_EQ(tc.class_size(2), 1u);
  RateRun{tc, f}.run(50'000'000, 50'000'000);
  EXPECT_NEAR(static_cast<double>(f.sent[1] - first), 3.125e6, 3.125e6 * 0.03);
}

TEST(TrafficClasses_Reconfigure, LimitAddedAndRemoved) {
  TrafficClasses tc(4, config(ClassMode::kWeighted, ClassMode::kWeighted));
  Flows f(4);
  f.left[1] = 1u << 30;
  tc.set_class(1, 2);
  tc.activate(1);
  std::array<ClassConfig, kNumClasses> k = tc.config().classes;
  k[2].rate_mbps = 2000;
  tc.reconfigure(k, tc.config().class_quantum, 0);
  RateRun{tc, f}.run(0, 20'000'000);
  EXPECT_NEAR(static_cast<double>(f.sent[1]) * 8 / 20e6, 2.0, 0.04);
  EXPECT_GT(tc.rate_skips(2), 0u);
  const std::uint64_t limited = f.sent[1];
  k[2].rate_mbps = 0;
  tc.reconfigure(k, tc.config().class_quantum, 20'000'000);
  EXPECT_EQ(tc.next_rate_due(), ~TimeNs{0});
  RateRun{tc, f}.run(20'000'000, 20'000'000);
  // The whole port (9.6 Gb/s) once the limit is gone.
  EXPECT_NEAR(static_cast<double>(f.sent[1] - limited) * 8 / 20e6, 9.6, 0.01);
}

TEST(TrafficClasses_Reconfigure, ModesAndWeightsChangeTheShares) {
  TrafficClassConfig c = config(ClassMode::kStrict, ClassMode::kWeighted);
  TrafficClasses tc(4, c);
  tc.set_class(0, 5);
  tc.set_class(1, 2);
  Flows f(4);
  f.left = {1000000, 1000000, 0, 0};
  tc.activate(0);
  tc.activate(1);
  for (int i = 0; i < 10; ++i) tc.round(f);
  EXPECT_EQ(f.sent[1], 0u);  // class 5 strict: class 2 starves
  std::array<ClassConfig, kNumClasses> k = tc.config().classes;
  k[5].mode = ClassMode::kWeighted;
  k[5].weight = 3;
  k[2].weight = 1;
  k[7].weight = 0;  // taken as 1, as at construction
  tc.reconfigure(k, tc.config().class_quantum, 0);
  EXPECT_EQ(tc.config().classes[7].weight, 1u);
  const std::uint64_t s0 = f.sent[0];
  for (int i = 0; i < 1000; ++i) tc.round(f);
  const double ratio = static_cast<double>(f.sent[0] - s0) / static_cast<double>(f.sent[1]);
  EXPECT_NEAR(ratio, 3.0, 0.05);
}

}  // namespace
}  // namespace uroce::sched
