// The RC responder's selective-repeat rules (rc_sr_responder.h/.cpp,
// docs/lossy.md "Responder"): the QP under test has RcSr attached and the
// fake peer sends SR packets from PSN 500 on, in the orders a lossy,
// reordering fabric delivers them.
#include "datapath/transport/rc_sr_responder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <utility>
#include <vector>

#include "tests/datapath/transport/rc_sr_test_support.h"

namespace uroce::transport {
namespace {

using namespace rctest;
namespace o = wire::op;

const std::uint8_t kAck = wire::aeth_ack_syndrome();

struct SrResponder : SrResponderFixture {
  void expect_ack(std::size_t i, std::uint8_t opcode, std::uint32_t psn, std::uint8_t syndrome,
                  std::uint32_t msn) const {
    ASSERT_LT(i, tx.size());
    const auto& p = tx.at(i);
    EXPECT_EQ(p.bth.opcode(), opcode) << i;
    EXPECT_EQ(p.bth.psn(), psn) << i;
    EXPECT_EQ(p.aeth.syndrome(), syndrome) << i;
    EXPECT_EQ(p.aeth.msn(), msn) << i;
    EXPECT_EQ(p.bth.dest_qp(), kPeerQpn);
  }
  // The PSNs (relative to 500) a SACK frame says are held.
  std::vector<std::uint32_t> sack_bits(std::size_t i) const {
    const auto& p = tx.at(i);
    std::vector<std::uint32_t> v;
    for (std::size_t b = 0; b < wire::SrSackEthHdr::kBitmapBits; ++b) {
      if (p.sack_eth.bit(b)) v.push_back(p.bth.psn() + 1 + static_cast<std::uint32_t>(b) - 500);
    }
    return v;
  }
  void deliver_in(const Msg& m, const std::vector<std::size_t>& order) {
    for (std::size_t i : order) deliver(m.at(i));
  }
};

// A WRITE of 2..8 packets delivered in every order (up to 4 packets) or in
// reverse and shuffled orders: every byte lands at its address, ePSN and
// MSN end as if in order, and the last answer is RC's ACK of the message.
TEST_F(SrResponder, Write_PacketsInAnyOrderLandAtTheirAddress) {
  std::mt19937 rng(7);
  for (std::size_t n = 2; n <= 8; ++n) {
    std::vector<std::vector<std::size_t>> orders;
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    if (n <= 4) {
      do {
        orders.push_back(order);
      } while (std::next_permutation(order.begin(), order.end()));
    } else {
      orders.emplace_back(order.rbegin(), order.rend());
      for (int k = 0; k < 6; ++k) {
        std::shuffle(order.begin(), order.end(), rng);
        orders.push_back(order);
      }
    }
    for (const auto& ord : orders) {
      tx.clear();
      make_sr_qp();
      std::fill(remote.begin(), remote.begin() + 8192, 0);
      const std::size_t len = n * mtu() - 100;
      const Msg m = sr_write(500, 0, 0, 0, len);
      deliver_in(m, ord);
      ASSERT_EQ(std::memcmp(remote.data(), src.data(), len), 0) << n;
      EXPECT_EQ(remote[len], 0) << n;
      EXPECT_EQ(qp->expected_psn(), Psn(500 + n));
      EXPECT_EQ(qp->msn(), Msn(1));
      EXPECT_FALSE(sr.rx.any());
      EXPECT_EQ(qp->counters().rx_requests, n);
      ASSERT_GE(tx.size(), 1u);
      expect_ack(tx.size() - 1, o::kRcAck, static_cast<std::uint32_t>(500 + n - 1), kAck, 1);
    }
  }
}

// Three SENDs whose packets arrive with the first message's first packet
// last: each lands in the receive WR its RSN names, and the completions
// come only when everything before them is in, in message order.
TEST_F(SrResponder, Send_CompletionsStayInOrder) {
  make_sr_qp();
  for (std::uint64_t id = 1; id <= 3; ++id) {
    ASSERT_EQ(qp->post_recv(recv_wr(id, (id - 1) * 8192, 8192)), 0);
  }
  const Msg a = sr_send(500, 0, 0, 1500);          // 500, 501
  const Msg b = sr_send(502, 1, 2000, 300, true);  // 502, with immediate
  const Msg c = sr_send(503, 2, 5000, 2500);       // 503..505
  deliver(c[2]);
  deliver(c[0]);
  deliver(b[0]);
  deliver(c[1]);
  deliver(a[1]);
  EXPECT_TRUE(rcq.wc.empty());
  EXPECT_EQ(sr.ctr.sr_rx_held, 5u);
  EXPECT_EQ(qp->expected_psn(), Psn(500));
  deliver(a[0]);
  ASSERT_EQ(rcq.wc.size(), 3u);
  const std::uint32_t lens[] = {1500, 300, 2500};
  const std::size_t srcs[] = {0, 2000, 5000};
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(rcq.wc[i].wr_id, i + 1);
    EXPECT_EQ(status(rcq.wc[i]), WcStatus::kSuccess);
    EXPECT_EQ(wc_op(rcq.wc[i]), WcOpcode::kRecv);
    EXPECT_EQ(rcq.wc[i].byte_len, lens[i]);
    EXPECT_EQ(std::memcmp(local.data() + i * 8192, src.data() + srcs[i], lens[i]), 0) << i;
  }
  EXPECT_EQ(rcq.wc[0].wc_flags, 0u);
  EXPECT_EQ(rcq.wc[1].wc_flags, wc_flag::kWithImm);
  const std::uint8_t imm[4] = {0xab, 0xcd, 0x00, 0x01};
  EXPECT_EQ(std::memcmp(&rcq.wc[1].ex.imm_data, imm, 4), 0);
  EXPECT_EQ(qp->expected_psn(), Psn(506));
  EXPECT_EQ(qp->msn(), Msn(3));
  expect_ack(tx.size() - 1, o::kRcAck, 505, kAck, 3);
}

// In order, an SR connection's answers are RC's: coalesced plain ACKs.
TEST_F(SrResponder, InOrder_AcknowledgedAsRc) {
  make_sr_qp();
  ASSERT_EQ(qp->post_recv(recv_wr(1, 0, 4096)), 0);
  for (const PktPtr& k : sr_send(500, 0, 0, 2000)) deliver(k);
  for (const PktPtr& k : sr_write(502, 1, 0, 0, 3000)) deliver(k);
  ASSERT_EQ(tx.size(), 2u);  // AckReq on each message's last packet
  expect_ack(0, o::kRcAck, 501, kAck, 1);
  expect_ack(1, o::kRcAck, 504, kAck, 2);
  EXPECT_EQ(sr.ctr.tx_sacks, 0u);
  EXPECT_EQ(sr.ctr.sr_rx_held, 0u);
  EXPECT_EQ(rcq.wc.size(), 1u);
}

// While something is held every answer is a SACK: BTH PSN ePSN - 1, bit i
// for PSN ePSN + i, the trigger, DUP for a packet held already; the hole
// filled, RC's ACK again.
TEST_F(SrResponder, Sack_ReportsHeldPsnsTriggerAndDuplicates) {
  make_sr_qp();
  const Msg w = sr_write(500, 0, 0, 0, 5 * 1024);  // 500..504
  deliver(w[2]);
  ASSERT_EQ(tx.size(), 1u);
  expect_ack(0, o::kSrSack, 499, kAck, 0);
  EXPECT_EQ(sack_bits(0), (std::vector<std::uint32_t>{2}));
  EXPECT_EQ(tx.at(0).sack_eth.trigger_psn(), 502u);
  EXPECT_FALSE(tx.at(0).sack_eth.dup());
  EXPECT_EQ(tx.at(0).sack_eth.window(), kSrWindow);
  deliver(w[4]);
  EXPECT_EQ(sack_bits(1), (std::vector<std::uint32_t>{2, 4}));
  EXPECT_EQ(tx.at(1).sack_eth.trigger_psn(), 504u);
  deliver(w[4]);
  EXPECT_EQ(sr.ctr.sr_rx_dup, 1u);
  EXPECT_TRUE(tx.at(2).sack_eth.dup());
  EXPECT_EQ(sack_bits(2), (std::vector<std::uint32_t>{2, 4}));
  deliver(w[0]);  // ePSN 501: 502 and 504 still held
  expect_ack(3, o::kSrSack, 500, kAck, 0);
  EXPECT_EQ(sack_bits(3), (std::vector<std::uint32_t>{2, 4}));
  deliver(w[1]);  // ePSN 503
  expect_ack(4, o::kSrSack, 502, kAck, 0);
  EXPECT_EQ(sack_bits(4), (std::vector<std::uint32_t>{4}));
  deliver(w[3]);  // all in
  ASSERT_EQ(tx.size(), 6u);
  expect_ack(5, o::kRcAck, 504, kAck, 1);
  EXPECT_EQ(sr.ctr.tx_sacks, 5u);
  EXPECT_EQ(qp->counters().tx_acks, 6u);
  EXPECT_EQ(std::memcmp(remote.data(), src.data(), 5 * 1024), 0);
}

// The window is 256 PSNs from ePSN: the last one is held, one beyond it is
// dropped, counted and not answered.
TEST_F(SrResponder, Window_BeyondDroppedAndCounted) {
  make_sr_qp();
  deliver(sr_write(500 + kSrWindow, 0, 0, 0, 10)[0]);
  EXPECT_EQ(sr.ctr.sr_drop_window, 1u);
  EXPECT_TRUE(tx.frames.empty());
  EXPECT_FALSE(sr.rx.any());
  deliver(sr_write(500 + kSrWindow - 1, 0, 0, 0, 10)[0]);
  EXPECT_EQ(sr.ctr.sr_rx_held, 1u);
  ASSERT_EQ(tx.size(), 1u);
  EXPECT_EQ(sack_bits(0), (std::vector<std::uint32_t>{kSrWindow - 1}));
}

// A duplicate before ePSN is acknowledged again and not executed; the
// answer is a SACK with DUP (the requester learns its resend was not
// needed), once: the next in-order answer is RC's ACK again.
TEST_F(SrResponder, Duplicate_BeforeEpsnNotPlacedAgain) {
  make_sr_qp();
  deliver(sr_write(500, 0, 0, 0, 64)[0]);
  deliver(sr_write(500, 0, 4096, 0, 64)[0]);  // same PSN, other bytes
  EXPECT_EQ(std::memcmp(remote.data(), src.data(), 64), 0);
  EXPECT_EQ(qp->counters().rx_duplicates, 1u);
  ASSERT_EQ(tx.size(), 2u);
  expect_ack(1, o::kSrSack, 500, kAck, 1);
  EXPECT_TRUE(tx.at(1).sack_eth.dup());
  EXPECT_EQ(tx.at(1).sack_eth.trigger_psn(), 500u);
  EXPECT_TRUE(sack_bits(1).empty());
  deliver(sr_write(501, 0, 64, 64, 64)[0]);
  ASSERT_EQ(tx.size(), 3u);
  expect_ack(2, o::kRcAck, 501, kAck, 2);
}

// An out-of-order packet that fails a check is left unplaced (the requester
// sends it again); at ePSN the same packet NAKs as RC would.
TEST_F(SrResponder, Unplaced_BadKeyNaksOnlyInOrder) {
  make_sr_qp();
  const Msg bad = sr_write(501, 0, 0, 0, 100, false, rkey ^ 0x5a5a00);
  deliver(bad[0]);
  EXPECT_EQ(sr.ctr.sr_drop_unplaced, 1u);
  EXPECT_FALSE(sr.rx.any());
  EXPECT_EQ(qp->state(), QpState::kRts);
  deliver(sr_write(500, 0, 0, 0, 100)[0]);
  EXPECT_EQ(qp->expected_psn(), Psn(501));
  tx.clear();
  deliver(bad[0]);
  ASSERT_EQ(tx.size(), 1u);
  expect_ack(0, o::kRcAck, 501, wire::aeth_nak_syndrome(wire::NakCode::kRemoteAccessError), 1);
  EXPECT_EQ(qp->state(), QpState::kErr);
}

// A SEND whose receive WR is not posted yet is not held; at ePSN it gets
// RC's RNR NAK, and once the WR is there it completes.
TEST_F(SrResponder, Unplaced_SendWithoutReceiveWrRnrNaksInOrder) {
  make_sr_qp();
  ASSERT_EQ(qp->post_recv(recv_wr(1, 0, 4096)), 0);
  const Msg a = sr_send(500, 0, 0, 100);
  const Msg b = sr_send(501, 1, 200, 100);
  deliver(b[0]);
  EXPECT_EQ(sr.ctr.sr_drop_unplaced, 1u);
  deliver(a[0]);
  ASSERT_EQ(rcq.wc.size(), 1u);
  tx.clear();
  deliver(b[0]);
  ASSERT_EQ(tx.size(), 1u);
  expect_ack(0, o::kRcAck, 501, wire::aeth_rnr_nak_syndrome(cp.min_rnr_timer), 1);
  EXPECT_EQ(qp->counters().tx_rnr_naks, 1u);
  EXPECT_EQ(qp->state(), QpState::kRts);
  ASSERT_EQ(qp->post_recv(recv_wr(2, 4096, 4096)), 0);
  deliver(b[0]);
  ASSERT_EQ(rcq.wc.size(), 2u);
  EXPECT_EQ(rcq.wc[1].wr_id, 2u);
  EXPECT_EQ(rcq.wc[1].byte_len, 100u);
  EXPECT_EQ(std::memcmp(local.data() + 4096, src.data() + 200, 100), 0);
}

// A READ beyond ePSN is dropped (it must see every earlier WRITE); at ePSN
// it runs as RC's, its responses go first, and what was held after its
// range drains behind it.
TEST_F(SrResponder, Read_RunsOnlyInOrder) {
  make_sr_qp();
  const Msg w0 = sr_write(500, 0, 0, 0, 64);
  const PktPtr rd = sr_read(501, 8192, 3000);  // responses 501..503
  const Msg w1 = sr_write(504, 0, 100, 4096, 64);
  deliver(w1[0]);
  deliver(rd);
  EXPECT_EQ(sr.ctr.sr_drop_rd_atomic, 1u);
  deliver(w0[0]);
  EXPECT_EQ(qp->expected_psn(), Psn(501));
  tx.clear();
  deliver(rd);
  ASSERT_EQ(tx.size(), 4u);
  EXPECT_EQ(tx.at(0).bth.opcode(), o::kRcReadResponseFirst);
  EXPECT_EQ(tx.at(1).bth.opcode(), o::kRcReadResponseMiddle);
  EXPECT_EQ(tx.at(2).bth.opcode(), o::kRcReadResponseLast);
  EXPECT_EQ(tx.at(2).bth.psn(), 503u);
  EXPECT_EQ(std::memcmp(tx.at(0).payload.data(), remote.data() + 8192, 1024), 0);
  expect_ack(3, o::kRcAck, 504, kAck, 3);
  EXPECT_EQ(qp->expected_psn(), Psn(505));
  EXPECT_EQ(std::memcmp(remote.data() + 4096, src.data() + 100, 64), 0);
}

// A selective-repeat requester asks again for a range inside a READ it
// asked for (docs/lossy.md "READ responses"): exactly that range is sent
// again, with the opcodes of the READ's own range, and its stream ends
// there. An RC READ request for the same range is not a duplicate RC
// knows (it must reach the READ's end): dropped, as without selective
// repeat.
TEST_F(SrResponder, Read_DuplicateRangeInsideServedAlone) {
  make_sr_qp();
  deliver(sr_read(500, 8192, 8 * 1024));  // responses 500..507
  ASSERT_EQ(tx.size(), 8u);
  tx.clear();
  deliver(sr_read(503, 8192 + 3 * 1024, 2 * 1024));
  ASSERT_EQ(tx.size(), 2u);
  EXPECT_EQ(tx.at(0).bth.opcode(), o::kRcReadResponseMiddle);
  EXPECT_EQ(tx.at(0).bth.psn(), 503u);
  EXPECT_EQ(tx.at(1).bth.opcode(), o::kRcReadResponseMiddle);
  EXPECT_EQ(tx.at(1).bth.psn(), 504u);
  EXPECT_EQ(std::memcmp(tx.at(1).payload.data(), remote.data() + 8192 + 4 * 1024, 1024), 0);
  EXPECT_EQ(qp->counters().reads_replayed, 1u);
  tx.clear();
  // Up to the READ's end: LAST.
  deliver(sr_read(506, 8192 + 6 * 1024, 2 * 1024));
  ASSERT_EQ(tx.size(), 2u);
  EXPECT_EQ(tx.at(1).bth.opcode(), o::kRcReadResponseLast);
  EXPECT_EQ(tx.at(1).bth.psn(), 507u);
  tx.clear();
  // A range reaching past the READ (it ran for part of what the requester
  // asked as one): served up to the READ's end.
  deliver(sr_read(506, 8192 + 6 * 1024, 4 * 1024));
  ASSERT_EQ(tx.size(), 2u);
  EXPECT_EQ(tx.at(1).bth.opcode(), o::kRcReadResponseLast);
  EXPECT_EQ(tx.at(1).bth.psn(), 507u);
  EXPECT_EQ(tx.at(1).payload.size(), 1024u);
  tx.clear();
  // A range inside that is not whole packets: no response.
  deliver(sr_read(503, 8192 + 3 * 1024, 1000));
  EXPECT_EQ(tx.size(), 0u);
  EXPECT_EQ(qp->counters().drop_dup_unknown, 1u);
  wire::PacketSpec s = peer_spec(o::kRcReadRequest, 503);
  s.ack_req = true;
  s.reth = wire::RethHdr::make(kRemoteVa + 8192 + 3 * 1024, rkey, 2 * 1024);
  deliver(build(s));
  EXPECT_EQ(tx.size(), 0u);
  EXPECT_EQ(qp->counters().drop_dup_unknown, 2u);
  EXPECT_EQ(qp->expected_psn(), Psn(508));
}

// The opcode sequence is checked as ePSN passes a held packet: a MIDDLE
// with no FIRST before it NAKs invalid request there, in order.
TEST_F(SrResponder, Drain_SequenceErrorNaksAtItsPsn) {
  make_sr_qp();
  ASSERT_EQ(qp->post_recv(recv_wr(1, 0, 4096)), 0);
  ASSERT_EQ(qp->post_recv(recv_wr(2, 4096, 4096)), 0);
  deliver(sr_pkt(o::kSrSendMiddle, 501, 1, 1024, 0, 1024));
  EXPECT_EQ(sr.ctr.sr_rx_held, 1u);
  deliver(sr_send(500, 0, 0, 100)[0]);
  ASSERT_GE(tx.size(), 2u);
  expect_ack(tx.size() - 1, o::kRcAck, 501, wire::aeth_nak_syndrome(wire::NakCode::kInvalidRequest),
             1);
  EXPECT_EQ(qp->state(), QpState::kErr);
  ASSERT_EQ(rcq.wc.size(), 2u);
  EXPECT_EQ(status(rcq.wc[0]), WcStatus::kSuccess);
  EXPECT_EQ(status(rcq.wc[1]), WcStatus::kWrFlushErr);
}

// SEND_WITH_INVALIDATE held out of order invalidates its window only when
// it completes, in order.
TEST_F(SrResponder, Drain_InvalidationRunsInOrder) {
  make_sr_qp();
  ASSERT_EQ(qp->post_recv(recv_wr(1, 0, 4096)), 0);
  ASSERT_EQ(qp->post_recv(recv_wr(2, 4096, 4096)), 0);
  int err = 0;
  const std::uint32_t mr =
      mrs.reg({kPd, 0x9000, 16, access::kLocalWrite | access::kRemoteWrite | access::kMwBind,
               local.data()},
              &err);
  const std::uint32_t mw = mrs.alloc_mw(kPd, MwType::kType2, &err);
  std::uint32_t key = 0;
  ASSERT_EQ(mrs.bind_mw(MwBind{mw, mr, mw, 0x9000, 16, access::kRemoteWrite}, kPd, kQpn, &key),
            MrError::kOk);
  wire::PacketSpec s = peer_spec(o::kSrSendOnlyInv, 501);
  s.ack_req = true;
  s.ieth = wire::IethHdr::make(key);
  s.sr_eth = wire::SrEthHdr::make(1, 0);
  s.payload = std::span<const std::uint8_t>(src.data(), 20);
  deliver(build(s));
  std::uint8_t* h = nullptr;
  EXPECT_EQ(qp->counters().rx_invalidates, 0u);
  EXPECT_EQ(mrs.resolve_remote(key, kPd, kQpn, 0x9000, 8, access::kRemoteWrite, &h), MrError::kOk);
  deliver(sr_send(500, 0, 0, 10)[0]);
  ASSERT_EQ(rcq.wc.size(), 2u);
  EXPECT_EQ(rcq.wc[1].wc_flags, wc_flag::kWithInv);
  EXPECT_EQ(rcq.wc[1].ex.invalidate_rkey, key);
  EXPECT_EQ(rcq.wc[1].byte_len, 20u);
  EXPECT_EQ(qp->counters().rx_invalidates, 1u);
  EXPECT_NE(mrs.resolve_remote(key, kPd, kQpn, 0x9000, 8, access::kRemoteWrite, &h), MrError::kOk);
}

// WRITE with immediate held out of order: its data is placed at once, its
// receive completion waits for the SEND before it.
TEST_F(SrResponder, Drain_WriteWithImmCompletesAfterEarlierSend) {
  make_sr_qp();
  ASSERT_EQ(qp->post_recv(recv_wr(1, 0, 4096)), 0);
  ASSERT_EQ(qp->post_recv(recv_wr(2, 4096, 4096)), 0);
  const Msg a = sr_send(500, 0, 0, 100);
  const Msg b = sr_write(501, 1, 300, 0, 2000, true);  // 501, 502
  deliver(b[1]);
  deliver(b[0]);
  EXPECT_EQ(std::memcmp(remote.data(), src.data() + 300, 2000), 0);
  EXPECT_TRUE(rcq.wc.empty());
  deliver(a[0]);
  ASSERT_EQ(rcq.wc.size(), 2u);
  EXPECT_EQ(wc_op(rcq.wc[0]), WcOpcode::kRecv);
  EXPECT_EQ(wc_op(rcq.wc[1]), WcOpcode::kRecvRdmaWithImm);
  EXPECT_EQ(rcq.wc[1].wr_id, 2u);
  EXPECT_EQ(rcq.wc[1].byte_len, 2000u);
  const std::uint8_t imm[4] = {0xab, 0xcd, 0x00, 0x01};
  EXPECT_EQ(std::memcmp(&rcq.wc[1].ex.imm_data, imm, 4), 0);
  EXPECT_EQ(qp->msn(), Msn(2));
}

// Without RcSr attached (off, the default) SR opcodes are not RC's: dropped
// as drop_not_rc, nothing answered, and RC goes on.
TEST_F(SrResponder, Off_SrOpcodesDropped) {
  make_qp();
  ASSERT_EQ(qp->post_recv(recv_wr(1, 0, 4096)), 0);
  deliver(sr_send(500, 0, 0, 10)[0]);
  EXPECT_EQ(qp->counters().drop_not_rc, 1u);
  EXPECT_TRUE(tx.frames.empty());
  EXPECT_TRUE(rcq.wc.empty());
  EXPECT_EQ(qp->expected_psn(), Psn(500));
  wire::PacketSpec s = peer_spec(o::kRcSendOnly, 500);
  s.ack_req = true;
  deliver(build(s));
  EXPECT_EQ(rcq.wc.size(), 1u);
}

// With RcSr attached but a peer that sends plain RC (before the handshake,
// or a peer that never sends SR), the QP answers byte for byte as without:
// the same frames, completions and counters for the same inputs, gaps,
// duplicates, READs and atomics included.
TEST_F(SrResponder, Attached_PlainPeerGetsRcByteForByte) {
  auto plain = [&](std::uint8_t op, std::uint32_t psn, std::size_t off, std::size_t len,
                   bool ack_req) {
    wire::PacketSpec s = peer_spec(op, psn);
    s.ack_req = ack_req;
    const wire::OpcodeInfo& i = wire::opcode_info(op);
    if (i.has(wire::ExtHdr::kReth)) {
      s.reth = wire::RethHdr::make(kRemoteVa + off, rkey, static_cast<std::uint32_t>(len));
    }
    if (i.has(wire::ExtHdr::kAtomicEth)) {
      s.atomic_eth = wire::AtomicEthHdr::make(kRemoteVa + 64, rkey, 5, 0);
    }
    if (i.payload && op != o::kRcReadRequest) {
      s.payload = std::span<const std::uint8_t>(src.data() + off, len);
    }
    return build(s);
  };
  struct Run {
    std::vector<std::vector<std::uint8_t>> frames;
    std::vector<Cqe> wc;
    RcCounters ctr;
  };
  // Both runs start from the same memory (WRITEs and atomics change it).
  const std::vector<std::uint8_t> local0 = local, remote0 = remote;
  auto run = [&](bool with_sr) {
    local = local0;
    remote = remote0;
    tx.clear();
    rcq.wc.clear();
    if (with_sr) {
      make_sr_qp();
    } else {
      make_qp();
    }
    for (std::uint64_t id = 1; id <= 3; ++id) {
      EXPECT_EQ(qp->post_recv(recv_wr(id, (id - 1) * 4096, 4096)), 0);
    }
    deliver(plain(o::kRcSendFirst, 500, 0, 1024, false));
    deliver(plain(o::kRcSendLast, 501, 1024, 10, true));
    deliver(plain(o::kRcWriteOnly, 503, 0, 64, true));  // 502 lost: NAK
    deliver(plain(o::kRcWriteOnly, 504, 0, 64, true));  // dropped
    deliver(plain(o::kRcWriteOnly, 502, 100, 64, true));
    deliver(plain(o::kRcWriteOnly, 503, 200, 64, true));
    deliver(plain(o::kRcReadRequest, 504, 0, 2000, true));  // 504, 505
    deliver(plain(o::kRcSendOnly, 506, 300, 30, true));
    deliver(plain(o::kRcSendFirst, 500, 0, 1024, false));  // duplicate
    deliver(plain(o::kRcFetchAdd, 507, 0, 0, true));
    deliver(plain(o::kRcFetchAdd, 507, 0, 0, true));  // replayed
    Run r;
    for (const PktPtr& f : tx.frames) r.frames.push_back(f->bytes);
    r.wc = rcq.wc;
    r.ctr = qp->counters();
    return r;
  };
  const Run off = run(false);
  const Run on = run(true);
  EXPECT_EQ(off.frames.size(), 10u);
  ASSERT_EQ(on.frames.size(), off.frames.size());
  for (std::size_t i = 0; i < off.frames.size(); ++i) EXPECT_EQ(on.frames[i], off.frames[i]) << i;
  ASSERT_EQ(on.wc.size(), off.wc.size());
  EXPECT_EQ(on.wc.size(), 2u);
  for (std::size_t i = 0; i < off.wc.size(); ++i) {
    EXPECT_EQ(std::memcmp(&on.wc[i], &off.wc[i], sizeof(Cqe)), 0) << i;
  }
  EXPECT_EQ(std::memcmp(&on.ctr, &off.ctr, sizeof(RcCounters)), 0);
  EXPECT_EQ(sr.ctr.sr_rx_held + sr.ctr.tx_sacks, 0u);
  EXPECT_EQ(on.ctr.tx_seq_naks, 1u);
}

// Many messages of every kind, their packets reordered within 16 places and
// some delivered twice, over several seeds (one across the 24-bit PSN
// wrap): every byte where it belongs, every receive completion in message
// order with its length, immediate and opcode, nothing left held.
TEST_F(SrResponder, Random_ReorderAndDuplicatesWithinTheWindow) {
  for (std::uint32_t seed = 1; seed <= 6; ++seed) {
    std::mt19937 rng(seed);
    cp.rq_psn = seed == 6 ? 0xfffff0 : 500;
    tx.clear();
    rcq.wc.clear();
    make_sr_qp();
    std::fill(local.begin(), local.end(), 0);
    std::fill(remote.begin(), remote.end(), 0);
    struct Want {
      bool write;
      bool imm;
      std::size_t src_off, dst_off, len;
      std::uint32_t rsn;
    };
    std::vector<Want> msgs;
    std::vector<PktPtr> pkts;
    std::uint32_t psn = cp.rq_psn;
    std::uint32_t rsn = 0;
    for (std::size_t k = 0; k < 40; ++k) {
      const unsigned kind = rng() % 4;  // SEND, SEND imm, WRITE, WRITE imm
      const bool write = kind >= 2;
      const bool imm = kind % 2 == 1;
      const std::size_t len = rng() % 4000 + (write ? 1 : 0);
      Want w{write, imm, (k * 4099) % (src.size() - 8192), k * 8192, len, rsn};
      Msg m = write ? sr_write(psn, rsn, w.src_off, w.dst_off, len, imm)
                    : sr_send(psn, rsn, w.src_off, len, imm);
      if (!write || imm) {
        ASSERT_EQ(qp->post_recv(recv_wr(rsn + 1, rsn * 4096ull, 4096)), 0);
        ++rsn;
      }
      psn = (psn + static_cast<std::uint32_t>(m.size())) & 0xffffff;
      msgs.push_back(w);
      for (PktPtr& p : m) pkts.push_back(std::move(p));
    }
    std::vector<const Pkt*> order;
    for (const PktPtr& p : pkts) order.push_back(p.get());
    for (std::size_t i = 0; i < order.size(); ++i) {
      std::swap(order[i], order[i + rng() % std::min<std::size_t>(16, order.size() - i)]);
    }
    std::vector<const Pkt*> sent;
    for (std::size_t i = 0; i < order.size(); ++i) {
      sent.push_back(order[i]);
      if (rng() % 10 == 0) sent.push_back(order[rng() % (i + 1)]);
    }
    for (const Pkt* p : sent) qp->on_packet(p->p, 0, io);
    ASSERT_EQ(qp->state(), QpState::kRts) << seed;
    EXPECT_EQ(qp->expected_psn(), Psn(psn)) << seed;
    EXPECT_EQ(qp->msn(), Msn(40)) << seed;
    EXPECT_FALSE(sr.rx.any());
    ASSERT_EQ(rcq.wc.size(), rsn) << seed;
    for (const Want& w : msgs) {
      if (w.write) {
        EXPECT_EQ(std::memcmp(remote.data() + w.dst_off, src.data() + w.src_off, w.len), 0);
      } else {
        EXPECT_EQ(std::memcmp(local.data() + w.rsn * 4096ull, src.data() + w.src_off, w.len), 0);
      }
      if (w.write && !w.imm) continue;
      const Cqe& c = rcq.wc[w.rsn];
      EXPECT_EQ(c.wr_id, w.rsn + 1u);
      EXPECT_EQ(status(c), WcStatus::kSuccess);
      EXPECT_EQ(c.byte_len, w.len);
      EXPECT_EQ(wc_op(c), w.write ? WcOpcode::kRecvRdmaWithImm : WcOpcode::kRecv);
      EXPECT_EQ((c.wc_flags & wc_flag::kWithImm) != 0, w.imm);
    }
    EXPECT_GT(sr.ctr.sr_rx_held, 0u);
    // The last answer is RC's ACK, or a SACK with DUP when the last packet
    // delivered was a copy of one delivered before.
    const bool last_dup = std::find(sent.begin(), sent.end() - 1, sent.back()) != sent.end() - 1;
    const auto& last = tx.at(tx.size() - 1);
    EXPECT_EQ(last.bth.opcode(), last_dup ? o::kSrSack : o::kRcAck) << seed;
    EXPECT_EQ(last_dup && last.sack_eth.dup(), last_dup) << seed;
  }
}

}  // namespace
}  // namespace uroce::transport
