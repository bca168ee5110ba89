#include "testbed/rc_flow.h"

#include <gtest/gtest.h>

#include "engine_test_support.h"

namespace uroce::testbed {
namespace {

using testing::EnginePair;

RcFlowConfig flow_cfg(const EnginePair& p, RcOp op) {
  RcFlowConfig c;
  c.op = op;
  c.size_bytes = 10000;
  c.count = 20;
  c.window = 4;
  c.path.dmac = p.b.config().mac;
  c.path.dip = p.b.config().ip;
  c.path.dscp = 24;
  c.src_mac = p.a.config().mac;
  c.src_ip = p.a.config().ip;
  c.src_psn = 0xfffff0;  // wraps during the flow
  c.dst_psn = 12;
  return c;
}

void run_flow(RcOp op) {
  EnginePair p;
  RcFlow f(flow_cfg(p, op), p.a.driver(), p.b.driver());
  ASSERT_EQ(f.setup(), 0);
  p.a.add_endpoint(&f, true);
  p.b.add_endpoint(&f, false);
  EXPECT_TRUE(f.start(0));
  EXPECT_EQ(f.stats().posted, 4u);  // the window
  for (TimeNs t = 0; t < 100 && !f.done(); ++t) p.settle(t * 1000);
  f.finish();
  const RcFlowStats& s = f.stats();
  EXPECT_TRUE(f.done());
  EXPECT_EQ(s.completed, 20u);
  EXPECT_EQ(s.bytes, 200000u);
  EXPECT_EQ(s.errors, 0u);
  EXPECT_EQ(s.payload_mismatch, 0u);
  EXPECT_EQ(s.mct_ns.size(), 20u);
  if (op == RcOp::kSend) {
    EXPECT_EQ(s.recv_completed, 20u);
    EXPECT_EQ(s.recv_bytes, 200000u);
  } else {
    EXPECT_EQ(s.recv_completed, 0u);
  }
}

TEST(RcFlow_Run, SendsCompleteWithExactBytes) { run_flow(RcOp::kSend); }
TEST(RcFlow_Run, WritesCompleteWithExactBytes) { run_flow(RcOp::kWrite); }

TEST(RcFlow_Run, NothingBeforeStart) {
  EnginePair p;
  RcFlow f(flow_cfg(p, RcOp::kSend), p.a.driver(), p.b.driver());
  ASSERT_EQ(f.setup(), 0);
  p.a.add_endpoint(&f, true);
  p.settle(0);
  EXPECT_EQ(f.stats().posted, 0u);
  EXPECT_FALSE(f.done());
}

}  // namespace
}  // namespace uroce::testbed
