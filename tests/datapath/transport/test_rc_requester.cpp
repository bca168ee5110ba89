#include "datapath/transport/rc_requester.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tests/datapath/transport/rc_test_support.h"

namespace uroce::transport {
namespace {

using namespace rctest;
namespace o = wire::op;

TEST(RcRequestOpcode, SegmentsSendAndWrite) {
  EXPECT_EQ(rc_request_opcode(WrOpcode::kSend, 0, 1), o::kRcSendOnly);
  EXPECT_EQ(rc_request_opcode(WrOpcode::kSend, 0, 3), o::kRcSendFirst);
  EXPECT_EQ(rc_request_opcode(WrOpcode::kSend, 1, 3), o::kRcSendMiddle);
  EXPECT_EQ(rc_request_opcode(WrOpcode::kSend, 2, 3), o::kRcSendLast);
  EXPECT_EQ(rc_request_opcode(WrOpcode::kSendImm, 0, 1), o::kRcSendOnlyImm);
  EXPECT_EQ(rc_request_opcode(WrOpcode::kSendImm, 1, 2), o::kRcSendLastImm);
  EXPECT_EQ(rc_request_opcode(WrOpcode::kSendInv, 0, 1), o::kRcSendOnlyInv);
  EXPECT_EQ(rc_request_opcode(WrOpcode::kSendInv, 1, 2), o::kRcSendLastInv);
  EXPECT_EQ(rc_request_opcode(WrOpcode::kRdmaWrite, 0, 1), o::kRcWriteOnly);
  EXPECT_EQ(rc_request_opcode(WrOpcode::kRdmaWrite, 0, 2), o::kRcWriteFirst);
  EXPECT_EQ(rc_request_opcode(WrOpcode::kRdmaWrite, 1, 3), o::kRcWriteMiddle);
  EXPECT_EQ(rc_request_opcode(WrOpcode::kRdmaWrite, 1, 2), o::kRcWriteLast);
  EXPECT_EQ(rc_request_opcode(WrOpcode::kRdmaWriteImm, 0, 1), o::kRcWriteOnlyImm);
  EXPECT_EQ(rc_request_opcode(WrOpcode::kRdmaWriteImm, 1, 2), o::kRcWriteLastImm);
}

struct Requester : RcFixture {};

struct SegFixture : RcFixture, ::testing::WithParamInterface<wire::PathMtu> {};

TEST_P(SegFixture, SendOne_SegmentsSendAtEachMtu) {
  cp.mtu = GetParam();
  make_qp();
  const std::uint32_t m = mtu();
  const std::uint32_t len = 3 * m + 10;
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kSend, 64, len)), 0);
  EXPECT_EQ(pump(), 4u);
  ASSERT_EQ(tx.size(), 4u);
  const std::uint8_t ops[] = {o::kRcSendFirst, o::kRcSendMiddle, o::kRcSendMiddle, o::kRcSendLast};
  for (std::uint32_t i = 0; i < 4; ++i) {
    const auto& p = tx.at(i);
    EXPECT_EQ(p.bth.opcode(), ops[i]);
    EXPECT_EQ(p.bth.psn(), 100 + i);
    EXPECT_EQ(p.bth.dest_qp(), kPeerQpn);
    EXPECT_EQ(p.bth.ack_req(), i == 3);
    const std::size_t want = i == 3 ? 10 : m;
    ASSERT_EQ(p.payload.size(), want);
    EXPECT_EQ(std::memcmp(p.payload.data(), local.data() + 64 + i * m, want), 0);
  }
  EXPECT_EQ(qp->next_psn(), Psn(104));
}

INSTANTIATE_TEST_SUITE_P(AllMtus, SegFixture,
                         ::testing::Values(wire::PathMtu::k256, wire::PathMtu::k512,
                                           wire::PathMtu::k1024, wire::PathMtu::k2048,
                                           wire::PathMtu::k4096));

TEST_F(Requester, SendOne_WriteCarriesRethOnFirstOnly) {
  make_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaWrite, 0, 2 * 1024 + 1)), 0);
  EXPECT_EQ(pump(), 3u);
  EXPECT_EQ(tx.at(0).bth.opcode(), o::kRcWriteFirst);
  EXPECT_TRUE(tx.at(0).has(wire::ExtHdr::kReth));
  EXPECT_EQ(tx.at(0).reth.va(), kRemoteVa);
  EXPECT_EQ(tx.at(0).reth.rkey(), rkey);
  EXPECT_EQ(tx.at(0).reth.dma_len(), 2049u);
  EXPECT_EQ(tx.at(1).bth.opcode(), o::kRcWriteMiddle);
  EXPECT_EQ(tx.at(2).bth.opcode(), o::kRcWriteLast);
  EXPECT_EQ(tx.at(2).payload.size(), 1u);
}

TEST_F(Requester, SendOne_ReadTakesOnePsnPerResponsePacket) {
  make_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaRead, 0, 2 * 1024 + 512)), 0);
  ASSERT_EQ(qp->post_send(send_wr(2, WrOpcode::kSend, 0, 4)), 0);
  EXPECT_EQ(pump(), 2u);
  EXPECT_EQ(tx.at(0).bth.opcode(), o::kRcReadRequest);
  EXPECT_EQ(tx.at(0).bth.psn(), 100u);
  EXPECT_TRUE(tx.at(0).bth.ack_req());
  EXPECT_EQ(tx.at(0).reth.dma_len(), 2560u);
  EXPECT_TRUE(tx.at(0).payload.empty());
  EXPECT_EQ(tx.at(1).bth.psn(), 103u);  // 100 + ceil(2560 / 1024)
  EXPECT_EQ(qp->rd_atomic_outstanding(), 1u);
}

TEST_F(Requester, SendOne_AtomicsCarryAtomicEth) {
  make_qp();
  SendWr cs = send_wr(1, WrOpcode::kCmpSwap, 8, 8);
  cs.compare_add = 5;
  cs.swap = 9;
  SendWr fa = send_wr(2, WrOpcode::kFetchAdd, 16, 8);
  fa.compare_add = 3;
  ASSERT_EQ(qp->post_send(cs), 0);
  ASSERT_EQ(qp->post_send(fa), 0);
  EXPECT_EQ(pump(), 2u);
  EXPECT_EQ(tx.at(0).bth.opcode(), o::kRcCompareSwap);
  EXPECT_EQ(tx.at(0).atomic_eth.va(), kRemoteVa + 8);
  EXPECT_EQ(tx.at(0).atomic_eth.compare(), 5u);
  EXPECT_EQ(tx.at(0).atomic_eth.swap_add(), 9u);
  EXPECT_EQ(tx.at(1).bth.opcode(), o::kRcFetchAdd);
  EXPECT_EQ(tx.at(1).atomic_eth.swap_add(), 3u);
  EXPECT_EQ(tx.at(1).bth.psn(), 101u);
}

TEST_F(Requester, SendOne_ImmediateInvalidateAndSolicitedOnLastPacket) {
  make_qp();
  SendWr a = send_wr(1, WrOpcode::kSendImm, 0, 1500);
  a.flags |= send_flag::kSolicited;
  const std::uint8_t imm_bytes[4] = {0xde, 0xad, 0xbe, 0xef};
  std::memcpy(&a.imm_or_inv, imm_bytes, 4);
  SendWr b = send_wr(2, WrOpcode::kSendInv, 0, 10);
  b.imm_or_inv = 0x1234;
  ASSERT_EQ(qp->post_send(a), 0);
  ASSERT_EQ(qp->post_send(b), 0);
  EXPECT_EQ(pump(), 3u);
  EXPECT_EQ(tx.at(0).bth.opcode(), o::kRcSendFirst);
  EXPECT_FALSE(tx.at(0).bth.se());
  EXPECT_EQ(tx.at(1).bth.opcode(), o::kRcSendLastImm);
  EXPECT_TRUE(tx.at(1).bth.se());
  EXPECT_EQ(tx.at(1).immdt.imm(), 0xdeadbeefu);
  EXPECT_EQ(tx.at(2).bth.opcode(), o::kRcSendOnlyInv);
  EXPECT_EQ(tx.at(2).ieth.rkey(), 0x1234u);
  EXPECT_FALSE(tx.at(2).bth.se());
}

TEST_F(Requester, SendOne_AckReqOnLastAndEveryNth) {
  cfg.tuning.ack_req_every = 4;
  make_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaWrite, 0, 10 * 1024)), 0);
  EXPECT_EQ(pump(), 10u);
  std::vector<bool> want = {false, false, false, true, false, false, false, true, false, true};
  for (std::size_t i = 0; i < 10; ++i) EXPECT_EQ(tx.at(i).bth.ack_req(), want[i]) << i;
}

// A window below ack_req_every: AckReq at least every half window, so a
// full window is acknowledged before the requester runs out of it.
TEST_F(Requester, SendOne_AckReqEveryHalfWindowBelowAckReqEvery) {
  cfg.tuning.window_psns = 8;
  make_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaWrite, 0, 20 * 1024)), 0);
  EXPECT_EQ(pump(), 8u);
  std::vector<bool> want = {false, false, false, true, false, false, false, true};
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(tx.at(i).bth.ack_req(), want[i]) << i;
}

TEST_F(Requester, SendOne_WindowLimitsOutstandingPsns) {
  cfg.tuning.window_psns = 8;
  make_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaWrite, 0, 20 * 1024)), 0);
  EXPECT_EQ(pump(), 8u);
  EXPECT_GT(qp->counters().wait_window, 0u);
  deliver(ack(103));  // PSNs 100..103 acknowledged
  EXPECT_EQ(pump(), 4u);
  EXPECT_EQ(tx.at(11).bth.psn(), 111u);
}

TEST_F(Requester, SendOne_PsnWrapsAcrossTop) {
  cp.sq_psn = 0xFFFFFE;
  make_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kSend, 0, 4 * 1024)), 0);
  EXPECT_EQ(pump(), 4u);
  EXPECT_EQ(tx.at(0).bth.psn(), 0xFFFFFEu);
  EXPECT_EQ(tx.at(1).bth.psn(), 0xFFFFFFu);
  EXPECT_EQ(tx.at(2).bth.psn(), 0u);
  EXPECT_EQ(tx.at(3).bth.psn(), 1u);
  deliver(ack(1));
  ASSERT_EQ(scq.wc.size(), 1u);
  EXPECT_EQ(status(scq.wc[0]), WcStatus::kSuccess);
  EXPECT_EQ(qp->unacked_psn(), Psn(2));
}

TEST_F(Requester, SendOne_ZeroLengthSendIsOneEmptyPacket) {
  make_qp();
  SendWr w = send_wr(1, WrOpcode::kSend, 0, 0);
  w.num_sge = 0;
  ASSERT_EQ(qp->post_send(w), 0);
  EXPECT_EQ(pump(), 1u);
  EXPECT_EQ(tx.at(0).bth.opcode(), o::kRcSendOnly);
  EXPECT_TRUE(tx.at(0).payload.empty());
  EXPECT_TRUE(tx.at(0).bth.ack_req());
}

TEST_F(Requester, SendOne_InlineDataNeedsNoSge) {
  make_qp();
  SendWr w = send_wr(1, WrOpcode::kSend, 0, 0);
  w.flags |= send_flag::kInline;
  w.num_sge = 0;
  w.inline_len = 5;
  std::memcpy(w.inline_data.data(), "hello", 5);
  ASSERT_EQ(qp->post_send(w), 0);
  EXPECT_EQ(pump(), 1u);
  ASSERT_EQ(tx.at(0).payload.size(), 5u);
  EXPECT_EQ(std::memcmp(tx.at(0).payload.data(), "hello", 5), 0);
}

TEST_F(Requester, SendOne_MultiSgeGathersInOrderAcrossPackets) {
  cp.mtu = wire::PathMtu::k256;
  make_qp();
  SendWr w = send_wr(1, WrOpcode::kSend, 0, 0);
  w.num_sge = 3;
  w.sge[0] = {kLocalVa + 1000, 200, lkey};
  w.sge[1] = {kLocalVa + 5000, 100, lkey};
  w.sge[2] = {kLocalVa + 9000, 50, lkey};
  ASSERT_EQ(qp->post_send(w), 0);
  EXPECT_EQ(pump(), 2u);
  std::vector<std::uint8_t> want;
  want.insert(want.end(), local.begin() + 1000, local.begin() + 1200);
  want.insert(want.end(), local.begin() + 5000, local.begin() + 5100);
  want.insert(want.end(), local.begin() + 9000, local.begin() + 9050);
  std::vector<std::uint8_t> got(tx.at(0).payload.begin(), tx.at(0).payload.end());
  got.insert(got.end(), tx.at(1).payload.begin(), tx.at(1).payload.end());
  EXPECT_EQ(got, want);
}

TEST_F(Requester, SendOne_FenceWaitsForOutstandingRead) {
  make_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaRead, 0, 16)), 0);
  SendWr s = send_wr(2, WrOpcode::kSend, 0, 16);
  s.flags |= send_flag::kFence;
  ASSERT_EQ(qp->post_send(s), 0);
  EXPECT_EQ(pump(), 1u);
  EXPECT_GT(qp->counters().wait_fence, 0u);
  wire::PacketSpec r = peer_spec(o::kRcReadResponseOnly, 100);
  r.aeth = wire::AethHdr::make(wire::aeth_ack_syndrome(), 1);
  std::vector<std::uint8_t> data(16, 0x5a);
  r.payload = data;
  deliver(build(r));
  ASSERT_EQ(scq.wc.size(), 1u);
  EXPECT_EQ(wc_op(scq.wc[0]), WcOpcode::kRdmaRead);
  EXPECT_EQ(pump(), 1u);
  EXPECT_EQ(tx.at(1).bth.opcode(), o::kRcSendOnly);
  EXPECT_EQ(tx.at(1).bth.psn(), 101u);
}

TEST_F(Requester, SendOne_UnfencedSendPassesOutstandingRead) {
  make_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaRead, 0, 16)), 0);
  ASSERT_EQ(qp->post_send(send_wr(2, WrOpcode::kSend, 0, 16)), 0);
  EXPECT_EQ(pump(), 2u);
}

TEST_F(Requester, SendOne_MaxRdAtomicLimitsOutstanding) {
  cp.max_rd_atomic = 2;
  make_qp();
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(qp->post_send(send_wr(i, WrOpcode::kRdmaRead, 0, 8)), 0);
  }
  EXPECT_EQ(pump(), 2u);
  EXPECT_EQ(qp->rd_atomic_outstanding(), 2u);
  EXPECT_GT(qp->counters().wait_rd_atomic, 0u);
  wire::PacketSpec r = peer_spec(o::kRcReadResponseOnly, 100);
  r.aeth = wire::AethHdr::make(wire::aeth_ack_syndrome(), 1);
  std::vector<std::uint8_t> data(8, 1);
  r.payload = data;
  deliver(build(r));
  EXPECT_EQ(pump(), 1u);
  EXPECT_EQ(tx.at(2).bth.psn(), 102u);
}

TEST_F(Requester, SendOne_BadLkeyFailsWithLocProtErr) {
  make_qp();
  SendWr w = send_wr(1, WrOpcode::kSend, 0, 16);
  w.sge[0].lkey = 0x999;
  ASSERT_EQ(qp->post_send(w), 0);
  ASSERT_EQ(qp->post_send(send_wr(2, WrOpcode::kSend, 0, 16)), 0);
  EXPECT_EQ(pump(), 0u);
  EXPECT_EQ(tx.size(), 0u);
  EXPECT_EQ(qp->state(), QpState::kErr);
  ASSERT_EQ(scq.wc.size(), 2u);
  EXPECT_EQ(status(scq.wc[0]), WcStatus::kLocProtErr);
  EXPECT_EQ(status(scq.wc[1]), WcStatus::kWrFlushErr);
  EXPECT_EQ(qp->counters().local_errors, 1u);
}

TEST_F(Requester, SendOne_NoBufferRetriesLater) {
  make_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kSend, 0, 3000)), 0);
  tx.limit = 1;
  EXPECT_EQ(pump(), 1u);
  EXPECT_GT(qp->counters().tx_no_buffer, 0u);
  tx.limit = SIZE_MAX;
  EXPECT_EQ(pump(), 2u);
  EXPECT_EQ(tx.at(1).bth.psn(), 101u);
  EXPECT_EQ(tx.at(2).bth.psn(), 102u);
}

TEST_F(Requester, SendOne_SqdFinishesStartedWqeOnly) {
  make_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kSend, 0, 3000)), 0);
  ASSERT_EQ(qp->post_send(send_wr(2, WrOpcode::kSend, 0, 10)), 0);
  tx.limit = 1;
  EXPECT_EQ(pump(), 1u);
  QpAttrValues a;
  a.qp_state = QpState::kSqd;
  ASSERT_EQ(qp->modify(qp_attr::kState, a), 0);
  tx.limit = SIZE_MAX;
  EXPECT_EQ(pump(), 2u);  // the rest of WR 1, nothing of WR 2
  EXPECT_EQ(tx.at(2).bth.opcode(), o::kRcSendLast);
}

// LOCAL_INV: executed in send-queue order, nothing on the wire, completes
// IBV_WC_LOCAL_INV after everything before it; it invalidates a type-2
// window of the QP's PD (`victim`, bound over `victim_mr`), and any other key
// is LOC_QP_OP_ERR.
struct LocalInv : RcFixture {
  std::uint32_t victim_mr = 0;
  std::uint32_t victim = 0;
  void SetUp() override {
    RcFixture::SetUp();
    int err = 0;
    victim_mr =
        mrs.reg({kPd, 0x9000, 64, access::kLocalWrite | access::kRemoteWrite | access::kMwBind,
                 remote.data()},
                &err);
    const std::uint32_t mw = mrs.alloc_mw(kPd, MwType::kType2, &err);
    ASSERT_EQ(mrs.bind_mw(MwBind{mw, victim_mr, mw, 0x9000, 64, access::kRemoteWrite}, kPd, kQpn,
                          &victim),
              MrError::kOk);
  }
  SendWr inv(std::uint64_t id, std::uint32_t key) const {
    SendWr w;
    w.wr_id = id;
    w.opcode = WrOpcode::kLocalInv;
    w.flags = send_flag::kSignaled;
    w.imm_or_inv = key;
    return w;
  }
  MrError victim_state() const {
    std::uint8_t* h = nullptr;
    return mrs.resolve_remote(victim, kPd, kQpn, 0x9000, 8, access::kRemoteWrite, &h);
  }
};

// The local invalidate fence (IBA 10.6.5.1; rxe_wqe_is_fenced): LOCAL_INV
// waits until every earlier WQE has completed, and later WQEs wait with it.
TEST_F(LocalInv, SendOne_WaitsForEarlierWrsThenInvalidatesInOrder) {
  make_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kSend, 0, 8)), 0);
  ASSERT_EQ(qp->post_send(inv(2, victim)), 0);
  ASSERT_EQ(qp->post_send(send_wr(3, WrOpcode::kSend, 8, 8)), 0);
  EXPECT_EQ(pump(), 1u);
  ASSERT_EQ(tx.size(), 1u);
  EXPECT_EQ(tx.at(0).bth.psn(), 100u);
  EXPECT_EQ(victim_state(), MrError::kOk);  // SEND 1 is not acknowledged yet
  EXPECT_GE(qp->counters().wait_local_inv, 1u);
  EXPECT_FALSE(qp->has_output());  // only SEND 1's completion unblocks it
  EXPECT_TRUE(scq.wc.empty());
  deliver(ack(100));
  ASSERT_EQ(scq.wc.size(), 1u);
  EXPECT_EQ(scq.wc[0].wr_id, 1u);
  EXPECT_TRUE(qp->has_output());
  EXPECT_EQ(pump(), 1u);
  ASSERT_EQ(tx.size(), 2u);
  EXPECT_EQ(tx.at(1).bth.psn(), 101u);  // LOCAL_INV took no PSN
  EXPECT_EQ(victim_state(), MrError::kInvalidated);
  EXPECT_EQ(qp->counters().local_invalidates, 1u);
  ASSERT_EQ(scq.wc.size(), 2u);
  EXPECT_EQ(scq.wc[1].wr_id, 2u);
  EXPECT_EQ(wc_op(scq.wc[1]), WcOpcode::kLocalInv);
  EXPECT_EQ(status(scq.wc[1]), WcStatus::kSuccess);
  deliver(ack(101));
  ASSERT_EQ(scq.wc.size(), 3u);
  EXPECT_EQ(scq.wc[2].wr_id, 3u);
}

// A WRITE gathering from the MR under the window a later LOCAL_INV names is
// lost: its retransmission still reads the region, and the LOCAL_INV runs
// after it.
TEST_F(LocalInv, SendOne_RetransmissionBeforeItStillUsesTheKey) {
  make_qp();
  SendWr w;
  w.wr_id = 1;
  w.opcode = WrOpcode::kRdmaWrite;
  w.flags = send_flag::kSignaled;
  w.num_sge = 1;
  w.sge[0] = {0x9000, 64, victim_mr};
  w.remote_addr = 0x50000000;
  w.rkey = 0x1234;
  ASSERT_EQ(qp->post_send(w), 0);
  ASSERT_EQ(qp->post_send(inv(2, victim)), 0);
  EXPECT_EQ(pump(), 1u);
  const TimeNs rto = qp->timer_deadline();
  ASSERT_NE(rto, 0);
  qp->on_timer(rto, io);
  tx.clear();
  EXPECT_EQ(pump(rto), 1u);
  ASSERT_EQ(tx.size(), 1u);
  EXPECT_EQ(tx.at(0).bth.psn(), 100u);
  EXPECT_EQ(std::memcmp(tx.at(0).payload.data(), remote.data(), 64), 0);
  EXPECT_EQ(qp->state(), QpState::kRts);
  EXPECT_EQ(victim_state(), MrError::kOk);
  deliver(ack(100), rto + 1000);
  pump(rto + 1000);
  ASSERT_EQ(scq.wc.size(), 2u);
  EXPECT_EQ(status(scq.wc[0]), WcStatus::kSuccess);
  EXPECT_EQ(wc_op(scq.wc[1]), WcOpcode::kLocalInv);
  EXPECT_EQ(victim_state(), MrError::kInvalidated);
}

TEST_F(LocalInv, SendOne_NothingOutstandingCompletesAtOnce) {
  make_qp();
  ASSERT_EQ(qp->post_send(inv(1, victim)), 0);
  EXPECT_TRUE(qp->has_output());
  EXPECT_EQ(pump(), 0u);
  EXPECT_EQ(tx.size(), 0u);
  ASSERT_EQ(scq.wc.size(), 1u);
  EXPECT_EQ(wc_op(scq.wc[0]), WcOpcode::kLocalInv);
  EXPECT_EQ(qp->next_psn().value(), 100u);
  EXPECT_EQ(victim_state(), MrError::kInvalidated);
  EXPECT_TRUE(qp->send_idle());
}

TEST_F(LocalInv, SendOne_UnsignalledRetiresWithoutCompletion) {
  make_qp();
  SendWr w = inv(1, victim);
  w.flags = 0;
  ASSERT_EQ(qp->post_send(w), 0);
  pump();
  EXPECT_TRUE(scq.wc.empty());
  EXPECT_TRUE(qp->send_idle());
}

// rxe: only type-2 windows (and fast-registration MRs, which uroce has
// not got) are invalidated; an MR, a type-1 window, another PD's window or
// no key at all fail the WR and change nothing.
TEST_F(LocalInv, SendOne_BadKeyOrOtherPdFailsWithLocQpOpErr) {
  int err = 0;
  const std::uint32_t other_pd =
      mrs.reg({kPd + 1, 0xa000, 64, access::kLocalWrite | access::kMwBind, remote.data()}, &err);
  const std::uint32_t mw_other = mrs.alloc_mw(kPd + 1, MwType::kType2, &err);
  std::uint32_t other_win = 0;
  ASSERT_EQ(mrs.bind_mw(MwBind{mw_other, other_pd, mw_other, 0xa000, 64, access::kRemoteRead},
                        kPd + 1, kQpn, &other_win),
            MrError::kOk);
  const std::uint32_t type1 = mrs.alloc_mw(kPd, MwType::kType1, &err);
  for (const std::uint32_t key : {0x7777u, other_pd, other_win, victim_mr, type1, rkey}) {
    scq.wc.clear();
    make_qp();
    ASSERT_EQ(qp->post_send(inv(1, key)), 0);
    ASSERT_EQ(qp->post_send(send_wr(2, WrOpcode::kSend, 0, 8)), 0);
    EXPECT_EQ(pump(), 0u);
    EXPECT_EQ(qp->state(), QpState::kErr);
    ASSERT_EQ(scq.wc.size(), 2u);
    EXPECT_EQ(status(scq.wc[0]), WcStatus::kLocQpOpErr);
    EXPECT_EQ(scq.wc[0].wr_id, 1u);
    EXPECT_EQ(status(scq.wc[1]), WcStatus::kWrFlushErr);
    EXPECT_EQ(qp->counters().local_inv_errors, 1u);
  }
  std::uint8_t* h = nullptr;
  EXPECT_EQ(mrs.resolve(other_pd, kPd + 1, 0xa000, 8, 0, &h), MrError::kOk);
  EXPECT_EQ(mrs.resolve_remote(other_win, kPd + 1, kQpn, 0xa000, 8, access::kRemoteRead, &h),
            MrError::kOk);
  EXPECT_EQ(mrs.resolve(victim_mr, kPd, 0x9000, 8, access::kRemoteWrite, &h), MrError::kOk);
  EXPECT_EQ(mrs.resolve(rkey, kPd, kRemoteVa, 8, access::kRemoteWrite, &h), MrError::kOk);
  EXPECT_EQ(victim_state(), MrError::kOk);
  EXPECT_EQ(mrs.mw_counters().invalidates, 0u);
}

// BIND_MW: a local operation in send-queue order like LOCAL_INV; the window
// takes the WR's key byte and completes IBV_WC_BIND_MW; a bind the table
// refuses is IBV_WC_MW_BIND_ERR and the QP goes to ERR.
TEST_F(LocalInv, SendOne_BindMwBindsInOrderAndCompletesBindMw) {
  int err = 0;
  const std::uint32_t mw = mrs.alloc_mw(kPd, MwType::kType2, &err);
  make_qp();
  SendWr b;
  b.wr_id = 5;
  b.opcode = WrOpcode::kBindMw;
  b.flags = send_flag::kSignaled;
  b.imm_or_inv = mw;
  b.rkey = (mw & ~0xFFu) | ((mw + 1) & 0xFFu);
  b.remote_addr = 0x9010;
  b.compare_add = 16;
  b.swap = pack_mw_lkey_access(victim_mr, access::kRemoteRead);
  ASSERT_EQ(qp->post_send(b), 0);
  EXPECT_EQ(pump(), 0u);
  ASSERT_EQ(scq.wc.size(), 1u);
  EXPECT_EQ(wc_op(scq.wc[0]), WcOpcode::kBindMw);
  EXPECT_EQ(status(scq.wc[0]), WcStatus::kSuccess);
  EXPECT_EQ(qp->counters().mw_binds, 1u);
  std::uint8_t* h = nullptr;
  EXPECT_EQ(mrs.resolve_remote(b.rkey, kPd, kQpn, 0x9010, 16, access::kRemoteRead, &h),
            MrError::kOk);
  EXPECT_EQ(h, remote.data() + 0x10);
  // Bound already: a second bind of a type-2 window is refused.
  ASSERT_EQ(qp->post_send(b), 0);
  pump();
  ASSERT_EQ(scq.wc.size(), 2u);
  EXPECT_EQ(status(scq.wc[1]), WcStatus::kMwBindErr);
  EXPECT_EQ(qp->state(), QpState::kErr);
  EXPECT_EQ(qp->counters().mw_bind_errors, 1u);
}

TEST_F(LocalInv, SendOne_FencedWaitsForOutstandingRead) {
  make_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaRead, 0, 8)), 0);
  SendWr w = inv(2, victim);
  w.flags |= send_flag::kFence;
  ASSERT_EQ(qp->post_send(w), 0);
  EXPECT_EQ(pump(), 1u);
  EXPECT_EQ(victim_state(), MrError::kOk);  // held back by the fence
  EXPECT_GE(qp->counters().wait_fence, 1u);
  wire::PacketSpec s = peer_spec(o::kRcReadResponseOnly, 100);
  s.aeth = wire::AethHdr::make(wire::aeth_ack_syndrome(), 1);
  const std::vector<std::uint8_t> data(8, 0x42);
  s.payload = data;
  deliver(build(s));
  ASSERT_EQ(scq.wc.size(), 1u);
  pump();
  EXPECT_EQ(victim_state(), MrError::kInvalidated);
  ASSERT_EQ(scq.wc.size(), 2u);
  EXPECT_EQ(wc_op(scq.wc[1]), WcOpcode::kLocalInv);
}

TEST_F(LocalInv, SendOne_GoBackNAfterItDoesNotExecuteItAgain) {
  make_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kSend, 0, 8)), 0);
  ASSERT_EQ(qp->post_send(inv(2, victim)), 0);
  ASSERT_EQ(qp->post_send(send_wr(3, WrOpcode::kSend, 8, 8)), 0);
  ASSERT_EQ(qp->post_send(send_wr(4, WrOpcode::kSend, 16, 8)), 0);
  ASSERT_EQ(pump(), 1u);
  deliver(ack(100));
  ASSERT_EQ(pump(), 2u);
  deliver(ack(101, wire::aeth_nak_syndrome(wire::NakCode::kPsnSeqError)));
  tx.clear();
  EXPECT_EQ(pump(), 2u);
  EXPECT_EQ(tx.at(0).bth.psn(), 101u);
  EXPECT_EQ(tx.at(1).bth.psn(), 102u);
  EXPECT_EQ(qp->counters().local_invalidates, 1u);
  deliver(ack(102));
  ASSERT_EQ(scq.wc.size(), 4u);
  for (std::uint64_t i = 0; i < 4; ++i) EXPECT_EQ(scq.wc[i].wr_id, i + 1);
}

}  // namespace
}  // namespace uroce::transport
