// The Vnic's control path (datapath/engine/vnic/objects.h): destroying a QP
// leaves the others reachable, and its QPN unreachable, also with traffic
// queued; max_mrs registrations fit; bad arguments fail with their exact
// errno; a QP's status carries its counters; an application-driven poll
// ends after an RX phase that wrote a completion.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tests/datapath/engine/vnic_test_support.h"

namespace uroce::engine::test {
namespace {

TEST_F(TwoHosts, DestroyQp_KeepsTheOtherQpsReachable) {
  auto acq = a.make_cq(1);  // A's QPs complete here
  auto bcq = b.make_cq(1);
  // B: three RC QPs; A: one QP towards the second and one towards the third.
  auto b1 = b.make_qp(11, QpType::kRc, 1, 1);
  auto b2 = b.make_qp(12, QpType::kRc, 1, 1);
  auto b3 = b.make_qp(13, QpType::kRc, 1, 1);
  auto a2 = a.make_qp(22, QpType::kRc, 1, 1);
  auto a3 = a.make_qp(23, QpType::kRc, 1, 1);
  a.connect(22, QpType::kRc, b2->qpn, kMacB, kIpB, 1, 1);
  b.connect(12, QpType::kRc, a2->qpn, kMacA, kIpA, 1, 1);
  a.connect(23, QpType::kRc, b3->qpn, kMacB, kIpB, 1, 1);
  b.connect(13, QpType::kRc, a3->qpn, kMacA, kIpA, 1, 1);
  // Destroying the first moves the last QP's bookkeeping into its place.
  ASSERT_EQ(b.vnic.destroy_qp(11), 0);
  EXPECT_EQ(b.vnic.destroy_qp(11), ENOENT);
  EXPECT_EQ(b.vnic.qp_count(), 2u);
  b3->post_recv(3, {b.sge(0, 64)});
  a3->post_send(send_wqe(30), {a.sge(0, 64)});
  run(30);
  const auto r = bcq->poll();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].wr_id, 3u);
  EXPECT_EQ(r[0].qp_num, b3->qpn);
  // And the second goes too: its QPN no longer reaches anything.
  ASSERT_EQ(b.vnic.destroy_qp(12), 0);
  const std::uint64_t no_qp = b.vnic.counters().rx_no_qp;
  a2->post_send(send_wqe(20), {a.sge(0, 64)});
  run(10);
  EXPECT_GT(b.vnic.counters().rx_no_qp, no_qp);
  std::vector<QpStatus> st;
  b.vnic.qp_status(&st);
  ASSERT_EQ(st.size(), 1u);
  EXPECT_EQ(st[0].qpn, b3->qpn);
  EXPECT_EQ(acq->poll().size(), 1u);  // the send to the third QP
}

TEST_F(TwoHosts, RegMr_DeviceMaxIsReachable) {
  // max_mrs (16) registrations, as ibv_device_attr.max_mr says; not one more.
  MrCreate m;
  m.desc = {a.kPd, 0x1000, 64, transport::access::kLocalWrite, a.mem.data()};
  int err = 0;
  while (a.vnic.mr_count() < 16) ASSERT_NE(a.vnic.reg_mr(m, &err), 0u) << a.vnic.mr_count();
  EXPECT_EQ(a.vnic.reg_mr(m, &err), 0u);
  EXPECT_EQ(err, ENOMEM);
}

TEST_F(TwoHosts, CreateErrors_ExactErrno) {
  auto cq = a.make_cq(1);
  CqCreate c;
  c.id = 1;
  c.ring = cq->ring.mem();
  EXPECT_EQ(a.vnic.create_cq(c), EEXIST);
  c.id = 0;
  EXPECT_EQ(a.vnic.create_cq(c), EINVAL);
  c.id = 2;
  c.ring.bytes = 100;  // shorter than the geometry
  EXPECT_EQ(a.vnic.create_cq(c), EINVAL);

  ProvQp p(15, true);
  QpCreate q;
  q.id = 5;
  q.type = QpType::kRc;
  q.qpn = 0x20;
  q.send_cq = 1;
  q.recv_cq = 9;  // no such CQ
  q.sq = p.sq->mem();
  q.rq = p.rq->mem();
  EXPECT_EQ(a.vnic.create_qp(q), ENOENT);
  q.recv_cq = 1;
  q.qpn = 1;
  EXPECT_EQ(a.vnic.create_qp(q), EINVAL);
  q.qpn = 0x20;
  q.rq = RingMem{};
  EXPECT_EQ(a.vnic.create_qp(q), EINVAL);  // no RQ and no SRQ
  q.rq = p.rq->mem();
  q.srq = 4;
  EXPECT_EQ(a.vnic.create_qp(q), ENOENT);
  q.srq = 0;
  ASSERT_EQ(a.vnic.create_qp(q), 0);
  q.id = 6;
  EXPECT_EQ(a.vnic.create_qp(q), EEXIST);  // same QPN slot
  EXPECT_EQ(a.vnic.destroy_cq(1), EBUSY);
  EXPECT_EQ(a.vnic.destroy_qp(6), ENOENT);
  EXPECT_EQ(a.vnic.modify_qp(6, QpModify{}), ENOENT);
  ASSERT_EQ(a.vnic.destroy_qp(5), 0);
  EXPECT_EQ(a.vnic.destroy_cq(1), 0);
  EXPECT_EQ(a.vnic.destroy_cq(1), ENOENT);
  EXPECT_EQ(a.vnic.cq_count(), 0u);
}

TEST_F(RcPair, DestroyQp_WhileTrafficQueued) {
  bqp->post_recv(1, {b.sge(0, 4096)});
  for (int i = 0; i < 20; ++i) {
    shm::SendWqeFields f = wqe(i, IBV_WR_RDMA_WRITE);
    f.remote_addr = b.va(0);
    f.rkey = b.key;
    aqp->post_send(f, {a.sge(0, 4096)});
  }
  run(2);  // frames on the wire, ACKs still to come, timers armed
  EXPECT_GT(a.vnic.counters().tx_frames, 0u);
  EXPECT_NE(a.vnic.deadline(aqp->qpn), 0u);
  const std::uint32_t qpn = aqp->qpn;
  ASSERT_EQ(a.vnic.destroy_qp(10), 0);
  EXPECT_EQ(a.vnic.deadline(qpn), 0u);
  EXPECT_EQ(a.vnic.scheduler().size(), 0u);
  aqp.reset();  // the provider unmaps the rings: nothing may touch them now
  run(200);
  clock.advance_by(100 * kNsPerMs);  // past every retransmission timeout
  run(10);
  EXPECT_GT(a.vnic.counters().rx_no_qp, 0u);  // B's ACKs find no QP
  EXPECT_EQ(a.vnic.qp_count(), 0u);
  EXPECT_TRUE(ascq->poll().empty());
  // The CQs are free again.
  EXPECT_EQ(a.vnic.destroy_cq(1), 0);
  EXPECT_EQ(a.vnic.destroy_cq(2), 0);
}

TEST_F(RcPair, QpStatus_ReportsCounters) {
  bqp->post_recv(1, {b.sge(0, 64)});
  aqp->post_send(wqe(1, IBV_WR_SEND), {a.sge(0, 8)});
  run(20);
  std::vector<QpStatus> v;
  a.vnic.qp_status(&v);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].id, 10u);
  EXPECT_EQ(v[0].qpn, aqp->qpn);
  EXPECT_EQ(v[0].type, QpType::kRc);
  EXPECT_EQ(v[0].state, QpState::kRts);
  EXPECT_EQ(v[0].client, Host::kClient);
  EXPECT_EQ(v[0].dest_qpn, bqp->qpn);
  EXPECT_EQ(v[0].engine.sq_wqes, 1u);
  EXPECT_EQ(v[0].engine.tx_packets, 1u);
  EXPECT_EQ(v[0].engine.rx_packets, 1u);  // the ACK
  EXPECT_EQ(v[0].rc.tx_requests, 1u);
  EXPECT_EQ(v[0].rc.rx_acks, 1u);
}

TEST_F(RcPair, MrDereg_UnknownKey) {
  EXPECT_EQ(a.vnic.dereg_mr(0x12345678), EINVAL);
  EXPECT_EQ(a.vnic.mr_count(), 1u);
  EXPECT_EQ(a.vnic.dereg_mr(a.key), 0);
  EXPECT_EQ(a.vnic.mr_count(), 0u);
}

// `h`'s iterations, `may_cut` on each, with `peer`'s between them, until
// `cq` (one of h's) holds a completion. Returns h's counters after the
// iteration that wrote it; `*got` holds it.
template <class H>
VnicCounters poll_until_completes(H& peer, H& h, VirtualClock& clock, ProvCq& cq, bool may_cut,
                                  std::vector<ib_uverbs_wc>* got) {
  for (int i = 0; i < 50 && got->empty(); ++i) {
    peer.vnic.poll(clock.now());
    h.vnic.poll(clock.now(), may_cut);
    clock.advance_by(500);
    *got = cq.poll();
  }
  return h.vnic.counters();
}

TEST_F(RcPair, Poll_MayCutEndsAfterTheRxPhaseThatWroteACompletion) {
  bqp->post_recv(1, {b.sge(0, 64)});
  aqp->post_send(send_wqe(2), {a.sge(0, 64)});
  std::vector<ib_uverbs_wc> got;
  const VnicCounters at = poll_until_completes(a, b, clock, *brcq, true, &got);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].wr_id, 1u);
  // Cut: the ACK this SEND is owed waits in B for B's next iteration (not a
  // kept burst: the progress thread's naps stay as they are).
  EXPECT_EQ(at.iterations_cut, 1u);
  EXPECT_FALSE(b.vnic.tx_held());
  const std::uint64_t tx_before = at.tx_frames;
  // The next iteration runs whole although it may cut: it sends the ACK.
  b.vnic.poll(clock.now(), true);
  EXPECT_EQ(b.vnic.counters().iterations_cut, 1u);
  EXPECT_EQ(b.vnic.counters().tx_frames, tx_before + 1);
  EXPECT_FALSE(b.vnic.tx_held());
  const auto sent = poll_until(a, b, clock, *ascq, 1, 50);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].wr_id, 2u);
  EXPECT_EQ(st(sent[0]), WcStatus::kSuccess);
}

TEST_F(RcPair, Poll_MayCutRunsWholeAfterASendCompletion) {
  bqp->post_recv(1, {b.sge(0, 64)});
  aqp->post_send(send_wqe(2), {a.sge(0, 64)});
  std::vector<ib_uverbs_wc> sent;
  const VnicCounters at = poll_until_completes(b, a, clock, *ascq, true, &sent);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].wr_id, 2u);
  // The ACK completed A's SEND: a streaming sender's iteration, not cut.
  EXPECT_EQ(at.cq.cqes, 1u);
  EXPECT_EQ(at.iterations_cut, 0u);
}

TEST_F(RcPair, Poll_WithoutMayCutRunsWhole) {
  bqp->post_recv(1, {b.sge(0, 64)});
  aqp->post_send(send_wqe(2), {a.sge(0, 64)});
  std::vector<ib_uverbs_wc> got;
  const VnicCounters at = poll_until_completes(a, b, clock, *brcq, false, &got);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(at.iterations_cut, 0u);
  EXPECT_FALSE(b.vnic.tx_held());
}

// TwoHosts with B's device key cut_on_completion off.
struct TwoHostsNoCut : ::testing::Test {
  static VnicConfig no_cut() {
    VnicConfig c = Host::config(kMacB, kIpB, 1500);
    c.cut_on_completion = false;
    return c;
  }
  port::SimLink link{link_1us(0, 5)};
  Host a{link, 0, kMacA, kIpA};
  Host b{link, 1, no_cut()};
  VirtualClock clock;
};

TEST_F(TwoHostsNoCut, Poll_CutOnCompletionOffRunsWhole) {
  RcQpPair p;
  p.open(a, b);
  p.bqp->post_recv(1, {b.sge(0, 64)});
  p.aqp->post_send(send_wqe(2), {a.sge(0, 64)});
  std::vector<ib_uverbs_wc> got;
  const VnicCounters at = poll_until_completes(a, b, clock, *p.brcq, true, &got);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(at.iterations_cut, 0u);
  EXPECT_FALSE(b.vnic.tx_held());
}

}  // namespace
}  // namespace uroce::engine::test
