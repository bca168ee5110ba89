#include "datapath/transport/dc_sr.h"

#include <gtest/gtest.h>

#include <cstring>

#include "tests/datapath/transport/dc_sim.h"

namespace uroce::transport::dctest {
namespace {

constexpr std::uint32_t kDci = 0x10;
constexpr std::uint32_t kDct = 0x20;

DcDest host(std::uint32_t ip) {
  DcDest d;
  d.dip = wire::Ipv4Addr{ip};
  d.dctn = 7;
  return d;
}

void fill(std::vector<std::uint8_t>& m, std::uint64_t off, std::size_t n, std::uint8_t seed) {
  for (std::size_t i = 0; i < n; ++i) m[off + i] = static_cast<std::uint8_t>(seed + i * 31);
}

DcTargetLimits small_pool(std::uint32_t contexts = 16) {
  DcTargetLimits l;
  l.contexts = contexts;
  l.records_log2 = 8;
  return l;
}

port::SimLinkConfig lossy_link(double loss, std::uint64_t seed) {
  port::SimDirectionConfig d;
  d.propagation_ns = 2000;
  d.bandwidth_bps = 10'000'000'000;
  d.loss = loss;
  return port::SimLinkConfig::symmetric(d, seed);
}

TEST(DcSrDeclined_Add, KeepsTheNewestHostsByAddress) {
  DcSrDeclined x;
  EXPECT_FALSE(x.has(host(1)));
  x.add(host(1));
  DcDest other_dct = host(1);
  other_dct.dctn = 99;
  // By address: every DCT of a device runs selective repeat or none does.
  EXPECT_TRUE(x.has(other_dct));
  x.add(other_dct);
  EXPECT_EQ(x.size(), 1u);
  for (std::uint32_t i = 2; i <= DcSrDeclined::kSlots; ++i) x.add(host(i));
  EXPECT_EQ(x.size(), DcSrDeclined::kSlots);
  EXPECT_TRUE(x.has(host(1)));
  x.add(host(100));
  EXPECT_FALSE(x.has(host(1)));
  EXPECT_TRUE(x.has(host(2)));
  EXPECT_TRUE(x.has(host(100)));
  EXPECT_EQ(x.size(), DcSrDeclined::kSlots);
}

TEST(SrConsumesRsn, SendsAndWriteWithImmediate) {
  EXPECT_TRUE(sr_consumes_rsn(WrOpcode::kSend));
  EXPECT_TRUE(sr_consumes_rsn(WrOpcode::kSendImm));
  EXPECT_TRUE(sr_consumes_rsn(WrOpcode::kSendInv));
  EXPECT_TRUE(sr_consumes_rsn(WrOpcode::kRdmaWriteImm));
  EXPECT_FALSE(sr_consumes_rsn(WrOpcode::kRdmaWrite));
  EXPECT_FALSE(sr_consumes_rsn(WrOpcode::kRdmaRead));
  EXPECT_FALSE(sr_consumes_rsn(WrOpcode::kFetchAdd));
}

// Both devices run selective repeat: the connection uses it from its first
// request (no handshake), and a SEND and a WRITE arrive with their bytes.
TEST(DcSr_Connection, BothSidesRunItFromTheFirstRequest) {
  DcSim s(clean_link(), 1 << 20, small_pool(), true);
  DciQp& dci = s.add_dci(kDci, 0, 0, 7, 10, true);
  DctQp& dct = s.add_dct(kDct);
  s.post_recv(1, 0x1000, 4096);
  fill(s.mem_a, 0, 4096, 3);
  ASSERT_EQ(dci.post_send(s.wr(1, WrOpcode::kSend, kDct, 0, 3000)), 0);
  ASSERT_EQ(dci.post_send(s.wr(2, WrOpcode::kRdmaWrite, kDct, 0, 4096, 0x8000)), 0);
  ASSERT_TRUE(s.run([&] { return s.scq_a.wc.size() == 2; }, 10 * kNsPerMs));
  EXPECT_EQ(s.scq_a.wc[0].status, 0u);
  EXPECT_EQ(s.scq_a.wc[1].status, 0u);
  ASSERT_EQ(s.rcq_b.wc.size(), 1u);
  EXPECT_EQ(s.rcq_b.wc[0].byte_len, 3000u);
  EXPECT_EQ(std::memcmp(s.mem_a.data(), s.mem_b.data() + 0x1000, 3000), 0);
  EXPECT_EQ(std::memcmp(s.mem_a.data(), s.mem_b.data() + 0x8000, 4096), 0);
  EXPECT_NE(dci.lane(0).sr(), nullptr);
  // The target took every packet as SR: 3 + 4 of them at path MTU 1024.
  EXPECT_EQ(dct.counters().rx_requests, 7u);
  EXPECT_EQ(dct.counters().tx_no_sr, 0u);
  EXPECT_EQ(dct.counters().drop_sr_mismatch, 0u);
  EXPECT_EQ(dci.dc_lane(0).stream.counters().no_sr, 0u);
  EXPECT_EQ(dci.sr_counters().sr_tx_resends, 0u);
  EXPECT_EQ(s.parse_errors, 0u);
}

// A target whose device does not run selective repeat answers the opening
// request NO_SR; nothing ran, the stream starts the connection again with
// go-back-N and remembers the host, so its next connection there goes
// plain at once.
TEST(DcSr_Connection, TargetWithoutItAnswersNoSrAndTheStreamGoesPlain) {
  DcSim s(clean_link(), 1 << 20, small_pool(), false);
  DciQp& dci = s.add_dci(kDci, 0, 0, 7, 10, true);
  DctQp& dct = s.add_dct(kDct);
  s.add_dct(kDct + 1);
  for (std::uint64_t i = 0; i < 4; ++i) s.post_recv(i, 0x1000 + i * 0x1000, 4096);
  fill(s.mem_a, 0, 4096, 8);
  ASSERT_EQ(dci.post_send(s.wr(1, WrOpcode::kSend, kDct, 0, 2500)), 0);
  ASSERT_EQ(dci.post_send(s.wr(2, WrOpcode::kSend, kDct, 0, 100)), 0);
  ASSERT_TRUE(s.run([&] { return s.scq_a.wc.size() == 2; }, 10 * kNsPerMs));
  EXPECT_EQ(s.scq_a.wc[0].status, 0u);
  EXPECT_EQ(s.scq_a.wc[1].status, 0u);
  ASSERT_EQ(s.rcq_b.wc.size(), 2u);
  EXPECT_EQ(s.rcq_b.wc[0].byte_len, 2500u);
  EXPECT_EQ(s.rcq_b.wc[1].byte_len, 100u);
  EXPECT_EQ(std::memcmp(s.mem_a.data(), s.mem_b.data() + 0x1000, 2500), 0);
  EXPECT_EQ(dct.counters().tx_no_sr, 1u);
  EXPECT_EQ(dci.dc_lane(0).stream.counters().no_sr, 1u);
  EXPECT_EQ(dci.sr_declined().size(), 1u);
  EXPECT_EQ(dci.lane(0).sr(), nullptr);
  // Another DCT of the same host: go-back-N from the first request.
  ASSERT_EQ(dci.post_send(s.wr(3, WrOpcode::kSend, kDct + 1, 0, 64)), 0);
  ASSERT_TRUE(s.run([&] { return s.scq_a.wc.size() == 3; }, 20 * kNsPerMs));
  EXPECT_EQ(s.scq_a.wc[2].status, 0u);
  EXPECT_EQ(s.dcts[kDct + 1]->counters().tx_no_sr, 0u);
  EXPECT_EQ(dci.dc_lane(0).stream.counters().no_sr, 1u);
}

struct LossyRun {
  RcCounters rc{};
  RcSrCounters sr{};
  std::uint64_t lost = 0;
  std::uint64_t sent = 0;
  TimeNs done_at = 0;
  bool ok = false;
};

// Eight 64 KiB WRITEs and eight 3 KiB SENDs over a link that loses `loss`
// of the frames each way, with selective repeat on both sides or on none;
// every byte and completion checked.
LossyRun lossy_run(bool sr, double loss, std::uint64_t seed) {
  LossyRun r;
  DcSim s(lossy_link(loss, seed), 2 << 20, small_pool(), sr);
  DciQp& dci = s.add_dci(kDci, 0, 0, 7, 12, sr);
  s.add_dct(kDct);
  constexpr std::uint32_t kWrite = 64 * 1024;
  fill(s.mem_a, 0, kWrite, 5);
  for (std::uint64_t i = 0; i < 8; ++i) {
    s.post_recv(100 + i, 0x100000 + i * 0x1000, 4096);
    EXPECT_EQ(dci.post_send(s.wr(i, WrOpcode::kRdmaWrite, kDct, 0, kWrite, i * kWrite)), 0);
    EXPECT_EQ(dci.post_send(s.wr(50 + i, WrOpcode::kSend, kDct, i * 64, 3000)), 0);
  }
  r.ok = s.run([&] { return s.scq_a.wc.size() == 16 && s.rcq_b.wc.size() == 8; }, 2 * kNsPerSec);
  for (std::size_t i = 0; i < s.scq_a.wc.size(); ++i) {
    if (s.scq_a.wc[i].status != 0) r.ok = false;
  }
  for (std::uint64_t i = 0; i < 8; ++i) {
    if (std::memcmp(s.mem_a.data(), s.mem_b.data() + i * kWrite, kWrite) != 0) r.ok = false;
    if (std::memcmp(s.mem_a.data() + i * 64, s.mem_b.data() + 0x100000 + i * 0x1000, 3000) != 0)
      r.ok = false;
  }
  for (std::size_t i = 0; i < s.rcq_b.wc.size(); ++i) {
    if (s.rcq_b.wc[i].wr_id != 100 + i || s.rcq_b.wc[i].byte_len != 3000) r.ok = false;
  }
  r.rc = dci.rc_counters();
  r.sr = dci.sr_counters();
  r.lost = s.link.counters(0).drop_loss + s.link.counters(1).drop_loss;
  r.sent = s.link.counters(0).sent_frames;
  r.done_at = s.clock.now();
  return r;
}

// At 2 % loss each way selective repeat sends again about what was lost,
// go-back-N whole windows behind each loss; both deliver every byte once
// and in order. Same seeds for both.
TEST(DcSr_Loss, ResendsWhatWasLostWhereGoBackNResendsWindows) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const LossyRun sr = lossy_run(true, 0.02, seed);
    const LossyRun gbn = lossy_run(false, 0.02, seed);
    ASSERT_TRUE(sr.ok) << seed;
    ASSERT_TRUE(gbn.ok) << seed;
    EXPECT_GT(sr.lost, 0u);
    EXPECT_GT(sr.sr.sr_tx_resends, 0u) << seed;
    EXPECT_EQ(sr.rc.go_back_n, 0u) << seed;
    EXPECT_LE(sr.rc.tx_retransmits, 2 * sr.lost + 8) << seed;
    EXPECT_GT(gbn.rc.tx_retransmits, 4 * sr.rc.tx_retransmits) << seed;
    EXPECT_LT(sr.done_at, gbn.done_at) << seed;
  }
}

// Reordering without loss: out-of-order packets are placed, completions
// stay in order, and what is sent again stays below what was reordered
// (the reorder window learns from the first ones, rc_sr_tx.h).
TEST(DcSr_Reorder, PlacedOutOfOrderWithoutResends) {
  port::SimDirectionConfig d;
  d.propagation_ns = 2000;
  d.bandwidth_bps = 10'000'000'000;
  d.reorder = 0.05;
  d.reorder_hold_ns = 5 * kNsPerUs;
  DcSim s(port::SimLinkConfig::symmetric(d, 11), 2 << 20, small_pool(), true);
  DciQp& dci = s.add_dci(kDci, 0, 0, 7, 12, true);
  DctQp& dct = s.add_dct(kDct);
  fill(s.mem_a, 0, 8192, 1);
  constexpr int kN = 64;
  for (int i = 0; i < kN; ++i) {
    s.post_recv(static_cast<std::uint64_t>(i), 0x100000 + static_cast<std::uint64_t>(i) * 0x2000,
                8192);
    ASSERT_EQ(dci.post_send(s.wr(static_cast<std::uint64_t>(i), WrOpcode::kSend, kDct,
                                 static_cast<std::uint64_t>(i), 5000)),
              0);
  }
  ASSERT_TRUE(s.run([&] { return s.scq_a.wc.size() == kN && s.rcq_b.wc.size() == kN; }, kNsPerSec));
  for (int i = 0; i < kN; ++i) {
    EXPECT_EQ(s.rcq_b.wc[static_cast<std::size_t>(i)].wr_id, static_cast<std::uint64_t>(i));
    EXPECT_EQ(std::memcmp(s.mem_a.data() + i,
                          s.mem_b.data() + 0x100000 + static_cast<std::size_t>(i) * 0x2000, 5000),
              0)
        << i;
  }
  const std::uint64_t frames = s.link.counters(0).sent_frames;
  EXPECT_GT(s.link.counters(0).reordered, 0u);
  EXPECT_GT(dct.sr_counters().sr_rx_held, 0u);
  EXPECT_EQ(dci.rc_counters().go_back_n, 0u);
  EXPECT_LE(dci.rc_counters().tx_retransmits, s.link.counters(0).reordered);
  EXPECT_LT(dci.rc_counters().tx_retransmits * 20, frames);
}

// A link whose round trip (160 us) outlasts the tail-loss probe's floor
// (100 us): a connection that knows no RTT yet probes before its answer
// can arrive. A second connection to the same host (another of its DCTs)
// starts with the first one's RTT estimates and does not; the bytes of
// both arrive.
TEST(DcSr_Rtt, NewConnectionToTheSameHostKeepsItsRtt) {
  port::SimDirectionConfig d;
  d.propagation_ns = 80 * kNsPerUs;
  d.bandwidth_bps = 10'000'000'000;
  DcSim s(port::SimLinkConfig::symmetric(d, 3), 1 << 20, small_pool(), true);
  DciQp& dci = s.add_dci(kDci, 0, 0, 7, 14, true);
  s.add_dct(kDct);
  s.add_dct(kDct + 1);
  fill(s.mem_a, 0, 4096, 9);
  for (std::uint64_t i = 0; i < 2; ++i) s.post_recv(i, 0x1000 + i * 0x1000, 4096);
  ASSERT_EQ(dci.post_send(s.wr(1, WrOpcode::kSend, kDct, 0, 2000)), 0);
  ASSERT_TRUE(s.run([&] { return s.scq_a.wc.size() == 1; }, 50 * kNsPerMs));
  const std::uint64_t first = dci.sr_counters().sr_tx_probes;
  EXPECT_GE(first, 1u);
  ASSERT_EQ(dci.post_send(s.wr(2, WrOpcode::kSend, kDct + 1, 1, 2000)), 0);
  ASSERT_TRUE(s.run([&] { return s.scq_a.wc.size() == 2; }, 100 * kNsPerMs));
  EXPECT_EQ(dci.dc_lane(0).stream.counters().connects, 2u);
  EXPECT_EQ(dci.sr_counters().sr_tx_probes, first);
  for (const auto& wc : s.scq_a.wc) EXPECT_EQ(wc.status, 0u) << wc.wr_id;
  ASSERT_EQ(s.rcq_b.wc.size(), 2u);
  EXPECT_EQ(std::memcmp(s.mem_a.data(), s.mem_b.data() + 0x1000, 2000), 0);
  EXPECT_EQ(std::memcmp(s.mem_a.data() + 1, s.mem_b.data() + 0x2000, 2000), 0);
}

// A small pool whose contexts go stale after 20 us without a packet.
DcTargetLimits stale_pool() {
  DcTargetLimits l = small_pool(4);
  l.stale_ns = 20 * kNsPerUs;
  return l;
}

// With 8 receives posted at the target, DCI `a` sends two SENDs of `len`
// bytes (from offsets 0 and 1) and both complete; then the clock passes
// the pool's stale time.
void two_sends_then_stale(DcSim& s, DciQp& a, std::uint32_t len) {
  fill(s.mem_a, 0, 4096, 4);
  for (std::uint64_t i = 0; i < 8; ++i) s.post_recv(i, 0x80000 + i * 0x1000, 4096);
  ASSERT_EQ(a.post_send(s.wr(1, WrOpcode::kSend, kDct, 0, len)), 0);
  ASSERT_EQ(a.post_send(s.wr(2, WrOpcode::kSend, kDct, 1, len)), 0);
  ASSERT_TRUE(s.run([&] { return s.scq_a.wc.size() == 2; }, kNsPerMs));
  s.clock.advance_to(s.clock.now() + 50 * kNsPerUs);
}

// A context retired behind a stream's back (stale: nothing reached it for
// stale_ns) sends the stream a GONE notice; its next SENDs go in a new
// connection, numbered from RSN 0 again as the new context counts them
// (RcRequester::dc_sr_begin), and arrive in order with their bytes.
TEST(DcSr_Gone, NewConnectionNumbersItsSendsFromZero) {
  DcSim s(clean_link(), 1 << 20, stale_pool(), true);
  DciQp& a = s.add_dci(kDci, 0, 0, 7, 10, true);
  DciQp& b = s.add_dci(kDci + 1, 0, 0, 7, 10, true);
  DctQp& dct = s.add_dct(kDct);
  ASSERT_NO_FATAL_FAILURE(two_sends_then_stale(s, a, 2000));
  // Another DCI's request retires a's context.
  ASSERT_EQ(b.post_send(s.wr(3, WrOpcode::kSend, kDct, 2, 2000)), 0);
  ASSERT_TRUE(s.run([&] { return s.scq_a.wc.size() == 3; }, 2 * kNsPerMs));
  EXPECT_EQ(a.dc_lane(0).stream.counters().gone, 1u);
  ASSERT_EQ(a.post_send(s.wr(4, WrOpcode::kSend, kDct, 3, 2000)), 0);
  ASSERT_EQ(a.post_send(s.wr(5, WrOpcode::kSend, kDct, 4, 2000)), 0);
  ASSERT_TRUE(
      s.run([&] { return s.scq_a.wc.size() == 5 && s.rcq_b.wc.size() == 5; }, 4 * kNsPerMs));
  for (const auto& wc : s.scq_a.wc) EXPECT_EQ(wc.status, 0u) << wc.wr_id;
  const std::uint64_t src[] = {0, 1, 2, 3, 4};
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(s.rcq_b.wc[i].status, 0u);
    EXPECT_EQ(s.rcq_b.wc[i].wr_id, i);
    EXPECT_EQ(s.rcq_b.wc[i].byte_len, 2000u);
    EXPECT_EQ(std::memcmp(s.mem_a.data() + src[i], s.mem_b.data() + 0x80000 + i * 0x1000, 2000), 0)
        << i;
  }
  EXPECT_EQ(a.dc_lane(0).stream.counters().connects, 2u);
  EXPECT_NE(a.lane(0).sr(), nullptr);
  EXPECT_EQ(dct.counters().drop_sr_mismatch, 0u);
  EXPECT_EQ(dct.sr_counters().sr_drop_unplaced, 0u);
}

// SENDs posted after their stream's context went stale: the first of them
// finds the context retired (its record answers GONE), so both go again in
// a new connection, numbered from RSN 0 there although the old connection
// had numbered them 2 and 3; each arrives once, in order, with its bytes.
TEST(DcSr_Gone, OutstandingSendsGoAgainNumberedFromZero) {
  DcSim s(clean_link(), 1 << 20, stale_pool(), true);
  DciQp& a = s.add_dci(kDci, 0, 0, 7, 10, true);
  DctQp& dct = s.add_dct(kDct);
  ASSERT_NO_FATAL_FAILURE(two_sends_then_stale(s, a, 3000));
  ASSERT_EQ(a.post_send(s.wr(3, WrOpcode::kSend, kDct, 2, 3000)), 0);
  ASSERT_EQ(a.post_send(s.wr(4, WrOpcode::kSend, kDct, 3, 3000)), 0);
  ASSERT_TRUE(
      s.run([&] { return s.scq_a.wc.size() == 4 && s.rcq_b.wc.size() == 4; }, 4 * kNsPerMs));
  EXPECT_GE(a.dc_lane(0).stream.counters().gone, 1u);
  EXPECT_EQ(a.dc_lane(0).stream.counters().connects, 2u);
  for (const auto& wc : s.scq_a.wc) EXPECT_EQ(wc.status, 0u) << wc.wr_id;
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(s.rcq_b.wc[i].status, 0u);
    EXPECT_EQ(s.rcq_b.wc[i].wr_id, i);
    EXPECT_EQ(s.rcq_b.wc[i].byte_len, 3000u);
    EXPECT_EQ(std::memcmp(s.mem_a.data() + i, s.mem_b.data() + 0x80000 + i * 0x1000, 3000), 0) << i;
  }
  EXPECT_EQ(dct.counters().drop_sr_mismatch, 0u);
}

}  // namespace
}  // namespace uroce::transport::dctest
