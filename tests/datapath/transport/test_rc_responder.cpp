#include "datapath/transport/rc_responder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tests/datapath/transport/rc_test_support.h"
#include "tests/datapath/transport/recv_refill_support.h"

namespace uroce::transport {
namespace {

using namespace rctest;
namespace o = wire::op;

// The QP under test is the responder: the fake peer sends it requests from
// PSN 500 on, aimed at the QP's "remote" region (rkey) or its receive WRs.
struct Responder : RcFixture {
  std::vector<std::uint8_t> src = std::vector<std::uint8_t>(64 * 1024);
  void SetUp() override {
    RcFixture::SetUp();
    for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(i * 31 + 5);
  }
  PktPtr req(std::uint8_t op, std::uint32_t psn, std::size_t off = 0, std::size_t len = 0,
             bool ack_req = false) const {
    wire::PacketSpec s = peer_spec(op, psn);
    s.ack_req = ack_req;
    s.payload = std::span<const std::uint8_t>(src.data() + off, len);
    return build(s);
  }
  PktPtr write(std::uint8_t op, std::uint32_t psn, std::uint64_t va, std::uint32_t key,
               std::uint32_t dma_len, std::size_t off, std::size_t len, bool ack_req = true) const {
    wire::PacketSpec s = peer_spec(op, psn);
    s.ack_req = ack_req;
    if (wire::opcode_info(op).has(wire::ExtHdr::kReth)) {
      s.reth = wire::RethHdr::make(va, key, dma_len);
    }
    if (wire::opcode_info(op).has(wire::ExtHdr::kImmDt)) {
      s.immdt = wire::ImmDtHdr::make(0xcafef00d);
    }
    s.payload = std::span<const std::uint8_t>(src.data() + off, len);
    return build(s);
  }
  PktPtr read(std::uint32_t psn, std::uint64_t va, std::uint32_t len) const {
    wire::PacketSpec s = peer_spec(o::kRcReadRequest, psn);
    s.ack_req = true;
    s.reth = wire::RethHdr::make(va, rkey, len);
    return build(s);
  }
  PktPtr atomic(std::uint8_t op, std::uint32_t psn, std::uint64_t va, std::uint64_t swap_add,
                std::uint64_t cmp) const {
    wire::PacketSpec s = peer_spec(op, psn);
    s.ack_req = true;
    s.atomic_eth = wire::AtomicEthHdr::make(va, rkey, swap_add, cmp);
    return build(s);
  }
  void expect_ack(std::size_t i, std::uint32_t psn, std::uint8_t syndrome,
                  std::uint32_t msn) const {
    ASSERT_LT(i, tx.size());
    const auto& p = tx.at(i);
    EXPECT_EQ(p.bth.opcode(), o::kRcAck) << i;
    EXPECT_EQ(p.bth.psn(), psn) << i;
    EXPECT_EQ(p.aeth.syndrome(), syndrome) << i;
    EXPECT_EQ(p.aeth.msn(), msn) << i;
    EXPECT_EQ(p.bth.dest_qp(), kPeerQpn);
  }
  // As the engine delivers with the plain pump (rc_qp.h).
  void deliver_at_pump(const PktPtr& k) { qp->on_packet(k->p, 0, io, AckTiming::kPump); }
  std::uint64_t remote_u64(std::size_t off) const {
    std::uint64_t v = 0;
    std::memcpy(&v, remote.data() + off, 8);
    return v;
  }
};

const std::uint8_t kAck = wire::aeth_ack_syndrome();

TEST_F(Responder, OnRequest_SendOnlyFillsRecvAndAcks) {
  make_qp();
  ASSERT_EQ(qp->post_recv(recv_wr(7, 100, 4096)), 0);
  deliver(req(o::kRcSendOnly, 500, 0, 300, true));
  ASSERT_EQ(rcq.wc.size(), 1u);
  EXPECT_EQ(rcq.wc[0].wr_id, 7u);
  EXPECT_EQ(status(rcq.wc[0]), WcStatus::kSuccess);
  EXPECT_EQ(wc_op(rcq.wc[0]), WcOpcode::kRecv);
  EXPECT_EQ(rcq.wc[0].byte_len, 300u);
  EXPECT_EQ(rcq.wc[0].wc_flags, 0u);
  EXPECT_EQ(std::memcmp(local.data() + 100, src.data(), 300), 0);
  ASSERT_EQ(tx.size(), 1u);
  expect_ack(0, 500, kAck, 1);
  EXPECT_EQ(qp->expected_psn(), Psn(501));
}

TEST_F(Responder, OnRequest_MultiPacketSendWithImmediate) {
  make_qp();
  ASSERT_EQ(qp->post_recv(recv_wr(7, 0, 8192)), 0);
  deliver(req(o::kRcSendFirst, 500, 0, 1024));
  deliver(req(o::kRcSendMiddle, 501, 1024, 1024));
  wire::PacketSpec s = peer_spec(o::kRcSendLastImm, 502);
  s.ack_req = true;
  s.immdt = wire::ImmDtHdr::make(0x01020304);
  s.payload = std::span<const std::uint8_t>(src.data() + 2048, 10);
  deliver(build(s));
  ASSERT_EQ(rcq.wc.size(), 1u);
  EXPECT_EQ(rcq.wc[0].byte_len, 2058u);
  EXPECT_EQ(rcq.wc[0].wc_flags, wc_flag::kWithImm);
  const std::uint8_t want[4] = {1, 2, 3, 4};
  EXPECT_EQ(std::memcmp(&rcq.wc[0].ex.imm_data, want, 4), 0);
  EXPECT_EQ(std::memcmp(local.data(), src.data(), 2058), 0);
  ASSERT_EQ(tx.size(), 1u);  // only the AckReq packet is acknowledged
  expect_ack(0, 502, kAck, 1);
}

TEST_F(Responder, OnRequest_SeBitReachesTheReceiveCompletion) {
  make_qp();
  for (std::uint64_t id = 1; id <= 4; ++id) {
    ASSERT_EQ(qp->post_recv(recv_wr(id, 0, 4096)), 0);
  }
  wire::PacketSpec s = peer_spec(o::kRcSendOnly, 500);
  s.se = true;
  deliver(build(s));
  deliver(req(o::kRcSendOnly, 501));  // no SE
  // Multi-packet: only the LAST's SE counts.
  s = peer_spec(o::kRcSendFirst, 502);
  s.payload = std::span<const std::uint8_t>(src.data(), 1024);
  deliver(build(s));
  s = peer_spec(o::kRcSendLast, 503);
  s.se = true;
  s.payload = std::span<const std::uint8_t>(src.data(), 10);
  deliver(build(s));
  s = peer_spec(o::kRcWriteOnlyImm, 504);
  s.se = true;
  s.reth = wire::RethHdr::make(kRemoteVa, rkey, 0);
  s.immdt = wire::ImmDtHdr::make(1);
  deliver(build(s));
  ASSERT_EQ(rcq.wc.size(), 4u);
  EXPECT_TRUE(is_solicited(rcq.wc[0]));
  EXPECT_FALSE(is_solicited(rcq.wc[1]));
  EXPECT_TRUE(is_solicited(rcq.wc[2]));
  EXPECT_TRUE(is_solicited(rcq.wc[3]));
  EXPECT_EQ(wc_op(rcq.wc[3]), WcOpcode::kRecvRdmaWithImm);
}

// FLUSH and ATOMIC_WRITE (what rxe sends since Linux 6.2) are not
// implemented: NAKed at once as invalid requests, nothing written.
struct Unsupported : Responder, ::testing::WithParamInterface<std::uint8_t> {};

TEST_P(Unsupported, OnRequest_NaksInvalidRequestAtOnce) {
  make_qp();
  const std::vector<std::uint8_t> before = remote;
  wire::PacketSpec s = peer_spec(GetParam(), 500);
  s.ack_req = true;
  s.reth = wire::RethHdr::make(kRemoteVa, rkey, 8);
  if (GetParam() == o::kRcFlush) {
    s.feth = wire::FethHdr::make(wire::kFethSelRange, wire::kFethPltGlobalVisibility);
  } else {
    s.payload = std::span<const std::uint8_t>(src.data(), 8);
  }
  deliver(build(s));
  ASSERT_EQ(tx.size(), 1u);
  expect_ack(0, 500, wire::aeth_nak_syndrome(wire::NakCode::kInvalidRequest), 0);
  EXPECT_EQ(qp->state(), QpState::kErr);
  EXPECT_EQ(qp->counters().rx_unsupported_ops, 1u);
  EXPECT_EQ(qp->counters().tx_nak_invalid_request, 1u);
  EXPECT_EQ(remote, before);
  EXPECT_TRUE(rcq.wc.empty());
}

INSTANTIATE_TEST_SUITE_P(Opcodes, Unsupported, ::testing::Values(o::kRcFlush, o::kRcAtomicWrite));


// A type-2 window over the "remote" region, bound on this QP.
std::uint32_t bind_window(MrTable& mrs, PdHandle pd, std::uint32_t mr, std::uint64_t va,
                          std::uint64_t len) {
  int err = 0;
  const std::uint32_t mw = mrs.alloc_mw(pd, MwType::kType2, &err);
  std::uint32_t key = 0;
  EXPECT_EQ(mrs.bind_mw(MwBind{mw, mr, mw, va, len, access::kRemoteWrite | access::kRemoteRead}, pd,
                        RcFixture::kQpn, &key),
            MrError::kOk);
  return key;
}

TEST_F(Responder, OnRequest_SendWithInvalidateInvalidatesWindow) {
  make_qp();
  ASSERT_EQ(qp->post_recv(recv_wr(7, 0, 64)), 0);
  int err = 0;
  const std::uint32_t mr =
      mrs.reg({kPd, 0x9000, 16, access::kLocalWrite | access::kRemoteWrite | access::kMwBind,
               remote.data()},
              &err);
  const std::uint32_t victim = bind_window(mrs, kPd, mr, 0x9000, 16);
  wire::PacketSpec s = peer_spec(o::kRcSendOnlyInv, 500);
  s.ack_req = true;
  s.ieth = wire::IethHdr::make(victim);
  deliver(build(s));
  ASSERT_EQ(rcq.wc.size(), 1u);
  EXPECT_EQ(status(rcq.wc[0]), WcStatus::kSuccess);
  EXPECT_EQ(rcq.wc[0].wc_flags, wc_flag::kWithInv);
  EXPECT_EQ(rcq.wc[0].ex.invalidate_rkey, victim);
  std::uint8_t* h = nullptr;
  EXPECT_EQ(mrs.resolve_remote(victim, kPd, kQpn, 0x9000, 4, access::kRemoteWrite, &h),
            MrError::kInvalidated);
  EXPECT_EQ(mrs.resolve(mr, kPd, 0x9000, 4, access::kRemoteWrite, &h), MrError::kOk);
  EXPECT_EQ(qp->counters().rx_invalidates, 1u);
}

// IBTA / rxe: SEND_WITH_INV invalidates only a type-2 window of the QP's
// PD. An MR (ours or another PD's), another PD's window or a type-1 window:
// nothing changes, the receive completes IBV_WC_REM_INV_REQ_ERR (rxe's class
// J status), NAK invalid request, the QP goes to ERR, and it is counted.
TEST_F(Responder, OnRequest_SendWithInvalidateOfAnythingElseIsRefused) {
  int err = 0;
  const std::uint32_t other_mr =
      mrs.reg({kPd + 1, 0xa000, 64, access::kLocalWrite | access::kRemoteWrite | access::kMwBind,
               remote.data()},
              &err);
  const std::uint32_t other_win = bind_window(mrs, kPd + 1, other_mr, 0xa000, 64);
  const std::uint32_t type1 = mrs.alloc_mw(kPd, MwType::kType1, &err);
  for (const std::uint32_t key : {rkey, lkey, other_mr, other_win, type1, 0x12345u}) {
    rcq.wc.clear();
    tx.clear();
    make_qp();
    ASSERT_EQ(qp->post_recv(recv_wr(7, 0, 64)), 0);
    wire::PacketSpec s = peer_spec(o::kRcSendOnlyInv, 500);
    s.ack_req = true;
    s.ieth = wire::IethHdr::make(key);
    deliver(build(s));
    ASSERT_EQ(rcq.wc.size(), 1u) << key;
    EXPECT_EQ(status(rcq.wc[0]), WcStatus::kRemInvReqErr);
    ASSERT_EQ(tx.size(), 1u);
    expect_ack(0, 500, wire::aeth_nak_syndrome(wire::NakCode::kInvalidRequest), 0);
    EXPECT_EQ(qp->state(), QpState::kErr);
    EXPECT_EQ(qp->counters().rx_inv_refused, 1u);
  }
  std::uint8_t* h = nullptr;
  EXPECT_EQ(mrs.resolve(rkey, kPd, kRemoteVa, 8, access::kRemoteWrite, &h), MrError::kOk);
  EXPECT_EQ(mrs.resolve(lkey, kPd, kLocalVa, 8, access::kLocalWrite, &h), MrError::kOk);
  EXPECT_EQ(mrs.resolve(other_mr, kPd + 1, 0xa000, 8, access::kRemoteWrite, &h), MrError::kOk);
  EXPECT_EQ(mrs.resolve_remote(other_win, kPd + 1, kQpn, 0xa000, 8, access::kRemoteWrite, &h),
            MrError::kOk);
  EXPECT_EQ(mrs.mw_counters().invalidates, 0u);
}

TEST_F(Responder, OnRequest_WriteWithKeyInvalidatedBySendWithInvNaksRemoteAccess) {
  int err = 0;
  const std::uint32_t mr =
      mrs.reg({kPd, kRemoteVa, 4096, access::kLocalWrite | access::kRemoteWrite | access::kMwBind,
               remote.data()},
              &err);
  const std::uint32_t win = bind_window(mrs, kPd, mr, kRemoteVa, 4096);
  make_qp();
  ASSERT_EQ(qp->post_recv(recv_wr(7, 0, 64)), 0);
  wire::PacketSpec s = peer_spec(o::kRcSendOnlyInv, 500);
  s.ack_req = true;
  s.ieth = wire::IethHdr::make(win);
  deliver(build(s));
  ASSERT_EQ(rcq.wc.size(), 1u);
  EXPECT_EQ(rcq.wc[0].ex.invalidate_rkey, win);
  const std::vector<std::uint8_t> before(remote.begin(), remote.begin() + 16);
  deliver(write(o::kRcWriteOnly, 501, kRemoteVa, win, 16, 0, 16));
  ASSERT_EQ(tx.size(), 2u);
  expect_ack(0, 500, kAck, 1);
  expect_ack(1, 501, wire::aeth_nak_syndrome(wire::NakCode::kRemoteAccessError), 1);
  EXPECT_EQ(qp->state(), QpState::kErr);
  EXPECT_TRUE(std::equal(before.begin(), before.end(), remote.begin()));
}

TEST_F(Responder, OnRequest_NoRecvGivesRnrNakThenDropsUntilRetry) {
  make_qp();
  deliver(req(o::kRcSendOnly, 500, 0, 8, true));
  ASSERT_EQ(tx.size(), 1u);
  expect_ack(0, 500, wire::aeth_rnr_nak_syndrome(cp.min_rnr_timer), 0);
  deliver(req(o::kRcSendOnly, 501, 0, 8, true));  // behind the RNR'd one
  EXPECT_EQ(tx.size(), 1u);
  EXPECT_EQ(qp->counters().drop_out_of_sequence, 1u);
  ASSERT_EQ(qp->post_recv(recv_wr(7, 0, 64)), 0);
  deliver(req(o::kRcSendOnly, 500, 0, 8, true));
  ASSERT_EQ(rcq.wc.size(), 1u);
  expect_ack(1, 500, kAck, 1);
  EXPECT_EQ(qp->counters().tx_rnr_naks, 1u);
}

// A receive the owner has not handed over yet (the engine: still in the
// shared ring) is asked for when a SEND finds the RQ empty, before RNR.
TEST_F(Responder, OnRequest_EmptyRqAsksTheRefillBeforeRnr) {
  test::HeldRecvs<RcQp> held;
  cfg.recv_refill = held.refill(3);
  make_qp();
  held.q = qp.get();
  held.wrs = {recv_wr(7, 100, 4096), recv_wr(8, 8192, 4096)};
  deliver(req(o::kRcSendOnly, 500, 0, 300, true));
  EXPECT_EQ(held.asks, 1);
  EXPECT_EQ(held.last_tag, 3u);
  ASSERT_EQ(rcq.wc.size(), 1u);
  EXPECT_EQ(rcq.wc[0].wr_id, 7u);
  EXPECT_EQ(status(rcq.wc[0]), WcStatus::kSuccess);
  EXPECT_EQ(std::memcmp(local.data() + 100, src.data(), 300), 0);
  expect_ack(0, 500, kAck, 1);
  EXPECT_EQ(qp->counters().tx_rnr_naks, 0u);
  // The second WR came with the first: the next SEND asks nothing.
  deliver(req(o::kRcSendOnly, 501, 0, 10, true));
  EXPECT_EQ(held.asks, 1);
  ASSERT_EQ(rcq.wc.size(), 2u);
  EXPECT_EQ(rcq.wc[1].wr_id, 8u);
}

TEST_F(Responder, OnRequest_RefillWithNothingGivesRnrNak) {
  test::HeldRecvs<RcQp> held;
  cfg.recv_refill = held.refill(3);
  make_qp();
  held.q = qp.get();
  deliver(req(o::kRcSendOnly, 500, 0, 8, true));
  EXPECT_EQ(held.asks, 1);
  expect_ack(0, 500, wire::aeth_rnr_nak_syndrome(cp.min_rnr_timer), 0);
  EXPECT_EQ(qp->counters().tx_rnr_naks, 1u);
}

TEST_F(Responder, OnRequest_PostedRecvAsksNoRefill) {
  test::HeldRecvs<RcQp> held;
  cfg.recv_refill = held.refill(3);
  make_qp();
  held.q = qp.get();
  ASSERT_EQ(qp->post_recv(recv_wr(7, 100, 4096)), 0);
  deliver(req(o::kRcSendOnly, 500, 0, 300, true));
  ASSERT_EQ(rcq.wc.size(), 1u);
  EXPECT_EQ(held.asks, 0);
  // Nor a WRITE, which takes no receive.
  deliver(write(o::kRcWriteOnly, 501, kRemoteVa, rkey, 4, 0, 4));
  EXPECT_EQ(held.asks, 0);
}

TEST_F(Responder, OnRequest_WriteWithImmAsksTheRefill) {
  test::HeldRecvs<RcQp> held;
  cfg.recv_refill = held.refill(3);
  make_qp();
  held.q = qp.get();
  held.wrs = {recv_wr(9, 0, 64)};
  deliver(write(o::kRcWriteOnlyImm, 500, kRemoteVa, rkey, 4, 0, 4));
  EXPECT_EQ(held.asks, 1);
  ASSERT_EQ(rcq.wc.size(), 1u);
  EXPECT_EQ(rcq.wc[0].wr_id, 9u);
  expect_ack(0, 500, kAck, 1);
}

TEST_F(Responder, OnRequest_GapGivesOneSequenceNak) {
  make_qp();
  for (int i = 0; i < 3; ++i) ASSERT_EQ(qp->post_recv(recv_wr(i, 0, 64)), 0);
  deliver(req(o::kRcSendOnly, 500, 0, 8, true));
  deliver(req(o::kRcSendOnly, 502, 0, 8, true));
  deliver(req(o::kRcSendOnly, 503, 0, 8, true));
  ASSERT_EQ(tx.size(), 2u);
  expect_ack(1, 501, wire::aeth_nak_syndrome(wire::NakCode::kPsnSeqError), 1);
  EXPECT_EQ(qp->counters().tx_seq_naks, 1u);
  EXPECT_EQ(qp->counters().drop_out_of_sequence, 1u);
  deliver(req(o::kRcSendOnly, 501, 0, 8, true));
  expect_ack(2, 501, kAck, 2);
  EXPECT_EQ(rcq.wc.size(), 2u);
}

TEST_F(Responder, OnRequest_DuplicateSendAckedNotExecuted) {
  make_qp();
  ASSERT_EQ(qp->post_recv(recv_wr(1, 0, 64)), 0);
  ASSERT_EQ(qp->post_recv(recv_wr(2, 64, 64)), 0);
  deliver(req(o::kRcSendOnly, 500, 0, 8, true));
  deliver(req(o::kRcSendOnly, 500, 0, 8, true));
  EXPECT_EQ(rcq.wc.size(), 1u);
  EXPECT_EQ(qp->recv_queue_depth(), 1u);
  ASSERT_EQ(tx.size(), 2u);
  expect_ack(1, 500, kAck, 1);
  EXPECT_EQ(qp->counters().rx_duplicates, 1u);
}

// rxe acknowledges a duplicate SEND/WRITE with its resp.ack_psn - 1, which
// READs do not move: the ACK never names a READ's PSN (rxe's completer
// fails its QP on an ACK at a READ's last PSN while responses are due).
TEST_F(Responder, OnRequest_DuplicateSendAfterReadAcksLastSendNotRead) {
  make_qp();
  ASSERT_EQ(qp->post_recv(recv_wr(1, 0, 64)), 0);
  deliver(req(o::kRcSendOnly, 500, 0, 8, true));
  deliver(read(501, kRemoteVa, 2048));  // PSNs 501..502
  ASSERT_EQ(tx.size(), 3u);
  tx.clear();
  deliver(req(o::kRcSendOnly, 500, 0, 8, true));
  ASSERT_EQ(tx.size(), 1u);
  expect_ack(0, 500, kAck, 2);
  EXPECT_EQ(qp->expected_psn(), Psn(503));
}

// A duplicate of an older READ cancels the newer READ's unsent responses;
// a pending ACK beyond them would acknowledge READ data never sent, so it
// is dropped too (the requester resends what follows and is ACKed again).
TEST_F(Responder, OnRequest_DuplicateReadDropsPendingAckBeyondCancelledReads) {
  make_qp();
  ASSERT_EQ(qp->post_recv(recv_wr(1, 0, 64)), 0);
  tx.limit = 0;                                // nothing leaves yet
  deliver(read(500, kRemoteVa, 2048));         // 500..501
  deliver(read(502, kRemoteVa + 4096, 1024));  // 502
  deliver(req(o::kRcSendOnly, 503, 0, 8, true));
  deliver(read(500, kRemoteVa, 2048));  // duplicate of the first
  tx.limit = SIZE_MAX;
  pump();
  ASSERT_EQ(tx.size(), 2u);
  EXPECT_EQ(tx.at(0).bth.opcode(), o::kRcReadResponseFirst);
  EXPECT_EQ(tx.at(0).bth.psn(), 500u);
  EXPECT_EQ(tx.at(1).bth.opcode(), o::kRcReadResponseLast);
  EXPECT_EQ(tx.at(1).bth.psn(), 501u);
}

TEST_F(Responder, OnRequest_DuplicateWriteNotWrittenAgain) {
  make_qp();
  deliver(write(o::kRcWriteOnly, 500, kRemoteVa, rkey, 16, 0, 16));
  EXPECT_EQ(std::memcmp(remote.data(), src.data(), 16), 0);
  remote[0] = 0xee;  // the application changes the buffer afterwards
  deliver(write(o::kRcWriteOnly, 500, kRemoteVa, rkey, 16, 0, 16));
  EXPECT_EQ(remote[0], 0xee);
  ASSERT_EQ(tx.size(), 2u);
  expect_ack(1, 500, kAck, 1);
}

TEST_F(Responder, OnRequest_MultiPacketWriteAndWriteWithImm) {
  make_qp();
  ASSERT_EQ(qp->post_recv(recv_wr(3, 0, 0)), 0);
  deliver(write(o::kRcWriteFirst, 500, kRemoteVa + 8, rkey, 2048 + 5, 0, 1024, false));
  deliver(write(o::kRcWriteMiddle, 501, 0, 0, 0, 1024, 1024, false));
  deliver(write(o::kRcWriteLastImm, 502, 0, 0, 0, 2048, 5, true));
  EXPECT_EQ(std::memcmp(remote.data() + 8, src.data(), 2053), 0);
  ASSERT_EQ(rcq.wc.size(), 1u);
  EXPECT_EQ(wc_op(rcq.wc[0]), WcOpcode::kRecvRdmaWithImm);
  EXPECT_EQ(rcq.wc[0].byte_len, 2053u);
  EXPECT_EQ(rcq.wc[0].wc_flags, wc_flag::kWithImm);
  expect_ack(0, 502, kAck, 1);
}

TEST_F(Responder, OnRequest_WriteWithImmWithoutRecvGivesRnrNak) {
  make_qp();
  deliver(write(o::kRcWriteOnlyImm, 500, kRemoteVa, rkey, 4, 0, 4));
  expect_ack(0, 500, wire::aeth_rnr_nak_syndrome(cp.min_rnr_timer), 0);
}

TEST_F(Responder, OnRequest_ZeroLengthWriteChecksNothing) {
  make_qp();
  deliver(write(o::kRcWriteOnly, 500, 0, 0xdead, 0, 0, 0));
  expect_ack(0, 500, kAck, 1);
  EXPECT_EQ(qp->state(), QpState::kRts);
}

// Each kind of remote access violation on a WRITE: NAK remote access error,
// QP to ERR, posted receive WRs flushed.
struct AccessCase {
  const char* name;
  std::uint64_t va;
  std::uint32_t len;
  int key;  // 0 = good rkey, 1 = unknown key, 2 = read-only MR, 3 = other PD
};
struct WriteAccess : Responder, ::testing::WithParamInterface<AccessCase> {};

TEST_P(WriteAccess, OnRequest_NakRemoteAccessAndError) {
  make_qp();
  ASSERT_EQ(qp->post_recv(recv_wr(1, 0, 64)), 0);
  int err = 0;
  const std::uint32_t ro =
      mrs.reg({kPd, kRemoteVa, remote.size(), access::kRemoteRead, remote.data()}, &err);
  const std::uint32_t other_pd =
      mrs.reg({kPd + 1, kRemoteVa, remote.size(), access::kLocalWrite | access::kRemoteWrite,
               remote.data()},
              &err);
  const AccessCase& c = GetParam();
  const std::uint32_t keys[] = {rkey, 0x7777, ro, other_pd};
  const std::vector<std::uint8_t> before(remote.begin(), remote.begin() + 64);
  deliver(write(o::kRcWriteOnly, 500, c.va, keys[c.key], c.len, 0, c.len));
  ASSERT_GE(tx.size(), 1u);
  expect_ack(0, 500, wire::aeth_nak_syndrome(wire::NakCode::kRemoteAccessError), 0);
  EXPECT_EQ(qp->state(), QpState::kErr);
  EXPECT_EQ(qp->counters().tx_nak_remote_access, 1u);
  ASSERT_EQ(rcq.wc.size(), 1u);
  EXPECT_EQ(status(rcq.wc[0]), WcStatus::kWrFlushErr);
  EXPECT_EQ(std::vector<std::uint8_t>(remote.begin(), remote.begin() + 64), before);
  // In ERR further requests are dropped and counted.
  deliver(write(o::kRcWriteOnly, 501, kRemoteVa, rkey, 4, 0, 4));
  EXPECT_EQ(qp->counters().drop_state, 1u);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, WriteAccess,
    ::testing::Values(AccessCase{"BadRkey", RcFixture::kRemoteVa, 16, 1},
                      AccessCase{"OutOfBounds", RcFixture::kRemoteVa + (1 << 20) - 8, 16, 0},
                      AccessCase{"BelowRegion", RcFixture::kRemoteVa - 1, 16, 0},
                      AccessCase{"NoRemoteWrite", RcFixture::kRemoteVa, 16, 2},
                      AccessCase{"WrongPd", RcFixture::kRemoteVa, 16, 3}),
    [](const auto& i) { return std::string(i.param.name); });

TEST_F(Responder, OnRequest_QpWithoutRemoteWriteNaksInvalidRequest) {
  cp.access = access::kRemoteRead;
  make_qp();
  deliver(write(o::kRcWriteOnly, 500, kRemoteVa, rkey, 4, 0, 4));
  expect_ack(0, 500, wire::aeth_nak_syndrome(wire::NakCode::kInvalidRequest), 0);
  EXPECT_EQ(qp->state(), QpState::kErr);
}

TEST_F(Responder, OnRequest_MiddleWithoutFirstNaksInvalidRequest) {
  make_qp();
  deliver(req(o::kRcSendMiddle, 500, 0, 1024));
  expect_ack(0, 500, wire::aeth_nak_syndrome(wire::NakCode::kInvalidRequest), 0);
  EXPECT_EQ(qp->counters().tx_nak_invalid_request, 1u);
}

TEST_F(Responder, OnRequest_ShortMiddlePacketNaksInvalidRequest) {
  make_qp();
  ASSERT_EQ(qp->post_recv(recv_wr(1, 0, 8192)), 0);
  deliver(req(o::kRcSendFirst, 500, 0, 1000));
  expect_ack(0, 500, wire::aeth_nak_syndrome(wire::NakCode::kInvalidRequest), 0);
  ASSERT_EQ(rcq.wc.size(), 1u);
  EXPECT_EQ(status(rcq.wc[0]), WcStatus::kWrFlushErr);
}

TEST_F(Responder, OnRequest_SendLongerThanRecvGivesLocLenErr) {
  make_qp();
  ASSERT_EQ(qp->post_recv(recv_wr(1, 0, 100)), 0);
  ASSERT_EQ(qp->post_recv(recv_wr(2, 0, 100)), 0);
  deliver(req(o::kRcSendOnly, 500, 0, 101, true));
  expect_ack(0, 500, wire::aeth_nak_syndrome(wire::NakCode::kInvalidRequest), 0);
  ASSERT_EQ(rcq.wc.size(), 2u);
  EXPECT_EQ(rcq.wc[0].wr_id, 1u);
  EXPECT_EQ(status(rcq.wc[0]), WcStatus::kLocLenErr);
  EXPECT_EQ(status(rcq.wc[1]), WcStatus::kWrFlushErr);
  EXPECT_EQ(qp->state(), QpState::kErr);
}

TEST_F(Responder, OnRequest_ReadRespondsSegmentedWithAeth) {
  make_qp();
  deliver(read(500, kRemoteVa + 16, 2560));
  ASSERT_EQ(tx.size(), 3u);
  const std::uint8_t ops[] = {o::kRcReadResponseFirst, o::kRcReadResponseMiddle,
                              o::kRcReadResponseLast};
  const std::size_t lens[] = {1024, 1024, 512};
  for (int i = 0; i < 3; ++i) {
    const auto& p = tx.at(i);
    EXPECT_EQ(p.bth.opcode(), ops[i]);
    EXPECT_EQ(p.bth.psn(), 500u + i);
    EXPECT_EQ(p.has(wire::ExtHdr::kAeth), i != 1);
    ASSERT_EQ(p.payload.size(), lens[i]);
    EXPECT_EQ(std::memcmp(p.payload.data(), remote.data() + 16 + i * 1024, lens[i]), 0);
  }
  EXPECT_EQ(tx.at(2).aeth.msn(), 1u);
  EXPECT_EQ(qp->expected_psn(), Psn(503));
  EXPECT_EQ(qp->counters().tx_read_responses, 3u);
}

TEST_F(Responder, OnRequest_ZeroLengthReadGivesEmptyOnlyResponse) {
  make_qp();
  deliver(read(500, 0, 0));
  ASSERT_EQ(tx.size(), 1u);
  EXPECT_EQ(tx.at(0).bth.opcode(), o::kRcReadResponseOnly);
  EXPECT_TRUE(tx.at(0).payload.empty());
}

TEST_F(Responder, OnRequest_ReadBadRkeyNaksRemoteAccess) {
  make_qp();
  wire::PacketSpec s = peer_spec(o::kRcReadRequest, 500);
  s.reth = wire::RethHdr::make(kRemoteVa, 0x4242, 8);
  deliver(build(s));
  expect_ack(0, 500, wire::aeth_nak_syndrome(wire::NakCode::kRemoteAccessError), 0);
}

// rxe's read_reply: a replay that does not start at the READ's first PSN
// begins with MIDDLE (no AETH), since rxe's completer, mid-READ, accepts
// only MIDDLE/LAST and fails the QP on a FIRST.
TEST_F(Responder, OnRequest_DuplicateReadFromMidRangeStartsWithMiddle) {
  make_qp();
  deliver(read(500, kRemoteVa, 3000));
  ASSERT_EQ(tx.size(), 3u);
  tx.clear();
  remote[1024] = 0x99;  // served again from memory as it is now
  // The requester lost 501 and asks again for the tail.
  wire::PacketSpec s = peer_spec(o::kRcReadRequest, 501);
  s.reth = wire::RethHdr::make(kRemoteVa + 1024, rkey, 3000 - 1024);
  deliver(build(s));
  ASSERT_EQ(tx.size(), 2u);
  EXPECT_EQ(tx.at(0).bth.opcode(), o::kRcReadResponseMiddle);
  EXPECT_FALSE(tx.at(0).has(wire::ExtHdr::kAeth));
  EXPECT_EQ(tx.at(0).bth.psn(), 501u);
  EXPECT_EQ(tx.at(0).payload[0], 0x99);
  EXPECT_EQ(tx.at(1).bth.opcode(), o::kRcReadResponseLast);
  EXPECT_EQ(tx.at(1).bth.psn(), 502u);
  EXPECT_EQ(qp->counters().reads_replayed, 1u);
  EXPECT_EQ(qp->expected_psn(), Psn(503));
}

TEST_F(Responder, OnRequest_DuplicateReadOfLastPsnIsLastNotOnly) {
  make_qp();
  deliver(read(500, kRemoteVa, 3000));
  tx.clear();
  wire::PacketSpec s = peer_spec(o::kRcReadRequest, 502);
  s.reth = wire::RethHdr::make(kRemoteVa + 2048, rkey, 3000 - 2048);
  deliver(build(s));
  ASSERT_EQ(tx.size(), 1u);
  EXPECT_EQ(tx.at(0).bth.opcode(), o::kRcReadResponseLast);
  EXPECT_EQ(tx.at(0).bth.psn(), 502u);
  EXPECT_EQ(tx.at(0).payload.size(), 3000u - 2048u);
  // From the first PSN the whole stream is FIRST..LAST again.
  tx.clear();
  deliver(read(500, kRemoteVa, 3000));
  ASSERT_EQ(tx.size(), 3u);
  EXPECT_EQ(tx.at(0).bth.opcode(), o::kRcReadResponseFirst);
  EXPECT_EQ(tx.at(1).bth.opcode(), o::kRcReadResponseMiddle);
  EXPECT_EQ(tx.at(2).bth.opcode(), o::kRcReadResponseLast);
}

TEST_F(Responder, OnRequest_AtomicsExecuteAndReturnOriginal) {
  make_qp();
  const std::uint64_t v0 = 1000;
  std::memcpy(remote.data() + 64, &v0, 8);
  deliver(atomic(o::kRcFetchAdd, 500, kRemoteVa + 64, 5, 0));
  deliver(atomic(o::kRcCompareSwap, 501, kRemoteVa + 64, 77, 1005));
  deliver(atomic(o::kRcCompareSwap, 502, kRemoteVa + 64, 88, 1));  // no match
  ASSERT_EQ(tx.size(), 3u);
  EXPECT_EQ(tx.at(0).bth.opcode(), o::kRcAtomicAck);
  EXPECT_EQ(tx.at(0).atomic_ack_eth.orig_remote_data(), 1000u);
  EXPECT_EQ(tx.at(1).atomic_ack_eth.orig_remote_data(), 1005u);
  EXPECT_EQ(tx.at(2).atomic_ack_eth.orig_remote_data(), 77u);
  EXPECT_EQ(tx.at(2).bth.psn(), 502u);
  EXPECT_EQ(remote_u64(64), 77u);
  EXPECT_EQ(qp->counters().atomics_executed, 3u);
}

TEST_F(Responder, OnRequest_DuplicateAtomicReplayedNotReexecuted) {
  make_qp();
  const std::uint64_t v0 = 10;
  std::memcpy(remote.data() + 64, &v0, 8);
  deliver(atomic(o::kRcFetchAdd, 500, kRemoteVa + 64, 1, 0));
  deliver(atomic(o::kRcFetchAdd, 500, kRemoteVa + 64, 1, 0));
  ASSERT_EQ(tx.size(), 2u);
  EXPECT_EQ(tx.at(1).bth.opcode(), o::kRcAtomicAck);
  EXPECT_EQ(tx.at(1).atomic_ack_eth.orig_remote_data(), 10u);
  EXPECT_EQ(remote_u64(64), 11u);
  EXPECT_EQ(qp->counters().atomics_executed, 1u);
  EXPECT_EQ(qp->counters().atomics_replayed, 1u);
}

TEST_F(Responder, OnRequest_MisalignedAtomicNaksInvalidRequest) {
  make_qp();
  deliver(atomic(o::kRcFetchAdd, 500, kRemoteVa + 4, 1, 0));
  expect_ack(0, 500, wire::aeth_nak_syndrome(wire::NakCode::kInvalidRequest), 0);
  EXPECT_EQ(qp->state(), QpState::kErr);
}

TEST_F(Responder, OnRequest_ReadBeyondResourcesIsDroppedUntilAnswered) {
  cp.max_dest_rd_atomic = 1;
  make_qp();
  tx.limit = 0;  // responses cannot leave yet
  deliver(read(500, kRemoteVa, 8));
  deliver(read(501, kRemoteVa, 8));
  EXPECT_EQ(qp->counters().drop_no_resource, 1u);
  EXPECT_EQ(qp->expected_psn(), Psn(501));
}

TEST_F(Responder, OnRequest_AckCoalescingEveryN) {
  cfg.tuning.ack_every = 4;
  make_qp();
  for (std::uint32_t i = 0; i < 10; ++i) {
    deliver(write(i == 0 ? o::kRcWriteFirst : (i == 9 ? o::kRcWriteLast : o::kRcWriteMiddle),
                  500 + i, kRemoteVa, rkey, 10 * 1024, i * 1024, 1024, false));
  }
  ASSERT_EQ(tx.size(), 2u);
  expect_ack(0, 503, kAck, 0);
  expect_ack(1, 507, kAck, 0);
}

TEST_F(Responder, OnRequest_PsnWrapsAcrossTop) {
  cp.rq_psn = 0xFFFFFF;
  make_qp();
  deliver(write(o::kRcWriteOnly, 0xFFFFFF, kRemoteVa, rkey, 4, 0, 4));
  deliver(write(o::kRcWriteOnly, 0, kRemoteVa, rkey, 4, 0, 4));
  ASSERT_EQ(tx.size(), 2u);
  expect_ack(0, 0xFFFFFF, kAck, 1);
  expect_ack(1, 0, kAck, 2);
  deliver(write(o::kRcWriteOnly, 0xFFFFFF, kRemoteVa, rkey, 4, 0, 4));  // duplicate
  expect_ack(2, 0, kAck, 2);
}

TEST_F(Responder, OnRequest_BeforeRtrDropped) {
  qp = std::make_unique<RcQp>(cfg, mrs);
  deliver(req(o::kRcSendOnly, 0, 0, 8, true));
  EXPECT_EQ(qp->counters().drop_state, 1u);
  EXPECT_EQ(tx.size(), 0u);
}

TEST_F(Responder, OnPacket_WrongQpnOrPkeyDropped) {
  make_qp();
  wire::PacketSpec s = peer_spec(o::kRcSendOnly, 500);
  s.dest_qp = 0x33;
  deliver(build(s));
  s.dest_qp = kQpn;
  s.pkey = 0x1234;
  deliver(build(s));
  EXPECT_EQ(qp->counters().drop_qpn, 1u);
  EXPECT_EQ(qp->counters().drop_pkey, 1u);
  EXPECT_EQ(tx.size(), 0u);
}

// AckTiming::kPump (rc_qp.h): a plain ACK waits for pump_tx, and the
// requests that arrive before it move it forward instead of adding ACKs.
TEST_F(Responder, OnPacket_AckTimingPumpSendsOneAckForABurst) {
  make_qp();
  for (int i = 0; i < 4; ++i) ASSERT_EQ(qp->post_recv(recv_wr(i, 64 * i, 64)), 0);
  for (std::uint32_t i = 0; i < 4; ++i) deliver_at_pump(req(o::kRcSendOnly, 500 + i, 0, 8, true));
  deliver_at_pump(req(o::kRcSendOnly, 502, 0, 8, true));  // a duplicate: ACKed once too
  EXPECT_EQ(rcq.wc.size(), 4u);
  EXPECT_EQ(tx.size(), 0u);
  EXPECT_TRUE(qp->has_output());
  EXPECT_EQ(pump(), 1u);
  ASSERT_EQ(tx.size(), 1u);
  expect_ack(0, 503, kAck, 4);
  EXPECT_EQ(qp->counters().tx_acks, 1u);
  EXPECT_FALSE(qp->has_output());
  EXPECT_EQ(pump(), 0u);
}

// A NAK leaves at once and replaces the waiting ACK: its PSN acknowledges
// every PSN before it (IBTA 9.7.5.1.1; rxe's completer does the same).
TEST_F(Responder, OnPacket_AckTimingPumpSendsNaksAtOnce) {
  make_qp();
  ASSERT_EQ(qp->post_recv(recv_wr(1, 0, 64)), 0);
  deliver_at_pump(req(o::kRcSendOnly, 500, 0, 8, true));
  EXPECT_EQ(tx.size(), 0u);
  deliver_at_pump(req(o::kRcSendOnly, 502, 0, 8, true));  // a gap
  ASSERT_EQ(tx.size(), 1u);
  expect_ack(0, 501, wire::aeth_nak_syndrome(wire::NakCode::kPsnSeqError), 1);
  deliver_at_pump(req(o::kRcSendOnly, 501, 0, 8, true));  // no receive WR left
  ASSERT_EQ(tx.size(), 2u);
  expect_ack(1, 501, wire::aeth_rnr_nak_syndrome(cp.min_rnr_timer), 1);
  EXPECT_EQ(pump(), 0u);
}

// READ responses leave at once and make the waiting ACK unnecessary (they
// acknowledge every PSN before theirs); an ACK due after them waits.
TEST_F(Responder, OnPacket_AckTimingPumpReadResponsesAtOnce) {
  make_qp();
  ASSERT_EQ(qp->post_recv(recv_wr(1, 0, 64)), 0);
  deliver_at_pump(req(o::kRcSendOnly, 500, 0, 8, true));
  deliver_at_pump(read(501, kRemoteVa, 8));
  ASSERT_EQ(tx.size(), 1u);
  EXPECT_EQ(tx.at(0).bth.opcode(), o::kRcReadResponseOnly);
  EXPECT_EQ(tx.at(0).bth.psn(), 501u);
  EXPECT_EQ(tx.at(0).aeth.msn(), 2u);
  deliver_at_pump(write(o::kRcWriteOnly, 502, kRemoteVa, rkey, 16, 0, 16));
  EXPECT_EQ(tx.size(), 1u);
  EXPECT_EQ(pump(), 1u);
  expect_ack(1, 502, kAck, 3);
}

// A duplicate READ replays at once; the ACK still due leaves after the
// replayed responses, in PSN order.
TEST_F(Responder, OnPacket_AckTimingPumpReplayLeavesBeforeTheNewerAck) {
  make_qp();
  deliver_at_pump(read(500, kRemoteVa, 8));
  deliver_at_pump(write(o::kRcWriteOnly, 501, kRemoteVa, rkey, 16, 0, 16));
  ASSERT_EQ(tx.size(), 1u);
  deliver_at_pump(read(500, kRemoteVa, 8));  // the response was lost
  ASSERT_EQ(tx.size(), 3u);
  EXPECT_EQ(tx.at(1).bth.opcode(), o::kRcReadResponseOnly);
  EXPECT_EQ(tx.at(1).bth.psn(), 500u);
  expect_ack(2, 501, kAck, 2);
  EXPECT_EQ(pump(), 0u);
}

}  // namespace
}  // namespace uroce::transport
