#include "testbed/host.h"

#include <gtest/gtest.h>

#include <vector>

namespace uroce::testbed {
namespace {

const wire::MacAddr kSwitchMac{{0x02, 0, 0, 0, 0, 0x77}};

// 10 Gb/s: a quantum is 51.2 ns.
HostConfig cfg() {
  HostConfig c;
  c.link_bps = 10'000'000'000ull;
  c.mac = wire::MacAddr{{0x02, 0, 0, 0, 0, 0x01}};
  c.pfc_enable = 0x08;
  c.tx_queue_packets = 2;
  return c;
}

SwitchPacket pkt(std::uint8_t prio, std::uint32_t bytes = 1000) {
  SwitchPacket p;
  p.prio = prio;
  p.bytes = bytes;
  p.ttl = 60;
  return p;
}

std::vector<std::uint8_t> pause(std::uint16_t quanta) {
  std::vector<std::uint8_t> f(wire::kPfcFrameSize);
  wire::build_pfc_pause(f, kSwitchMac, 0x08, quanta);
  return f;
}

TEST(Host_Check, NamesTheBadPiece) {
  EXPECT_EQ(Host::check(cfg()), "");
  HostConfig c = cfg();
  c.link_bps = 0;
  EXPECT_EQ(Host::check(c), "pause gate: ZeroLinkSpeed");
  c = cfg();
  c.rx_bps = 1'000'000'000ull;
  c.ingress.alpha_num = 0;
  EXPECT_EQ(Host::check(c), "receive buffer: BadAlpha");
  c = cfg();
  c.ingress.alpha_num = 0;  // unused while the receiver is unlimited
  EXPECT_EQ(Host::check(c), "");
  c = cfg();
  c.ttl.tx_ttl = 0;
  EXPECT_EQ(Host::check(c), "TTL monitor: ZeroTxTtl");
}

TEST(Host_Tx, BoundedFifosStrictPriorityAndPauses) {
  Host h(cfg());
  EXPECT_TRUE(h.offer(pkt(3)));
  EXPECT_TRUE(h.offer(pkt(3)));
  EXPECT_FALSE(h.offer(pkt(3)));  // two per priority
  EXPECT_TRUE(h.offer(pkt(5)));
  EXPECT_TRUE(h.take_kick());
  EXPECT_FALSE(h.take_kick());
  EXPECT_EQ(h.counters().tx_refused, 1u);
  EXPECT_EQ(h.tx_queued(), 3u);
  EXPECT_EQ(h.on_control(pause(100), 0), wire::PfcParseError::kOk);
  EXPECT_TRUE(h.take_kick());
  EXPECT_EQ(h.dequeue(0).pkt.prio, 5);
  const SwitchTx none = h.dequeue(0);
  EXPECT_EQ(none.kind, SwitchTx::Kind::kNone);
  EXPECT_EQ(none.wake_at, 5120u);
  EXPECT_EQ(h.dequeue(5120).kind, SwitchTx::Kind::kData);
  EXPECT_EQ(h.counters().tx_packets, 2u);
  EXPECT_EQ(h.counters().tx_bytes, 2000u);
  EXPECT_EQ(h.counters().rx_pfc_frames, 1u);
}

// tx_fifo: one FIFO in arrival order, bounded as a whole; a paused head
// holds everything behind it, whatever its priority.
TEST(Host_Tx, OneFifoKeepsArrivalOrderAndItsHeadBlocks) {
  HostConfig c = cfg();
  c.tx_fifo = true;
  c.tx_queue_packets = 3;
  Host h(c);
  EXPECT_TRUE(h.offer(pkt(3, 100)));
  EXPECT_TRUE(h.offer(pkt(6, 200)));
  EXPECT_TRUE(h.offer(pkt(0, 300)));
  EXPECT_FALSE(h.offer(pkt(7)));  // three in all
  EXPECT_EQ(h.tx_queued(), 3u);
  EXPECT_EQ(h.on_control(pause(100), 0), wire::PfcParseError::kOk);
  const SwitchTx held = h.dequeue(0);  // the priority-3 head is paused
  EXPECT_EQ(held.kind, SwitchTx::Kind::kNone);
  EXPECT_EQ(held.wake_at, 5120u);
  EXPECT_EQ(h.dequeue(5120).pkt.bytes, 100u);
  EXPECT_EQ(h.dequeue(5120).pkt.bytes, 200u);
  EXPECT_EQ(h.dequeue(5120).pkt.bytes, 300u);
}

TEST(Host_Rx, UnlimitedReceiverConsumesOnArrival) {
  Host h(cfg());
  EXPECT_EQ(h.on_packet(pkt(3), 0), Host::Rx::kConsumed);
  EXPECT_EQ(h.start_rx(0), pfc::kNoDeadline);
  EXPECT_EQ(h.ingress(), nullptr);
  EXPECT_EQ(h.next_deadline(), pfc::kNoDeadline);
}

TEST(Host_Rx, SlowReceiverQueuesAndPausesItsSwitch) {
  HostConfig c = cfg();
  c.rx_bps = 1'000'000'000ull;  // 1000 bytes take 8000 ns
  c.ingress.pfc_enable = 0x08;
  c.ingress.mode = pfc::ThresholdMode::kStatic;
  c.ingress.buffer_bytes = 10000;
  c.ingress.headroom_bytes = 3000;
  c.ingress.xoff_bytes = 2500;
  c.ingress.xon_bytes = 1500;
  c.ingress.xoff_quanta = 1000;
  c.ingress.link_bps = c.link_bps;
  ASSERT_EQ(Host::check(c), "");
  Host h(c);
  EXPECT_EQ(h.on_packet(pkt(3), 0), Host::Rx::kQueued);
  EXPECT_EQ(h.start_rx(0), 8000u);
  EXPECT_EQ(h.start_rx(0), pfc::kNoDeadline);  // busy
  h.on_packet(pkt(3), 10);
  h.on_packet(pkt(3), 20);  // 3000 > 2500: XOFF
  EXPECT_TRUE(h.take_kick());
  SwitchTx tx = h.dequeue(20);
  ASSERT_EQ(tx.kind, SwitchTx::Kind::kControl);
  wire::PfcFrame f;
  ASSERT_EQ(wire::parse_pfc(std::span<const std::uint8_t>(tx.ctrl.bytes.data(), tx.ctrl.len), f),
            wire::PfcParseError::kOk);
  EXPECT_EQ(f.pfc.pause_time(3), 1000);
  EXPECT_EQ(h.counters().tx_pfc_frames, 1u);
  EXPECT_EQ(h.next_deadline(), 20u + 25600u);  // refresh at half the pause
  // Consuming two brings it to 1000 <= 1500: XON.
  h.finish_rx(8000);
  EXPECT_EQ(h.start_rx(8000), 16000u);
  h.finish_rx(16000);
  EXPECT_TRUE(h.take_kick());
  tx = h.dequeue(16000);
  ASSERT_EQ(tx.kind, SwitchTx::Kind::kControl);
  ASSERT_EQ(wire::parse_pfc(std::span<const std::uint8_t>(tx.ctrl.bytes.data(), tx.ctrl.len), f),
            wire::PfcParseError::kOk);
  EXPECT_EQ(f.pfc.pause_time(3), 0);
  EXPECT_EQ(h.rx_queued(), 1u);
  ASSERT_NE(h.ingress(), nullptr);
  EXPECT_EQ(h.ingress()->counters().prio[3].xon_sent, 1u);
}

TEST(Host_Rx, ConsumedPacketsFeedTheTtlMonitor) {
  Host h(cfg());
  pfc::RxTtlInfo info;
  info.src_ip = wire::Ipv4Addr{0x0a000002};
  info.src_mac = wire::MacAddr{{0x02, 0, 0, 0, 0, 0x02}};
  info.qpn = 1;
  for (std::uint32_t i = 0; i < 10; ++i) {
    info.psn = i;
    info.ttl = 62;
    h.consumed(pkt(3), info, i);
  }
  info.psn = 10;
  info.ttl = 40;  // came the long way round a loop
  h.consumed(pkt(3), info, 10);
  EXPECT_EQ(h.counters().rx_packets, 11u);
  EXPECT_EQ(h.ttl().counters().outliers_low, 1u);
  ASSERT_EQ(h.events().size(), 1u);
  EXPECT_EQ(h.events()[0].type, pfc::PfcEventType::kTtlOutlier);
  EXPECT_EQ(h.events()[0].ref_ttl, 62);
}

TEST(Host_OfferControl, SentAheadOfDataEvenWhilePaused) {
  Host h(cfg());
  EXPECT_TRUE(h.offer(pkt(3)));
  EXPECT_EQ(h.on_control(pause(100), 0), wire::PfcParseError::kOk);
  (void)h.take_kick();
  const std::vector<std::uint8_t> f = pause(7);
  EXPECT_TRUE(h.offer_control(f));
  EXPECT_TRUE(h.take_kick());
  const SwitchTx tx = h.dequeue(0);
  ASSERT_EQ(tx.kind, SwitchTx::Kind::kControl);
  ASSERT_EQ(tx.ctrl.len, f.size());
  EXPECT_TRUE(std::equal(f.begin(), f.end(), tx.ctrl.bytes.begin()));
  EXPECT_EQ(h.counters().tx_pfc_frames, 1u);
  EXPECT_EQ(h.dequeue(0).kind, SwitchTx::Kind::kNone);  // the data waits
  const std::vector<std::uint8_t> big(wire::kPfcFrameSize + 1, 0);
  EXPECT_FALSE(h.offer_control(big));
  EXPECT_FALSE(h.take_kick());
}

}  // namespace
}  // namespace uroce::testbed
