#include "pfc/ttl_monitor.h"

#include <gtest/gtest.h>

#include <vector>

#include "datapath/wire/builder.h"
#include "tests/pfc/fake_sinks.h"

namespace uroce::pfc {
namespace {

using testing::EventLog;

const wire::MacAddr kOwnMac{{0x02, 0, 0, 0, 0, 0x01}};
const wire::MacAddr kPeerMac{{0x02, 0, 0, 0, 0, 0x02}};
const wire::Ipv4Addr kOwnIp{0x0a000001};
const wire::Ipv4Addr kPeerIp{0x0a000002};
const wire::Ipv4Addr kPeer2Ip{0x0a000003};

TtlMonitorConfig cfg() {
  TtlMonitorConfig c;
  c.own_mac = kOwnMac;
  c.own_ip = kOwnIp;
  c.min_samples = 4;
  c.outlier_delta = 2;
  return c;
}

RxTtlInfo rx(std::uint32_t psn, std::uint8_t ttl, wire::Ipv4Addr ip = kPeerIp) {
  return RxTtlInfo{kPeerMac, ip, 0x11, psn, ttl};
}

TEST(TtlMonitor_Check, DefaultsAndBadFields) {
  TtlMonitorConfig c;
  EXPECT_EQ(c.tx_ttl, 64);
  EXPECT_EQ(TtlMonitor::check(c), TtlMonitorConfigError::kOk);
  EXPECT_EQ(TtlMonitor(c).tx_ttl(), 64);
  c.tx_ttl = 0;
  EXPECT_EQ(TtlMonitor::check(c), TtlMonitorConfigError::kZeroTxTtl);
  c = TtlMonitorConfig{};
  c.replay_slots = 1000;
  EXPECT_EQ(TtlMonitor::check(c), TtlMonitorConfigError::kBadReplaySlots);
  c.replay_slots = 0;
  EXPECT_EQ(TtlMonitor::check(c), TtlMonitorConfigError::kBadReplaySlots);
  c.replay_slots = 1u << 21;
  EXPECT_EQ(TtlMonitor::check(c), TtlMonitorConfigError::kBadReplaySlots);
  c = TtlMonitorConfig{};
  c.replay_window_ns = 0;
  EXPECT_EQ(TtlMonitor::check(c), TtlMonitorConfigError::kZeroReplayWindow);
  c = TtlMonitorConfig{};
  c.peer_slots = 3;
  EXPECT_EQ(TtlMonitor::check(c), TtlMonitorConfigError::kBadPeerSlots);
  c = TtlMonitorConfig{};
  c.outlier_delta = 0;
  EXPECT_EQ(TtlMonitor::check(c), TtlMonitorConfigError::kZeroOutlierDelta);
  c = TtlMonitorConfig{};
  c.min_samples = 65;
  EXPECT_EQ(TtlMonitor::check(c), TtlMonitorConfigError::kBadMinSamples);
  c.min_samples = 0;
  EXPECT_EQ(TtlMonitor::check(c), TtlMonitorConfigError::kBadMinSamples);
  EXPECT_EQ(ttl_monitor_config_error_name(TtlMonitorConfigError::kBadPeerSlots), "BadPeerSlots");
}

TEST(TtlMonitor_OwnPacket, ByMacOrIpAndRateLimited) {
  TtlMonitor m(cfg());
  EventLog log;
  EXPECT_EQ(m.on_rx(RxTtlInfo{kOwnMac, kPeerIp, 1, 1, 63}, 0, log), kLoopOwnPacket);
  EXPECT_EQ(m.on_rx(RxTtlInfo{kPeerMac, kOwnIp, 1, 2, 62}, 10, log), kLoopOwnPacket);
  EXPECT_EQ(m.on_rx(RxTtlInfo{kPeerMac, kOwnIp, 1, 3, 61}, kNsPerSec - 1, log), kLoopOwnPacket);
  EXPECT_EQ(m.on_rx(RxTtlInfo{kPeerMac, kOwnIp, 1, 4, 60}, kNsPerSec, log), kLoopOwnPacket);
  EXPECT_EQ(m.counters().own_packets, 4u);
  ASSERT_EQ(log.events.size(), 2u);
  EXPECT_EQ(log.events[0].type, PfcEventType::kOwnPacket);
  EXPECT_EQ(log.events[0].ttl, 63);
  EXPECT_EQ(log.events[0].ref_ttl, 64);
  EXPECT_EQ(log.events[0].suppressed, 0u);
  EXPECT_EQ(log.events[1].psn, 4u);
  EXPECT_EQ(log.events[1].suppressed, 2u);
  EXPECT_EQ(m.counters().events_logged, 2u);
  EXPECT_EQ(m.counters().events_suppressed, 2u);
  std::uint8_t t = 0, conf = 0;
  EXPECT_FALSE(m.peer_usual_ttl(kOwnIp, t, conf));  // not tracked as a peer
}

TEST(TtlMonitor_OwnPacket, ZeroAddressesAreNotChecked) {
  TtlMonitor m(TtlMonitorConfig{});
  NullEventSink ns;
  EXPECT_EQ(m.on_rx(RxTtlInfo{wire::MacAddr{}, wire::Ipv4Addr{}, 1, 1, 64}, 0, ns), kLoopNone);
  EXPECT_EQ(m.counters().own_packets, 0u);
}

TEST(TtlMonitor_Replay, LowerTtlIsALoopSignal) {
  TtlMonitor m(cfg());
  EventLog log;
  EXPECT_EQ(m.on_rx(rx(100, 60), 0, log), kLoopNone);
  EXPECT_EQ(m.on_rx(rx(100, 58), 1000, log), kLoopReplayLowerTtl);
  EXPECT_EQ(m.on_rx(rx(100, 56), 2000, log), kLoopReplayLowerTtl);  // next lap
  EXPECT_EQ(m.counters().replay_lower_ttl, 2u);
  ASSERT_EQ(log.events.size(), 1u);
  EXPECT_EQ(log.events[0].type, PfcEventType::kLoopReplay);
  EXPECT_EQ(log.events[0].ttl, 58);
  EXPECT_EQ(log.events[0].ref_ttl, 60);
  EXPECT_EQ(log.events[0].qpn, 0x11u);
  EXPECT_EQ(log.events[0].psn, 100u);
  EXPECT_EQ(log.events[0].src_ip, kPeerIp.v);
}

TEST(TtlMonitor_Replay, SameOrHigherTtlIsNotASignal) {
  TtlMonitor m(cfg());
  NullEventSink ns;
  m.on_rx(rx(7, 60), 0, ns);
  EXPECT_EQ(m.on_rx(rx(7, 60), 10, ns), kLoopNone);  // retransmission
  EXPECT_EQ(m.on_rx(rx(7, 61), 20, ns), kLoopNone);
  EXPECT_EQ(m.counters().replay_same_ttl, 1u);
  EXPECT_EQ(m.counters().replay_higher_ttl, 1u);
  EXPECT_EQ(m.counters().replay_lower_ttl, 0u);
}

TEST(TtlMonitor_Replay, OutsideWindowForgotten) {
  auto c = cfg();
  c.replay_window_ns = 1000;
  TtlMonitor m(c);
  NullEventSink ns;
  m.on_rx(rx(7, 60), 0, ns);
  EXPECT_EQ(m.on_rx(rx(7, 58), 1000, ns), kLoopReplayLowerTtl);  // window inclusive
  EXPECT_EQ(m.on_rx(rx(7, 56), 2001, ns), kLoopNone);
}

TEST(TtlMonitor_Replay, DifferentSourceIsADifferentPacket) {
  TtlMonitor m(cfg());
  NullEventSink ns;
  m.on_rx(rx(7, 60, kPeerIp), 0, ns);
  EXPECT_EQ(m.on_rx(rx(7, 50, kPeer2Ip), 1, ns), kLoopNone);
}

TEST(TtlMonitor_Replay, BoundedTableEvictsAndCounts) {
  auto c = cfg();
  c.replay_slots = 1;
  TtlMonitor m(c);
  NullEventSink ns;
  m.on_rx(rx(1, 60), 0, ns);
  m.on_rx(rx(2, 60), 1, ns);  // replaces psn 1
  EXPECT_EQ(m.on_rx(rx(1, 50), 2, ns), kLoopNone);
  EXPECT_EQ(m.counters().replay_evictions, 2u);
}

TEST(TtlMonitor_Outlier, FlaggedOnlyOnceConfidentAndByDelta) {
  TtlMonitor m(cfg());
  EventLog log;
  // Three samples: confidence 3 < min_samples 4, nothing flagged yet.
  for (std::uint32_t i = 0; i < 3; ++i) m.on_rx(rx(i, 60), i, log);
  EXPECT_EQ(m.on_rx(rx(10, 57), 10, log), kLoopNone);                  // conf 3 -> 2
  for (std::uint32_t i = 20; i < 22; ++i) m.on_rx(rx(i, 60), i, log);  // conf 4
  std::uint8_t t = 0, conf = 0;
  ASSERT_TRUE(m.peer_usual_ttl(kPeerIp, t, conf));
  EXPECT_EQ(t, 60);
  EXPECT_EQ(conf, 4);
  EXPECT_EQ(m.on_rx(rx(30, 59), 30, log), kLoopNone);  // within delta; conf 3
  m.on_rx(rx(31, 60), 31, log);                        // conf 4
  EXPECT_EQ(m.on_rx(rx(32, 58), 32, log), kLoopTtlOutlierLow);
  m.on_rx(rx(33, 60), 33, log);  // conf back to 4
  EXPECT_EQ(m.on_rx(rx(34, 62), 34, log), kLoopTtlOutlierHigh);
  EXPECT_EQ(m.counters().outliers_low, 1u);
  EXPECT_EQ(m.counters().outliers_high, 1u);
  ASSERT_EQ(log.events.size(), 1u);  // the second within the log interval
  EXPECT_EQ(log.events[0].type, PfcEventType::kTtlOutlier);
  EXPECT_EQ(log.events[0].ttl, 58);
  EXPECT_EQ(log.events[0].ref_ttl, 60);
}

TEST(TtlMonitor_Outlier, LastingRouteChangeAdoptedAfterBoundedSamples) {
  TtlMonitor m(cfg());  // min_samples 4: confidence capped at 8
  NullEventSink ns;
  for (std::uint32_t i = 0; i < 20; ++i) m.on_rx(rx(i, 60), i, ns);
  std::uint32_t flagged = 0;
  for (std::uint32_t i = 100; i < 120; ++i) {
    if (m.on_rx(rx(i, 56), i, ns) != kLoopNone) ++flagged;
  }
  EXPECT_EQ(flagged, 5u);  // confidence 8..4 flagged, then the vote flips
  std::uint8_t t = 0, conf = 0;
  ASSERT_TRUE(m.peer_usual_ttl(kPeerIp, t, conf));
  EXPECT_EQ(t, 56);
}

TEST(TtlMonitor_Outlier, PeerTableBoundedEvictsAndCounts) {
  auto c = cfg();
  c.peer_slots = 1;
  TtlMonitor m(c);
  NullEventSink ns;
  m.on_rx(rx(1, 60, kPeerIp), 0, ns);
  m.on_rx(rx(1, 60, kPeer2Ip), 1, ns);
  EXPECT_EQ(m.counters().peer_evictions, 1u);
  std::uint8_t t = 0, conf = 0;
  EXPECT_FALSE(m.peer_usual_ttl(kPeerIp, t, conf));
  EXPECT_TRUE(m.peer_usual_ttl(kPeer2Ip, t, conf));
}

TEST(TtlMonitor_OnRx, ParsedPacketFieldsUsed) {
  TtlMonitor m(cfg());
  NullEventSink ns;
  wire::PacketSpec s;
  s.eth_src = kPeerMac;
  s.ip_src = kPeerIp;
  s.ip_dst = kOwnIp;
  s.dest_qp = 0x11;
  s.psn = 5;
  std::vector<std::uint8_t> buf(wire::kMaxRoceFrame);
  s.ttl = 60;
  int n = wire::build_roce(s, buf);
  ASSERT_GT(n, 0);
  wire::ParsedPacket p;
  ASSERT_EQ(wire::parse_roce(std::span(buf.data(), static_cast<std::size_t>(n)), p),
            wire::ParseError::kOk);
  EXPECT_EQ(m.on_rx(p, 0, ns), kLoopNone);
  s.ttl = 57;
  n = wire::build_roce(s, buf);
  ASSERT_GT(n, 0);
  ASSERT_EQ(wire::parse_roce(std::span(buf.data(), static_cast<std::size_t>(n)), p),
            wire::ParseError::kOk);
  EXPECT_EQ(m.on_rx(p, 1, ns), kLoopReplayLowerTtl);
}

}  // namespace
}  // namespace uroce::pfc
