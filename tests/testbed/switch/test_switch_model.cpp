#include "testbed/switch/switch_model.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

namespace uroce::testbed {
namespace {

struct StormLog {
  struct Entry {
    std::uint16_t port;
    pfc::PfcEvent e;
  };
  std::vector<Entry> events;
  void event(std::uint16_t port, const pfc::PfcEvent& e) { events.push_back({port, e}); }
};

const wire::MacAddr kPeer{{0x02, 0, 0, 0, 0, 0x99}};

// Three ports at 10 Gb/s (a pause quantum is 51.2 ns), priority 3 lossless,
// 100 kB buffer, 10 kB headroom per port: shared 70000, alpha 1:
// T = 70000 - S. Three destinations.
SwitchConfig cfg() {
  SwitchConfig c;
  c.buffer.buffer_bytes = 100000;
  c.buffer.headroom_bytes = 10000;
  c.buffer.pfc_enable = 0x08;
  c.buffer.alpha_num = 1;
  c.buffer.alpha_den = 1;
  c.buffer.xon_offset_bytes = 2000;
  c.buffer.xoff_quanta = 1000;
  for (int i = 0; i < 3; ++i) {
    const wire::MacAddr mac{{0x02, 0, 0, 0, 1, static_cast<std::uint8_t>(i)}};
    c.ports.push_back(SharedBufferPort{10'000'000'000ull, mac});
  }
  c.num_destinations = 3;
  return c;
}

SwitchPacket pkt(std::uint16_t dst, std::uint8_t prio, std::uint32_t bytes, std::uint8_t ttl = 64) {
  SwitchPacket p;
  p.dst = dst;
  p.prio = prio;
  p.bytes = bytes;
  p.ttl = ttl;
  return p;
}

std::vector<std::uint8_t> pause_frame(std::uint8_t mask, std::uint16_t quanta) {
  std::vector<std::uint8_t> f(wire::kPfcFrameSize);
  EXPECT_EQ(wire::build_pfc_pause(f, kPeer, mask, quanta), wire::kPfcFrameSize);
  return f;
}

TEST(SwitchModel_Check, NamesEachBadField) {
  EXPECT_EQ(SwitchModel::check(cfg()), SwitchConfigError::kOk);
  SwitchConfig c = cfg();
  c.buffer.headroom_bytes = 40000;
  EXPECT_EQ(SwitchModel::check(c), SwitchConfigError::kBadBuffer);
  c = cfg();
  c.max_quanta = 0;
  EXPECT_EQ(SwitchModel::check(c), SwitchConfigError::kZeroMaxQuanta);
  c = cfg();
  c.watchdog = true;
  c.watchdog_cfg.detection_ns = 0;
  EXPECT_EQ(SwitchModel::check(c), SwitchConfigError::kBadWatchdog);
  c = cfg();
  c.ecn.kmin_bytes = 10;
  c.ecn.kmax_bytes = 9;
  EXPECT_EQ(SwitchModel::check(c), SwitchConfigError::kBadEcnThresholds);
  c = cfg();
  c.ecn.pmax_ppm = 1'000'001;
  EXPECT_EQ(SwitchModel::check(c), SwitchConfigError::kBadEcnProbability);
  EXPECT_EQ(switch_config_error_name(SwitchConfigError::kBadEcnProbability), "BadEcnProbability");
}

TEST(SwitchModel_Forward, RoutesDecrementsTtlAndSends) {
  SwitchModel sw(cfg());
  ASSERT_TRUE(sw.set_route(2, 1));
  EXPECT_FALSE(sw.set_route(3, 1));  // no such destination
  EXPECT_FALSE(sw.set_route(0, 3));  // no such port
  EXPECT_EQ(sw.route(2), 1);
  EXPECT_EQ(sw.on_packet(0, pkt(2, 3, 1000, 64), 10), SwitchRx::kForwarded);
  EXPECT_EQ(sw.take_kicks(), 0b010u);
  EXPECT_EQ(sw.egress_packets(1, 3), 1u);
  EXPECT_EQ(sw.egress_bytes(1, 3), 1000u);
  EXPECT_EQ(sw.held(0, 1, 3), 1u);
  EXPECT_EQ(sw.buffer().queue_bytes(0, 3), 1000u);
  EXPECT_EQ(sw.progress_at(1, 3), 10u);
  const SwitchTx tx = sw.dequeue(1, 20);
  ASSERT_EQ(tx.kind, SwitchTx::Kind::kData);
  EXPECT_EQ(tx.pkt.ttl, 63);
  EXPECT_EQ(tx.pkt.in_port, 0);
  EXPECT_EQ(sw.buffer().used(), 0u);
  EXPECT_EQ(sw.held(0, 1, 3), 0u);
  EXPECT_EQ(sw.progress_at(1, 3), 20u);
  EXPECT_EQ(sw.counters(1, 3).sent_packets, 1u);
  EXPECT_EQ(sw.dequeue(1, 20).kind, SwitchTx::Kind::kNone);
}

TEST(SwitchModel_RouteGroup, BadGroupsAreRefusedAndLeaveTheRoute) {
  SwitchModel sw(cfg());
  const std::vector<std::uint16_t> ok{1, 2};
  ASSERT_TRUE(sw.set_route_group(0, ok));
  EXPECT_EQ(sw.route(0), 1);
  EXPECT_EQ(sw.route_group(0).size(), 2u);
  EXPECT_FALSE(sw.set_route_group(0, {}));
  const std::vector<std::uint16_t> bad_port{1, 3};
  EXPECT_FALSE(sw.set_route_group(0, bad_port));
  const std::vector<std::uint16_t> too_many(kMaxRoutePorts + 1, 1);
  EXPECT_FALSE(sw.set_route_group(0, too_many));
  EXPECT_FALSE(sw.set_route_group(3, ok));  // no such destination
  EXPECT_EQ(sw.route_group(0).size(), 2u);  // unchanged by the refusals
  EXPECT_TRUE(sw.route_group(3).empty());
  sw.clear_route(0);
  EXPECT_EQ(sw.egress_for(pkt(0, 3, 100)), -1);
}

// A flow's packets all leave by one member; 1,000 flows spread over both.
TEST(SwitchModel_RouteGroup, HashKeepsAFlowOnOneMemberAndSpreadsFlows) {
  SwitchModel sw(cfg());
  const std::vector<std::uint16_t> g{1, 2};
  ASSERT_TRUE(sw.set_route_group(0, g));
  std::array<std::uint32_t, 3> flows_per_port{};
  for (std::uint32_t f = 0; f < 1000; ++f) {
    SwitchPacket p = pkt(0, 3, 10);
    p.entropy = five_tuple_entropy(0x0a000001, 0x0a000002, static_cast<std::uint16_t>(f), 4791, 17);
    const int first = sw.egress_for(p);
    ASSERT_TRUE(first == 1 || first == 2);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(sw.egress_for(p), first);
    EXPECT_EQ(sw.on_packet(0, p, 0), SwitchRx::kForwarded);
    ++flows_per_port[static_cast<std::size_t>(first)];
  }
  // Binomial(1000, 1/2): within 5 standard deviations (79) of 500.
  EXPECT_GT(flows_per_port[1], 420u);
  EXPECT_GT(flows_per_port[2], 420u);
  EXPECT_EQ(sw.egress_packets(1, 3), flows_per_port[1]);
  EXPECT_EQ(sw.egress_packets(2, 3), flows_per_port[2]);
}

// Two switches of other seeds pick differently for some flows (no
// polarisation), and one seed always picks alike.
TEST(SwitchModel_RouteGroup, TheSaltIsPerSwitch) {
  SwitchConfig c1 = cfg();
  c1.seed = 1;
  SwitchConfig c2 = cfg();
  c2.seed = 2;
  SwitchModel a(c1);
  SwitchModel a2(c1);
  SwitchModel b(c2);
  const std::vector<std::uint16_t> g{1, 2};
  for (SwitchModel* m : {&a, &a2, &b}) ASSERT_TRUE(m->set_route_group(0, g));
  std::uint32_t differ = 0;
  for (std::uint32_t f = 0; f < 100; ++f) {
    SwitchPacket p = pkt(0, 3, 100);
    p.entropy = f * 2654435761u;
    EXPECT_EQ(a.egress_for(p), a2.egress_for(p));
    differ += a.egress_for(p) != b.egress_for(p) ? 1 : 0;
  }
  EXPECT_GT(differ, 20u);
  EXPECT_LT(differ, 80u);
}

// Adaptive routing: each packet to the member whose queue for its
// priority holds the fewest bytes; a tie goes to the hashed member.
TEST(SwitchModel_RouteGroup, AdaptiveTakesTheLeastQueuedMember) {
  SwitchConfig c = cfg();
  c.adaptive = true;
  SwitchModel sw(c);
  const std::vector<std::uint16_t> g{1, 2};
  ASSERT_TRUE(sw.set_route_group(0, g));
  SwitchPacket p = pkt(0, 3, 1000);
  p.entropy = 7;
  const int hashed = sw.egress_for(p);
  const int other = hashed == 1 ? 2 : 1;
  ASSERT_EQ(sw.on_packet(0, p, 0), SwitchRx::kForwarded);  // the tie
  EXPECT_EQ(sw.egress_packets(static_cast<std::uint16_t>(hashed), 3), 1u);
  ASSERT_EQ(sw.on_packet(0, p, 0), SwitchRx::kForwarded);  // the emptier one
  EXPECT_EQ(sw.egress_packets(static_cast<std::uint16_t>(other), 3), 1u);
  // Another priority's bytes do not count.
  SwitchPacket q = pkt(0, 5, 4000);
  q.entropy = 7;
  ASSERT_EQ(sw.on_packet(0, q, 0), SwitchRx::kForwarded);
  ASSERT_EQ(sw.on_packet(0, p, 0), SwitchRx::kForwarded);
  EXPECT_EQ(sw.egress_packets(1, 3) + sw.egress_packets(2, 3), 3u);
  EXPECT_EQ(sw.egress_packets(static_cast<std::uint16_t>(hashed), 3), 2u);
}

TEST(SwitchModel_Forward, HairpinToTheIngressPortIsAllowed) {
  SwitchModel sw(cfg());
  sw.set_route(0, 1);
  EXPECT_EQ(sw.on_packet(1, pkt(0, 3, 500), 0), SwitchRx::kForwarded);
  EXPECT_EQ(sw.held(1, 1, 3), 1u);
}

TEST(SwitchModel_Forward, DropsCountedByReason) {
  SwitchModel sw(cfg());
  sw.set_route(1, 2);
  EXPECT_EQ(sw.on_packet(0, pkt(0, 3, 100), 0), SwitchRx::kDropNoRoute);
  EXPECT_EQ(sw.on_packet(0, pkt(1, 3, 100, 1), 0), SwitchRx::kDropTtlExpired);
  EXPECT_EQ(sw.on_packet(0, pkt(1, 3, 100, 0), 0), SwitchRx::kDropTtlExpired);
  EXPECT_EQ(sw.on_packet(3, pkt(1, 3, 100), 0), SwitchRx::kDropBadInput);
  EXPECT_EQ(sw.on_packet(0, pkt(1, 9, 100), 0), SwitchRx::kDropBadInput);
  EXPECT_EQ(sw.on_packet(0, pkt(1, 3, 100, 2), 0), SwitchRx::kForwarded);
  const SwitchCounters& c = sw.counters();
  EXPECT_EQ(c.rx_packets, 6u);
  EXPECT_EQ(c.rx_packets_by[static_cast<std::size_t>(SwitchRx::kDropNoRoute)], 1u);
  EXPECT_EQ(c.rx_packets_by[static_cast<std::size_t>(SwitchRx::kDropTtlExpired)], 2u);
  EXPECT_EQ(c.rx_bytes_by[static_cast<std::size_t>(SwitchRx::kDropTtlExpired)], 200u);
  EXPECT_EQ(c.rx_packets_by[static_cast<std::size_t>(SwitchRx::kDropBadInput)], 2u);
  EXPECT_EQ(c.rx_packets_by[static_cast<std::size_t>(SwitchRx::kForwarded)], 1u);
  sw.clear_route(1);
  EXPECT_EQ(sw.route(1), -1);
  EXPECT_EQ(switch_rx_name(SwitchRx::kDropTtlExpired), "ttl_expired");
  EXPECT_EQ(switch_rx_name(SwitchRx::kDropBadInput), "bad_input");
}

TEST(SwitchModel_Dequeue, ControlFirstThenStrictPriority) {
  SwitchModel sw(cfg());
  sw.set_route(1, 1);
  sw.on_packet(0, pkt(1, 0, 100), 0);
  sw.on_packet(0, pkt(1, 5, 200), 0);
  sw.on_packet(0, pkt(1, 3, 300), 0);
  EXPECT_EQ(sw.dequeue(1, 1).pkt.prio, 5);
  EXPECT_EQ(sw.dequeue(1, 2).pkt.prio, 3);
  EXPECT_EQ(sw.dequeue(1, 3).pkt.prio, 0);
}

TEST(SwitchModel_Counters, PeakBytesIsTheMostQueuedAtOnce) {
  SwitchModel sw(cfg());
  sw.set_route(1, 1);
  sw.on_packet(0, pkt(1, 3, 1000), 0);
  sw.on_packet(0, pkt(1, 3, 500), 0);
  EXPECT_EQ(sw.counters(1, 3).peak_bytes, 1500u);
  sw.dequeue(1, 1);
  sw.on_packet(0, pkt(1, 3, 200), 2);
  EXPECT_EQ(sw.egress_bytes(1, 3), 700u);
  EXPECT_EQ(sw.counters(1, 3).peak_bytes, 1500u);
  EXPECT_EQ(sw.counters(1, 0).peak_bytes, 0u);
}

TEST(SwitchModel_Pfc, XoffGoesToTheUpstreamPort) {
  SwitchModel sw(cfg());
  sw.set_route(1, 1);
  // T = 70000 - S; port 2 sends 36000 in 4 packets: after the fourth,
  // s = 36000 >= T = 34000 -> XOFF on port 2.
  for (int i = 0; i < 4; ++i) sw.on_packet(2, pkt(1, 3, 9000), 0);
  const std::uint64_t kicks = sw.take_kicks();
  EXPECT_EQ(kicks, 0b110u);
  const SwitchTx tx = sw.dequeue(2, 0);
  ASSERT_EQ(tx.kind, SwitchTx::Kind::kControl);
  wire::PfcFrame f;
  ASSERT_EQ(wire::parse_pfc(std::span<const std::uint8_t>(tx.ctrl.bytes.data(), tx.ctrl.len), f),
            wire::PfcParseError::kOk);
  EXPECT_EQ(f.eth.src(), (wire::MacAddr{{0x02, 0, 0, 0, 1, 2}}));
  EXPECT_EQ(f.pfc.class_enable(), 0x08);
  EXPECT_EQ(f.pfc.pause_time(3), 1000);
  EXPECT_EQ(sw.counters().pfc_tx, 1u);
  // Sending one releases enough (s = 27000, T = 43000): XON on port 2.
  ASSERT_EQ(sw.dequeue(1, 100).kind, SwitchTx::Kind::kData);
  const SwitchTx xon = sw.dequeue(2, 100);
  ASSERT_EQ(xon.kind, SwitchTx::Kind::kControl);
  ASSERT_EQ(wire::parse_pfc(std::span<const std::uint8_t>(xon.ctrl.bytes.data(), xon.ctrl.len), f),
            wire::PfcParseError::kOk);
  EXPECT_EQ(f.pfc.pause_time(3), 0);
}

TEST(SwitchModel_Pfc, PauseHonouredUntilItLapsesOrResumes) {
  SwitchModel sw(cfg());
  sw.set_route(1, 1);
  sw.on_packet(0, pkt(1, 3, 100), 0);
  sw.on_packet(0, pkt(1, 4, 100), 0);
  const auto f = pause_frame(0x08, 100);  // 100 x 51.2 ns = 5120 ns
  EXPECT_EQ(sw.on_control(1, f, 1000), wire::PfcParseError::kOk);
  EXPECT_TRUE(sw.paused(1, 3, 1000));
  EXPECT_FALSE(sw.paused(1, 4, 1000));
  EXPECT_EQ(sw.dequeue(1, 1000).pkt.prio, 4);  // other priorities go on
  SwitchTx tx = sw.dequeue(1, 1000);
  EXPECT_EQ(tx.kind, SwitchTx::Kind::kNone);
  EXPECT_EQ(tx.wake_at, 6120u);
  EXPECT_EQ(sw.dequeue(1, 6119).kind, SwitchTx::Kind::kNone);
  EXPECT_EQ(sw.dequeue(1, 6120).kind, SwitchTx::Kind::kData);
  // A resume opens at once.
  sw.on_packet(0, pkt(1, 3, 100), 7000);
  sw.on_control(1, pause_frame(0x08, 1000), 7000);
  EXPECT_EQ(sw.dequeue(1, 7001).kind, SwitchTx::Kind::kNone);
  std::vector<std::uint8_t> resume(wire::kPfcFrameSize);
  wire::build_pfc_resume(resume, kPeer, 0x08);
  sw.on_control(1, resume, 7002);
  EXPECT_EQ(sw.take_kicks() & 0b010u, 0b010u);
  EXPECT_EQ(sw.dequeue(1, 7002).kind, SwitchTx::Kind::kData);
}

TEST(SwitchModel_Pfc, BadFramesAreCountedAndStopNothing) {
  SwitchModel sw(cfg());
  sw.set_route(1, 1);
  sw.on_packet(0, pkt(1, 1, 100), 0);
  // A pause for priority 1, which is not PFC-enabled here: ignored.
  EXPECT_EQ(sw.on_control(1, pause_frame(0x02, 0xffff), 0), wire::PfcParseError::kOk);
  EXPECT_EQ(sw.gate(1).counters().prio[1].disabled_rx, 1u);
  EXPECT_EQ(sw.dequeue(1, 1).kind, SwitchTx::Kind::kData);
  // Truncated, not MAC Control, 802.3x PAUSE opcode, wrong destination.
  auto f = pause_frame(0x08, 10);
  EXPECT_EQ(sw.on_control(1, std::span<const std::uint8_t>(f.data(), 20), 2),
            wire::PfcParseError::kTruncated);
  auto g = f;
  g[12] = 0x08;
  g[13] = 0x00;
  EXPECT_EQ(sw.on_control(1, g, 2), wire::PfcParseError::kNotMacControl);
  g = f;
  g[15] = 0x01;
  g[14] = 0x00;
  EXPECT_EQ(sw.on_control(1, g, 2), wire::PfcParseError::kNotPfcOpcode);
  g = f;
  g[5] = 0x02;
  EXPECT_EQ(sw.on_control(1, g, 2), wire::PfcParseError::kBadDstMac);
  EXPECT_EQ(sw.on_control(7, f, 2), wire::PfcParseError::kTruncated);  // no such port
  EXPECT_FALSE(sw.paused(1, 3, 3));
  EXPECT_EQ(sw.counters().pfc_rx, 6u);
  EXPECT_EQ(sw.counters().pfc_rx_bad_port, 1u);
}

TEST(SwitchModel_Pfc, AbsurdQuantaAreClampedToMaxQuanta) {
  SwitchConfig c = cfg();
  c.max_quanta = 100;
  SwitchModel sw(c);
  sw.set_route(1, 1);
  sw.on_packet(0, pkt(1, 3, 100), 0);
  sw.on_control(1, pause_frame(0x08, 0xffff), 0);
  EXPECT_EQ(sw.gate(1).counters().prio[3].quanta_clamped, 1u);
  EXPECT_EQ(sw.dequeue(1, 0).wake_at, 5120u);
}

TEST(SwitchModel_Ecn, MarksAboveKmaxNeverBelowKmin) {
  SwitchConfig c = cfg();
  c.ecn.enable = 0x08;
  c.ecn.kmin_bytes = 1000;
  c.ecn.kmax_bytes = 3000;
  c.ecn.pmax_ppm = 1'000'000;
  SwitchModel sw(c);
  sw.set_route(1, 1);
  auto ect = [](std::uint32_t bytes) {
    SwitchPacket p = pkt(1, 3, bytes);
    p.ecn = kEcnEct0;
    return p;
  };
  sw.on_packet(0, ect(1000), 0);  // q = 0
  sw.on_packet(0, ect(2000), 0);  // q = 1000 = kmin: never
  sw.on_packet(0, ect(100), 0);   // q = 3000 = kmax: always
  SwitchPacket not_ect = pkt(1, 3, 100);
  sw.on_packet(0, not_ect, 0);  // not ECN-capable: never
  EXPECT_EQ(sw.dequeue(1, 0).pkt.ecn, kEcnEct0);
  EXPECT_EQ(sw.dequeue(1, 0).pkt.ecn, kEcnEct0);
  EXPECT_EQ(sw.dequeue(1, 0).pkt.ecn, kEcnCe);
  EXPECT_EQ(sw.dequeue(1, 0).pkt.ecn, kEcnNotEct);
  EXPECT_EQ(sw.counters(1, 3).ecn_marked, 1u);
}

TEST(SwitchModel_Ecn, ProbabilisticMarkingReplaysWithTheSeed) {
  SwitchConfig c = cfg();
  c.ecn.enable = 0x08;
  // 60 packets of 500 bytes: the marking probability climbs from 0 to
  // about 1 over the queue.
  c.ecn.kmin_bytes = 0;
  c.ecn.kmax_bytes = 30'000;
  c.ecn.pmax_ppm = 1'000'000;
  auto marks = [&](std::uint64_t seed) {
    c.seed = seed;
    SwitchModel sw(c);
    sw.set_route(1, 1);
    std::vector<int> m;
    for (int i = 0; i < 60; ++i) {
      SwitchPacket p = pkt(1, 3, 500);
      p.ecn = kEcnEct0;
      sw.on_packet(0, p, 0);
    }
    for (int i = 0; i < 60; ++i) m.push_back(sw.dequeue(1, 0).pkt.ecn == kEcnCe);
    return m;
  };
  const auto a = marks(7);
  EXPECT_EQ(a, marks(7));
  EXPECT_NE(a, marks(8));
  int n = 0;
  for (int v : a) n += v;
  EXPECT_GT(n, 0);
  EXPECT_LT(n, 60);
}

SwitchConfig watchdog_cfg() {
  SwitchConfig c = cfg();
  c.watchdog = true;
  c.watchdog_cfg.detection_ns = 100'000;
  c.watchdog_cfg.restoration_ns = 50'000;
  c.watchdog_cfg.action = pfc::StormAction::kDrop;
  return c;
}

TEST(SwitchModel_Watchdog, StormFlushesQueueRefusesArrivalsThenRestores) {
  SwitchModel sw(watchdog_cfg());
  sw.set_route(1, 1);
  sw.on_packet(0, pkt(1, 3, 1000), 0);
  sw.on_packet(0, pkt(1, 3, 1000), 0);
  StormLog log;
  // Pauses of 1000 quanta (51200 ns) refreshed every 40 us from t = 0.
  for (TimeNs t = 0; t <= 80'000; t += 40'000) sw.on_control(1, pause_frame(0x08, 1000), t);
  EXPECT_EQ(sw.next_deadline(80'000), 100'000u);
  sw.poll(99'999, log);
  EXPECT_TRUE(log.events.empty());
  sw.poll(100'000, log);
  ASSERT_EQ(log.events.size(), 1u);
  EXPECT_EQ(log.events[0].port, 1);
  EXPECT_EQ(log.events[0].e.type, pfc::PfcEventType::kStormDetected);
  EXPECT_EQ(log.events[0].e.prio, 3);
  EXPECT_EQ(log.events[0].e.since, 0u);
  EXPECT_TRUE(sw.stormed(1, 3));
  EXPECT_EQ(sw.egress_packets(1, 3), 0u);
  EXPECT_EQ(sw.counters(1, 3).wd_flushed_packets, 2u);
  EXPECT_EQ(sw.counters(1, 3).wd_flushed_bytes, 2000u);
  EXPECT_EQ(sw.buffer().used(), 0u);
  EXPECT_FALSE(sw.paused(1, 3, 100'000));  // overridden
  EXPECT_EQ(sw.on_packet(0, pkt(1, 3, 700), 100'001), SwitchRx::kDropWatchdog);
  EXPECT_EQ(sw.counters(1, 3).wd_refused_packets, 1u);
  EXPECT_EQ(sw.counters(1, 3).wd_refused_bytes, 700u);
  // The last pause ends at 80000 + 51200; restoration 50 us after that.
  EXPECT_EQ(sw.next_deadline(100'000), 131'200u + 50'000u);
  sw.poll(181'199, log);
  EXPECT_EQ(log.events.size(), 1u);
  sw.poll(181'200, log);
  ASSERT_EQ(log.events.size(), 2u);
  EXPECT_EQ(log.events[1].e.type, pfc::PfcEventType::kStormRestored);
  EXPECT_FALSE(sw.stormed(1, 3));
  EXPECT_EQ(sw.on_packet(0, pkt(1, 3, 700), 181'201), SwitchRx::kForwarded);
}

TEST(SwitchModel_Watchdog, OffByDefault) {
  SwitchModel sw(cfg());
  sw.set_route(1, 1);
  sw.on_packet(0, pkt(1, 3, 1000), 0);
  StormLog log;
  for (TimeNs t = 0; t <= 400'000; t += 40'000) sw.on_control(1, pause_frame(0x08, 1000), t);
  sw.poll(400'000, log);
  EXPECT_TRUE(log.events.empty());
  EXPECT_EQ(sw.egress_packets(1, 3), 1u);
}

}  // namespace
}  // namespace uroce::testbed
