#include "datapath/transport/rc_completer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tests/datapath/transport/rc_test_support.h"

namespace uroce::transport {
namespace {

using namespace rctest;
namespace o = wire::op;

struct Completer : RcFixture {
  // Posts n single-packet SENDs (ids 1..n) and transmits them: PSNs 100...
  void sends(int n, bool signaled = true) {
    for (int i = 1; i <= n; ++i) {
      ASSERT_EQ(qp->post_send(send_wr(i, WrOpcode::kSend, 0, 8, signaled)), 0);
    }
    ASSERT_EQ(pump(), static_cast<std::uint32_t>(n));
  }
  PktPtr nak(std::uint32_t psn, wire::NakCode code) const {
    return ack(psn, wire::aeth_nak_syndrome(code));
  }
  PktPtr read_resp(std::uint8_t op, std::uint32_t psn, std::size_t off, std::size_t len) const {
    wire::PacketSpec s = peer_spec(op, psn);
    if (op != o::kRcReadResponseMiddle) {
      s.aeth = wire::AethHdr::make(wire::aeth_ack_syndrome(), 1);
    }
    s.payload = std::span<const std::uint8_t>(remote.data() + off, len);
    return build(s);
  }
  std::vector<std::uint32_t> psns_from(std::size_t i) const {
    std::vector<std::uint32_t> v;
    for (; i < tx.size(); ++i) v.push_back(tx.at(i).bth.psn());
    return v;
  }
};

TEST_F(Completer, OnAck_CoalescedAckCompletesAllInOrder) {
  make_qp();
  sends(3);
  deliver(ack(102));
  ASSERT_EQ(scq.wc.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(scq.wc[i].wr_id, static_cast<std::uint64_t>(i + 1));
    EXPECT_EQ(status(scq.wc[i]), WcStatus::kSuccess);
    EXPECT_EQ(wc_op(scq.wc[i]), WcOpcode::kSend);
    EXPECT_EQ(scq.wc[i].qp_num, kQpn);
  }
  EXPECT_TRUE(qp->send_idle());
  EXPECT_EQ(qp->timer_deadline(), 0u);
}

TEST_F(Completer, OnAck_UnsignalledRetireSilentlyInOrder) {
  make_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kSend, 0, 8, false)), 0);
  ASSERT_EQ(qp->post_send(send_wr(2, WrOpcode::kSend, 0, 8, true)), 0);
  ASSERT_EQ(qp->post_send(send_wr(3, WrOpcode::kSend, 0, 8, false)), 0);
  pump();
  deliver(ack(102));
  ASSERT_EQ(scq.wc.size(), 1u);
  EXPECT_EQ(scq.wc[0].wr_id, 2u);
  EXPECT_EQ(qp->send_queue_depth(), 0u);
}

TEST_F(Completer, OnAck_SqSigAllSignalsEverything) {
  cfg.sq_sig_all = true;
  make_qp();
  sends(2, false);
  deliver(ack(101));
  EXPECT_EQ(scq.wc.size(), 2u);
}

TEST_F(Completer, OnAck_PartialAckKeepsWqeAndMovesWindow) {
  make_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaWrite, 0, 3 * 1024)), 0);
  pump();
  deliver(ack(101));
  EXPECT_TRUE(scq.wc.empty());
  EXPECT_EQ(qp->unacked_psn(), Psn(102));
  deliver(ack(102));
  ASSERT_EQ(scq.wc.size(), 1u);
  EXPECT_EQ(wc_op(scq.wc[0]), WcOpcode::kRdmaWrite);
  EXPECT_EQ(scq.wc[0].byte_len, 3u * 1024);
}

TEST_F(Completer, OnAck_StaleAndGhostAcksAreDroppedAndCounted) {
  make_qp();
  sends(2);
  deliver(ack(100));
  deliver(ack(50));   // long before
  deliver(ack(200));  // never sent
  EXPECT_EQ(scq.wc.size(), 1u);
  EXPECT_EQ(qp->counters().drop_stale_ack, 1u);
  EXPECT_EQ(qp->counters().drop_ghost_ack, 1u);
}

TEST_F(Completer, OnTimer_RetransmitsFromOldestUnacked) {
  make_qp();
  sends(3);
  deliver(ack(100), 1000);
  const TimeNs rto = 4096ull << cp.timeout;
  EXPECT_EQ(timer.at[kQpn], 1000 + rto);
  tx.clear();
  qp->on_timer(1000 + rto - 1, io);  // early: nothing
  EXPECT_EQ(pump(1000 + rto - 1), 0u);
  qp->on_timer(1000 + rto, io);
  EXPECT_EQ(pump(1000 + rto), 2u);
  EXPECT_EQ(psns_from(0), (std::vector<std::uint32_t>{101, 102}));
  EXPECT_EQ(qp->counters().timeouts, 1u);
  EXPECT_EQ(qp->counters().tx_retransmits, 2u);
  deliver(ack(102), 1000 + rto + 10);
  EXPECT_EQ(scq.wc.size(), 3u);
}

TEST_F(Completer, OnTimer_RetryExhaustedGivesRetryExcErrAndFlush) {
  cp.retry_cnt = 2;
  make_qp();
  sends(2);
  TimeNs now = 0;
  const TimeNs rto = 4096ull << cp.timeout;
  for (int i = 0; i < 2; ++i) {
    now += rto;
    qp->on_timer(now, io);
    EXPECT_EQ(pump(now), 2u);
    EXPECT_EQ(qp->state(), QpState::kRts);
  }
  now += rto;
  qp->on_timer(now, io);
  EXPECT_EQ(qp->state(), QpState::kErr);
  ASSERT_EQ(scq.wc.size(), 2u);
  EXPECT_EQ(status(scq.wc[0]), WcStatus::kRetryExcErr);
  EXPECT_EQ(status(scq.wc[1]), WcStatus::kWrFlushErr);
  EXPECT_EQ(qp->counters().retry_exceeded, 1u);
  // Later WRs flush too.
  ASSERT_EQ(qp->post_send(send_wr(9, WrOpcode::kSend, 0, 8)), 0);
  pump(now);
  ASSERT_EQ(scq.wc.size(), 3u);
  EXPECT_EQ(status(scq.wc[2]), WcStatus::kWrFlushErr);
  EXPECT_EQ(scq.wc[2].wr_id, 9u);
}

TEST_F(Completer, OnTimer_ProgressRestoresRetryCount) {
  cp.retry_cnt = 1;
  make_qp();
  sends(2);
  const TimeNs rto = 4096ull << cp.timeout;
  qp->on_timer(rto, io);
  pump(rto);
  deliver(ack(100), rto + 1);  // progress
  qp->on_timer(3 * rto, io);
  EXPECT_EQ(qp->state(), QpState::kRts);
  EXPECT_EQ(qp->counters().timeouts, 2u);
}

TEST_F(Completer, OnAck_NakSequenceErrorGoesBackN) {
  make_qp();
  sends(4);
  tx.clear();
  deliver(nak(102, wire::NakCode::kPsnSeqError));
  ASSERT_EQ(scq.wc.size(), 2u);  // 100 and 101 implicitly acknowledged
  EXPECT_EQ(pump(), 2u);
  EXPECT_EQ(psns_from(0), (std::vector<std::uint32_t>{102, 103}));
  EXPECT_EQ(qp->counters().rx_seq_naks, 1u);
  EXPECT_EQ(qp->counters().go_back_n, 1u);
  // A duplicate of the NAK does not rewind a second time.
  deliver(nak(102, wire::NakCode::kPsnSeqError));
  EXPECT_EQ(pump(), 0u);
  EXPECT_EQ(qp->counters().drop_duplicate_nak, 1u);
}

TEST_F(Completer, OnAck_GoBackNIntoMiddleOfMessage) {
  make_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaWrite, 0, 4 * 1024)), 0);
  pump();
  tx.clear();
  deliver(nak(102, wire::NakCode::kPsnSeqError));
  EXPECT_EQ(pump(), 2u);
  EXPECT_EQ(tx.at(0).bth.opcode(), o::kRcWriteMiddle);
  EXPECT_EQ(tx.at(0).bth.psn(), 102u);
  EXPECT_EQ(std::memcmp(tx.at(0).payload.data(), local.data() + 2048, 1024), 0);
  EXPECT_EQ(tx.at(1).bth.opcode(), o::kRcWriteLast);
}

TEST_F(Completer, OnAck_RnrNakWaitsTimerThenRetries) {
  make_qp();
  sends(2);
  tx.clear();
  deliver(ack(101, wire::aeth_rnr_nak_syndrome(14)), 5000);  // 1.28 ms
  EXPECT_EQ(qp->counters().rx_rnr_naks, 1u);
  ASSERT_EQ(scq.wc.size(), 1u);  // PSN 100 implicitly acknowledged
  EXPECT_EQ(timer.at[kQpn], 5000 + 1'280'000u);
  EXPECT_EQ(pump(6000), 0u);
  qp->on_timer(5000 + 1'280'000, io);
  EXPECT_EQ(pump(5000 + 1'280'000), 1u);
  EXPECT_EQ(tx.at(0).bth.psn(), 101u);
}

TEST_F(Completer, OnAck_RnrRetryExhaustedGivesRnrRetryExcErr) {
  cp.rnr_retry = 1;
  make_qp();
  sends(1);
  deliver(ack(100, wire::aeth_rnr_nak_syndrome(1)), 0);
  qp->on_timer(10'000, io);
  EXPECT_EQ(pump(10'000), 1u);
  deliver(ack(100, wire::aeth_rnr_nak_syndrome(1)), 10'001);
  EXPECT_EQ(qp->state(), QpState::kErr);
  ASSERT_EQ(scq.wc.size(), 1u);
  EXPECT_EQ(status(scq.wc[0]), WcStatus::kRnrRetryExcErr);
  EXPECT_EQ(qp->counters().rnr_retry_exceeded, 1u);
}

TEST_F(Completer, OnAck_RnrRetrySevenRetriesForever) {
  cp.rnr_retry = 7;
  make_qp();
  sends(1);
  TimeNs now = 0;
  for (int i = 0; i < 50; ++i) {
    deliver(ack(100, wire::aeth_rnr_nak_syndrome(1)), now);
    now += 10'000;
    qp->on_timer(now, io);
    ASSERT_EQ(pump(now), 1u) << i;
  }
  EXPECT_EQ(qp->state(), QpState::kRts);
  deliver(ack(100), now);
  ASSERT_EQ(scq.wc.size(), 1u);
  EXPECT_EQ(status(scq.wc[0]), WcStatus::kSuccess);
}

struct ErrorNak : Completer, ::testing::WithParamInterface<std::pair<wire::NakCode, WcStatus>> {};

TEST_P(ErrorNak, OnAck_ErrorNakFailsWqeMovesToErrAndFlushes) {
  make_qp();
  sends(3);
  ASSERT_EQ(qp->post_send(send_wr(4, WrOpcode::kSend, 0, 8)), 0);  // not sent
  deliver(nak(101, GetParam().first));
  EXPECT_EQ(qp->state(), QpState::kErr);
  ASSERT_EQ(scq.wc.size(), 4u);
  EXPECT_EQ(status(scq.wc[0]), WcStatus::kSuccess);  // PSN 100
  EXPECT_EQ(status(scq.wc[1]), GetParam().second);
  EXPECT_EQ(scq.wc[1].wr_id, 2u);
  EXPECT_EQ(status(scq.wc[2]), WcStatus::kWrFlushErr);
  EXPECT_EQ(status(scq.wc[3]), WcStatus::kWrFlushErr);
  EXPECT_EQ(qp->counters().rx_error_naks, 1u);
}

INSTANTIATE_TEST_SUITE_P(
    Codes, ErrorNak,
    ::testing::Values(std::pair{wire::NakCode::kRemoteAccessError, WcStatus::kRemAccessErr},
                      std::pair{wire::NakCode::kInvalidRequest, WcStatus::kRemInvReqErr},
                      std::pair{wire::NakCode::kRemoteOpError, WcStatus::kRemOpErr},
                      // RD's code and the reserved ones: REM_OP_ERR, as rxe.
                      std::pair{wire::NakCode::kInvalidRdRequest, WcStatus::kRemOpErr},
                      std::pair{static_cast<wire::NakCode>(5), WcStatus::kRemOpErr},
                      std::pair{static_cast<wire::NakCode>(0x1f), WcStatus::kRemOpErr}));

TEST_F(Completer, OnAck_ReservedNakCodeCounted) {
  make_qp();
  sends(1);
  deliver(nak(100, static_cast<wire::NakCode>(9)));
  ASSERT_EQ(scq.wc.size(), 1u);
  EXPECT_EQ(status(scq.wc[0]), WcStatus::kRemOpErr);
  EXPECT_EQ(qp->counters().rx_reserved_naks, 1u);
  EXPECT_EQ(qp->state(), QpState::kErr);
}

// A response whose position the READ cannot have fails the WQE and the QP
// (rxe's check_ack), whatever its length.
struct BadReadPosition : Completer,
                         ::testing::WithParamInterface<std::pair<std::uint8_t, std::uint32_t>> {};

TEST_P(BadReadPosition, OnReadResponse_FailsWithBadRespErr) {
  make_qp();
  const auto [op, len] = GetParam();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaRead, 0, len)), 0);
  ASSERT_EQ(qp->post_send(send_wr(2, WrOpcode::kSend, 0, 8)), 0);
  pump();
  const std::size_t n = len > 1024 ? 1024 : len;
  deliver(read_resp(op, 100, 0, n));
  EXPECT_EQ(qp->state(), QpState::kErr);
  ASSERT_EQ(scq.wc.size(), 2u);
  EXPECT_EQ(scq.wc[0].wr_id, 1u);
  EXPECT_EQ(status(scq.wc[0]), WcStatus::kBadRespErr);
  EXPECT_EQ(status(scq.wc[1]), WcStatus::kWrFlushErr);
  EXPECT_EQ(qp->counters().rx_bad_response_opcode, 1u);
  // Nothing of the response was placed.
  EXPECT_NE(std::memcmp(local.data(), remote.data(), n), 0);
}

INSTANTIATE_TEST_SUITE_P(
    Positions, BadReadPosition,
    ::testing::Values(std::pair{o::kRcReadResponseLast, 100u},     // lone LAST, one-packet READ
                      std::pair{o::kRcReadResponseMiddle, 1024u},  // lone MIDDLE, one-packet READ
                      std::pair{o::kRcReadResponseLast, 2000u},    // LAST first, two-packet READ
                      std::pair{o::kRcReadResponseMiddle, 3000u},  // MIDDLE first
                      std::pair{o::kRcReadResponseOnly, 2000u}));  // ONLY of a two-packet READ

TEST_F(Completer, OnReadResponse_ScattersAndCompletes) {
  make_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaRead, 256, 2560)), 0);
  pump();
  deliver(read_resp(o::kRcReadResponseFirst, 100, 0, 1024));
  deliver(read_resp(o::kRcReadResponseMiddle, 101, 1024, 1024));
  EXPECT_TRUE(scq.wc.empty());
  deliver(read_resp(o::kRcReadResponseLast, 102, 2048, 512));
  ASSERT_EQ(scq.wc.size(), 1u);
  EXPECT_EQ(wc_op(scq.wc[0]), WcOpcode::kRdmaRead);
  EXPECT_EQ(scq.wc[0].byte_len, 2560u);
  EXPECT_EQ(std::memcmp(local.data() + 256, remote.data(), 2560), 0);
  EXPECT_EQ(qp->rd_atomic_outstanding(), 0u);
}

TEST_F(Completer, OnReadResponse_LostResponseReRequestsFromMissingPsn) {
  make_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaRead, 0, 3000)), 0);
  pump();
  tx.clear();
  deliver(read_resp(o::kRcReadResponseFirst, 100, 0, 1024));
  deliver(read_resp(o::kRcReadResponseLast, 102, 2048, 952));  // 101 lost
  EXPECT_EQ(qp->counters().drop_response_gap, 1u);
  EXPECT_EQ(pump(), 1u);
  const auto& r = tx.at(0);
  EXPECT_EQ(r.bth.opcode(), o::kRcReadRequest);
  EXPECT_EQ(r.bth.psn(), 101u);
  EXPECT_EQ(r.reth.va(), kRemoteVa + 1024);
  EXPECT_EQ(r.reth.dma_len(), 3000u - 1024);
  // The new stream starts with FIRST at 101.
  deliver(read_resp(o::kRcReadResponseFirst, 101, 1024, 1024));
  deliver(read_resp(o::kRcReadResponseLast, 102, 2048, 952));
  ASSERT_EQ(scq.wc.size(), 1u);
  EXPECT_EQ(std::memcmp(local.data(), remote.data(), 3000), 0);
}

// Responses for a later READ while an earlier READ is unanswered are a
// gap (its response was lost), not a protocol violation: one rewind to the
// unanswered READ, counted as a gap.
TEST_F(Completer, OnReadResponse_LaterReadsResponseRewindsToUnansweredRead) {
  make_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaRead, 0, 100)), 0);
  ASSERT_EQ(qp->post_send(send_wr(2, WrOpcode::kRdmaRead, 100, 2048)), 0);
  pump();  // READ 100, READ 101..102
  tx.clear();
  deliver(read_resp(o::kRcReadResponseFirst, 101, 100, 1024));  // 100 lost
  deliver(read_resp(o::kRcReadResponseLast, 102, 1124, 1024));
  EXPECT_EQ(qp->counters().drop_response_gap, 2u);
  EXPECT_EQ(qp->counters().go_back_n, 1u);
  EXPECT_EQ(qp->counters().drop_bad_response, 0u);
  EXPECT_TRUE(scq.wc.empty());
  EXPECT_EQ(pump(), 2u);
  EXPECT_EQ(tx.at(0).bth.opcode(), o::kRcReadRequest);
  EXPECT_EQ(tx.at(0).bth.psn(), 100u);
  EXPECT_EQ(tx.at(1).bth.psn(), 101u);
}

TEST_F(Completer, OnReadResponse_ImplicitlyAcknowledgesEarlierSends) {
  make_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kSend, 0, 8)), 0);
  ASSERT_EQ(qp->post_send(send_wr(2, WrOpcode::kRdmaRead, 0, 100)), 0);
  pump();
  deliver(read_resp(o::kRcReadResponseOnly, 101, 0, 100));
  ASSERT_EQ(scq.wc.size(), 2u);
  EXPECT_EQ(wc_op(scq.wc[0]), WcOpcode::kSend);
  EXPECT_EQ(wc_op(scq.wc[1]), WcOpcode::kRdmaRead);
}

TEST_F(Completer, OnReadResponse_WrongLengthDropped) {
  make_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaRead, 0, 100)), 0);
  pump();
  deliver(read_resp(o::kRcReadResponseOnly, 100, 0, 99));
  EXPECT_TRUE(scq.wc.empty());
  EXPECT_EQ(qp->counters().drop_bad_response, 1u);
}

TEST_F(Completer, OnAck_AckCoveringUnansweredReadReRequestsIt) {
  make_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaRead, 0, 100)), 0);
  ASSERT_EQ(qp->post_send(send_wr(2, WrOpcode::kSend, 0, 8)), 0);
  pump();
  tx.clear();
  deliver(ack(101));
  EXPECT_TRUE(scq.wc.empty());
  EXPECT_EQ(pump(), 2u);
  EXPECT_EQ(tx.at(0).bth.opcode(), o::kRcReadRequest);
  EXPECT_EQ(tx.at(0).bth.psn(), 100u);
}

TEST_F(Completer, OnAck_SeqNakBeyondUnansweredReadReRequestsRead) {
  make_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaRead, 0, 2048)), 0);
  ASSERT_EQ(qp->post_send(send_wr(2, WrOpcode::kSend, 0, 8)), 0);
  ASSERT_EQ(qp->post_send(send_wr(3, WrOpcode::kSend, 0, 8)), 0);
  pump();  // READ 100..101, SENDs 102, 103
  deliver(read_resp(o::kRcReadResponseFirst, 100, 0, 1024));
  tx.clear();
  // 101 was lost; the responder then NAKs a gap after the SENDs.
  deliver(nak(103, wire::NakCode::kPsnSeqError));
  EXPECT_TRUE(scq.wc.empty());
  EXPECT_EQ(qp->unacked_psn(), Psn(101));  // not past the unanswered READ
  EXPECT_EQ(pump(), 3u);
  EXPECT_EQ(tx.at(0).bth.opcode(), o::kRcReadRequest);
  EXPECT_EQ(tx.at(0).bth.psn(), 101u);
  EXPECT_EQ(tx.at(1).bth.psn(), 102u);
}

TEST_F(Completer, OnAtomicAck_WritesOriginalValueToLocalSge) {
  make_qp();
  SendWr w = send_wr(1, WrOpcode::kFetchAdd, 64, 8);
  w.compare_add = 1;
  ASSERT_EQ(qp->post_send(w), 0);
  pump();
  wire::PacketSpec s = peer_spec(o::kRcAtomicAck, 100);
  s.aeth = wire::AethHdr::make(wire::aeth_ack_syndrome(), 1);
  s.atomic_ack_eth = wire::AtomicAckEthHdr::make(0x1122334455667788ull);
  deliver(build(s));
  ASSERT_EQ(scq.wc.size(), 1u);
  EXPECT_EQ(wc_op(scq.wc[0]), WcOpcode::kFetchAdd);
  EXPECT_EQ(scq.wc[0].byte_len, 8u);
  std::uint64_t got = 0;
  std::memcpy(&got, local.data() + 64, 8);
  EXPECT_EQ(got, 0x1122334455667788ull);
}

TEST_F(Completer, OnAck_CqOverflowCountsAndMovesToErr) {
  make_qp();
  sends(2);
  scq.limit = 1;
  deliver(ack(101));
  EXPECT_EQ(qp->state(), QpState::kErr);
  EXPECT_GE(qp->counters().cq_overflow, 1u);
}

}  // namespace
}  // namespace uroce::transport
