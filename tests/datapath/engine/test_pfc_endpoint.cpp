#include "datapath/engine/pfc_endpoint.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "datapath/wire/builder.h"
#include "tests/datapath/engine/vnic_test_support.h"

namespace uroce::engine::test {
namespace {

constexpr std::uint64_t k10G = 10'000'000'000ull;
const wire::MacAddr kPeerMac{{2, 0, 0, 0, 0, 0x77}};

// Keeps every committed frame; can refuse buffers.
struct Sink {
  std::vector<std::vector<std::uint8_t>> frames;
  std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(10000);
  bool full = false;
  std::span<std::uint8_t> tx_alloc(std::size_t n) {
    if (full || n > buf.size()) return {};
    return {buf.data(), n};
  }
  void tx_commit(std::size_t n) { frames.emplace_back(buf.begin(), buf.begin() + n); }
  wire::PfcFrame pfc(std::size_t i) const {
    wire::PfcFrame f;
    EXPECT_EQ(wire::parse_pfc(frames.at(i), f), wire::PfcParseError::kOk);
    return f;
  }
};

std::vector<std::uint8_t> pause_frame(std::uint8_t mask, std::uint16_t quanta) {
  std::vector<std::uint8_t> f(wire::kPfcFrameSize);
  EXPECT_EQ(wire::build_pfc_pause(f, kPeerMac, mask, quanta), wire::kPfcFrameSize);
  return f;
}
std::vector<std::uint8_t> resume_frame(std::uint8_t mask) {
  std::vector<std::uint8_t> f(wire::kPfcFrameSize);
  EXPECT_EQ(wire::build_pfc_resume(f, kPeerMac, mask), wire::kPfcFrameSize);
  return f;
}

// A RoCEv2 frame of `bytes` payload with `dscp`, PSN `psn`.
std::vector<std::uint8_t> roce(std::uint8_t dscp, std::size_t bytes, std::uint32_t psn = 0,
                               std::uint8_t ttl = 64) {
  static std::vector<std::uint8_t> payload(4096, 0x5a);
  wire::PacketSpec sp;
  sp.eth_src = kPeerMac;
  sp.eth_dst = kMacA;
  sp.ip_src = kIpB;
  sp.ip_dst = kIpA;
  sp.dscp = dscp;
  sp.ttl = ttl;
  sp.opcode = wire::op::kRcSendOnly;
  sp.dest_qp = 0x11;
  sp.psn = psn;
  sp.payload = std::span<const std::uint8_t>(payload).first(bytes);
  std::vector<std::uint8_t> f(wire::roce_frame_size(sp));
  EXPECT_GT(wire::build_roce(sp, f), 0);
  return f;
}

PfcEndpointConfig lossless3() {
  PfcEndpointConfig c;
  c.enable = 0x08;
  c.link_bps = k10G;
  return c;
}

PfcEndpoint make(const PfcEndpointConfig& c) { return PfcEndpoint(c, kMacA, kIpA, 9216); }

// ---- Honouring --------------------------------------------------------------

TEST(PfcEndpoint, OffByDefault_PausesCountedNotObeyedAndNothingStaged) {
  PfcEndpointConfig c;
  c.link_bps = k10G;
  PfcEndpoint e = make(c);
  Sink tx;
  EXPECT_FALSE(e.staging());
  EXPECT_TRUE(e.on_mac_control(pause_frame(0x08, 1000), 0));
  EXPECT_FALSE(e.tx_paused_dscp(24, 1));
  EXPECT_EQ(e.gate().counters().prio[3].disabled_rx, 1u);
  EXPECT_EQ(e.stage(roce(24, 100), 0, tx), PfcEndpoint::Stage::kNotStaged);
  EXPECT_EQ(e.on_tx(roce(24, 100), 1), PfcEndpoint::Hold::kSend);
  EXPECT_EQ(e.tx_ttl(), 64);
}

TEST(PfcEndpoint, Pause_StopsOnlyThatPriorityForTheQuantaAtLinkSpeed) {
  PfcEndpoint e = make(lossless3());
  EXPECT_TRUE(e.on_mac_control(pause_frame(0x08, 1000), 0));
  // 1000 quanta x 512 bits at 10 Gb/s = 51 200 ns.
  EXPECT_TRUE(e.tx_paused_dscp(24, 51'199));
  EXPECT_FALSE(e.tx_paused_dscp(24, 51'200));
  EXPECT_FALSE(e.tx_paused_dscp(0, 10));   // priority 0
  EXPECT_FALSE(e.tx_paused_dscp(32, 10));  // priority 4
  EXPECT_EQ(e.counters().prio[3].pump_skips, 1u);
  EXPECT_EQ(e.on_tx(roce(0, 100), 10), PfcEndpoint::Hold::kSend);
}

TEST(PfcEndpoint, Resume_ZeroQuantaReopensAtOnce) {
  PfcEndpoint e = make(lossless3());
  e.on_mac_control(pause_frame(0x08, 0xffff), 0);
  EXPECT_TRUE(e.tx_paused_dscp(24, 100));
  e.on_mac_control(resume_frame(0x08), 200);
  EXPECT_FALSE(e.tx_paused_dscp(24, 200));
  EXPECT_EQ(e.status(10'000'000).paused_ns[3], 200u);
  EXPECT_EQ(e.gate().counters().prio[3].resume_rx, 1u);
}

TEST(PfcEndpoint, BadFrames_CountedByReasonNeverFatal) {
  PfcEndpointConfig c = lossless3();
  c.max_quanta = 100;
  PfcEndpoint e = make(c);
  const auto idx = [](wire::PfcParseError r) { return static_cast<std::size_t>(r); };
  // Truncated: a MAC Control EtherType and nothing after it.
  std::vector<std::uint8_t> trunc = pause_frame(0x08, 10);
  trunc.resize(20);
  EXPECT_TRUE(e.on_mac_control(trunc, 0));
  // 802.3x PAUSE (opcode 0x0001).
  std::vector<std::uint8_t> pause3x = pause_frame(0x08, 10);
  pause3x[14] = 0x00;
  pause3x[15] = 0x01;
  EXPECT_TRUE(e.on_mac_control(pause3x, 0));
  // Not to 01:80:C2:00:00:01.
  std::vector<std::uint8_t> dst = pause_frame(0x08, 10);
  dst[5] = 0x02;
  EXPECT_TRUE(e.on_mac_control(dst, 0));
  // No class bit; a disabled priority; absurd quanta (clamped to 100).
  EXPECT_TRUE(e.on_mac_control(pause_frame(0x00, 10), 0));
  EXPECT_TRUE(e.on_mac_control(pause_frame(0x01, 10), 0));
  EXPECT_TRUE(e.on_mac_control(pause_frame(0x08, 0xffff), 0));
  // Shorter than an Ethernet header: not a MAC Control frame at all.
  const std::uint8_t runt[10] = {};
  EXPECT_FALSE(e.on_mac_control(runt, 0));
  const pfc::PauseGateCounters& g = e.gate().counters();
  EXPECT_EQ(g.parse[idx(wire::PfcParseError::kTruncated)], 1u);
  EXPECT_EQ(g.parse[idx(wire::PfcParseError::kNotPfcOpcode)], 1u);
  EXPECT_EQ(g.parse[idx(wire::PfcParseError::kBadDstMac)], 1u);
  EXPECT_EQ(g.parse[idx(wire::PfcParseError::kOk)], 3u);
  EXPECT_EQ(g.empty_class_vector, 1u);
  EXPECT_EQ(g.prio[0].disabled_rx, 1u);
  EXPECT_EQ(g.prio[3].quanta_clamped, 1u);
  EXPECT_EQ(e.counters().mac_control_rx, 6u);
  // 100 quanta at 10 Gb/s: 5120 ns, not 0xffff quanta.
  EXPECT_EQ(e.gate().resume_at(3), 5120u);
}

// ---- Generation -------------------------------------------------------------

PfcEndpointConfig static_thresholds() {
  PfcEndpointConfig c = lossless3();
  c.ingress.mode = pfc::ThresholdMode::kStatic;
  c.ingress.buffer_bytes = 64u << 10;
  c.ingress.headroom_bytes = 8u << 10;
  c.ingress.xoff_bytes = 4000;
  c.ingress.xon_bytes = 2000;
  c.rx_budget = 2;
  return c;
}

PfcEndpointConfig static_thresholds_for_deadline() {
  PfcEndpointConfig c = static_thresholds();
  c.rx_budget = 1;
  c.storm_watchdog = false;
  return c;
}

TEST(PfcEndpoint, NextDeadline_StagedFramesRefreshAndPauseEnd) {
  PfcEndpointConfig off;
  EXPECT_EQ(make(off).next_deadline(0), pfc::kNoDeadline);
  PfcEndpoint e = make(static_thresholds_for_deadline());
  Sink tx;
  EXPECT_EQ(e.next_deadline(0), pfc::kNoDeadline);
  e.on_mac_control(pause_frame(0x08, 1000), 0);  // we obey until 51 200 ns
  EXPECT_EQ(e.next_deadline(10), 51'200u);
  for (int i = 0; i < 5; ++i) e.stage(roce(24, 900), 200, tx);  // XOFF at 200
  ASSERT_EQ(tx.frames.size(), 1u);
  EXPECT_EQ(e.next_deadline(300), 300u);  // staged frames wait for their budget
  // The refresh: 50% of 0xffff quanta at 10 Gb/s (3 355 392 ns) after 200.
  EXPECT_EQ(e.ingress().next_deadline(), 200u + 1'677'696u);
  while (e.staged() != 0) e.drain(400, tx, [](std::span<const std::uint8_t>) {});
  ASSERT_EQ(tx.frames.size(), 2u);  // XON
  EXPECT_EQ(e.next_deadline(400), 51'200u);
  EXPECT_EQ(e.next_deadline(51'200), pfc::kNoDeadline);
}

TEST(PfcEndpoint, Staging_XoffAboveThresholdXonOnceDrained) {
  PfcEndpoint e = make(static_thresholds());
  Sink tx;
  const std::vector<std::uint8_t> f = roce(24, 900);  // ~ 970 bytes
  const std::size_t n = f.size();
  ASSERT_GT(n, 800u);
  ASSERT_LT(n, 1000u);
  int staged = 0;
  while (tx.frames.empty() && staged < 10) {
    ASSERT_EQ(e.stage(f, 100, tx), PfcEndpoint::Stage::kStaged);
    ++staged;
  }
  EXPECT_EQ(staged, 5);  // 5 x ~970 > 4000
  ASSERT_EQ(tx.frames.size(), 1u);
  const wire::PfcFrame x = tx.pfc(0);
  EXPECT_EQ(x.pfc.class_enable(), 0x08);
  EXPECT_EQ(x.pfc.pause_time(3), 0xffff);
  EXPECT_EQ(x.eth.src(), kMacA);
  // The peer keeps sending: counted.
  EXPECT_EQ(e.stage(f, 200, tx), PfcEndpoint::Stage::kStaged);
  EXPECT_EQ(e.counters().prio[3].rx_while_paused, 1u);
  // A frame of a lossy priority is not staged.
  EXPECT_EQ(e.stage(roce(0, 100), 200, tx), PfcEndpoint::Stage::kNotStaged);
  // Budget 2 per drain: 6 -> 4 (q ~3880, above XON) -> 2 (q ~1940: XON).
  std::vector<std::size_t> seen;
  EXPECT_EQ(e.drain(300, tx, [&](std::span<const std::uint8_t> g) { seen.push_back(g.size()); }),
            2u);
  EXPECT_EQ(tx.frames.size(), 1u);
  EXPECT_EQ(e.drain(400, tx, [&](std::span<const std::uint8_t> g) { seen.push_back(g.size()); }),
            2u);
  ASSERT_EQ(tx.frames.size(), 2u);
  EXPECT_EQ(tx.pfc(1).pfc.class_enable(), 0x08);
  EXPECT_EQ(tx.pfc(1).pfc.pause_time(3), 0);
  EXPECT_EQ(e.staged(), 2u);
  EXPECT_EQ(seen, std::vector<std::size_t>(4, n));
  EXPECT_EQ(e.status(10'000'000).asserted_ns[3], 300u);  // XOFF at 100, XON at 400
}

TEST(PfcEndpoint, Staging_FullQueueAndHeadroomDropsCountedByReason) {
  PfcEndpointConfig c = static_thresholds();
  c.stage_slots = 3;
  PfcEndpoint e = make(c);
  Sink tx;
  const std::vector<std::uint8_t> f = roce(24, 900);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(e.stage(f, 0, tx), PfcEndpoint::Stage::kStaged);
  EXPECT_EQ(e.stage(f, 0, tx), PfcEndpoint::Stage::kDropped);
  EXPECT_EQ(e.counters().prio[3].stage_full, 1u);

  PfcEndpointConfig small = static_thresholds();
  small.ingress.buffer_bytes = 16u << 10;
  small.ingress.headroom_bytes = 4u << 10;
  PfcEndpoint e2 = make(small);
  int accepted = 0;
  while (e2.stage(f, 0, tx) == PfcEndpoint::Stage::kStaged) ++accepted;
  EXPECT_EQ(accepted, static_cast<int>((16u << 10) / f.size()));
  EXPECT_EQ(e2.counters().prio[3].admit_drops, 1u);
  EXPECT_EQ(e2.ingress().counters().prio[3].drops_headroom_full, 1u);
}

// ---- Hold queue ---------------------------------------------------------------

TEST(PfcEndpoint, Hold_PausedFramesWaitAndLeaveInOrder) {
  PfcEndpoint e = make(lossless3());
  Sink tx;
  e.on_mac_control(pause_frame(0x08, 1000), 0);  // until 51 200 ns
  const std::vector<std::uint8_t> f1 = roce(24, 10, 1);
  const std::vector<std::uint8_t> f2 = roce(24, 20, 2);
  EXPECT_EQ(e.on_tx(f1, 10), PfcEndpoint::Hold::kHeld);
  EXPECT_EQ(e.on_tx(roce(0, 30), 10), PfcEndpoint::Hold::kSend);  // other priority
  EXPECT_EQ(e.release(20, tx), 0u);
  // The pause is over, but f1 still waits: f2 queues behind it.
  EXPECT_EQ(e.on_tx(f2, 60'000), PfcEndpoint::Hold::kHeld);
  EXPECT_EQ(e.held(), 2u);
  EXPECT_EQ(e.release(60'000, tx), 2u);
  ASSERT_EQ(tx.frames.size(), 2u);
  EXPECT_EQ(tx.frames[0], f1);
  EXPECT_EQ(tx.frames[1], f2);
  EXPECT_EQ(e.counters().prio[3].tx_held, 2u);
  EXPECT_EQ(e.counters().prio[3].tx_released, 2u);
  EXPECT_EQ(e.on_tx(f2, 60'001), PfcEndpoint::Hold::kSend);
}

TEST(PfcEndpoint, Hold_FullQueueDropsAndNoBufferWaits) {
  PfcEndpointConfig c = lossless3();
  c.hold_slots = 2;
  PfcEndpoint e = make(c);
  Sink tx;
  e.on_mac_control(pause_frame(0x08, 1000), 0);
  const std::vector<std::uint8_t> f = roce(24, 10);
  EXPECT_EQ(e.on_tx(f, 1), PfcEndpoint::Hold::kHeld);
  EXPECT_EQ(e.on_tx(f, 1), PfcEndpoint::Hold::kHeld);
  EXPECT_EQ(e.on_tx(f, 1), PfcEndpoint::Hold::kDropped);
  EXPECT_EQ(e.counters().prio[3].tx_hold_full, 1u);
  tx.full = true;
  EXPECT_EQ(e.release(60'000, tx), 0u);
  EXPECT_EQ(e.held(), 2u);
  tx.full = false;
  EXPECT_EQ(e.release(60'000, tx), 2u);
}

// ---- Storm watchdog ---------------------------------------------------------

TEST(PfcEndpoint, Storm_DropActionDropsHeldAndNewFramesAndLogs) {
  PfcEndpointConfig c = lossless3();
  c.storm.detection_ns = 1'000'000;
  c.storm.restoration_ns = 1'000'000;
  PfcEndpoint e = make(c);
  Sink tx;
  // 0xffff quanta at 10 Gb/s: 3.36 ms, longer than the detection time.
  e.on_mac_control(pause_frame(0x08, 0xffff), 0);
  EXPECT_EQ(e.on_tx(roce(24, 10), 10), PfcEndpoint::Hold::kHeld);
  e.poll(999'999, tx);
  EXPECT_FALSE(e.status(10'000'000).stormed[3]);
  e.poll(1'000'000, tx);
  EXPECT_TRUE(e.status(10'000'000).stormed[3]);
  EXPECT_FALSE(e.tx_paused_dscp(24, 1'000'001));  // served; its frames drop
  EXPECT_EQ(e.on_tx(roce(24, 10), 1'000'001), PfcEndpoint::Hold::kDropped);
  EXPECT_EQ(e.release(1'000'001, tx), 0u);
  EXPECT_EQ(e.held(), 0u);
  EXPECT_EQ(e.counters().prio[3].tx_storm_drops, 2u);
  std::vector<pfc::PfcEvent> ev;
  e.drain_events(&ev);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].type, pfc::PfcEventType::kStormDetected);
  EXPECT_EQ(ev[0].prio, 3);
  EXPECT_EQ(e.status(10'000'000).storm[3].storms_detected, 1u);
}

TEST(PfcEndpoint, Storm_IgnoreActionSendsDespitePauses) {
  PfcEndpointConfig c = lossless3();
  c.storm.detection_ns = 1'000'000;
  c.storm.action = pfc::StormAction::kIgnore;
  PfcEndpoint e = make(c);
  Sink tx;
  e.on_mac_control(pause_frame(0x08, 0xffff), 0);
  e.poll(1'000'000, tx);
  e.on_mac_control(pause_frame(0x08, 0xffff), 1'000'001);
  EXPECT_FALSE(e.tx_paused_dscp(24, 1'000'002));
  EXPECT_EQ(e.on_tx(roce(24, 10), 1'000'002), PfcEndpoint::Hold::kSend);
  EXPECT_EQ(e.gate().counters().prio[3].ignored_stormed, 1u);
}

// ---- TTL ------------------------------------------------------------------------

TEST(PfcEndpoint, Ttl_ReplayWithLowerTtlAndOwnPacketAreEvents) {
  PfcEndpoint e = make(lossless3());
  wire::ParsedPacket p{};
  const std::vector<std::uint8_t> a = roce(0, 10, 7, 60);
  ASSERT_EQ(wire::parse_roce(a, p), wire::ParseError::kOk);
  e.on_roce_rx(p, 0);
  const std::vector<std::uint8_t> b = roce(0, 10, 7, 58);
  ASSERT_EQ(wire::parse_roce(b, p), wire::ParseError::kOk);
  e.on_roce_rx(p, 1000);
  // Our own source IP coming back.
  wire::PacketSpec sp;
  sp.eth_src = kPeerMac;
  sp.eth_dst = kMacA;
  sp.ip_src = kIpA;
  sp.ip_dst = kIpA;
  sp.opcode = wire::op::kRcAck;
  sp.aeth = wire::AethHdr::make(wire::aeth_ack_syndrome(), 0);
  std::vector<std::uint8_t> own(wire::roce_frame_size(sp));
  ASSERT_GT(wire::build_roce(sp, own), 0);
  ASSERT_EQ(wire::parse_roce(own, p), wire::ParseError::kOk);
  e.on_roce_rx(p, 2000);
  const pfc::TtlCounters& t = e.status(10'000'000).ttl;
  EXPECT_EQ(t.rx_checked, 3u);
  EXPECT_EQ(t.replay_lower_ttl, 1u);
  EXPECT_EQ(t.own_packets, 1u);
  std::vector<pfc::PfcEvent> ev;
  e.drain_events(&ev);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].type, pfc::PfcEventType::kLoopReplay);
  EXPECT_EQ(ev[0].ttl, 58);
  EXPECT_EQ(ev[0].ref_ttl, 60);
  EXPECT_EQ(ev[1].type, pfc::PfcEventType::kOwnPacket);
}

TEST(PfcEventRing, FullRingCountsLostEvents) {
  PfcEventRing r;
  for (std::uint32_t i = 0; i < PfcEventRing::kSlots + 3; ++i) r.event(pfc::PfcEvent{});
  EXPECT_EQ(r.size(), PfcEventRing::kSlots);
  EXPECT_EQ(r.lost(), 3u);
  std::vector<pfc::PfcEvent> out;
  r.drain(&out);
  EXPECT_EQ(out.size(), PfcEventRing::kSlots);
  EXPECT_EQ(r.size(), 0u);
}

// ---- In the engine: two Vnics over the simulated link ----------------------------

shm::SendWqeFields send_wqe(std::uint64_t wr_id) {
  shm::SendWqeFields f;
  f.wr_id = wr_id;
  f.opcode = IBV_WR_SEND;
  f.send_flags = IBV_SEND_SIGNALED;
  return f;
}

// B processes one staged frame per iteration while A can send a burst of
// them: B's staging passes XOFF, A's pump stops, B drains to XON, A goes
// on. Every message arrives, with no retransmission and no drop.
// Two hosts on a link with no delay: what A sends in one iteration reaches
// B in the same one, so B's XOFF reaches A one iteration later.
struct SlowReceiver : ::testing::Test {
  static constexpr int kQps = 4;
  static constexpr int kN = 100;  // messages of 4000 bytes per QP
  port::SimLink link{port::SimLinkConfig{}};
  Host a{link, 0, kMacA, kIpA};
  Host b{link, 1, kMacB, kIpB};
  VirtualClock clock;
  std::unique_ptr<ProvCq> ascq, arcq, bscq, brcq;
  std::vector<std::unique_ptr<ProvQp>> aqp, bqp;
  std::size_t sent = 0;
  std::size_t received = 0;

  // B generates PFC for priority 0 (the QPs' DSCP 0) and processes one
  // staged frame per iteration; A obeys it when `obey`. Each of kQps RC
  // QPs sends kN messages A -> B; their windows together (4 x 31 messages
  // of 4 packets) exceed B's buffer.
  void transfer(bool obey) {
    PfcEndpointConfig c;
    c.enable = 0x01;
    c.link_bps = k10G;
    c.ingress.mode = pfc::ThresholdMode::kStatic;
    c.ingress.buffer_bytes = 256u << 10;
    c.ingress.headroom_bytes = 64u << 10;
    c.ingress.xoff_bytes = 16u << 10;
    c.ingress.xon_bytes = 8u << 10;
    PfcEndpointConfig ca = c;
    if (!obey) ca.enable = 0;
    a.vnic.set_pfc(ca);
    c.rx_budget = 1;
    b.vnic.set_pfc(c);
    ascq = a.make_cq(1, 255);
    arcq = a.make_cq(2, 255);
    bscq = b.make_cq(1, 255);
    brcq = b.make_cq(2, 255);
    for (int q = 0; q < kQps; ++q) {
      aqp.push_back(a.make_qp(10 + q, QpType::kRc, 1, 2));
      bqp.push_back(b.make_qp(10 + q, QpType::kRc, 1, 2));
    }
    for (int q = 0; q < kQps; ++q) {
      a.connect(10 + q, QpType::kRc, bqp[q]->qpn, kMacB, kIpB, 100, 500);
      b.connect(10 + q, QpType::kRc, aqp[q]->qpn, kMacA, kIpA, 500, 100);
    }
    std::vector<int> posted(kQps, 0), recvd(kQps, 0);
    const std::size_t total = static_cast<std::size_t>(kQps) * kN;
    for (int round = 0; round < 200000 && (sent < total || received < total); ++round) {
      for (int q = 0; q < kQps; ++q) {
        while (recvd[q] < kN && bqp[q]->rqp.free_slots() > 0) {
          bqp[q]->post_recv(recvd[q], {b.sge(static_cast<std::size_t>(q) * 4096, 4096)});
          ++recvd[q];
        }
        // From the second iteration: B's engine takes the first receives
        // in its first doorbell phase (the link has no delay; a send
        // arriving before would be answered with an RNR NAK).
        while (round > 0 && posted[q] < kN && aqp[q]->sqp.free_slots() > 0) {
          aqp[q]->post_send(send_wqe(posted[q]), {a.sge(0, 4000)});
          ++posted[q];
        }
      }
      a.vnic.poll(clock.now());
      b.vnic.poll(clock.now());
      clock.advance_by(500);
      for (auto& w : ascq->poll()) sent += w.status == 0 ? 1 : 0;
      for (auto& w : brcq->poll()) received += w.status == 0 ? 1 : 0;
    }
  }
  std::uint64_t retransmits() {
    std::vector<QpStatus> st;
    a.vnic.qp_status(&st);
    std::uint64_t n = 0;
    for (const auto& q : st) n += q.rc.tx_retransmits;
    return n;
  }
};

// Without PFC at the sender (it ignores the pauses) the same receiver
// overruns its buffer: drops, then retransmissions. This is what the next
// test would see if the pauses were not honoured.
TEST_F(SlowReceiver, Pfc_SenderIgnoringPausesOverrunsReceiver) {
  transfer(false);
  const PfcStatus sb = b.vnic.pfc_status();
  EXPECT_GT(sb.ingress.prio[0].xoff_sent, 0u);
  EXPECT_GT(sb.engine.prio[0].admit_drops, 0u);
  EXPECT_GT(retransmits(), 0u);
  // Each frame PFC dropped was counted received, and as a PFC drop.
  const VnicCounters& cb = b.vnic.counters();
  std::uint64_t dropped = 0, waiting = 0;
  for (const auto& p : sb.engine.prio) {
    dropped += p.admit_drops + p.stage_full;
    waiting += p.staged - p.processed;
  }
  EXPECT_EQ(cb.rx_pfc_drop, dropped);
  EXPECT_EQ(rx_frames_accounted(cb) + waiting, cb.rx_frames);
  EXPECT_EQ(a.vnic.pfc_status().gate.prio[0].disabled_rx, sb.ingress.frames_sent);
}

// B's staging passes XOFF, A's pump stops serving the QPs, B drains to
// XON, A goes on. Every message arrives, with no drop and no
// retransmission.
TEST_F(SlowReceiver, Pfc_SlowReceiverPausesSenderWithoutLoss) {
  transfer(true);
  EXPECT_EQ(sent, static_cast<std::size_t>(kQps) * kN);
  EXPECT_EQ(received, static_cast<std::size_t>(kQps) * kN);
  const PfcStatus sa = a.vnic.pfc_status();
  const PfcStatus sb = b.vnic.pfc_status();
  // B paused A and resumed it; A obeyed.
  EXPECT_GT(sb.ingress.prio[0].xoff_sent, 0u);
  EXPECT_GT(sb.ingress.prio[0].xon_sent, 0u);
  EXPECT_GT(sb.engine.pfc_tx, 0u);
  EXPECT_EQ(a.vnic.counters().rx_mac_control, sb.engine.pfc_tx);
  EXPECT_GT(sa.gate.prio[0].pause_rx, 0u);
  EXPECT_GT(sa.gate.prio[0].resume_rx, 0u);
  EXPECT_GT(sa.engine.prio[0].pump_skips, 0u);
  EXPECT_GT(sa.paused_ns[0], 0u);
  EXPECT_GT(sb.asserted_ns[0], 0u);
  // Nothing lost on the way.
  EXPECT_EQ(sb.engine.prio[0].stage_full, 0u);
  EXPECT_EQ(sb.engine.prio[0].admit_drops, 0u);
  EXPECT_EQ(sa.engine.prio[0].tx_hold_full, 0u);
  EXPECT_EQ(retransmits(), 0u);
  EXPECT_GT(sb.ingress.prio[0].peak_bytes, 16u << 10);
  EXPECT_LT(sb.ingress.prio[0].peak_bytes, 256u << 10);
  std::printf("B: xoff %llu xon %llu refresh %llu peak %llu bytes; A paused %llu ns, skips %llu\n",
              static_cast<unsigned long long>(sb.ingress.prio[0].xoff_sent),
              static_cast<unsigned long long>(sb.ingress.prio[0].xon_sent),
              static_cast<unsigned long long>(sb.ingress.prio[0].refresh_sent),
              static_cast<unsigned long long>(sb.ingress.prio[0].peak_bytes),
              static_cast<unsigned long long>(sa.paused_ns[0]),
              static_cast<unsigned long long>(sa.engine.prio[0].pump_skips));
}

// TTL in the engine: our own source address arriving from the port is a
// loop signal; the same addresses on looped-back frames (two QPs of one
// device) are not.
TEST(Vnic_Ttl, OwnPacketFromThePortNotFromLoopback) {
  port::SimLink link(port::SimLinkConfig{});
  Host a(link, 0, kMacA, kIpA);
  port::SimPort peer(link, 1);
  auto cq = a.make_cq(1);
  auto q1 = a.make_qp(10, QpType::kRc, 1, 1);
  auto q2 = a.make_qp(11, QpType::kRc, 1, 1);
  a.connect(10, QpType::kRc, q2->qpn, kMacA, kIpA, 1, 2);
  a.connect(11, QpType::kRc, q1->qpn, kMacA, kIpA, 2, 1);
  q2->post_recv(7, {a.sge(8192, 4096)});
  q1->post_send(send_wqe(8), {a.sge(0, 100)});
  for (TimeNs t = 0; t < 20'000; t += 500) a.vnic.poll(t);
  EXPECT_EQ(cq->poll().size(), 2u);
  EXPECT_GT(a.vnic.counters().rx_loopback, 0u);
  EXPECT_EQ(a.vnic.pfc_status().ttl.rx_checked, 0u);
  // A frame with A's own source IP, from the wire.
  wire::PacketSpec sp;
  sp.eth_src = kMacB;
  sp.eth_dst = kMacA;
  sp.ip_src = kIpA;
  sp.ip_dst = kIpA;
  sp.ttl = 61;
  sp.opcode = wire::op::kRcAck;
  sp.aeth = wire::AethHdr::make(wire::aeth_ack_syndrome(), 0);
  sp.dest_qp = q1->qpn;
  std::vector<std::uint8_t> f(wire::roce_frame_size(sp));
  ASSERT_GT(wire::build_roce(sp, f), 0);
  ASSERT_TRUE(peer.tx(f, 20'000));
  a.vnic.poll(20'000);
  const PfcStatus s = a.vnic.pfc_status();
  EXPECT_EQ(s.ttl.rx_checked, 1u);
  EXPECT_EQ(s.ttl.own_packets, 1u);
  std::vector<pfc::PfcEvent> ev;
  a.vnic.drain_pfc_events(&ev);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].type, pfc::PfcEventType::kOwnPacket);
  EXPECT_EQ(ev[0].ttl, 61);
}

// A PFC frame injected into A's port stops A's priority 0 traffic until it
// lapses; a resume frame restarts it at once.
TEST(Vnic_Pfc, InjectedPauseStopsQpAndResumeRestarts) {
  port::SimLinkConfig lc;
  port::SimLink link(lc);
  Host a(link, 0, kMacA, kIpA);
  Host b(link, 1, kMacB, kIpB);
  PfcEndpointConfig c;
  c.enable = 0x01;
  c.link_bps = k10G;
  a.vnic.set_pfc(c);
  RcQpPair qps;
  qps.open(a, b);
  auto& aqp = qps.aqp;
  auto& bqp = qps.bqp;
  auto& ascq = qps.ascq;
  auto& brcq = qps.brcq;
  port::SimPort& inject = b.port;
  ASSERT_TRUE(inject.tx(pause_frame(0x01, 0xffff), 0));  // 3.36 ms at 10G
  a.vnic.poll(0);
  EXPECT_TRUE(a.vnic.pfc().gate().peer_paused(0, 1));
  bqp->post_recv(1, {b.sge(0, 4096)});
  aqp->post_send(send_wqe(7), {a.sge(0, 100)});
  TimeNs t = 0;
  for (int i = 0; i < 100; ++i, t += 1000) {
    a.vnic.poll(t);
    b.vnic.poll(t);
  }
  EXPECT_TRUE(brcq->poll().empty());
  EXPECT_EQ(a.vnic.counters().tx_pumped, 0u);
  ASSERT_TRUE(inject.tx(resume_frame(0x01), t));
  for (int i = 0; i < 20; ++i, t += 1000) {
    a.vnic.poll(t);
    b.vnic.poll(t);
  }
  EXPECT_EQ(brcq->poll().size(), 1u);
  EXPECT_EQ(ascq->poll().size(), 1u);
  const PfcStatus s = a.vnic.pfc_status();
  EXPECT_EQ(s.gate.prio[0].pause_rx, 1u);
  EXPECT_EQ(s.gate.prio[0].resume_rx, 1u);
  EXPECT_EQ(s.paused_ns[0], 100'000u);
}

}  // namespace
}  // namespace uroce::engine::test
