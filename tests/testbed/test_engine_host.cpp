#include "testbed/engine_host.h"

#include <gtest/gtest.h>

#include <limits>

#include "engine_test_support.h"

namespace uroce::testbed {
namespace {

using testing::EnginePair;

RcFlowConfig one_message(const EnginePair& p) {
  RcFlowConfig c;
  c.size_bytes = 100;
  c.count = 1;
  c.window = 1;
  c.path.dmac = p.b.config().mac;
  c.path.dip = p.b.config().ip;
  c.path.timeout = 8;  // 4.096 us x 256 = 1.048576 ms
  c.src_mac = p.a.config().mac;
  c.src_ip = p.a.config().ip;
  return c;
}

TEST(EngineHost_Deadline, IdleHasNoneAndALostRequestArmsTheRetransmitTimer) {
  EnginePair p;
  EXPECT_FALSE(p.a.service(0, 64));
  EXPECT_EQ(p.a.next_deadline(), std::numeric_limits<TimeNs>::max());
  RcFlow f(one_message(p), p.a.driver(), p.b.driver());
  ASSERT_EQ(f.setup(), 0);
  p.a.add_endpoint(&f, true);
  p.b.add_endpoint(&f, false);
  p.drop_a_to_b = true;
  f.start(1000);
  p.settle(1000);
  const TimeNs d = p.a.next_deadline();
  EXPECT_GT(d, 1000u);
  EXPECT_LE(d, 1000u + 2 * 1048576u);
  // Nothing happens before the deadline; at it, the engine retransmits and
  // (with the wire back) the message completes.
  p.drop_a_to_b = false;
  p.settle(d - 1);
  EXPECT_EQ(f.stats().completed, 0u);
  p.settle(d);
  EXPECT_EQ(f.stats().completed, 1u);
  engine::QpStatus st;
  ASSERT_EQ(p.a.driver().status(f.src_qp(), &st), 0);
  EXPECT_EQ(st.rc.timeouts, 1u);
  EXPECT_EQ(st.rc.tx_retransmits, 1u);
}

TEST(EngineHost_Service, NoRoomHoldsFramesInTheQpUntilRoomOpens) {
  EnginePair p;
  RcFlowConfig c = one_message(p);
  c.size_bytes = 8 * 1024;  // 8 packets at a 1024-byte MTU
  RcFlow f(c, p.a.driver(), p.b.driver());
  ASSERT_EQ(f.setup(), 0);
  p.a.add_endpoint(&f, true);
  f.start(0);
  p.a.service(0, 3);
  EXPECT_EQ(p.a.port().outbox().size(), 3u);
  EXPECT_TRUE(p.a.starved());
  p.a.port().outbox().clear();
  p.a.service(0, 64);
  EXPECT_EQ(p.a.port().outbox().size(), 5u);
  EXPECT_FALSE(p.a.starved());
  EXPECT_GE(p.a.polls(), 2u);
}

}  // namespace
}  // namespace uroce::testbed
