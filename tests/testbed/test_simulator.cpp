#include "testbed/simulator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "testbed/engine_host.h"
#include "testbed/message_workload.h"
#include "testbed/rc_flow.h"
#include "testbed/report.h"
#include "testbed/scenario_toml.h"
#include "testbed/wait_for.h"
#include "tests/testbed/test_support.h"
#include "tests/testbed/workload_test_support.h"

namespace uroce::testbed {
namespace {

// Builds, checks and runs `sc`; the simulator stays for inspection.
struct SimRun {
  Topology topo;
  std::unique_ptr<Simulator> sim;
  explicit SimRun(const Scenario& sc) {
    EXPECT_EQ(resolve(sc, topo), "");
    EXPECT_EQ(Simulator::check(sc, topo), "");
    sim = std::make_unique<Simulator>(sc, topo, sc.seed);
    sim->run();
  }
  std::uint64_t switch_drops(SwitchRx r) const {
    std::uint64_t n = 0;
    for (const auto& s : sim->switches()) {
      n += s.counters().rx_packets_by[static_cast<std::size_t>(r)];
    }
    return n;
  }
};

TEST(Simulator_Run, ConstantRateDeliveredWithExactLatency) {
  // 1000 bytes every 1600 ns (5 Gb/s) for 1 ms: 625 packets. Unloaded
  // 10 Gb/s hops: 800 ns serialisation + 1000 ns propagation, twice.
  const SimRun r(testing::line(10, 5));
  const FlowStats& f = r.sim->flow_stats()[0];
  EXPECT_EQ(f.offered, 625u);
  EXPECT_EQ(f.refused, 0u);
  EXPECT_EQ(f.rx_packets, 625u);
  EXPECT_EQ(f.rx_bytes, 625'000u);
  EXPECT_EQ(f.latency_max_ns, 3600u);
  EXPECT_EQ(f.latency_sum_ns, 625u * 3600u);
  EXPECT_EQ(f.ttl_min, 63);
  EXPECT_EQ(f.ttl_max, 63);
  EXPECT_EQ(r.sim->stop_reason(), StopReason::kDuration);
  EXPECT_EQ(r.sim->end_ns(), 2 * kNsPerMs);
  EXPECT_TRUE(r.sim->deadlocks().all().empty());
  EXPECT_EQ(r.sim->hosts()[1].counters().rx_packets, 625u);
  EXPECT_EQ(r.sim->link_dirs()[0].counters().data_frames, 625u);
}

TEST(Simulator_Run, LineRateFlowFillsTheLinkExactly) {
  // 1024-byte frames at 40 Gb/s: 204.8 ns apart, carried exactly.
  Scenario sc = testing::line(40, 40);
  sc.flows[0].size_bytes = 1024;
  const SimRun r(sc);
  const FlowStats& f = r.sim->flow_stats()[0];
  // ceil(1 ms / 204.8 ns) = 4883 packets, none refused, all delivered.
  EXPECT_EQ(f.offered, 4883u);
  EXPECT_EQ(f.refused, 0u);
  EXPECT_EQ(f.rx_packets, 4883u);
  // s1 forwards them back to back too: busy for ceil(4883 x 204.8) ns.
  EXPECT_EQ(r.sim->link_dirs()[2].counters().busy_ns, 1'000'039u);
}

TEST(Simulator_Run, LoopBelowItsBoundDrainsThroughTtl) {
  // TTL 16 through 2 switches: each packet crosses s1->s2 8 times, so the
  // loop drains up to 40/8 = 5 Gb/s. 4 Gb/s never builds a queue.
  const SimRun r(make_loop_scenario(testing::small_loop(4, 2 * kNsPerMs)));
  EXPECT_TRUE(r.sim->deadlocks().all().empty());
  EXPECT_GT(r.switch_drops(SwitchRx::kDropTtlExpired), 900u);
  EXPECT_EQ(r.switch_drops(SwitchRx::kDropHeadroomFull), 0u);
  EXPECT_EQ(r.sim->switches()[0].counters().pfc_tx, 0u);
  EXPECT_EQ(r.sim->flow_stats()[0].rx_packets, 0u);
}

TEST(Simulator_Run, LoopAboveItsBoundDeadlocks) {
  LoopParams p = testing::small_loop(10, 20 * kNsPerMs);
  p.stop_on_deadlock = true;
  const SimRun r(make_loop_scenario(p));
  ASSERT_EQ(r.sim->deadlocks().all().size(), 1u);
  const Deadlock& d = r.sim->deadlocks().all()[0];
  ASSERT_EQ(d.cycle.size(), 2u);
  EXPECT_EQ(queue_name(r.topo, queue_of_key(d.cycle[0])), "s1>s2/3");
  EXPECT_EQ(queue_name(r.topo, queue_of_key(d.cycle[1])), "s2>s1/3");
  EXPECT_GE(d.detected_at, d.formed_at + p.stall_ns);
  EXPECT_LT(d.detected_at, d.formed_at + p.stall_ns + p.check_ns);
  EXPECT_EQ(r.sim->stop_reason(), StopReason::kDeadlock);
  EXPECT_EQ(r.sim->end_ns(), d.detected_at);
  EXPECT_EQ(r.switch_drops(SwitchRx::kDropHeadroomFull), 0u);
}

TEST(Simulator_Run, SlowReceiverIsBackPressureNotADeadlock) {
  Scenario sc = testing::line(10, 8);
  sc.hosts[1].rx_bps = 5'000'000'000ull;
  sc.hosts[1].rx_buffer_bytes = 200'000;
  sc.hosts[1].rx_headroom_bytes = 20'000;
  const SimRun r(sc);
  EXPECT_TRUE(r.sim->deadlocks().all().empty());
  EXPECT_GT(r.sim->hosts()[1].counters().tx_pfc_frames, 0u);
  EXPECT_GT(r.sim->switches()[0].counters().pfc_tx, 0u);  // s1 paused h1
  EXPECT_GT(r.sim->flow_stats()[0].refused, 0u);
  EXPECT_EQ(r.sim->hosts()[1].counters().rx_dropped, 0u);
  EXPECT_EQ(r.switch_drops(SwitchRx::kDropHeadroomFull), 0u);
  // Everything sent arrives, at the receiver's pace.
  const FlowStats& f = r.sim->flow_stats()[0];
  EXPECT_EQ(f.rx_packets + r.sim->hosts()[0].tx_queued(), f.offered - f.refused);
}

TEST(Simulator_Run, TransientLoopDeadlockOutlivesTheRouteFix) {
  LoopParams p = testing::small_loop(10, 20 * kNsPerMs);
  p.fix_at_ns = 3 * kNsPerMs;
  const SimRun r(make_loop_scenario(p));
  ASSERT_EQ(r.sim->deadlocks().all().size(), 1u);
  const Deadlock& d = r.sim->deadlocks().all()[0];
  EXPECT_LT(d.formed_at, p.fix_at_ns);
  EXPECT_FALSE(d.resolved);
  EXPECT_EQ(r.sim->route_changes_applied()[0], p.fix_at_ns);
  EXPECT_EQ(r.sim->flow_stats()[0].rx_packets, 0u);
}

TEST(Simulator_Run, WatchdogBreaksTheDeadlockAndReportsWhatItDropped) {
  LoopParams p = testing::small_loop(10, 30 * kNsPerMs);
  p.fix_at_ns = 3 * kNsPerMs;
  p.watchdog = true;
  p.watchdog_detection_ns = 5 * kNsPerMs;
  p.watchdog_restoration_ns = 5 * kNsPerMs;
  const SimRun r(make_loop_scenario(p));
  ASSERT_FALSE(r.sim->deadlocks().all().empty());
  const Deadlock& d = r.sim->deadlocks().all()[0];
  ASSERT_TRUE(d.resolved);
  ASSERT_FALSE(r.sim->storms().empty());
  const StormRecord& s = r.sim->storms()[0];
  EXPECT_GE(s.detected_at, s.paused_since + p.watchdog_detection_ns);
  EXPECT_GE(d.resolved_at, s.detected_at);
  EXPECT_LE(d.resolved_at, s.detected_at + p.check_ns);
  std::uint64_t flushed = 0;
  for (const auto& sw : r.sim->switches()) {
    for (std::uint16_t port = 0; port < sw.num_ports(); ++port) {
      flushed += sw.counters(port, 3).wd_flushed_packets;
    }
  }
  EXPECT_GT(flushed, 0u);
  // With the route fixed and the loop broken, hd receives again.
  EXPECT_GT(r.sim->flow_stats()[0].rx_packets, 0u);
  EXPECT_GT(r.sim->flow_stats()[0].first_rx, d.resolved_at - p.check_ns);
}

TEST(Simulator_Run, RouteFixBelowTheBoundReleasesLoopersWithLowTtls) {
  LoopParams p = testing::small_loop(2, 3 * kNsPerMs);
  p.fix_at_ns = kNsPerMs;
  const SimRun r(make_loop_scenario(p));
  EXPECT_TRUE(r.sim->deadlocks().all().empty());
  const FlowStats& f = r.sim->flow_stats()[0];
  EXPECT_GT(f.rx_packets, 0u);
  EXPECT_EQ(f.ttl_max, 14);  // h1 -> s1 -> s2 -> hd: two decrements
  EXPECT_LT(f.ttl_min, 14);  // those caught in the loop did laps first
}

TEST(Simulator_Run, InjectedPfcFramesGetTheReceiversVerdict) {
  Scenario sc = testing::line(10, 1);
  sc.pfc.max_quanta = 100;
  auto inj = [](TimeNs at) {
    PfcInjectSpec in;
    in.at_ns = at;
    in.from = "h1";
    in.to = "s1";
    in.class_enable = 0x08;
    in.quanta.fill(10);
    return in;
  };
  PfcInjectSpec trunc = inj(1000);
  trunc.length = 20;
  PfcInjectSpec pause8023x = inj(2000);
  pause8023x.opcode = 0x0001;
  PfcInjectSpec not_ctrl = inj(3000);
  not_ctrl.ethertype = 0x0800;
  PfcInjectSpec bad_dst = inj(4000);
  bad_dst.dst_mac = wire::MacAddr{{0x01, 0x80, 0xc2, 0, 0, 0x02}};
  PfcInjectSpec lossy = inj(5000);
  lossy.class_enable = 0x01;
  PfcInjectSpec absurd = inj(6000);
  absurd.quanta.fill(0xffff);
  sc.pfc_injections = {trunc, pause8023x, not_ctrl, bad_dst, lossy, absurd};
  const SimRun r(sc);
  const auto& v = r.sim->injections();
  ASSERT_EQ(v.size(), 6u);
  EXPECT_EQ(v[0].verdict, wire::PfcParseError::kTruncated);
  EXPECT_EQ(v[1].verdict, wire::PfcParseError::kNotPfcOpcode);
  EXPECT_EQ(v[2].verdict, wire::PfcParseError::kNotMacControl);
  EXPECT_EQ(v[3].verdict, wire::PfcParseError::kBadDstMac);
  EXPECT_EQ(v[4].verdict, wire::PfcParseError::kOk);
  EXPECT_EQ(v[5].verdict, wire::PfcParseError::kOk);
  for (const auto& x : v) EXPECT_TRUE(x.delivered);
  EXPECT_EQ(v[0].sent_at, 1000u);
  const pfc::PauseGateCounters& g = r.sim->switches()[0].gate(0).counters();
  EXPECT_EQ(g.prio[0].disabled_rx, 1u);
  EXPECT_EQ(g.prio[3].quanta_clamped, 1u);
  // The frames paused s1's port toward h1, which carries no data: the flow
  // h1 -> h2 was never held.
  EXPECT_EQ(r.sim->flow_stats()[0].rx_packets, r.sim->flow_stats()[0].offered);
}

TEST(Simulator_Seed, SameSeedSameRunOtherSeedOtherRun) {
  LoopParams p = testing::small_loop(10, 5 * kNsPerMs);
  p.start_jitter_ns = 50 * kNsPerUs;
  Scenario sc = make_loop_scenario(p);
  const SimRun a(sc);
  const SimRun b(sc);
  EXPECT_EQ(summary_json(*a.sim), summary_json(*b.sim));
  ASSERT_EQ(a.sim->deadlocks().all().size(), 1u);
  // Another seed starts the flow at another instant within the 50 us.
  sc.seed = 2;
  const SimRun c(sc);
  ASSERT_EQ(c.sim->deadlocks().all().size(), 1u);
  EXPECT_NE(a.sim->deadlocks().all()[0].formed_at, c.sim->deadlocks().all()[0].formed_at);
  EXPECT_NE(a.sim->first_flow_start(), kNever);
  EXPECT_NE(derive_seed(1, 1, 0), derive_seed(1, 1, 1));
  EXPECT_NE(derive_seed(1, 1, 0), derive_seed(2, 1, 0));
}

}  // namespace
}  // namespace uroce::testbed

namespace uroce::testbed {
namespace {

// h1 - s1 - h2 (10 Gb/s, 1 us) with both hosts running the engine: three
// 1000-byte SENDs next to the constant-rate flow h1 -> h2.
Scenario engine_line() {
  Scenario sc = testing::line();
  sc.hosts[0].engine = true;
  sc.hosts[1].engine = true;
  RcFlowSpec r;
  r.name = "r";
  r.src = "h1";
  r.dst = "h2";
  r.size_bytes = 1000;
  r.count = 3;
  sc.rc_flows = {r};
  return sc;
}

TEST(Simulator_Engine, RcSendsCompleteBesideAConstantFlow) {
  SimRun r(engine_line());
  ASSERT_EQ(r.sim->rc_flows().size(), 1u);
  EXPECT_EQ(r.sim->rc_flow_setup()[0], 0);
  const RcFlowStats& s = r.sim->rc_flows()[0]->stats();
  EXPECT_EQ(s.completed, 3u);
  EXPECT_EQ(s.recv_completed, 3u);
  EXPECT_EQ(s.recv_bytes, 3000u);
  ASSERT_EQ(s.mct_ns.size(), 3u);
  // The receives were in the transport before the first SEND arrived (the
  // engines' first poll at 0): no RNR NAK, no retransmission (an RNR
  // retry would take the min_rnr_timer, far above these bounds), a round
  // trip of 4 x 1 us plus serialisation behind the constant flow's frames.
  engine::QpStatus st;
  ASSERT_EQ(r.sim->rc_flows()[0]->src().status(r.sim->rc_flows()[0]->src_qp(), &st), 0);
  EXPECT_EQ(st.rc.rx_rnr_naks, 0u);
  EXPECT_EQ(st.rc.tx_retransmits, 0u);
  EXPECT_GT(s.mct_ns[0], 4000u);
  EXPECT_LT(s.mct_ns[0], 10000u);
  // The constant flow's records were counted as before.
  EXPECT_GT(r.sim->flow_stats()[0].rx_packets, 0u);
  EXPECT_EQ(r.sim->engine_frames().rx_frames, 6u);  // 3 SENDs + 3 ACKs
  EXPECT_EQ(r.sim->frame_store().live(), 0u);
}

TEST(Simulator_Engine, EngineTimersAreEventsNotSteps) {
  // A flow whose peer's link is down for it: the switch has no route to
  // h2, so every request is dropped and only the retransmit timer (timeout
  // 8: 1.05 ms) brings the engine back: a few polls, not one per ns.
  Scenario sc = engine_line();
  sc.flows.clear();
  sc.duration_ns = 5 * kNsPerMs;
  sc.auto_routes = false;
  RouteSpec back;
  back.sw = "s1";
  back.dst = "h1";
  back.via = "h1";
  sc.routes = {back};
  sc.rc_flows[0].timeout = 8;
  sc.rc_flows[0].count = 1;
  SimRun r(sc);
  EXPECT_EQ(r.sim->rc_flows()[0]->stats().completed, 0u);
  EXPECT_GE(r.switch_drops(SwitchRx::kDropNoRoute), 3u);
  EXPECT_EQ(r.sim->engine_frames().switch_dropped, r.switch_drops(SwitchRx::kDropNoRoute));
  EXPECT_EQ(r.sim->frame_store().live(), 0u);
  EXPECT_LT(r.sim->events_processed(), 100u);
}

// The engine's own PFC in both directions (rc_engine_pfc.toml): h3's slow
// engine (10 us a poll, 1 staged frame a poll) sends XOFF to s1 from its
// PfcEndpoint and s1 holds its queue toward h3; s1 then pauses h1 and h2
// with real 802.1Qbb frames that their engines obey. Nothing is dropped,
// nothing retransmitted, every message completes with its exact bytes.
TEST(Simulator_EnginePfc, SlowEngineHostPausesItsSwitchAndSendersObey) {
  Scenario sc;
  ASSERT_EQ(scenario_from_file(std::string(UROCE_SOURCE_ROOT) +
                                   "/testbed/scenarios/rc_engine_pfc.toml",
                               sc),
            "");
  SimRun r(sc);
  const Simulator& sim = *r.sim;
  const TimeNs end = sim.end_ns();
  ASSERT_EQ(sim.rc_flows().size(), 2u);
  for (const auto& f : sim.rc_flows()) {
    const RcFlowStats& s = f->stats();
    EXPECT_TRUE(f->done());
    EXPECT_EQ(s.completed, f->config().count);
    EXPECT_EQ(s.bytes, std::uint64_t{f->config().count} * f->config().size_bytes);
    EXPECT_EQ(s.errors, 0u);
    EXPECT_EQ(s.payload_mismatch, 0u);
    engine::QpStatus st;
    ASSERT_EQ(f->src().status(f->src_qp(), &st), 0);
    EXPECT_EQ(st.rc.tx_retransmits, 0u);
    EXPECT_EQ(st.rc.timeouts, 0u);
  }
  EXPECT_EQ(sim.rc_flows()[1]->stats().recv_bytes, 20u * 65536u);  // the SEND flow
  // h3 (index 2) generated XOFF from its engine; h1, h2 generated none.
  const engine::PfcStatus h3 = sim.engines()[2]->vnic().pfc().status(end);
  EXPECT_EQ(h3.link_bps, 10'000'000'000u);
  EXPECT_GT(h3.ingress.prio[3].xoff_sent, 0u);
  EXPECT_GT(h3.ingress.prio[3].xon_sent, 0u);
  EXPECT_GT(h3.asserted_ns[3], 0u);
  EXPECT_EQ(h3.engine.prio[3].admit_drops, 0u);
  EXPECT_EQ(h3.engine.prio[3].stage_full, 0u);
  EXPECT_EQ(h3.engine.pfc_tx, sim.engine_frames().tx_pfc);
  EXPECT_EQ(sim.engine_frames().tx_pfc_refused, 0u);
  // s1 received exactly those frames and honoured them (paused time > 0).
  const SwitchModel& s1 = sim.switches()[0];
  EXPECT_EQ(s1.counters().pfc_rx, sim.engine_frames().tx_pfc);
  TimeNs sw_paused = 0;
  for (std::uint16_t p = 0; p < 3; ++p) sw_paused += s1.gate(p).paused_ns(3, end);
  EXPECT_GT(sw_paused, 0u);
  EXPECT_EQ(s1.gate(2).paused_ns(3, end), sw_paused);  // only toward h3
  // The senders' engines obeyed s1's pauses; their Host models saw none.
  for (std::uint32_t h = 0; h < 2; ++h) {
    const engine::PfcStatus st = sim.engines()[h]->vnic().pfc().status(end);
    EXPECT_GT(st.gate.prio[3].pause_rx, 0u) << h;
    EXPECT_GT(st.paused_ns[3], 0u) << h;
    EXPECT_GT(st.engine.prio[3].pump_skips, 0u) << h;
    EXPECT_EQ(st.ingress.prio[3].xoff_sent, 0u) << h;
    EXPECT_EQ(sim.hosts()[h].counters().rx_pfc_frames, 0u) << h;
  }
  EXPECT_EQ(sim.engine_frames().rx_pfc, s1.counters().pfc_tx);
  // No drop anywhere.
  for (std::size_t k = 1; k < kNumSwitchRx; ++k) {
    EXPECT_EQ(r.switch_drops(static_cast<SwitchRx>(k)), 0u) << k;
  }
  EXPECT_EQ(sim.engine_frames().switch_dropped, 0u);
  EXPECT_EQ(sim.engine_frames().tx_refused, 0u);
  for (const Host& h : sim.hosts()) EXPECT_EQ(h.counters().rx_dropped, 0u);
  EXPECT_EQ(sim.frame_store().live(), 0u);
}

// Without `pfc` on the host the engine's PFC stays off and the Host model
// honours the switch as before: the engines see no PFC frame at all.
TEST(Simulator_EnginePfc, WithoutThePfcKeyTheHostModelHonoursTheSwitch) {
  Scenario sc;
  ASSERT_EQ(scenario_from_file(std::string(UROCE_SOURCE_ROOT) +
                                   "/testbed/scenarios/rc_engine_pfc.toml",
                               sc),
            "");
  for (HostSpec& h : sc.hosts) h.engine_pfc = 0;
  sc.duration_ns = 2 * kNsPerMs;
  SimRun r(sc);
  EXPECT_EQ(r.sim->engine_frames().rx_pfc, 0u);
  EXPECT_EQ(r.sim->engine_frames().tx_pfc, 0u);
  EXPECT_GT(r.sim->hosts()[0].counters().rx_pfc_frames, 0u);
  EXPECT_EQ(r.sim->engines()[0]->vnic().pfc_status().enable, 0u);
}

// DCQCN on engine hosts (dcqcn_incast.toml, shortened to 20 ms): eight
// senders at 40 Gb/s into one 40 Gb/s port. With DCQCN the switch marks,
// the receiver's engine answers with CNPs, every sender's QP is cut, and s1
// never pauses anyone; without it the same incast pauses the senders and
// nothing is marked (the engines' packets are not ECN-capable). Both keep
// every byte. The steady state (queue near kmax, rates within 10 % of fair
// share) takes longer than a unit test should run: docs/isolation.md has it.
Scenario incast(bool dcqcn) {
  Scenario sc;
  EXPECT_EQ(scenario_from_file(std::string(UROCE_SOURCE_ROOT) +
                                   "/testbed/scenarios/dcqcn_incast.toml",
                               {"scenario.duration_ms=20",
                                std::string("defaults.host.dcqcn=") + (dcqcn ? "true" : "false")},
                               sc),
            "");
  return sc;
}

TEST(Simulator_Dcqcn, IncastIsMarkedAndCutWithoutAnyPause) {
  const SimRun r(incast(true));
  const Simulator& sim = *r.sim;
  const SwitchModel& s1 = sim.switches()[0];
  EXPECT_EQ(s1.counters().pfc_tx, 0u);
  EXPECT_GT(s1.counters(8, 3).ecn_marked, 0u);  // port 8: toward r
  const policy::DcqcnCounters& rc = sim.engines()[8]->vnic().policy<policy::Dcqcn>().counters();
  EXPECT_GT(rc.rx_ce, 0u);
  EXPECT_GT(rc.tx_cnp, 0u);
  EXPECT_EQ(rc.tx_cnp + rc.cnp_suppressed, rc.rx_ce);
  std::uint64_t cnps_rx = 0;
  for (std::uint32_t h = 0; h < 8; ++h) {
    const policy::DcqcnCounters& c = sim.engines()[h]->vnic().policy<policy::Dcqcn>().counters();
    EXPECT_GT(c.rx_cnp, 0u) << h;
    EXPECT_EQ(c.cc_no_entry, 0u) << h;
    cnps_rx += c.rx_cnp;
    std::vector<engine::QpStatus> qs;
    sim.engines()[h]->vnic().qp_status(&qs);
    ASSERT_EQ(qs.size(), 1u);
    EXPECT_TRUE(qs[0].dcqcn);
    EXPECT_GT(qs[0].cc.rp.decreases, 0u) << h;
  }
  EXPECT_EQ(cnps_rx, rc.tx_cnp);  // no CNP lost or misdelivered
  for (const auto& f : sim.rc_flows()) {
    EXPECT_GT(f->stats().completed, 0u);
    EXPECT_EQ(f->stats().errors, 0u);
    engine::QpStatus st;
    ASSERT_EQ(f->src().status(f->src_qp(), &st), 0);
    EXPECT_EQ(st.rc.tx_retransmits, 0u);
  }
  for (std::size_t k = 1; k < kNumSwitchRx; ++k) {
    EXPECT_EQ(r.switch_drops(static_cast<SwitchRx>(k)), 0u) << k;
  }
}

TEST(Simulator_Dcqcn, WithoutDcqcnTheSameIncastPauses) {
  const SimRun r(incast(false));
  const Simulator& sim = *r.sim;
  const SwitchModel& s1 = sim.switches()[0];
  EXPECT_GT(s1.counters().pfc_tx, 0u);
  EXPECT_EQ(s1.counters(8, 3).ecn_marked, 0u);
  EXPECT_EQ(sim.engines()[8]->vnic().policy<policy::Dcqcn>().counters().tx_cnp, 0u);
  for (std::uint32_t h = 0; h < 8; ++h) {
    EXPECT_EQ(sim.engines()[h]->vnic().policy<policy::Dcqcn>().counters().rx_cnp, 0u) << h;
  }
  for (std::size_t k = 1; k < kNumSwitchRx; ++k) {
    EXPECT_EQ(r.switch_drops(static_cast<SwitchRx>(k)), 0u) << k;
  }
  // The queue toward r grew past what DCQCN let it reach.
  const SimRun on(incast(true));
  EXPECT_GT(s1.counters(8, 3).peak_bytes, on.sim->switches()[0].counters(8, 3).peak_bytes);
}

// Isolation on engine hosts (isolation.toml, 4 ms): the latency flow (16-byte
// WRITEs, one outstanding, strict class 6) alone and beside four elephants
// (1 MiB WRITEs, class 0), b's TX queue one FIFO of 1024 frames as a memif
// ring. docs/isolation.md ("Isolation in the testbed") has the full set.
struct IsoPoint {
  bool lat = true;
  bool elephants = true;
  const char* isolation = "classes";
  std::uint32_t limit = 4096;  // tx_limit_bytes
  std::uint32_t overhead = 0;  // the links' overhead_bytes per frame
};

Scenario isolation(const IsoPoint& p) {
  std::vector<std::string> sets = {"scenario.duration_ms=4",
                                   std::string("defaults.host.isolation=\"") + p.isolation + "\"",
                                   "defaults.host.tx_limit_bytes=" + std::to_string(p.limit),
                                   "defaults.link.overhead_bytes=" + std::to_string(p.overhead)};
  if (p.lat) sets.push_back("rc_flow.0.enabled=true");
  for (int e = 2; p.elephants && e < 6; ++e) {
    sets.push_back("rc_flow." + std::to_string(e) + ".enabled=true");
  }
  Scenario sc;
  EXPECT_EQ(scenario_from_file(std::string(UROCE_SOURCE_ROOT) + "/testbed/scenarios/isolation.toml",
                               sets, sc),
            "");
  return sc;
}

// The nearest-rank 99th percentile of the latency flow's completion times.
TimeNs lat_p99(const SimRun& r) {
  std::vector<TimeNs> v = r.sim->rc_flows()[0]->stats().mct_ns;
  EXPECT_FALSE(v.empty());
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[(v.size() * 99 + 99) / 100 - 1];
}

std::uint64_t elephant_bytes(const SimRun& r) {
  std::uint64_t b = 0;
  for (std::size_t f = 2; f < 6; ++f) b += r.sim->rc_flows()[f]->stats().bytes;
  return b;
}

TEST(Simulator_Isolation, StrictClassBesideElephantsStaysNearItsAloneLatency) {
  const SimRun alone(isolation({.elephants = false}));
  const SimRun eleph(isolation({.lat = false}));
  const SimRun both(isolation({}));
  const TimeNs p99_alone = lat_p99(alone);
  EXPECT_GT(both.sim->rc_flows()[0]->stats().completed, 400u);
  EXPECT_LE(lat_p99(both), p99_alone * 3 / 2);
  // The elephants keep their bandwidth (the latency flow's bytes are few).
  EXPECT_GE(elephant_bytes(both) * 10, elephant_bytes(eleph) * 9);
  EXPECT_GT(both.sim->engines()[1]->vnic().counters().tx_limit_stops, 0u);
}

TEST(Simulator_Isolation, WithIsolationOffTheLatencyFlowWaitsItsRoundRobinTurn) {
  const SimRun alone(isolation({.elephants = false, .isolation = "off"}));
  const SimRun both(isolation({.isolation = "off"}));
  EXPECT_GT(lat_p99(both), lat_p99(alone) * 3 / 2);
}

// On links that carry Ethernet's 24 bytes per frame beyond it, the port
// limit's model counts them too (the host link's overhead): the strict
// class keeps its latency for the whole run. A model without them would
// drain faster than the link and let the FIFO grow by 0.6 % of 40 Gb/s,
// about 100 elephant frames by the end of the 4 ms.
TEST(Simulator_Isolation, PortLimitCountsTheLinksFrameOverhead) {
  const SimRun alone(isolation({.elephants = false, .overhead = 24}));
  const SimRun both(isolation({.overhead = 24}));
  EXPECT_GT(both.sim->rc_flows()[0]->stats().completed, 400u);
  EXPECT_LE(lat_p99(both), lat_p99(alone) * 3 / 2);
}

// Without the port limit the FIFO below the scheduler fills with elephant
// frames and the strict class waits behind all of them.
TEST(Simulator_Isolation, DeepFifoBelowTheSchedulerDefeatsTheStrictClass) {
  const SimRun alone(isolation({.elephants = false, .limit = 0}));
  const SimRun both(isolation({.limit = 0}));
  EXPECT_GT(lat_p99(both), lat_p99(alone) * 10);
  EXPECT_EQ(both.sim->engines()[1]->vnic().counters().tx_limit_stops, 0u);
}

// A [workload] run: arrivals are events, the engines serve them, and the
// run ends at the instant its last measured message is received (not at
// duration_ms), with arrivals still coming until then.
TEST(Simulator_Workload, EndsWhenTheLastMeasuredMessageIsReceived) {
  Scenario sc = testing::star_workload(4, testing::workload_file("w4.csv"), 0.6, 0.5, 50);
  sc.workload.max_length_bytes = 200000;
  const SimRun r(sc);
  const MessageWorkload& w = *r.sim->workload();
  EXPECT_EQ(r.sim->stop_reason(), StopReason::kWorkloadDone);
  TimeNs last = 0;
  bool later_arrivals = false;
  for (const MessageRecord& m : w.records()) {
    if (m.measured) last = std::max(last, m.done_ns);
    later_arrivals = later_arrivals || m.arrival_ns >= sc.workload.measure_ns;
  }
  EXPECT_EQ(r.sim->end_ns(), last);
  EXPECT_GT(last, sc.workload.measure_ns);
  EXPECT_TRUE(later_arrivals);
  EXPECT_EQ(w.stats().measured_done, w.stats().measured);
}

// The workload's service level picks the DSCP (8 x priority) and the switch
// queues its frames, data and ACKs, by DSCP / 8: every frame in priority
// 5's queues, none in the default 3's.
TEST(Simulator_Workload, ServiceLevelPicksTheSwitchPriorityQueue) {
  Scenario sc = testing::star_workload(3, testing::workload_file("w3.csv"), 0.5, 0.1, 20);
  sc.workload.max_length_bytes = 10000;
  sc.workload.sl = 5;
  const SimRun r(sc);
  const SwitchModel& s = r.sim->switches()[0];
  std::uint64_t p5 = 0;
  std::uint64_t other = 0;
  for (std::uint16_t port = 0; port < 3; ++port) {
    for (std::uint8_t prio = 0; prio < 8; ++prio) {
      (prio == 5 ? p5 : other) += s.counters(port, prio).sent_packets;
    }
  }
  EXPECT_GT(p5, 100u);
  EXPECT_EQ(other, 0u);
}

// Scenarios without the table have no workload and keep their stop.
TEST(Simulator_Workload, WithoutAWorkloadNothingChanges) {
  const SimRun r(testing::line());
  EXPECT_EQ(r.sim->workload(), nullptr);
  EXPECT_EQ(r.sim->stop_reason(), StopReason::kDuration);
}

}  // namespace
}  // namespace uroce::testbed
