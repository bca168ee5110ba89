#include "sched/tx_policy.h"

#include <gtest/gtest.h>

#include <vector>

namespace uroce::sched {
namespace {

// Every served flow sends its whole budget of 1000-byte frames and has more.
struct Recorder {
  std::vector<FlowId> order;
  ServeResult operator()(FlowId f, std::uint32_t budget) {
    order.push_back(f);
    return ServeResult{budget, true, false, 1000ull * budget};
  }
};

TEST(TxPolicy_Off, ServesRoundRobinAndRecordsClasses) {
  TxPolicy p(4);
  EXPECT_EQ(p.isolation(), Isolation::kOff);
  EXPECT_TRUE(p.set_class(2, 7));
  EXPECT_EQ(p.class_of(2), 7);
  p.activate(1);
  p.activate(2);
  Recorder r;
  p.round(r);
  // Class 7 is not served first: off means round robin in activation order.
  EXPECT_EQ(r.order, (std::vector<FlowId>{1, 2}));
  EXPECT_EQ(p.size(), 2u);
}

TEST(TxPolicy_Classes, StrictClassGoesFirst) {
  TxPolicyConfig cfg;
  cfg.isolation = Isolation::kClasses;
  cfg.classes.classes[5].mode = ClassMode::kStrict;
  TxPolicy p(4, cfg);
  p.set_class(2, 5);
  p.activate(1);
  p.activate(2);
  Recorder r;
  p.round(r);
  ASSERT_FALSE(r.order.empty());
  EXPECT_EQ(r.order.front(), 2u);
  // The strict class still has output, so the round ends before class 0.
  for (const FlowId f : r.order) EXPECT_EQ(f, 2u);
}

TEST(TxPolicy_SetClass, OutOfRangeIsRefused) {
  TxPolicy p(4);
  EXPECT_FALSE(p.set_class(4, 0));
  EXPECT_FALSE(p.set_class(0, kNumClasses));
  EXPECT_EQ(p.class_of(0), 0);
}

TEST(TxPolicy_Remove, ForgetsTheFlowInEitherMode) {
  for (const Isolation iso : {Isolation::kOff, Isolation::kClasses}) {
    TxPolicyConfig cfg;
    cfg.isolation = iso;
    TxPolicy p(4, cfg);
    p.activate(3);
    EXPECT_TRUE(p.active(3));
    p.remove(3);
    EXPECT_FALSE(p.active(3));
    EXPECT_EQ(p.size(), 0u);
  }
}

TEST(ParseIsolation_Names, RoundTripAndRejectOthers) {
  Isolation i{};
  ASSERT_TRUE(parse_isolation("classes", &i));
  EXPECT_EQ(i, Isolation::kClasses);
  EXPECT_EQ(isolation_name(i), "classes");
  ASSERT_TRUE(parse_isolation("off", &i));
  EXPECT_EQ(isolation_name(i), "off");
  ASSERT_TRUE(parse_isolation("auto", &i));
  EXPECT_EQ(i, Isolation::kAuto);
  EXPECT_EQ(isolation_name(i), "auto");
  EXPECT_FALSE(parse_isolation("Auto", &i));
  EXPECT_FALSE(parse_isolation("", &i));
}

TEST(TxPolicy_Auto, LatencyClassStrictWhateverTheConfig) {
  TxPolicyConfig cfg;
  cfg.isolation = Isolation::kAuto;
  TxPolicy p(4, cfg);
  EXPECT_EQ(p.isolation(), Isolation::kAuto);
  EXPECT_TRUE(p.auto_classify());
  EXPECT_EQ(p.classes().config().classes[kAutoClassLatency].mode, ClassMode::kStrict);
  EXPECT_EQ(p.classes().config().classes[kAutoClassBandwidth].mode, ClassMode::kWeighted);
  TxPolicyConfig classes;
  classes.isolation = Isolation::kClasses;
  EXPECT_FALSE(TxPolicy(4, classes).auto_classify());
  EXPECT_EQ(TxPolicy(4, classes).classes().config().classes[kAutoClassLatency].mode,
            ClassMode::kWeighted);
}

// New settings keep the mode the policy was built with: auto's latency
// class stays strict, and a config naming another mode changes nothing.
TEST(TxPolicy_SetClasses, KeepsTheModeAndItsStrictLatencyClass) {
  TxPolicyConfig cfg;
  cfg.isolation = Isolation::kAuto;
  TxPolicy p(4, cfg);
  TxPolicyConfig next;
  next.isolation = Isolation::kOff;
  next.classes.classes[kAutoClassBandwidth].weight = 5;
  next.classes.classes[kAutoClassBandwidth].rate_mbps = 300;
  p.set_classes(next, 0);
  EXPECT_EQ(p.isolation(), Isolation::kAuto);
  EXPECT_EQ(p.classes().config().classes[kAutoClassLatency].mode, ClassMode::kStrict);
  EXPECT_EQ(p.classes().config().classes[kAutoClassBandwidth].weight, 5u);
  EXPECT_EQ(p.classes().config().classes[kAutoClassBandwidth].rate_mbps, 300u);
}

TEST(TxPolicy_Auto, ObserveMovesFlowsToTheirKindsClass) {
  TxPolicyConfig cfg;
  cfg.isolation = Isolation::kAuto;
  TxPolicy p(4, cfg);
  p.observe(0, 1 << 20, 1);                                     // an elephant
  p.observe(1, 16, 1);                                          // a ping-pong
  for (std::uint32_t d = 1; d <= 64; ++d) p.observe(2, 64, d);  // a message-rate stream
  EXPECT_EQ(p.class_of(0), kAutoClassBandwidth);
  EXPECT_EQ(p.class_of(1), kAutoClassLatency);
  EXPECT_EQ(p.class_of(2), kAutoClassThroughput);
  EXPECT_EQ(p.kind(2), FlowKind::kThroughput);
  // Flow 0 was already in class 0; flows 1 and 2 moved once each, flow 2
  // through the latency class first.
  EXPECT_EQ(p.reclassified(), 3u);
  // The ping-pong's frames go before the elephant's.
  p.activate(0);
  p.activate(1);
  Recorder r;
  p.round(r);
  ASSERT_FALSE(r.order.empty());
  EXPECT_EQ(r.order.front(), 1u);
}

TEST(TxPolicy_Auto, ForgetStartsTheSlotAfresh) {
  TxPolicyConfig cfg;
  cfg.isolation = Isolation::kAuto;
  TxPolicy p(2, cfg);
  p.observe(0, 1 << 20, 1);
  p.forget(0);
  EXPECT_EQ(p.kind(0), FlowKind::kNone);
  p.observe(0, 16, 1);
  EXPECT_EQ(p.class_of(0), kAutoClassLatency);
}

}  // namespace
}  // namespace uroce::sched
