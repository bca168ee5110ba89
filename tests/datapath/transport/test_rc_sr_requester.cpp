// The RC requester and completer in selective-repeat mode (rc_requester.h,
// rc_completer.h, rc_sr_tx.h; docs/lossy.md "Requester"): SR opcodes and
// SRETH on the wire, only lost PSNs sent again, the tail-loss probe, the
// timeout that skips what the responder holds; then two QPs end to end
// over a lossy, reordering simulated link, against go-back-N on the same
// links.
#include "datapath/transport/rc_requester.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <string>
#include <vector>

#include "tests/datapath/transport/rc_sim_pair.h"
#include "tests/datapath/transport/rc_test_support.h"

namespace uroce::transport {
namespace {

using namespace rctest;
namespace o = wire::op;

constexpr TimeNs us(TimeNs n) { return n * kNsPerUs; }

// The QP under test is the requester, with selective repeat attached and
// started (its peer answered); the fake peer answers with SACKs.
struct SrRequester : RcFixture {
  RcSr sr;
  void make_sr_qp(bool start = true) {
    make_qp();
    qp->set_sr(&sr);
    if (start) qp->sr_tx_start();
  }
  // A SACK: everything before `cum` acknowledged, `held` PSNs beyond.
  PktPtr sack(std::uint32_t cum, std::initializer_list<std::uint32_t> held,
              bool dup = false) const {
    wire::PacketSpec s = peer_spec(o::kSrSack, cum - 1);
    s.aeth = wire::AethHdr::make(wire::aeth_ack_syndrome(), 0);
    wire::SrSackEthHdr h =
        wire::SrSackEthHdr::make(dup ? wire::SrSackEthHdr::kFlagDup : 0, 0, kSrWindow);
    for (std::uint32_t p : held) h.set_bit(p - cum);
    s.sack_eth = h;
    return build(s);
  }
  std::vector<std::uint32_t> psns() const {
    std::vector<std::uint32_t> v;
    for (const PktPtr& f : tx.frames) v.push_back(f->p.bth.psn());
    return v;
  }
  void fire(TimeNs now) { qp->on_timer(now, io); }
  TimeNs armed() const { return timer.at.at(kQpn); }
  // The READ response with PSN `psn` of a READ of the remote region at
  // `read_off` that started at PSN `first`: its payload is the remote bytes
  // at its offset (a path MTU, or `tail` bytes for the READ's last PSN).
  PktPtr rd(std::uint8_t op, std::uint32_t first, std::uint32_t psn, std::size_t read_off = 0,
            std::size_t tail = 0) const {
    wire::PacketSpec s = peer_spec(op, psn);
    if (op != o::kRcReadResponseMiddle) s.aeth = wire::AethHdr::make(wire::aeth_ack_syndrome(), 1);
    const std::size_t off = read_off + static_cast<std::size_t>(psn - first) * mtu();
    s.payload = std::span<const std::uint8_t>(remote.data() + off, tail != 0 ? tail : mtu());
    return build(s);
  }
  // The READ's bytes at `off` of `len` arrived in local memory at `off`.
  bool placed(std::size_t off, std::size_t len) const {
    return std::memcmp(local.data() + off, remote.data() + off, len) == 0;
  }
};

// Once started, WQEs send SR opcodes: SEND and WRITE packets with SRETH
// (RSN, offset), every WRITE packet with the message's RETH; RSNs count the
// SENDs and WRITEs with immediate only.
TEST_F(SrRequester, SendNext_SrOpcodesAndSreth) {
  make_sr_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kSend, 0, 2500)), 0);
  ASSERT_EQ(qp->post_send(send_wr(2, WrOpcode::kRdmaWrite, 0, 2100)), 0);
  ASSERT_EQ(qp->post_send(send_wr(3, WrOpcode::kRdmaWriteImm, 0, 10)), 0);
  ASSERT_EQ(qp->post_send(send_wr(4, WrOpcode::kRdmaRead, 8192, 100)), 0);
  ASSERT_EQ(qp->post_send(send_wr(5, WrOpcode::kSend, 0, 0)), 0);
  pump();
  const std::uint8_t ops[] = {o::kSrSendFirst,    o::kSrSendMiddle,  o::kSrSendLast,
                              o::kSrWriteFirst,   o::kSrWriteMiddle, o::kSrWriteLast,
                              o::kSrWriteOnlyImm, o::kSrReadRequest, o::kSrSendOnly};
  const std::uint32_t rsns[] = {0, 0, 0, 1, 1, 1, 1, 0, 2};
  const std::uint32_t offs[] = {0, 1024, 2048, 0, 1024, 2048, 0, 0, 0};
  ASSERT_EQ(tx.size(), std::size(ops));
  for (std::size_t i = 0; i < std::size(ops); ++i) {
    const wire::ParsedPacket& p = tx.at(i);
    EXPECT_EQ(p.bth.opcode(), ops[i]) << i;
    EXPECT_EQ(p.bth.psn(), 100 + i) << i;
    if (p.has(wire::ExtHdr::kSrEth)) {
      EXPECT_EQ(p.sr_eth.rsn(), rsns[i]) << i;
      EXPECT_EQ(p.sr_eth.offset(), offs[i]) << i;
    }
    if (i >= 3 && i <= 6) {
      ASSERT_TRUE(p.has(wire::ExtHdr::kReth)) << i;
      EXPECT_EQ(p.reth.va(), kRemoteVa);
      EXPECT_EQ(p.reth.dma_len(), i == 6 ? 10u : 2100u);
    }
  }
  EXPECT_FALSE(tx.at(7).has(wire::ExtHdr::kSrEth));
}

// Attached but not started (the peer has not answered): RC's opcodes, byte
// for byte. Started while a WQE is outstanding, the requester starts no new
// WQE until it completes, then numbers SR's messages from RSN 0.
TEST_F(SrRequester, SendNext_SwitchesOnceEarlierWqesComplete) {
  make_sr_qp(false);
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kSend, 0, 10)), 0);
  pump();
  ASSERT_EQ(tx.size(), 1u);
  EXPECT_EQ(tx.at(0).bth.opcode(), o::kRcSendOnly);
  qp->sr_tx_start();
  ASSERT_EQ(qp->post_send(send_wr(2, WrOpcode::kSend, 0, 10)), 0);
  EXPECT_EQ(pump(), 0u);
  EXPECT_FALSE(qp->has_output());
  deliver(ack(100));
  ASSERT_EQ(scq.wc.size(), 1u);
  EXPECT_TRUE(qp->has_output());
  pump();
  ASSERT_EQ(tx.size(), 2u);
  EXPECT_EQ(tx.at(1).bth.opcode(), o::kSrSendOnly);
  EXPECT_EQ(tx.at(1).bth.psn(), 101u);
  EXPECT_EQ(tx.at(1).sr_eth.rsn(), 0u);
}

// A SACK shows 102..107 held and 100, 101 missing: they go again, and only
// they, once RTT + reo_wnd has passed since they were sent, with AckReq.
TEST_F(SrRequester, Sack_ResendsOnlyWhatIsMissing) {
  make_sr_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaWrite, 0, 8 * 1024)), 0);
  pump(0);
  ASSERT_EQ(tx.size(), 8u);
  tx.clear();
  deliver(sack(100, {102, 103, 104, 105, 106, 107}), us(20));
  EXPECT_EQ(sr.ctr.sr_rx_sacks, 1u);
  EXPECT_EQ(pump(us(20)), 0u);  // not lost yet: may be reordered
  EXPECT_EQ(armed(), us(25));   // 0 + RTT 20 + reo_wnd 5
  fire(us(25));
  pump(us(25));
  EXPECT_EQ(psns(), (std::vector<std::uint32_t>{100, 101}));
  EXPECT_TRUE(tx.at(0).bth.ack_req());
  EXPECT_EQ(tx.at(0).bth.opcode(), o::kSrWriteFirst);
  EXPECT_EQ(tx.at(1).sr_eth.offset(), 1024u);
  EXPECT_EQ(qp->counters().tx_retransmits, 2u);
  EXPECT_EQ(sr.ctr.sr_tx_resends, 2u);
  EXPECT_EQ(qp->counters().go_back_n, 0u);
  deliver(ack(107), us(45));
  ASSERT_EQ(scq.wc.size(), 1u);
  EXPECT_EQ(status(scq.wc[0]), WcStatus::kSuccess);
}

// Nothing comes back: after PTO the newest packet goes again as a probe;
// its SACK shows the rest missing, and they go again at once, long before
// the retransmission timeout.
TEST_F(SrRequester, Probe_TailLossRecoveredBeforeTimeout) {
  make_sr_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaWrite, 0, 4 * 1024)), 0);
  pump(0);
  tx.clear();
  EXPECT_EQ(armed(), SrTx::kMinPto);
  fire(SrTx::kMinPto);
  pump(SrTx::kMinPto);
  EXPECT_EQ(psns(), (std::vector<std::uint32_t>{103}));
  EXPECT_EQ(sr.ctr.sr_tx_probes, 1u);
  tx.clear();
  deliver(sack(100, {103}), SrTx::kMinPto + us(20));
  pump(SrTx::kMinPto + us(20));
  EXPECT_EQ(psns(), (std::vector<std::uint32_t>{100, 101, 102}));
  EXPECT_EQ(qp->counters().timeouts, 0u);
}

// The resends are lost too: the timeout sends again only what the
// responder does not hold (100, 101), not the whole window.
TEST_F(SrRequester, Timeout_SkipsWhatTheResponderHolds) {
  make_sr_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaWrite, 0, 6 * 1024)), 0);
  pump(0);
  deliver(sack(100, {102, 103, 104, 105}), us(20));
  run_to_timeout(us(20));
  ASSERT_EQ(qp->counters().timeouts, 1u);
  EXPECT_EQ(psns(), (std::vector<std::uint32_t>{100, 101}));
  EXPECT_EQ(qp->counters().go_back_n, 0u);
}

// READ responses (docs/lossy.md "READ responses") ----------------------------

// Responses that arrive out of order are placed at their offsets at once;
// the READ completes only when every one of them is there, and nothing is
// asked for again while the gap may be reordering.
TEST_F(SrRequester, ReadResponse_PlacedOutOfOrderCompletedInOrder) {
  make_sr_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaRead, 0, 4096)), 0);
  pump(0);
  ASSERT_EQ(tx.size(), 1u);
  EXPECT_EQ(tx.at(0).bth.opcode(), o::kSrReadRequest);
  EXPECT_EQ(tx.at(0).reth.dma_len(), 4096u);
  tx.clear();
  deliver(rd(o::kRcReadResponseLast, 100, 103), us(10));
  deliver(rd(o::kRcReadResponseMiddle, 100, 101), us(10));
  EXPECT_TRUE(placed(3072, 1024));
  EXPECT_TRUE(placed(1024, 1024));
  EXPECT_FALSE(placed(0, 1024));
  deliver(rd(o::kRcReadResponseMiddle, 100, 102), us(11));
  EXPECT_TRUE(scq.wc.empty());
  EXPECT_EQ(sr.ctr.sr_rd_placed, 3u);
  deliver(rd(o::kRcReadResponseFirst, 100, 100), us(11));
  ASSERT_EQ(scq.wc.size(), 1u);
  EXPECT_EQ(status(scq.wc[0]), WcStatus::kSuccess);
  EXPECT_EQ(scq.wc[0].byte_len, 4096u);
  EXPECT_TRUE(placed(0, 4096));
  EXPECT_EQ(pump(us(11)), 0u);
  EXPECT_EQ(qp->counters().drop_response_gap + qp->counters().go_back_n, 0u);
  EXPECT_EQ(sr.ctr.sr_rd_rereqs + sr.ctr.sr_rd_dup, 0u);
}

// One response lost in the middle: once a later response arrived and RTT +
// reo_wnd passed, a READ request for that PSN's bytes alone goes (the RETH
// at its offset, one path MTU long); its response completes the READ.
TEST_F(SrRequester, ReadResponse_LostMiddleReRequestedAlone) {
  make_sr_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaRead, 0, 8 * 1024)), 0);
  pump(0);
  tx.clear();
  deliver(rd(o::kRcReadResponseFirst, 100, 100), us(20));
  for (std::uint32_t p = 101; p < 107; ++p) {
    if (p != 103) deliver(rd(o::kRcReadResponseMiddle, 100, p), us(20));
  }
  deliver(rd(o::kRcReadResponseLast, 100, 107), us(20));
  EXPECT_EQ(pump(us(20)), 0u);  // not lost yet: may be reordered
  EXPECT_EQ(armed(), us(25));   // sent at 0 + RTT 20 + reo_wnd 5
  fire(us(25));
  pump(us(25));
  ASSERT_EQ(tx.size(), 1u);
  EXPECT_EQ(tx.at(0).bth.opcode(), o::kSrReadRequest);
  EXPECT_EQ(tx.at(0).bth.psn(), 103u);
  EXPECT_TRUE(tx.at(0).bth.ack_req());
  EXPECT_EQ(tx.at(0).reth.va(), kRemoteVa + 3 * 1024);
  EXPECT_EQ(tx.at(0).reth.rkey(), rkey);
  EXPECT_EQ(tx.at(0).reth.dma_len(), 1024u);
  EXPECT_EQ(sr.ctr.sr_rd_rereqs, 1u);
  EXPECT_EQ(sr.ctr.sr_rd_rereq_psns, 1u);
  EXPECT_TRUE(scq.wc.empty());
  deliver(rd(o::kRcReadResponseMiddle, 100, 103), us(45));
  ASSERT_EQ(scq.wc.size(), 1u);
  EXPECT_EQ(status(scq.wc[0]), WcStatus::kSuccess);
  EXPECT_TRUE(placed(0, 8 * 1024));
  EXPECT_EQ(qp->counters().go_back_n + qp->counters().timeouts, 0u);
}

// Several holes in one part: one READ request from the first missing PSN to
// the last one deemed lost (the placed PSNs between come again and are
// dropped as duplicates, not placed twice); holes in another part of the
// READ take a request of their own.
TEST_F(SrRequester, ReadResponse_SeveralHolesOneRequestPerPart) {
  make_sr_qp();
  // 130 response PSNs, 100..229: parts of 64 (half the cap of 128); the
  // first two are asked for at once, the third once the first is placed.
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaRead, 0, 130 * 1024)), 0);
  pump(0);
  ASSERT_EQ(tx.size(), 2u);
  EXPECT_EQ(tx.at(0).bth.psn(), 100u);
  EXPECT_EQ(tx.at(0).reth.dma_len(), 64u * 1024);
  EXPECT_EQ(tx.at(1).bth.psn(), 164u);
  EXPECT_EQ(tx.at(1).reth.va(), kRemoteVa + 64 * 1024);
  EXPECT_EQ(tx.at(1).reth.dma_len(), 64u * 1024);
  EXPECT_FALSE(qp->has_output());  // the third part does not fit yet
  tx.clear();
  const std::vector<std::uint32_t> holes{101, 104, 105, 170};
  for (std::uint32_t p = 100; p < 228; ++p) {
    if (std::find(holes.begin(), holes.end(), p) != holes.end()) continue;
    std::uint8_t op = o::kRcReadResponseMiddle;
    if (p == 100) op = o::kRcReadResponseFirst;
    if (p == 163 || p == 227) op = o::kRcReadResponseLast;
    if (p == 164) op = o::kRcReadResponseFirst;
    deliver(rd(op, 100, p), us(20));
  }
  fire(armed());
  pump(armed());
  ASSERT_EQ(tx.size(), 2u);
  EXPECT_EQ(tx.at(0).bth.psn(), 101u);
  EXPECT_EQ(tx.at(0).reth.va(), kRemoteVa + 1024);
  EXPECT_EQ(tx.at(0).reth.dma_len(), 5u * 1024);  // 101..105
  EXPECT_EQ(tx.at(1).bth.psn(), 170u);
  EXPECT_EQ(tx.at(1).reth.dma_len(), 1024u);
  EXPECT_EQ(sr.ctr.sr_rd_rereqs, 2u);
  EXPECT_EQ(sr.ctr.sr_rd_rereq_psns, 6u);
  tx.clear();
  for (std::uint32_t p = 101; p <= 105; ++p) deliver(rd(o::kRcReadResponseMiddle, 100, p), us(40));
  EXPECT_EQ(sr.ctr.sr_rd_dup, 2u);  // 102, 103
  deliver(rd(o::kRcReadResponseMiddle, 100, 170), us(40));
  EXPECT_TRUE(scq.wc.empty());
  // The first part is placed: the third is asked for.
  EXPECT_TRUE(qp->has_output());
  pump(us(40));
  ASSERT_EQ(tx.size(), 1u);
  EXPECT_EQ(tx.at(0).bth.psn(), 228u);
  EXPECT_EQ(tx.at(0).reth.dma_len(), 2u * 1024);
  deliver(rd(o::kRcReadResponseFirst, 100, 228), us(60));
  deliver(rd(o::kRcReadResponseLast, 100, 229), us(60));
  ASSERT_EQ(scq.wc.size(), 1u);
  EXPECT_EQ(scq.wc[0].byte_len, 130u * 1024);
  EXPECT_TRUE(placed(0, 130 * 1024));
  EXPECT_EQ(qp->counters().go_back_n, 0u);
}

// A response placed already is dropped and counted, whatever its bytes;
// one for a PSN not asked for yet (beyond the cap) is dropped too.
TEST_F(SrRequester, ReadResponse_DuplicateAndBeyondWindowDropped) {
  make_sr_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaRead, 0, 130 * 1024)), 0);
  pump(0);
  deliver(rd(o::kRcReadResponseMiddle, 100, 101), us(10));
  wire::PacketSpec s = peer_spec(o::kRcReadResponseMiddle, 101);
  const std::vector<std::uint8_t> junk(1024, 0xEE);
  s.payload = junk;
  deliver(build(s), us(11));
  EXPECT_EQ(sr.ctr.sr_rd_dup, 1u);
  EXPECT_TRUE(placed(1024, 1024));
  deliver(rd(o::kRcReadResponseFirst, 100, 228), us(11));  // third part: not asked for
  EXPECT_EQ(sr.ctr.sr_rd_drop_window, 1u);
  EXPECT_FALSE(placed(128 * 1024, 1024));
  EXPECT_EQ(sr.ctr.sr_rd_placed, 1u);
  EXPECT_TRUE(scq.wc.empty());
  EXPECT_EQ(qp->state(), QpState::kRts);
}

// A READ then two SENDs: the responder acknowledges the SENDs before the
// READ's responses are all placed. Nothing completes early, the SENDs are
// not sent again, only the missing response is asked for, and the three
// complete in order once it arrives.
TEST_F(SrRequester, ReadResponse_ReadThenSendsCompleteInOrder) {
  make_sr_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaRead, 0, 4096)), 0);
  ASSERT_EQ(qp->post_send(send_wr(2, WrOpcode::kSend, 8192, 100)), 0);
  ASSERT_EQ(qp->post_send(send_wr(3, WrOpcode::kSend, 8192, 100)), 0);
  pump(0);
  ASSERT_EQ(psns(), (std::vector<std::uint32_t>{100, 104, 105}));
  tx.clear();
  deliver(rd(o::kRcReadResponseFirst, 100, 100), us(20));
  deliver(rd(o::kRcReadResponseMiddle, 100, 102), us(20));
  deliver(rd(o::kRcReadResponseLast, 100, 103), us(20));
  deliver(ack(105), us(21));
  EXPECT_TRUE(scq.wc.empty());
  fire(armed());
  pump(armed());
  EXPECT_EQ(psns(), (std::vector<std::uint32_t>{101}));
  EXPECT_EQ(tx.at(0).bth.opcode(), o::kSrReadRequest);
  deliver(rd(o::kRcReadResponseMiddle, 100, 101), us(50));
  ASSERT_EQ(scq.wc.size(), 3u);
  EXPECT_EQ(scq.wc[0].wr_id, 1u);
  EXPECT_EQ(scq.wc[0].opcode, static_cast<std::uint32_t>(WcOpcode::kRdmaRead));
  EXPECT_EQ(scq.wc[1].wr_id, 2u);
  EXPECT_EQ(scq.wc[2].wr_id, 3u);
  for (const Cqe& c : scq.wc) EXPECT_EQ(status(c), WcStatus::kSuccess);
  EXPECT_TRUE(placed(0, 4096));
  EXPECT_EQ(qp->counters().tx_retransmits, 1u);
  EXPECT_FALSE(qp->has_output());
}

// The re-requested responses are lost too: the tail-loss probes ask for the
// oldest missing ones (those due before the timeout), then the retransmission timeout
// asks again for the responses not placed, and only for them: no
// go-back-N to the READ.
TEST_F(SrRequester, ReadResponse_TimeoutAsksOnlyForWhatIsMissing) {
  make_sr_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaRead, 0, 4096)), 0);
  pump(0);
  deliver(rd(o::kRcReadResponseFirst, 100, 100), us(20));
  deliver(rd(o::kRcReadResponseLast, 100, 103), us(20));
  const TimeNs t = run_to_timeout(us(20));
  ASSERT_EQ(qp->counters().timeouts, 1u);
  ASSERT_EQ(tx.size(), 1u);
  EXPECT_EQ(tx.at(0).bth.opcode(), o::kSrReadRequest);
  EXPECT_EQ(tx.at(0).bth.psn(), 101u);
  EXPECT_EQ(tx.at(0).reth.va(), kRemoteVa + 1024);
  EXPECT_EQ(tx.at(0).reth.dma_len(), 2048u);
  // PTO 100 us, doubling: five probes by 3.1 ms, before the 4.19 ms
  // timeout (fewer than kMaxProbes).
  EXPECT_EQ(sr.ctr.sr_tx_probes, 5u);
  EXPECT_EQ(qp->counters().go_back_n, 0u);
  deliver(rd(o::kRcReadResponseMiddle, 100, 101), t + us(20));
  deliver(rd(o::kRcReadResponseMiddle, 100, 102), t + us(20));
  ASSERT_EQ(scq.wc.size(), 1u);
  EXPECT_EQ(status(scq.wc[0]), WcStatus::kSuccess);
  EXPECT_TRUE(placed(0, 4096));
}

// Plain RC (the peer never answered the handshake): a lost READ response is
// a go-back-N, the READ asked for again from the missing PSN to its end,
// byte for byte as a QP without selective repeat sends it.
TEST_F(SrRequester, ReadResponse_PlainRcGoesBackNUnchanged) {
  std::vector<std::vector<std::uint8_t>> frames[2];
  for (int with_sr = 0; with_sr < 2; ++with_sr) {
    tx.clear();
    scq.wc.clear();
    std::fill(local.begin(), local.begin() + 4096, 0);
    if (with_sr != 0) {
      make_sr_qp(false);
    } else {
      make_qp();
    }
    ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaRead, 0, 4096)), 0);
    pump(0);
    deliver(rd(o::kRcReadResponseFirst, 100, 100), us(10));
    deliver(rd(o::kRcReadResponseLast, 100, 103), us(10));  // 101, 102 lost
    EXPECT_EQ(qp->counters().drop_response_gap, 1u);
    EXPECT_EQ(qp->counters().go_back_n, 1u);
    pump(us(10));
    ASSERT_EQ(tx.size(), 2u);
    EXPECT_EQ(tx.at(1).bth.opcode(), o::kRcReadRequest);
    EXPECT_EQ(tx.at(1).bth.psn(), 101u);
    EXPECT_EQ(tx.at(1).reth.dma_len(), 3072u);
    for (std::size_t i = 0; i < tx.size(); ++i) frames[with_sr].push_back(tx.frames[i]->bytes);
    for (std::uint32_t p = 101; p <= 103; ++p) {
      deliver(rd(p == 103 ? o::kRcReadResponseLast : o::kRcReadResponseMiddle, 100, p), us(20));
    }
    ASSERT_EQ(scq.wc.size(), 1u);
    EXPECT_TRUE(placed(0, 4096));
    EXPECT_EQ(sr.ctr.sr_rd_placed + sr.ctr.sr_rd_rereqs + sr.ctr.sr_rd_dup, 0u);
  }
  EXPECT_EQ(frames[0], frames[1]);
}

// End to end ---------------------------------------------------------------

port::SimLinkConfig lossy(double loss, double reorder, double dup, std::uint64_t seed) {
  port::SimDirectionConfig d;
  d.bandwidth_bps = 25'000'000'000ull;
  d.propagation_ns = 2'000;
  d.queue_frames = 2048;
  d.loss = loss;
  d.reorder = reorder;
  d.reorder_hold_ns = 3'000;
  d.duplicate = dup;
  return port::SimLinkConfig::symmetric(d, seed);
}

struct SrRun {
  bool done = false;
  TimeNs took = 0;
  RcCounters a, b;
  RcSrCounters sra;
  std::uint64_t lost_ab = 0;  // frames the link lost from A to B
  std::uint64_t lost_ba = 0;
  // READ requests A sent beyond the first of each READ, and the response
  // PSNs they asked for (the harness's count, so the same for both modes).
  std::uint64_t read_rereqs = 0;
  std::uint64_t read_rereq_psns = 0;
};

// A writes 1 MiB into B, reads it back elsewhere, sends 20 messages;
// everything must arrive intact and complete in order. `sr`: both QPs run
// selective repeat, else go-back-N.
SrRun run_pair(bool sr, double loss, double reorder, double dup, std::uint64_t seed,
               wire::PathMtu mtu, bool with_read = true) {
  constexpr std::size_t kMiB = 1 << 20;
  ConnectParams cp;
  cp.mtu = mtu;
  cp.sq_psn = 0xFFFF00;  // wraps during the run
  cp.rq_psn = 0xFFFFF0;
  cp.timeout = 8;
  cp.retry_cnt = 7;
  cp.rnr_retry = 7;
  RcSr sra, srb;  // outlive the QPs they are attached to
  SimPair pair(lossy(loss, reorder, dup, seed), 4 * kMiB, cp);
  SimSide& a = pair.a();
  SimSide& b = pair.b();
  if (sr) {
    a.qp->set_sr(&sra);
    b.qp->set_sr(&srb);
    a.qp->sr_tx_start();
    b.qp->sr_tx_start();
  }
  for (std::size_t i = 0; i < kMiB; ++i)
    a.mem[i] = static_cast<std::uint8_t>((i * 2654435761u) >> 13);
  const std::uint64_t va = SimSide::kVa;
  auto wr = [&](std::uint64_t id, WrOpcode op, std::uint64_t loff, std::uint32_t len,
                std::uint64_t roff) {
    SendWr w;
    w.wr_id = id;
    w.opcode = op;
    w.flags = send_flag::kSignaled;
    w.num_sge = 1;
    w.sge[0] = {va + loff, len, a.key};
    w.remote_addr = va + roff;
    w.rkey = b.key;
    return w;
  };
  for (std::uint64_t i = 0; i < 20; ++i) {
    RecvWr r;
    r.wr_id = 1000 + i;
    r.num_sge = 1;
    r.sge[0] = {va + 3 * kMiB + 8192 * i, 8192, b.key};
    EXPECT_EQ(b.qp->post_recv(r), 0);
  }
  std::size_t sends = 0;
  EXPECT_EQ(a.qp->post_send(wr(1, WrOpcode::kRdmaWrite, 0, kMiB, kMiB)), 0);
  ++sends;
  if (with_read) {
    EXPECT_EQ(a.qp->post_send(wr(2, WrOpcode::kRdmaRead, 2 * kMiB, kMiB, kMiB)), 0);
    ++sends;
  }
  for (std::uint32_t i = 0; i < 20; ++i) {
    EXPECT_EQ(a.qp->post_send(wr(100 + i, WrOpcode::kSend, 4096 * i, (i * 977) % 8193, 0)), 0);
  }
  SrRun r;
  r.done = pair.run([&] { return a.scq.wc.size() == sends + 20 && b.rcq.wc.size() == 20; },
                    60 * kNsPerSec);
  r.took = pair.clock().now();
  r.a = a.qp->counters();
  r.sra = sra.ctr;
  r.b = b.qp->counters();
  r.lost_ab = pair.link().counters(0).drop_loss;
  r.lost_ba = pair.link().counters(1).drop_loss;
  r.read_rereqs = a.tx.read_rereqs;
  r.read_rereq_psns = a.tx.read_rereq_psns;
  if (!r.done) return r;
  for (std::size_t i = 0; i < a.scq.wc.size(); ++i) {
    EXPECT_EQ(status(a.scq.wc[i]), WcStatus::kSuccess) << i;
  }
  for (std::uint32_t i = 0; i < 20; ++i) {
    const Cqe& c = b.rcq.wc[i];
    const std::uint32_t len = (i * 977) % 8193;
    EXPECT_EQ(c.wr_id, 1000u + i);
    EXPECT_EQ(status(c), WcStatus::kSuccess);
    EXPECT_EQ(c.byte_len, len);
    EXPECT_EQ(std::memcmp(b.mem.data() + 3 * kMiB + 8192 * i, a.mem.data() + 4096 * i, len), 0)
        << i;
  }
  EXPECT_EQ(std::memcmp(b.mem.data() + kMiB, a.mem.data(), kMiB), 0);
  if (with_read) {
    EXPECT_EQ(std::memcmp(a.mem.data() + 2 * kMiB, a.mem.data(), kMiB), 0);
  }
  EXPECT_EQ(a.qp->state(), QpState::kRts);
  EXPECT_EQ(b.qp->state(), QpState::kRts);
  EXPECT_EQ(a.parse_errors + b.parse_errors, 0u);
  return r;
}

// A cap below ack_req_every (the leaf-spine testbed's 32 against 64): the
// requester asks for an ACK every half window, so a long WRITE over a clean
// link moves its window on ACKs and never waits for a tail-loss probe.
TEST(SrSimCap, SmallCapWindowMovesOnAcks) {
  constexpr std::size_t kMiB = 1 << 20;
  ConnectParams cp;
  cp.mtu = wire::PathMtu::k4096;
  cp.timeout = 8;
  cp.retry_cnt = 7;
  cp.rnr_retry = 7;
  RcSr sra, srb;
  sra.cap = srb.cap = 32;
  SimPair pair(lossy(0, 0, 0, 1), 2 * kMiB, cp);
  SimSide& a = pair.a();
  SimSide& b = pair.b();
  a.qp->set_sr(&sra);
  b.qp->set_sr(&srb);
  a.qp->sr_tx_start();
  b.qp->sr_tx_start();
  SendWr w;
  w.wr_id = 1;
  w.opcode = WrOpcode::kRdmaWrite;
  w.flags = send_flag::kSignaled;
  w.num_sge = 1;
  w.sge[0] = {SimSide::kVa, kMiB, a.key};
  w.remote_addr = SimSide::kVa + kMiB;
  w.rkey = b.key;
  ASSERT_EQ(a.qp->post_send(w), 0);
  ASSERT_TRUE(pair.run([&] { return a.scq.wc.size() == 1; }, kNsPerSec));
  EXPECT_EQ(status(a.scq.wc[0]), WcStatus::kSuccess);
  EXPECT_GT(a.qp->counters().wait_window, 0u);
  EXPECT_EQ(sra.ctr.sr_tx_probes, 0u);
  EXPECT_EQ(a.qp->counters().tx_retransmits, 0u);
}

struct SrLink {
  const char* name;
  double loss, reorder, dup;
  wire::PathMtu mtu;
};
struct SrSim : ::testing::TestWithParam<std::tuple<SrLink, std::uint64_t>> {};

TEST_P(SrSim, Pair_WriteReadSendsArriveIntact) {
  const auto& [l, seed] = GetParam();
  const SrRun r = run_pair(true, l.loss, l.reorder, l.dup, seed, l.mtu);
  std::printf(
      "%s seed %llu: %.1f us, retransmissions %llu (resends %llu, lost %llu, probes %llu, "
      "spurious %llu, timeouts %llu, go-back-N %llu, READ response gaps %llu), frames lost "
      "%llu + %llu\n",
      l.name, static_cast<unsigned long long>(seed), r.took / 1e3,
      static_cast<unsigned long long>(r.a.tx_retransmits),
      static_cast<unsigned long long>(r.sra.sr_tx_resends),
      static_cast<unsigned long long>(r.sra.sr_tx_lost),
      static_cast<unsigned long long>(r.sra.sr_tx_probes),
      static_cast<unsigned long long>(r.sra.sr_tx_spurious),
      static_cast<unsigned long long>(r.a.timeouts), static_cast<unsigned long long>(r.a.go_back_n),
      static_cast<unsigned long long>(r.a.drop_response_gap),
      static_cast<unsigned long long>(r.lost_ab), static_cast<unsigned long long>(r.lost_ba));
  std::printf(
      "  READ: responses sent %llu, dropped %llu (gaps %llu, duplicates %llu, beyond the window "
      "%llu), placed out of order %llu; re-requests %llu asking for %llu response PSNs\n",
      static_cast<unsigned long long>(r.b.tx_read_responses),
      static_cast<unsigned long long>(r.a.drop_response_gap + r.sra.sr_rd_dup +
                                      r.sra.sr_rd_drop_window),
      static_cast<unsigned long long>(r.a.drop_response_gap),
      static_cast<unsigned long long>(r.sra.sr_rd_dup),
      static_cast<unsigned long long>(r.sra.sr_rd_drop_window),
      static_cast<unsigned long long>(r.sra.sr_rd_placed),
      static_cast<unsigned long long>(r.read_rereqs),
      static_cast<unsigned long long>(r.read_rereq_psns));
  ASSERT_TRUE(r.done) << "t=" << r.took;
  if (l.loss == 0 && l.reorder == 0 && l.dup == 0) {
    EXPECT_EQ(r.a.tx_retransmits, 0u);
  }
  // What went to B again is what the link lost (each loss about once, and
  // the probes that lost acknowledgements cause), never a window behind
  // each loss.
  if (l.reorder == 0 && l.dup == 0) {
    EXPECT_LE(r.sra.sr_tx_resends, 2 * (r.lost_ab + r.lost_ba) + 16)
        << "lost " << r.lost_ab << " + " << r.lost_ba;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Links, SrSim,
    ::testing::Combine(
        ::testing::Values(SrLink{"NoLoss", 0.0, 0.0, 0.0, wire::PathMtu::k4096},
                          SrLink{"Loss1pct", 0.01, 0.0, 0.0, wire::PathMtu::k4096},
                          SrLink{"Loss10pct", 0.10, 0.0, 0.0, wire::PathMtu::k1024},
                          SrLink{"Reorder20pct", 0.0, 0.20, 0.0, wire::PathMtu::k1024},
                          SrLink{"LossReorderDup", 0.02, 0.05, 0.02, wire::PathMtu::k1024}),
        ::testing::Values(1u, 2u, 3u)),
    [](const auto& i) {
      return std::string(std::get<0>(i.param).name) + "_seed" +
             std::to_string(std::get<1>(i.param));
    });

// The same WRITE and SENDs over the same lossy links (same seeds), with and
// without selective repeat. Without loss SR pays its header bytes (SRETH on
// every packet, a RETH on every WRITE packet: 24 more bytes per 1 KiB
// packet, 2.3 %); with loss it sends a small fraction of go-back-N's
// retransmissions and finishes first. The figures (virtual time, goodput
// against the same mode without loss) go to the test's log.
TEST(SrSimCompare, FewerRetransmissionsThanGoBackN) {
  const SrRun g0 = run_pair(false, 0, 0, 0, 1, wire::PathMtu::k1024, false);
  const SrRun s0 = run_pair(true, 0, 0, 0, 1, wire::PathMtu::k1024, false);
  ASSERT_TRUE(g0.done && s0.done);
  EXPECT_EQ(g0.a.tx_retransmits + s0.a.tx_retransmits, 0u);
  EXPECT_LE(s0.took, g0.took + g0.took * 3 / 100);
  std::printf("no loss: go-back-N %.1f us, selective repeat %.1f us\n", g0.took / 1e3,
              s0.took / 1e3);
  for (const double loss : {0.001, 0.01}) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      const SrRun g = run_pair(false, loss, 0, 0, seed, wire::PathMtu::k1024, false);
      const SrRun s = run_pair(true, loss, 0, 0, seed, wire::PathMtu::k1024, false);
      ASSERT_TRUE(g.done && s.done) << loss << " " << seed;
      std::printf(
          "loss %.3f seed %llu: go-back-N %llu retransmissions, %.1f us, goodput %.2f; "
          "selective repeat %llu retransmissions (%llu probes, %llu timeouts), %.1f us, "
          "goodput %.2f; frames lost %llu + %llu / %llu + %llu\n",
          loss, static_cast<unsigned long long>(seed),
          static_cast<unsigned long long>(g.a.tx_retransmits), g.took / 1e3,
          static_cast<double>(g0.took) / static_cast<double>(g.took),
          static_cast<unsigned long long>(s.a.tx_retransmits),
          static_cast<unsigned long long>(s.sra.sr_tx_probes),
          static_cast<unsigned long long>(s.a.timeouts), s.took / 1e3,
          static_cast<double>(s0.took) / static_cast<double>(s.took),
          static_cast<unsigned long long>(g.lost_ab), static_cast<unsigned long long>(g.lost_ba),
          static_cast<unsigned long long>(s.lost_ab), static_cast<unsigned long long>(s.lost_ba));
      // Timing is compared where data was lost; a lost ACK alone costs
      // neither mode anything.
      if (s.lost_ab == 0 || g.lost_ab == 0) continue;
      if (g.a.tx_retransmits > 20) {
        EXPECT_LT(s.a.tx_retransmits * 3, g.a.tx_retransmits) << loss << " " << seed;
      }
      EXPECT_LE(s.took, g.took) << loss << " " << seed;
    }
  }
}

// Many 64 KiB READs, 16 posted at a time (ib_read_bw's shape; path MTU
// 4096, so one part each), over a link losing 1 % of the frames each way,
// with and without selective repeat, the same seeds. A lost READ request
// leaves the responder's later ones dropped (they run only in order), so
// nothing comes back to show it: the tail-loss probe asks again for the
// oldest READ, not the newest (SrTx::probe_read), long before the
// retransmission timeout (67 ms here).
struct ReadsRun {
  bool done = false;
  TimeNs took = 0;
  RcCounters a, b;
  std::uint64_t rereqs = 0, rereq_psns = 0;
};
ReadsRun run_reads(bool sr, std::uint64_t seed) {
  constexpr std::uint32_t kReads = 400;
  ConnectParams cp;
  cp.mtu = wire::PathMtu::k4096;
  cp.timeout = 14;
  cp.retry_cnt = 7;
  cp.rnr_retry = 7;
  cp.max_rd_atomic = 16;
  cp.max_dest_rd_atomic = 16;
  RcSr sra, srb;
  SimPair pair(lossy(0.01, 0, 0, seed), 4 << 20, cp);
  SimSide& a = pair.a();
  SimSide& b = pair.b();
  if (sr) {
    a.qp->set_sr(&sra);
    b.qp->set_sr(&srb);
    a.qp->sr_tx_start();
    b.qp->sr_tx_start();
  }
  for (std::size_t i = 0; i < (1u << 20); ++i)
    b.mem[(1u << 20) + i] = static_cast<std::uint8_t>(i * 7);
  std::uint32_t posted = 0;
  auto post = [&] {
    while (posted < kReads && posted - a.scq.wc.size() < 16) {
      SendWr w;
      w.wr_id = posted;
      w.opcode = WrOpcode::kRdmaRead;
      w.flags = send_flag::kSignaled;
      w.num_sge = 1;
      w.sge[0] = {SimSide::kVa + (posted % 16) * 65536, 65536, a.key};
      w.remote_addr = SimSide::kVa + (1 << 20) + (posted % 16) * 65536;
      w.rkey = b.key;
      if (a.qp->post_send(w) != 0) break;
      ++posted;
    }
  };
  post();
  ReadsRun r;
  r.done = pair.run(
      [&] {
        post();
        return a.scq.wc.size() == kReads;
      },
      5 * kNsPerSec);
  r.took = pair.clock().now();
  r.a = a.qp->counters();
  r.b = b.qp->counters();
  r.rereqs = a.tx.read_rereqs;
  r.rereq_psns = a.tx.read_rereq_psns;
  for (const Cqe& c : a.scq.wc) EXPECT_EQ(status(c), WcStatus::kSuccess);
  EXPECT_EQ(std::memcmp(a.mem.data(), b.mem.data() + (1u << 20), 1u << 20), 0);
  EXPECT_EQ(a.qp->state(), QpState::kRts);
  return r;
}

TEST(SrSimCompare, ManyReadsAgainstGoBackN) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const ReadsRun g = run_reads(false, seed);
    const ReadsRun s = run_reads(true, seed);
    ASSERT_TRUE(g.done && s.done) << seed;
    std::printf(
        "400 READs of 64 KiB, loss 0.010 seed %llu: go-back-N %.1f us, %llu timeouts, %llu READ "
        "responses sent, %llu READ requests again for %llu PSNs; selective repeat %.1f us, %llu "
        "timeouts, %llu READ responses sent, %llu READ requests again for %llu PSNs\n",
        static_cast<unsigned long long>(seed), g.took / 1e3,
        static_cast<unsigned long long>(g.a.timeouts),
        static_cast<unsigned long long>(g.b.tx_read_responses),
        static_cast<unsigned long long>(g.rereqs), static_cast<unsigned long long>(g.rereq_psns),
        s.took / 1e3, static_cast<unsigned long long>(s.a.timeouts),
        static_cast<unsigned long long>(s.b.tx_read_responses),
        static_cast<unsigned long long>(s.rereqs), static_cast<unsigned long long>(s.rereq_psns));
    EXPECT_LE(s.took, g.took) << seed;
    EXPECT_LE(s.rereq_psns, g.rereq_psns) << seed;
  }
}

}  // namespace
}  // namespace uroce::transport
