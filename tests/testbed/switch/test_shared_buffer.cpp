#include "testbed/switch/shared_buffer.h"

#include <gtest/gtest.h>

#include <vector>

namespace uroce::testbed {
namespace {

// Keeps every frame with the port it was sent on.
struct PortTx {
  struct Sent {
    std::uint16_t port;
    std::vector<std::uint8_t> bytes;
  };
  std::vector<Sent> frames;
  bool full = false;
  std::array<std::uint8_t, 128> buf{};
  std::span<std::uint8_t> tx_alloc(std::uint16_t, std::size_t n) {
    if (full || n > buf.size()) return {};
    return {buf.data(), n};
  }
  void tx_commit(std::uint16_t port, std::size_t n) {
    frames.push_back({port, std::vector<std::uint8_t>(buf.begin(), buf.begin() + n)});
  }
  wire::PfcFrame decoded(std::size_t i) const {
    wire::PfcFrame f;
    EXPECT_EQ(wire::parse_pfc(frames.at(i).bytes, f), wire::PfcParseError::kOk);
    return f;
  }
};

const wire::MacAddr kMac0{{0x02, 0, 0, 0, 0, 0x10}};
const wire::MacAddr kMac1{{0x02, 0, 0, 0, 0, 0x11}};

// Two ports at 10 Gb/s, quanta 1000: pauses of 51200 ns refreshed every
// 25600 ns. Priority 3 lossless. shared = 100000 - 2 x 1 x 10000 = 80000;
// alpha 1/2: T = (80000 - S) / 2.
SharedBufferConfig cfg() {
  SharedBufferConfig c;
  c.buffer_bytes = 100000;
  c.headroom_bytes = 10000;
  c.pfc_enable = 0x08;
  c.alpha_num = 1;
  c.alpha_den = 2;
  c.xon_offset_bytes = 2000;
  c.xoff_quanta = 1000;
  c.refresh_percent = 50;
  return c;
}

std::vector<SharedBufferPort> ports() {
  return {SharedBufferPort{10'000'000'000ull, kMac0}, SharedBufferPort{10'000'000'000ull, kMac1}};
}

TEST(SharedBuffer_Check, NamesEachBadField) {
  const auto p = ports();
  EXPECT_EQ(SharedBuffer::check(cfg(), p), SharedBufferConfigError::kOk);
  EXPECT_EQ(SharedBuffer::check(cfg(), {}), SharedBufferConfigError::kNoPorts);
  std::vector<SharedBufferPort> many(kMaxSwitchPorts + 1);
  EXPECT_EQ(SharedBuffer::check(cfg(), many), SharedBufferConfigError::kTooManyPorts);
  auto zero = p;
  zero[1].link_bps = 0;
  EXPECT_EQ(SharedBuffer::check(cfg(), zero), SharedBufferConfigError::kZeroLinkSpeed);
  SharedBufferConfig c = cfg();
  c.xoff_quanta = 0;
  EXPECT_EQ(SharedBuffer::check(c, p), SharedBufferConfigError::kZeroQuanta);
  c = cfg();
  c.refresh_percent = 100;
  EXPECT_EQ(SharedBuffer::check(c, p), SharedBufferConfigError::kBadRefreshPercent);
  c = cfg();
  c.xoff_quanta = 1;  // 512 bits at 1 Tb/s: 1 ns, half of it rounds to 0
  auto fast = p;
  fast[0].link_bps = 1'000'000'000'000ull;
  EXPECT_EQ(SharedBuffer::check(c, fast), SharedBufferConfigError::kPauseTooShort);
  c = cfg();
  c.buffer_bytes = 0;
  EXPECT_EQ(SharedBuffer::check(c, p), SharedBufferConfigError::kBadBufferSize);
  c = cfg();
  c.headroom_bytes = 50000;  // 2 ports x 1 x 50000 = the whole buffer
  EXPECT_EQ(SharedBuffer::check(c, p), SharedBufferConfigError::kHeadroomExceedsBuffer);
  c = cfg();
  c.alpha_den = 0;
  EXPECT_EQ(SharedBuffer::check(c, p), SharedBufferConfigError::kBadAlpha);
  c.alpha_den = 65537;
  EXPECT_EQ(SharedBuffer::check(c, p), SharedBufferConfigError::kBadAlpha);
  EXPECT_EQ(shared_buffer_config_error_name(SharedBufferConfigError::kHeadroomExceedsBuffer),
            "HeadroomExceedsBuffer");
}

TEST(SharedBuffer_Threshold, MovesWithSharedUse) {
  const auto p = ports();
  SharedBuffer b(cfg(), p);
  PortTx tx;
  EXPECT_EQ(b.shared_capacity(), 80000u);
  EXPECT_EQ(b.threshold(), 40000u);
  EXPECT_EQ(b.pause_ns(0), 51200u);
  EXPECT_EQ(b.refresh_ns(1), 25600u);
  EXPECT_EQ(b.on_rx(0, 3, 10000, 0, tx), BufferAdmit::kShared);
  EXPECT_EQ(b.threshold(), 35000u);
  EXPECT_EQ(b.on_rx(1, 0, 10000, 0, tx), BufferAdmit::kShared);  // lossy counts too
  EXPECT_EQ(b.threshold(), 30000u);
  EXPECT_TRUE(tx.frames.empty());
}

TEST(SharedBuffer_Admit, SharedThenHeadroomThenDropWithXoff) {
  const auto p = ports();
  SharedBuffer b(cfg(), p);
  PortTx tx;
  // s + len <= T: 20000 + 6000 <= (80000 - 20000)/2 = 30000 -> shared.
  EXPECT_EQ(b.on_rx(1, 3, 20000, 0, tx), BufferAdmit::kShared);
  EXPECT_TRUE(tx.frames.empty());  // 20000 < T = 30000
  EXPECT_EQ(b.on_rx(1, 3, 6000, 100, tx), BufferAdmit::kShared);
  // s = 26000 >= T = 27000? No: still below.
  EXPECT_TRUE(tx.frames.empty());
  EXPECT_EQ(b.on_rx(1, 3, 1000, 200, tx), BufferAdmit::kShared);
  // s = 27000, T = (80000 - 27000)/2 = 26500: XOFF to port 1 only.
  ASSERT_EQ(tx.frames.size(), 1u);
  EXPECT_EQ(tx.frames[0].port, 1);
  const wire::PfcFrame f = tx.decoded(0);
  EXPECT_EQ(f.eth.src(), kMac1);
  EXPECT_EQ(f.pfc.class_enable(), 0x08);
  EXPECT_EQ(f.pfc.pause_time(3), 1000);
  EXPECT_TRUE(b.asserted(1, 3));
  EXPECT_FALSE(b.asserted(0, 3));
  // Over the threshold: into headroom (10000 per queue), then dropped.
  EXPECT_EQ(b.on_rx(1, 3, 6000, 300, tx), BufferAdmit::kHeadroom);
  EXPECT_EQ(b.on_rx(1, 3, 4000, 300, tx), BufferAdmit::kHeadroom);
  EXPECT_EQ(b.on_rx(1, 3, 1, 300, tx), BufferAdmit::kDropHeadroomFull);
  EXPECT_EQ(b.queue_headroom(1, 3), 10000u);
  EXPECT_EQ(b.queue_shared(1, 3), 27000u);
  EXPECT_EQ(b.used(), 37000u);
  EXPECT_EQ(b.counters(1, 3).drops_headroom_full, 1u);
  EXPECT_EQ(b.counters(1, 3).headroom_packets, 2u);
  EXPECT_EQ(b.counters(1, 3).xoff_sent, 1u);
  EXPECT_EQ(tx.frames.size(), 1u);  // no second XOFF while asserted
}

TEST(SharedBuffer_Admit, LossyPriorityDropsAtThresholdWithoutPfc) {
  const auto p = ports();
  SharedBuffer b(cfg(), p);
  PortTx tx;
  EXPECT_EQ(b.on_rx(0, 1, 40000, 0, tx), BufferAdmit::kShared);  // s + len == T
  EXPECT_EQ(b.on_rx(0, 1, 1, 0, tx), BufferAdmit::kDropLossyFull);
  EXPECT_EQ(b.counters(0, 1).drops_lossy_full, 1u);
  EXPECT_TRUE(tx.frames.empty());
  EXPECT_EQ(b.on_rx(2, 3, 1, 0, tx), BufferAdmit::kDropBadQueue);
  EXPECT_EQ(b.on_rx(0, 8, 1, 0, tx), BufferAdmit::kDropBadQueue);
  EXPECT_EQ(b.counters().bad_queue, 2u);
}

TEST(SharedBuffer_Release, HeadroomFirstThenXonBelowOffset) {
  const auto p = ports();
  SharedBuffer b(cfg(), p);
  PortTx tx;
  b.on_rx(0, 3, 27000, 0, tx);  // T = 26500 after: XOFF
  b.on_rx(0, 3, 5000, 0, tx);   // headroom
  ASSERT_EQ(tx.frames.size(), 1u);
  b.on_release(0, 3, 3000, 1000, tx);
  EXPECT_EQ(b.queue_headroom(0, 3), 2000u);
  EXPECT_EQ(b.queue_shared(0, 3), 27000u);
  b.on_release(0, 3, 3000, 1000, tx);
  EXPECT_EQ(b.queue_headroom(0, 3), 0u);
  EXPECT_EQ(b.queue_shared(0, 3), 26000u);
  EXPECT_EQ(tx.frames.size(), 1u);  // T = 27000: 26000 + 2000 > 27000, still paused
  b.on_release(0, 3, 1000, 2000, tx);
  // s = 25000, T = 27500: 25000 + 2000 <= 27500 -> XON.
  ASSERT_EQ(tx.frames.size(), 2u);
  const wire::PfcFrame f = tx.decoded(1);
  EXPECT_EQ(f.pfc.class_enable(), 0x08);
  EXPECT_EQ(f.pfc.pause_time(3), 0);
  EXPECT_FALSE(b.asserted(0, 3));
  EXPECT_EQ(b.asserted_ns(0, 3, 5000), 2000u);
  EXPECT_EQ(b.counters(0, 3).xon_sent, 1u);
  EXPECT_EQ(b.counters(0, 3).released_bytes, 7000u);
  // More released than held is clamped and counted.
  b.on_release(0, 3, 30000, 3000, tx);
  EXPECT_EQ(b.counters().release_underflow, 1u);
  EXPECT_EQ(b.used(), 0u);
}

TEST(SharedBuffer_Refresh, PollSendsRefreshAtHalfThePause) {
  const auto p = ports();
  SharedBuffer b(cfg(), p);
  PortTx tx;
  EXPECT_EQ(b.next_deadline(), pfc::kNoDeadline);
  b.on_rx(0, 3, 27000, 1000, tx);
  ASSERT_EQ(tx.frames.size(), 1u);
  EXPECT_EQ(b.next_deadline(), 1000u + 25600u);
  b.poll(26599, tx);
  EXPECT_EQ(tx.frames.size(), 1u);
  b.poll(26600, tx);
  ASSERT_EQ(tx.frames.size(), 2u);
  EXPECT_EQ(tx.decoded(1).pfc.pause_time(3), 1000);
  EXPECT_EQ(b.counters(0, 3).refresh_sent, 1u);
  EXPECT_EQ(b.counters(0, 3).refresh_late, 0u);
  EXPECT_EQ(b.next_deadline(), 26600u + 25600u);
  // A poll long after the pause lapsed still refreshes, counted late.
  b.poll(26600 + 60000, tx);
  EXPECT_EQ(b.counters(0, 3).refresh_late, 1u);
}

TEST(SharedBuffer_Dynamic, OnePortFillingPausesAnother) {
  const auto p = ports();
  SharedBuffer b(cfg(), p);
  PortTx tx;
  b.on_rx(1, 3, 20000, 0, tx);  // T = 30000
  EXPECT_TRUE(tx.frames.empty());
  // Port 0's lossy traffic uses the pool: T falls to (80000-40000)/2 = 20000,
  // which port 1's 20000 bytes now reach.
  b.on_rx(0, 1, 20000, 10, tx);
  ASSERT_EQ(tx.frames.size(), 1u);
  EXPECT_EQ(tx.frames[0].port, 1);
  EXPECT_TRUE(b.asserted(1, 3));
  // Releasing port 0's bytes resumes port 1.
  b.on_release(0, 1, 20000, 20, tx);
  ASSERT_EQ(tx.frames.size(), 2u);
  EXPECT_EQ(tx.frames[1].port, 1);
  EXPECT_EQ(tx.decoded(1).pfc.pause_time(3), 0);
}

TEST(SharedBuffer_Sink, NoRoomKeepsStateAndRetries) {
  const auto p = ports();
  SharedBuffer b(cfg(), p);
  PortTx tx;
  tx.full = true;
  b.on_rx(0, 3, 27000, 0, tx);
  EXPECT_FALSE(b.asserted(0, 3));
  EXPECT_EQ(b.counters().tx_no_buffer, 1u);
  EXPECT_EQ(b.next_deadline(), 0u);
  tx.full = false;
  b.poll(5, tx);
  ASSERT_EQ(tx.frames.size(), 1u);
  EXPECT_TRUE(b.asserted(0, 3));
}

}  // namespace
}  // namespace uroce::testbed
