#include "datapath/transport/rc_qp.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "tests/datapath/transport/rc_sim_pair.h"
#include "tests/datapath/transport/rc_test_support.h"

namespace uroce::transport {
namespace {

using namespace rctest;
using namespace qp_attr;

struct Qp : RcFixture {};

TEST_F(Qp, Modify_FollowsTransitionTableAndChecksValues) {
  RcQp q(cfg, mrs);
  QpAttrValues a;
  a.qp_state = QpState::kRtr;
  EXPECT_EQ(q.modify(kState, a), EINVAL);  // RESET -> RTR illegal
  a.qp_state = QpState::kInit;
  EXPECT_EQ(q.modify(kState | kPkeyIndex | kPort, a), EINVAL);  // missing access
  ASSERT_EQ(q.modify(kState | kPkeyIndex | kPort | kAccessFlags, a), 0);
  EXPECT_EQ(q.state(), QpState::kInit);
  a.qp_state = QpState::kRtr;
  a.path_mtu = wire::PathMtu::k1024;
  a.max_dest_rd_atomic = 17;  // above the QP's capability
  EXPECT_EQ(q.modify(kState | kAv | kPathMtu | kDestQpn | kRqPsn | kMaxDestRdAtomic | kMinRnrTimer,
                     a),
            EINVAL);
  a.max_dest_rd_atomic = 4;
  a.min_rnr_timer = 32;
  EXPECT_EQ(q.modify(kState | kAv | kPathMtu | kDestQpn | kRqPsn | kMaxDestRdAtomic | kMinRnrTimer,
                     a),
            EINVAL);
  a.min_rnr_timer = 12;
  a.rq_psn = 0x1000000;  // 25 bits
  EXPECT_EQ(q.modify(kState | kAv | kPathMtu | kDestQpn | kRqPsn | kMaxDestRdAtomic | kMinRnrTimer,
                     a),
            EINVAL);
  a.rq_psn = 77;
  ASSERT_EQ(q.modify(kState | kAv | kPathMtu | kDestQpn | kRqPsn | kMaxDestRdAtomic | kMinRnrTimer,
                     a),
            0);
  a.qp_state = QpState::kRts;
  a.retry_cnt = 8;
  EXPECT_EQ(q.modify(kState | kSqPsn | kRetryCnt, a), EINVAL);
  a.retry_cnt = 7;
  a.sq_psn = 9;
  EXPECT_EQ(q.modify(kState | kSqPsn | kRetryCnt, a), EINVAL);  // RC needs all five
  ASSERT_EQ(q.modify(kState | kSqPsn | kRetryCnt | kTimeout | kRnrRetry | kMaxQpRdAtomic, a), 0);
  const QpAttrValues v = q.query();
  EXPECT_EQ(v.qp_state, QpState::kRts);
  EXPECT_EQ(v.sq_psn, 9u);
  EXPECT_EQ(v.rq_psn, 77u);
  EXPECT_EQ(v.min_rnr_timer, 12u);
  EXPECT_EQ(v.retry_cnt, 7u);
}

TEST_F(Qp, PostSend_RejectsBadWrsAndWrongStates) {
  RcQp q(cfg, mrs);
  EXPECT_EQ(q.post_send(send_wr(1, WrOpcode::kSend, 0, 8)), EINVAL);  // RESET
  qp = std::make_unique<RcQp>(cfg, mrs);
  make_qp();
  SendWr w = send_wr(1, WrOpcode::kSend, 0, 8);
  w.num_sge = kMaxSge + 1;
  EXPECT_EQ(qp->post_send(w), EINVAL);
  w = send_wr(1, WrOpcode::kFetchAdd, 0, 4);  // atomic result must be 8 bytes
  EXPECT_EQ(qp->post_send(w), EINVAL);
  w = send_wr(1, WrOpcode::kRdmaRead, 0, 8);
  w.flags |= send_flag::kInline;
  EXPECT_EQ(qp->post_send(w), EINVAL);
  w = send_wr(1, WrOpcode::kSend, 0, 0);
  w.flags |= send_flag::kInline;
  w.inline_len = kMaxInline + 1;
  EXPECT_EQ(qp->post_send(w), EINVAL);
}

TEST_F(Qp, PostSend_FullQueueGivesEnomem) {
  cfg.max_send_wr = 2;
  cfg.max_recv_wr = 1;
  make_qp();
  EXPECT_EQ(qp->post_send(send_wr(1, WrOpcode::kSend, 0, 8)), 0);
  EXPECT_EQ(qp->post_send(send_wr(2, WrOpcode::kSend, 0, 8)), 0);
  EXPECT_EQ(qp->post_send(send_wr(3, WrOpcode::kSend, 0, 8)), ENOMEM);
  EXPECT_EQ(qp->post_recv(recv_wr(1, 0, 8)), 0);
  EXPECT_EQ(qp->post_recv(recv_wr(2, 0, 8)), ENOMEM);
}

TEST_F(Qp, Modify_ErrFlushesBothQueuesAndResetDiscards) {
  make_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kSend, 0, 8)), 0);
  ASSERT_EQ(qp->post_recv(recv_wr(2, 0, 8)), 0);
  pump();
  QpAttrValues a;
  a.qp_state = QpState::kErr;
  ASSERT_EQ(qp->modify(kState, a), 0);
  EXPECT_EQ(qp->flush(scq, rcq), 2u);
  ASSERT_EQ(scq.wc.size(), 1u);
  EXPECT_EQ(status(scq.wc[0]), WcStatus::kWrFlushErr);
  ASSERT_EQ(rcq.wc.size(), 1u);
  EXPECT_EQ(status(rcq.wc[0]), WcStatus::kWrFlushErr);
  ASSERT_EQ(qp->post_recv(recv_wr(3, 0, 8)), 0);  // posted in ERR: flushed
  EXPECT_EQ(qp->flush(scq, rcq), 1u);
  ASSERT_EQ(qp->post_send(send_wr(4, WrOpcode::kSend, 0, 8)), 0);
  a.qp_state = QpState::kReset;
  ASSERT_EQ(qp->modify(kState, a), 0);
  EXPECT_EQ(qp->flush(scq, rcq), 0u);
  EXPECT_EQ(qp->send_queue_depth(), 0u);
}

// rxe_modify_qp replaces the create-time UDP source port once the AV is
// set: rdma_get_udp_sport(0, lqpn, rqpn), here 0xC000 | (0x11 * 0x22).
TEST_F(Qp, Modify_AvSetsRxeConnectedUdpSourcePort) {
  make_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kSend, 0, 8)), 0);
  pump();
  ASSERT_EQ(tx.size(), 1u);
  EXPECT_EQ(tx.at(0).udp.src_port(), 0xC242);
}

// An engine drives only QPs whose has_output() is true: a QP moved to ERR
// with a silent peer must still say so, or its WRs never flush.
TEST_F(Qp, HasOutput_ErrReportsPendingFlush) {
  make_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kSend, 0, 8)), 0);
  ASSERT_EQ(qp->post_recv(recv_wr(2, 0, 8)), 0);
  pump();
  QpAttrValues a;
  a.qp_state = QpState::kErr;
  ASSERT_EQ(qp->modify(kState, a), 0);
  EXPECT_TRUE(qp->has_output());
  pump();
  ASSERT_EQ(scq.wc.size(), 1u);
  EXPECT_EQ(status(scq.wc[0]), WcStatus::kWrFlushErr);
  ASSERT_EQ(rcq.wc.size(), 1u);
  EXPECT_FALSE(qp->has_output());
  ASSERT_EQ(qp->post_send(send_wr(3, WrOpcode::kSend, 0, 8)), 0);  // in ERR
  EXPECT_TRUE(qp->has_output());
  pump();
  ASSERT_EQ(scq.wc.size(), 2u);
  EXPECT_EQ(scq.wc[1].wr_id, 3u);
  ASSERT_EQ(qp->post_recv(recv_wr(4, 0, 8)), 0);
  EXPECT_TRUE(qp->has_output());
  pump();
  EXPECT_EQ(rcq.wc.size(), 2u);
  EXPECT_FALSE(qp->has_output());
}

// SQD: started WQEs finish, so their retransmissions are output; WQEs not
// started yet are not.
TEST_F(Qp, HasOutput_SqdReportsRetransmissionsOnly) {
  make_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kSend, 0, 3000)), 0);
  EXPECT_EQ(pump(), 3u);
  QpAttrValues a;
  a.qp_state = QpState::kSqd;
  ASSERT_EQ(qp->modify(kState, a), 0);
  ASSERT_EQ(qp->post_send(send_wr(2, WrOpcode::kSend, 0, 8)), 0);
  EXPECT_FALSE(qp->has_output());  // WR 2 may not start in SQD
  const TimeNs rto = qp->timer_deadline();
  ASSERT_NE(rto, 0);
  qp->on_timer(rto, io);  // all three packets were lost
  EXPECT_TRUE(qp->has_output());
  tx.clear();
  EXPECT_EQ(pump(rto), 3u);
  EXPECT_EQ(tx.at(0).bth.psn(), 100u);
  EXPECT_FALSE(qp->has_output());
  deliver(ack(102), rto + 1000);
  ASSERT_EQ(scq.wc.size(), 1u);
  EXPECT_EQ(scq.wc[0].wr_id, 1u);
  EXPECT_FALSE(qp->has_output());
}

// A QP whose next packet needs a new PSN while the window is full has no
// output: only an ACK (or a timeout) can unblock it, and a pump in between
// would send nothing.
TEST_F(Qp, HasOutput_FullWindowIsFalseUntilAck) {
  cfg.tuning.window_psns = 4;
  make_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kSend, 0, 3000)), 0);  // PSNs 100-102
  ASSERT_EQ(qp->post_send(send_wr(2, WrOpcode::kSend, 0, 8)), 0);     // PSN 103
  ASSERT_EQ(qp->post_send(send_wr(3, WrOpcode::kSend, 0, 8)), 0);
  EXPECT_EQ(pump(), 4u);
  EXPECT_FALSE(qp->has_output());
  EXPECT_EQ(pump(), 0u);  // what has_output() promised
  deliver(ack(102), 1000);
  ASSERT_EQ(scq.wc.size(), 1u);
  EXPECT_TRUE(qp->has_output());
  tx.clear();
  EXPECT_EQ(pump(), 1u);
  EXPECT_EQ(tx.at(0).bth.psn(), 104u);
  EXPECT_FALSE(qp->has_output());
}

// End to end over the simulated link ------------------------------------

port::SimLinkConfig link_cfg(double loss, double reorder, double dup, std::uint64_t seed) {
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

// A writes 1 MiB into B, reads it back into another place, and sends 20
// messages of assorted sizes; everything must arrive intact and complete
// in order with IBV_WC_SUCCESS.
void run_mixed(double loss, double reorder, double dup, std::uint64_t seed, wire::PathMtu mtu) {
  constexpr std::size_t kMiB = 1 << 20;
  ConnectParams cp;
  cp.mtu = mtu;
  cp.sq_psn = 0xFFFF00;  // wraps during the run
  cp.rq_psn = 0xFFFFF0;
  cp.timeout = 8;  // ~1 ms
  cp.retry_cnt = 7;
  cp.rnr_retry = 7;
  SimPair pair(link_cfg(loss, reorder, dup, seed), 4 * kMiB, cp);
  SimSide& a = pair.a();
  SimSide& b = pair.b();
  for (std::size_t i = 0; i < kMiB; ++i) {
    a.mem[i] = static_cast<std::uint8_t>((i * 2654435761u) >> 13);
  }
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
  // Receives on B: 20 SENDs land at 3 MiB + 8 KiB * i.
  for (std::uint64_t i = 0; i < 20; ++i) {
    RecvWr r;
    r.wr_id = 1000 + i;
    r.num_sge = 1;
    r.sge[0] = {va + 3 * kMiB + 8192 * i, 8192, b.key};
    ASSERT_EQ(b.qp->post_recv(r), 0);
  }
  ASSERT_EQ(a.qp->post_send(wr(1, WrOpcode::kRdmaWrite, 0, kMiB, kMiB)), 0);
  SendWr rd = wr(2, WrOpcode::kRdmaRead, 2 * kMiB, kMiB, kMiB);
  rd.flags |= send_flag::kFence;  // not needed for correctness; exercises it
  ASSERT_EQ(a.qp->post_send(rd), 0);
  for (std::uint32_t i = 0; i < 20; ++i) {
    const std::uint32_t len = (i * 977) % 8193;
    ASSERT_EQ(a.qp->post_send(wr(100 + i, WrOpcode::kSend, 4096 * i, len, 0)), 0);
  }
  const bool done =
      pair.run([&] { return a.scq.wc.size() == 22 && b.rcq.wc.size() == 20; }, 60 * kNsPerSec);
  ASSERT_TRUE(done) << "send cqes " << a.scq.wc.size() << " recv cqes " << b.rcq.wc.size()
                    << " t=" << pair.clock().now() << " A.timeouts=" << a.qp->counters().timeouts
                    << " A.state=" << int(a.qp->state());
  const auto dump = [](const char* n, const RcCounters& c) {
    return ::testing::Message() << n << " timeouts=" << c.timeouts << " gbn=" << c.go_back_n
                                << " retx=" << c.tx_retransmits << " seqnak_rx=" << c.rx_seq_naks
                                << " seqnak_tx=" << c.tx_seq_naks
                                << " ooo_drop=" << c.drop_out_of_sequence
                                << " dup=" << c.rx_duplicates << " gap=" << c.drop_response_gap
                                << " dupnak=" << c.drop_duplicate_nak
                                << " stale=" << c.drop_stale_ack << " ghost=" << c.drop_ghost_ack
                                << " bad=" << c.drop_bad_response
                                << " noresource=" << c.drop_no_resource
                                << " dupunk=" << c.drop_dup_unknown
                                << " reads_replayed=" << c.reads_replayed
                                << " retry_exc=" << c.retry_exceeded;
  };
  SCOPED_TRACE(dump("A", a.qp->counters()));
  SCOPED_TRACE(dump("B", b.qp->counters()));
  const std::uint64_t ids[] = {1, 2};
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(a.scq.wc[i].wr_id, ids[i]);
    EXPECT_EQ(status(a.scq.wc[i]), WcStatus::kSuccess);
  }
  for (std::uint32_t i = 0; i < 20; ++i) {
    const Cqe& s = a.scq.wc[2 + i];
    EXPECT_EQ(s.wr_id, 100u + i);
    EXPECT_EQ(status(s), WcStatus::kSuccess);
    const Cqe& r = b.rcq.wc[i];
    const std::uint32_t len = (i * 977) % 8193;
    EXPECT_EQ(r.wr_id, 1000u + i);
    EXPECT_EQ(status(r), WcStatus::kSuccess);
    EXPECT_EQ(r.byte_len, len);
    EXPECT_EQ(std::memcmp(b.mem.data() + 3 * kMiB + 8192 * i, a.mem.data() + 4096 * i, len), 0)
        << i;
  }
  EXPECT_EQ(std::memcmp(b.mem.data() + kMiB, a.mem.data(), kMiB), 0);
  EXPECT_EQ(std::memcmp(a.mem.data() + 2 * kMiB, a.mem.data(), kMiB), 0);
  EXPECT_EQ(a.qp->state(), QpState::kRts);
  EXPECT_EQ(b.qp->state(), QpState::kRts);
  EXPECT_EQ(a.parse_errors + b.parse_errors, 0u);
}

struct SimCase {
  const char* name;
  double loss, reorder, dup;
  wire::PathMtu mtu;
};
struct RcQpSimMixed : ::testing::TestWithParam<std::tuple<SimCase, std::uint64_t>> {};

// Every seed is a different loss pattern; a failure names its seed and
// replays exactly.
TEST_P(RcQpSimMixed, OnPacket_WriteReadSendsArriveIntact) {
  const auto& [c, seed] = GetParam();
  run_mixed(c.loss, c.reorder, c.dup, seed, c.mtu);
}

INSTANTIATE_TEST_SUITE_P(
    Links, RcQpSimMixed,
    ::testing::Combine(
        ::testing::Values(SimCase{"NoLoss", 0.0, 0.0, 0.0, wire::PathMtu::k4096},
                          SimCase{"Loss1pct", 0.01, 0.0, 0.0, wire::PathMtu::k4096},
                          SimCase{"Loss10pct", 0.10, 0.0, 0.0, wire::PathMtu::k4096},
                          SimCase{"Loss10pctMtu1024", 0.10, 0.0, 0.0, wire::PathMtu::k1024},
                          SimCase{"LossReorderDup", 0.02, 0.05, 0.02, wire::PathMtu::k1024}),
        ::testing::Values(1u, 2u, 3u, 4u, 5u)),
    [](const auto& i) {
      return std::string(std::get<0>(i.param).name) + "_seed" +
             std::to_string(std::get<1>(i.param));
    });

TEST(RcQpSim, OnPacket_AtomicsUnderLossExecuteOnce) {
  ConnectParams cp;
  cp.timeout = 8;
  cp.retry_cnt = 7;
  SimPair pair(link_cfg(0.2, 0.0, 0.1, 9), 1 << 16, cp);
  SimSide& a = pair.a();
  SimSide& b = pair.b();
  constexpr int kN = 50;
  for (int i = 0; i < kN; ++i) {
    SendWr w;
    w.wr_id = i;
    w.opcode = WrOpcode::kFetchAdd;
    w.flags = send_flag::kSignaled;
    w.num_sge = 1;
    w.sge[0] = {SimSide::kVa + 8 * i, 8, a.key};
    w.remote_addr = SimSide::kVa + 4096;
    w.rkey = b.key;
    w.compare_add = 1;
    ASSERT_EQ(a.qp->post_send(w), 0);
  }
  ASSERT_TRUE(pair.run([&] { return a.scq.wc.size() == kN; }, 10 * kNsPerSec));
  std::uint64_t counter = 0;
  std::memcpy(&counter, b.mem.data() + 4096, 8);
  EXPECT_EQ(counter, static_cast<std::uint64_t>(kN));
  for (int i = 0; i < kN; ++i) {
    EXPECT_EQ(status(a.scq.wc[i]), WcStatus::kSuccess);
    std::uint64_t got = 0;
    std::memcpy(&got, a.mem.data() + 8 * i, 8);
    EXPECT_EQ(got, static_cast<std::uint64_t>(i)) << i;  // each saw its predecessor's sum
  }
}

TEST(RcQpSim, OnPacket_RnrRecoversWhenReceiveIsPostedLate) {
  ConnectParams cp;
  cp.min_rnr_timer = 1;  // 10 us
  cp.rnr_retry = 7;
  SimPair pair(link_cfg(0.0, 0.0, 0.0, 5), 1 << 16, cp);
  SimSide& a = pair.a();
  SimSide& b = pair.b();
  SendWr w;
  w.wr_id = 1;
  w.opcode = WrOpcode::kSend;
  w.flags = send_flag::kSignaled;
  w.num_sge = 1;
  w.sge[0] = {SimSide::kVa, 100, a.key};
  ASSERT_EQ(a.qp->post_send(w), 0);
  ASSERT_FALSE(pair.run([&] { return !a.scq.wc.empty(); }, 200 * kNsPerUs));
  EXPECT_GT(a.qp->counters().rx_rnr_naks, 3u);
  RecvWr r;
  r.wr_id = 2;
  r.num_sge = 1;
  r.sge[0] = {SimSide::kVa + 4096, 100, b.key};
  ASSERT_EQ(b.qp->post_recv(r), 0);
  ASSERT_TRUE(pair.run([&] { return !a.scq.wc.empty(); }, kNsPerSec));
  EXPECT_EQ(status(a.scq.wc[0]), WcStatus::kSuccess);
  ASSERT_EQ(b.rcq.wc.size(), 1u);
  EXPECT_EQ(b.rcq.wc[0].byte_len, 100u);
}

}  // namespace
}  // namespace uroce::transport
