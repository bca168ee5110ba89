// The Vnic's doorbell phase (datapath/engine/vnic/doorbells.h) and timer
// phase: rings are taken only when their doorbell rang or the engine left
// work in them, and idle QPs cost no visit and no timer scan. And the RX
// path's refill: a packet that finds its QP's receive queue (or SRQ) empty
// takes the WQEs already published to the ring, so a receive posted before
// the packet arrived is found whether or not a doorbell phase ran between
// the two (here its doorbell never rings, so only the RX path can take it).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "tests/datapath/engine/vnic_test_support.h"

namespace uroce::engine::test {
namespace {

struct Doorbells : TwoHosts, RcQpPair {
  // The connect's modifies queue one visit of each QP's rings; the first
  // iteration makes it.
  void SetUp() override {
    open(a, b);
    run(1);
  }
  // Writes one SEND WQE into A's SQ and publishes it without its doorbell.
  void publish_silently(std::uint64_t wr_id) {
    ASSERT_EQ(shm::write_send_fixed(aqp->sq_slot(), send_wqe(wr_id)), shm::WqeWriteError::kOk);
    const shm::WqeSge s = a.sge(0, 64);
    ASSERT_EQ(shm::set_send_sges(aqp->sq_slot(), std::span<const shm::WqeSge>(&s, 1),
                                 ProvQp::kMaxSge),
              shm::WqeWriteError::kOk);
    aqp->sqp.publish();
  }
};

TEST_F(Doorbells, Phase_WqeIsTakenOnlyOnceItsDoorbellRang) {
  bqp->post_recv(1, {b.sge(0, 64)});
  publish_silently(7);
  run(20);
  EXPECT_EQ(a.vnic.counters().sq_wqes, 0u);
  EXPECT_TRUE(ascq->poll().empty());
  aqp->bells->ring(aqp->sq_db);
  run(20);
  EXPECT_EQ(a.vnic.counters().sq_wqes, 1u);
  const auto s = ascq->poll();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].wr_id, 7u);
}

TEST_F(Doorbells, Phase_AnotherClientsDoorbellIsCountedAndIgnored) {
  // A second client (id 8) with its own page rings the doorbell of a QP of
  // client 7: the engine counts it and does not visit the ring.
  shm::SharedRegion page;
  const shm::DoorbellGeometry& g = a.vnic.doorbell_geometry();
  ASSERT_TRUE(shm::SharedRegion::create("other-client", g.bytes(), &page).ok());
  ASSERT_EQ(a.vnic.open_client(8, page.data(), page.size()), 0);
  EXPECT_EQ(a.vnic.open_client(8, page.data(), page.size()), EEXIST);
  shm::DoorbellRinger other;
  ASSERT_EQ(other.attach(page.data(), page.size(), g), shm::DoorbellError::kOk);
  bqp->post_recv(1, {b.sge(0, 64)});
  publish_silently(9);
  other.ring(aqp->sq_db);
  run(10);
  EXPECT_EQ(a.vnic.counters().doorbell_foreign, 1u);
  EXPECT_EQ(a.vnic.counters().sq_wqes, 0u);
  EXPECT_EQ(a.vnic.close_client(8), 0);
  EXPECT_EQ(a.vnic.close_client(8), ENOENT);
}

TEST_F(Doorbells, Phase_WqePostedBeforeRtsIsTakenAfterTheModify) {
  // A fresh pair in INIT: the SQ WQE waits in its ring (rung) until RTS.
  auto aq = a.make_qp(20, QpType::kRc, 1, 2);
  auto bq = b.make_qp(20, QpType::kRc, 1, 2);
  namespace qa = transport::qp_attr;
  transport::QpAttrValues v;
  v.qp_state = QpState::kInit;
  v.qp_access_flags = transport::access::kRemoteAny;
  ASSERT_EQ(a.modify(20, qa::kState | qa::kPkeyIndex | qa::kPort | qa::kAccessFlags, v), 0);
  aq->post_send(send_wqe(3), {a.sge(0, 64)});
  run(10);
  EXPECT_EQ(a.vnic.counters().sq_wqes, 0u);
  ASSERT_EQ(a.modify(20, qa::kState,
                     [] {
                       transport::QpAttrValues r;
                       r.qp_state = QpState::kReset;
                       return r;
                     }()),
            0);
  // Back from RESET (whose WQEs stay in the ring, as rxe leaves them), then
  // all the way up: the modify to RTS makes the engine look again.
  b.connect(20, QpType::kRc, aq->qpn, kMacA, kIpA, 1, 1);
  a.connect(20, QpType::kRc, bq->qpn, kMacB, kIpB, 1, 1);
  bq->post_recv(4, {b.sge(0, 64)});
  run(30);
  EXPECT_EQ(a.vnic.counters().sq_wqes, 1u);
  const auto s = ascq->poll();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].wr_id, 3u);
}

TEST_F(Doorbells, Phase_IdleQpsCostNoVisitAndNoTimerScan) {
  // Twelve more connected RC QPs on A that never post.
  std::vector<std::unique_ptr<ProvQp>> idle;
  for (ObjId id = 30; id < 42; ++id) {
    idle.push_back(a.make_qp(id, QpType::kRc, 1, 2));
    a.connect(id, QpType::kRc, bqp->qpn, kMacB, kIpB, 1, 1);
  }
  run(5);
  const VnicCounters before = a.vnic.counters();
  run(200);
  EXPECT_EQ(a.vnic.counters().ring_visits, before.ring_visits);
  EXPECT_EQ(a.vnic.counters().timer_scans, before.timer_scans);
  // One message on the active pair visits its rings, not the idle ones':
  // one visit for the doorbell, none for the twelve.
  bqp->post_recv(1, {b.sge(0, 64)});
  aqp->post_send(send_wqe(5), {a.sge(0, 64)});
  run(40);
  EXPECT_EQ(a.vnic.counters().ring_visits, before.ring_visits + 1);
  ASSERT_EQ(ascq->poll().size(), 1u);
}

// Publishes a receive WQE to `q`'s RQ ring without ringing its doorbell.
void post_recv_silently(ProvQp& q, std::uint64_t wr_id, shm::WqeSge sge) {
  shm::DoorbellRinger* bells = q.bells;
  q.bells = nullptr;
  q.post_recv(wr_id, {sge});
  q.bells = bells;
}

// A connected pair of `type` (id 20, CQ 3 on both sides): A SENDs 64 bytes
// to a receive B published without a doorbell; it must arrive, with no RNR
// NAK (RC) and no drop (UC).
void connected_send_finds_silent_recv(TwoHosts& t, QpType type) {
  Host& a = t.a;
  Host& b = t.b;
  auto acq = a.make_cq(3);
  auto bcq = b.make_cq(3);
  auto aq = a.make_qp(20, type, 3, 3);
  auto bq = b.make_qp(20, type, 3, 3);
  a.connect(20, type, bq->qpn, kMacB, kIpB, 1, 1);
  b.connect(20, type, aq->qpn, kMacA, kIpA, 1, 1);
  t.run(2);
  std::memset(a.mem.data(), 0x6b, 64);
  post_recv_silently(*bq, 11, b.sge(4096, 64));
  aq->post_send(send_wqe(12), {a.sge(0, 64)});
  t.run(20);
  const auto s = acq->poll();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(st(s[0]), WcStatus::kSuccess);
  const auto r = bcq->poll();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].wr_id, 11u);
  EXPECT_EQ(st(r[0]), WcStatus::kSuccess);
  EXPECT_EQ(r[0].byte_len, 64u);
  EXPECT_EQ(std::memcmp(b.mem.data() + 4096, a.mem.data(), 64), 0);
  EXPECT_EQ(b.vnic.counters().rx_recv_refills, 1u);
  EXPECT_EQ(b.vnic.counters().rq_wqes, 1u);
  const QpStatus q = status_of(b.vnic, 20);
  EXPECT_EQ(q.rc.tx_rnr_naks, 0u);
  EXPECT_EQ(q.uc.rx_count(transport::UcRx::kDropNoRecvWqe), 0u);
}

TEST_F(TwoHosts, RxRefill_RcSendFindsAReceiveWhoseDoorbellNeverRang) {
  connected_send_finds_silent_recv(*this, QpType::kRc);
}

TEST_F(TwoHosts, RxRefill_UcSendFindsAReceiveWhoseDoorbellNeverRang) {
  connected_send_finds_silent_recv(*this, QpType::kUc);
}

TEST_F(TwoHosts, RxRefill_UdSendFindsAReceiveWhoseDoorbellNeverRang) {
  constexpr std::uint32_t kQkey = 0x11111111;
  auto acq = a.make_cq(1);
  auto bcq = b.make_cq(1);
  auto aq = a.make_qp(20, QpType::kUd, 1, 1);
  auto bq = b.make_qp(20, QpType::kUd, 1, 1);
  a.ud_up(20, kQkey);
  b.ud_up(20, kQkey);
  AhCreate h;
  h.id = 5;
  h.client = Host::kClient;
  h.pd = Host::kPd;
  h.dmac = kMacB;
  h.dip = kIpB;
  ASSERT_EQ(a.vnic.create_ah(h), 0);
  run(2);
  post_recv_silently(*bq, 3, b.sge(0, 40 + 256));
  shm::SendWqeFields f = wqe(4, IBV_WR_SEND);
  f.remote_qpn = bq->qpn;
  f.remote_qkey = kQkey;
  f.ah_num = 5;
  aq->post_send(f, {a.sge(0, 256)});
  run(10);
  ASSERT_EQ(acq->poll().size(), 1u);
  const auto r = bcq->poll();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].wr_id, 3u);
  EXPECT_EQ(st(r[0]), WcStatus::kSuccess);
  EXPECT_EQ(r[0].byte_len, 40u + 256u);
  EXPECT_EQ(b.vnic.counters().rx_recv_refills, 1u);
  EXPECT_EQ(status_of(b.vnic, 20).ud.rx_count(transport::UdRx::kDropNoRecvWqe), 0u);
}

TEST_F(TwoHosts, RxRefill_SrqSendFindsAReceiveWhoseDoorbellNeverRang) {
  auto acq = a.make_cq(1);
  auto bcq = b.make_cq(1);
  ProvSrq srq(40, 15);  // never bound: its posts ring no doorbell
  SrqCreate sc;
  sc.id = 40;
  sc.srq_num = 3;
  sc.pd = Host::kPd;
  sc.max_wr = 15;
  sc.max_sge = ProvQp::kMaxSge;
  sc.ring = srq.ring.mem();
  sc.async_fd = b.async.wr;
  sc.client = Host::kClient;
  ASSERT_EQ(b.vnic.create_srq(sc), 0);
  auto aq = a.make_qp(10, QpType::kRc, 1, 1);
  auto bq = b.make_qp(10, QpType::kRc, 1, 1, 40);
  a.connect(10, QpType::kRc, bq->qpn, kMacB, kIpB, 1, 1);
  b.connect(10, QpType::kRc, aq->qpn, kMacA, kIpA, 1, 1);
  run(3);  // the SRQ's first visit (at creation) found its ring empty
  srq.post_recv(100, {b.sge(0, 256)});
  srq.post_recv(101, {b.sge(256, 256)});
  aq->post_send(send_wqe(1), {a.sge(0, 100)});
  aq->post_send(send_wqe(2), {a.sge(0, 100)});
  run(40);
  const auto s = acq->poll();
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(st(s[0]), WcStatus::kSuccess);
  EXPECT_EQ(st(s[1]), WcStatus::kSuccess);
  const auto r = bcq->poll();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].wr_id, 100u);
  EXPECT_EQ(r[1].wr_id, 101u);
  // Both came with the first SEND's refill.
  EXPECT_EQ(b.vnic.counters().rx_recv_refills, 2u);
  EXPECT_EQ(b.vnic.counters().srq_wqes, 2u);
  EXPECT_EQ(status_of(b.vnic, 10).rc.tx_rnr_naks, 0u);
}

// A WQE the RX path cannot take (here one naming more SGEs than the QP
// has) stays in the ring: the doorbell phase completes it in error and
// moves the QP to ERR, as when its doorbell rings; the packet got RNR.
TEST_F(Doorbells, RxRefill_BadWqeIsLeftToTheDoorbellPhase) {
  ASSERT_EQ(shm::write_recv_wqe({bqp->rqp.slot_bytes(), bqp->rqp.elem_size()}, 21,
                                std::vector<shm::WqeSge>{b.sge(0, 64)}, ProvQp::kMaxSge),
            shm::WqeWriteError::kOk);
  bqp->rqp.slot()->dma.num_sge = ProvQp::kMaxSge + 1;
  bqp->rqp.publish();
  aqp->post_send(send_wqe(22), {a.sge(0, 64)});
  run(20);
  EXPECT_EQ(b.vnic.counters().rx_recv_refills, 0u);
  const auto r = brcq->poll();
  ASSERT_GE(r.size(), 1u);
  EXPECT_EQ(r[0].wr_id, 21u);
  EXPECT_NE(st(r[0]), WcStatus::kSuccess);
  EXPECT_EQ(status_of(b.vnic, 10).state, QpState::kErr);
  EXPECT_GE(status_of(b.vnic, 10).rc.tx_rnr_naks, 1u);
}

}  // namespace
}  // namespace uroce::engine::test
