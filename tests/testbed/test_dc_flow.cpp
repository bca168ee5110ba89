#include "testbed/dc_flow.h"

#include <gtest/gtest.h>

#include "engine_test_support.h"

namespace uroce::testbed {
namespace {

using testing::EnginePair;

DcFlowConfig flow_cfg(DcOp op) {
  DcFlowConfig c;
  c.op = op;
  c.size_bytes = 5000;  // not a multiple of 8: the pattern's tail too
  c.count = 40;
  c.window = 4;
  c.log_streams = 1;
  c.dscp = 24;
  c.src_psn = 0xfffff0;  // wraps during the flow
  c.key = 0x1234;
  return c;
}

void run_flow(DcOp op) {
  EnginePair p;
  DcFlow f(flow_cfg(op), p.a.driver(), {{&p.b.driver(), p.b.config().mac, p.b.config().ip}});
  ASSERT_EQ(f.setup(), 0);
  p.a.add_app(f.source_app());
  p.b.add_app(f.target_app(0));
  EXPECT_TRUE(f.start(0));
  EXPECT_EQ(f.stats().posted, 4u);  // the window
  for (TimeNs t = 0; t < 200 && !f.done(); ++t) p.settle(t * 1000);
  const DcFlowStats& s = f.stats();
  EXPECT_TRUE(f.done());
  EXPECT_EQ(s.completed, 40u);
  EXPECT_EQ(s.bytes, 200000u);
  EXPECT_EQ(s.errors, 0u);
  EXPECT_EQ(s.duplicate_completions, 0u);
  EXPECT_EQ(s.mct_ns.size(), 40u);
  EXPECT_EQ(s.delivery_ns.size(), 40u);
  const DcTargetStats& t = f.target_stats(0);
  EXPECT_EQ(t.recv_completed, 40u);
  EXPECT_EQ(t.payload_mismatch, 0u);
  EXPECT_EQ(t.misdirected, 0u);
  EXPECT_EQ(t.duplicates, 0u);
  EXPECT_EQ(t.recv_errors, 0u);
  // Two streams toward one DCT: two identities, two contexts at most.
  EXPECT_GE(t.contexts_peak, 1u);
  EXPECT_LE(t.contexts_peak, 2u);
}

TEST(DcFlow_Run, SendsArriveOnceWithTheirBytes) { run_flow(DcOp::kSend); }
TEST(DcFlow_Run, WritesArriveOnceWithTheirBytes) { run_flow(DcOp::kWrite); }

TEST(DcFlow_Run, NothingBeforeStart) {
  EnginePair p;
  DcFlow f(flow_cfg(DcOp::kSend), p.a.driver(),
           {{&p.b.driver(), p.b.config().mac, p.b.config().ip}});
  ASSERT_EQ(f.setup(), 0);
  p.a.add_app(f.source_app());
  p.b.add_app(f.target_app(0));
  p.settle(0);
  EXPECT_EQ(f.stats().posted, 0u);
  EXPECT_FALSE(f.done());
}

// Every frame toward the target lost: nothing arrives, and the DCI's
// retries end its WRs in error, each completed once.
TEST(DcFlow_Run, TargetUnreachableCompletesEachWrOnceInError) {
  EnginePair p;
  p.drop_a_to_b = true;
  DcFlowConfig c = flow_cfg(DcOp::kSend);
  c.count = 4;
  c.timeout = 1;  // 8 us
  DcFlow f(c, p.a.driver(), {{&p.b.driver(), p.b.config().mac, p.b.config().ip}});
  ASSERT_EQ(f.setup(), 0);
  p.a.add_app(f.source_app());
  p.b.add_app(f.target_app(0));
  f.start(0);
  for (TimeNs t = 0; t < 2000 && !f.done(); ++t) p.settle(t * 1000);
  EXPECT_TRUE(f.done());
  EXPECT_EQ(f.stats().completed, 0u);
  EXPECT_EQ(f.stats().errors, 4u);
  EXPECT_EQ(f.stats().duplicate_completions, 0u);
  EXPECT_EQ(f.target_stats(0).recv_completed, 0u);
}

}  // namespace
}  // namespace uroce::testbed
