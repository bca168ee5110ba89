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

TEST(EngineHost_Pfc, ConfigReachesTheEnginesPfcEndpoint) {
  FrameStore store;
  EngineHostConfig c = testing::engine_cfg("x", 9);
  EngineHost off(c, store);
  EXPECT_EQ(off.vnic().pfc_status().enable, 0);
  c.pfc_enable = 0x08;
  c.link_bps = 10'000'000'000ull;
  c.pfc_rx_budget = 3;
  EngineHost on(c, store);
  const engine::PfcStatus s = on.vnic().pfc_status();
  EXPECT_EQ(s.enable, 0x08);
  EXPECT_EQ(s.link_bps, 10'000'000'000ull);
  EXPECT_EQ(on.vnic().pfc().config().rx_budget, 3u);
}

TEST(EngineHost_Pfc, PauseFrameStopsThePumpUntilItsQuantaExpire) {
  EnginePair p;
  FrameStore& store = p.store;
  EngineHostConfig c = testing::engine_cfg("a", 1);
  c.pfc_enable = 0x08;
  c.link_bps = 10'000'000'000ull;  // a quantum is 51.2 ns
  EngineHost a(c, store);
  // A pause for priority 3, 100 quanta = 5120 ns, as the switch sends it.
  std::vector<std::uint8_t> f(wire::kPfcFrameSize);
  ASSERT_EQ(wire::build_pfc_pause(f, wire::MacAddr{{2, 0, 0, 0, 0, 0x77}}, 0x08, 100),
            wire::kPfcFrameSize);
  a.port().deliver(store.put(f));
  EXPECT_FALSE(a.service(1000, 64));
  const engine::PfcStatus s = a.vnic().pfc_status();
  EXPECT_EQ(s.gate.prio[3].pause_rx, 1u);
  EXPECT_TRUE(s.peer_paused[3]);
  // The end of the pause is the host's next deadline (pfc_next_deadline).
  EXPECT_EQ(a.next_deadline(), 1000u + 5120u);
  EXPECT_FALSE(a.service(6120, 64));
  EXPECT_FALSE(a.vnic().pfc_status().peer_paused[3]);
  EXPECT_EQ(a.next_deadline(), std::numeric_limits<TimeNs>::max());
}

TEST(EngineHost_Service, PollCostMakesOnePollPerServiceAndABusyInterval) {
  FrameStore store;
  EngineHostConfig c = testing::engine_cfg("x", 9);
  c.poll_ns = 2000;
  EngineHost h(c, store);
  EXPECT_EQ(h.busy_until(), 0u);
  EXPECT_FALSE(h.service(500, 64));
  EXPECT_EQ(h.polls(), 1u);
  EXPECT_EQ(h.busy_until(), 2500u);
}

TEST(EngineHost_Homa, ConfigReachesTheVnic) {
  FrameStore store;
  EngineHostConfig c = testing::engine_cfg("x", 9);
  EngineHost off(c, store);
  EXPECT_FALSE(off.vnic().config().homa.enabled);
  c.homa.enabled = true;
  c.homa.priorities = 2;
  c.homa.unsched_bytes = 12345;
  EngineHost on(c, store);
  EXPECT_TRUE(on.vnic().config().homa.enabled);
  EXPECT_EQ(on.vnic().config().homa.priorities, 2);
  EXPECT_EQ(on.vnic().config().homa.unsched_bytes, 12345u);
}

// Apps (the workload's agents) run after every poll, and what they post
// makes the engine poll again.
TEST(EngineHost_Service, AppsRunAfterEachPollAndTheirPostsPollAgain) {
  struct Counter : EngineApp {
    int calls = 0;
    int post_first = 0;  // report this many services as "posted"
    bool service(TimeNs) override { return ++calls <= post_first; }
  };
  EnginePair p;
  Counter app;
  app.post_first = 2;
  p.a.add_app(&app);
  EXPECT_FALSE(p.a.service(0, 64));
  EXPECT_EQ(app.calls, 3);  // two "posts", then a poll with nothing to do
  EXPECT_EQ(p.a.polls(), 3u);
}

}  // namespace
}  // namespace uroce::testbed
