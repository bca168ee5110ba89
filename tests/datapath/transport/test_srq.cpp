#include "datapath/transport/srq.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <memory>
#include <vector>

#include "datapath/transport/ud_qp.h"
#include "tests/datapath/transport/rc_test_support.h"
#include "tests/datapath/transport/recv_refill_support.h"

namespace uroce::transport {
namespace {

using namespace rctest;
namespace o = wire::op;

struct EventLog {
  std::vector<AsyncEvent> ev;
  void event(const AsyncEvent& e) { ev.push_back(e); }
};
static_assert(EventSink<EventLog>);

// Takes an SRQ's oldest WR into a one-slot receive queue, as a QP does
// (ensure_recv_wr), and keeps its wr_id.
struct Taker {
  bool take(Srq& s) {
    rq.clear();
    if (!s.take(rq)) return false;
    wr_id = rq.front().wr_id;
    return true;
  }
  WrQueue<QueuedRecvWr> rq{1, kMaxSge};
  std::uint64_t wr_id = 0;
};

RecvWr rwr(std::uint64_t id, std::uint32_t nsge = 1) {
  RecvWr r;
  r.wr_id = id;
  r.num_sge = nsge;
  return r;
}

// --- the queue itself --------------------------------------------------

TEST(Srq_PostRecv, TooManySgesIsEinvalAndFullIsEnomem) {
  Srq s({.srq_num = 3, .pd = 1, .max_wr = 2, .max_sge = 2});
  EXPECT_EQ(s.post_recv(rwr(1, 3)), EINVAL);
  EXPECT_EQ(s.post_recv(rwr(1)), 0);
  EXPECT_EQ(s.post_recv(rwr(2)), 0);
  EXPECT_EQ(s.post_recv(rwr(3)), ENOMEM);
  EXPECT_EQ(s.size(), 2u);
}

TEST(Srq_Take, OldestFirstAndEmptyCounted) {
  Srq s({.srq_num = 3, .pd = 1, .max_wr = 4});
  ASSERT_EQ(s.post_recv(rwr(10)), 0);
  ASSERT_EQ(s.post_recv(rwr(11)), 0);
  Taker r;
  ASSERT_TRUE(r.take(s));
  EXPECT_EQ(r.wr_id, 10u);
  ASSERT_TRUE(r.take(s));
  EXPECT_EQ(r.wr_id, 11u);
  EXPECT_FALSE(r.take(s));
  EXPECT_EQ(s.counters().taken, 2u);
  EXPECT_EQ(s.counters().empty, 1u);
}

// WRs the owner has not posted yet (the engine: still in the SRQ's ring)
// are asked for only when the SRQ is empty, once per take.
TEST(Srq_Take, EmptySrqAsksTheRefillThenTakes) {
  test::HeldRecvs<Srq> held;
  Srq s({.srq_num = 3, .pd = 1, .max_wr = 4, .refill = held.refill(2)});
  held.q = &s;
  held.wrs = {rwr(20), rwr(21)};
  Taker r;
  ASSERT_TRUE(r.take(s));
  EXPECT_EQ(r.wr_id, 20u);
  EXPECT_EQ(held.asks, 1);
  EXPECT_EQ(held.last_tag, 2u);
  ASSERT_TRUE(r.take(s));
  EXPECT_EQ(r.wr_id, 21u);
  EXPECT_EQ(held.asks, 1);
  EXPECT_FALSE(r.take(s));
  EXPECT_EQ(held.asks, 2);
  EXPECT_EQ(s.counters().taken, 2u);
  EXPECT_EQ(s.counters().empty, 1u);
}

TEST(Srq_Take, LimitFiresOnceWhenCountDropsBelowItThenDisarms) {
  Srq s({.srq_num = 9, .pd = 1, .max_wr = 8});
  for (std::uint64_t i = 0; i < 6; ++i) ASSERT_EQ(s.post_recv(rwr(i)), 0);
  ASSERT_EQ(s.modify(srq_attr::kLimit, {.srq_limit = 4}), 0);
  EXPECT_EQ(s.query().srq_limit, 4u);
  Taker r;
  ASSERT_TRUE(r.take(s));  // 5 left
  ASSERT_TRUE(r.take(s));  // 4 left: not below the limit yet
  EXPECT_TRUE(s.events().empty());
  ASSERT_TRUE(r.take(s));  // 3 left: below 4
  ASSERT_EQ(s.events().size(), 1u);
  EXPECT_EQ(s.events().at(0).type, AsyncEventType::kSrqLimitReached);
  EXPECT_EQ(s.events().at(0).element, EventElement::kSrq);
  EXPECT_EQ(s.events().at(0).id, 9u);
  EXPECT_EQ(s.query().srq_limit, 0u);  // disarmed
  ASSERT_TRUE(r.take(s));
  ASSERT_TRUE(r.take(s));
  EXPECT_EQ(s.events().size(), 1u);  // no second event until re-armed
  // Re-armed above the count: nothing at once (as rxe), the next take fires.
  ASSERT_EQ(s.modify(srq_attr::kLimit, {.srq_limit = 3}), 0);
  EXPECT_EQ(s.events().size(), 1u);
  ASSERT_TRUE(r.take(s));
  EXPECT_EQ(s.events().size(), 2u);
  EXPECT_EQ(s.counters().limit_events, 2u);
  EventLog log;
  EXPECT_EQ(s.events().drain(log), 2u);
  EXPECT_TRUE(s.events().empty());
}

TEST(Srq_Modify, BadValuesAreEinval) {
  Srq s({.srq_num = 1, .pd = 1, .max_wr = 4});
  for (std::uint64_t i = 0; i < 3; ++i) ASSERT_EQ(s.post_recv(rwr(i)), 0);
  EXPECT_EQ(s.modify(srq_attr::kLimit, {.srq_limit = 5}), EINVAL);  // > max_wr
  EXPECT_EQ(s.modify(srq_attr::kMaxWr, {.max_wr = 2}), EINVAL);     // < posted
  EXPECT_EQ(s.modify(srq_attr::kMaxWr, {.max_wr = 0}), EINVAL);
  EXPECT_EQ(s.modify(srq_attr::kMaxWr, {.max_wr = kMaxSrqWr + 1}), EINVAL);
  EXPECT_EQ(s.modify(1u << 2, {}), EINVAL);
  ASSERT_EQ(s.modify(srq_attr::kLimit, {.srq_limit = 4}), 0);
  EXPECT_EQ(s.modify(srq_attr::kMaxWr, {.max_wr = 3}), EINVAL);  // < limit
  EXPECT_EQ(s.query().max_wr, 4u);
}

TEST(Srq_Modify, ResizeKeepsPostedWrsInOrder) {
  Srq s({.srq_num = 1, .pd = 1, .max_wr = 2});
  Taker r;
  ASSERT_EQ(s.post_recv(rwr(1)), 0);
  ASSERT_EQ(s.post_recv(rwr(2)), 0);
  ASSERT_TRUE(r.take(s));  // move the head off slot 0
  ASSERT_EQ(s.post_recv(rwr(3)), 0);
  ASSERT_EQ(s.modify(srq_attr::kMaxWr, {.max_wr = 4}), 0);
  EXPECT_EQ(s.query().max_wr, 4u);
  ASSERT_EQ(s.post_recv(rwr(4)), 0);
  ASSERT_EQ(s.post_recv(rwr(5)), 0);
  EXPECT_EQ(s.post_recv(rwr(6)), ENOMEM);
  for (std::uint64_t want = 2; want <= 5; ++want) {
    ASSERT_TRUE(r.take(s));
    EXPECT_EQ(r.wr_id, want);
  }
}

// --- QPs sharing one SRQ -------------------------------------------------

// Two RC QPs (0x11, 0x33) and a UD QP (0x44), all taking receives from one
// SRQ; the fake peer sends them requests.
struct SrqQps : RcFixture {
  static constexpr std::uint32_t kQpn2 = 0x33;
  static constexpr std::uint32_t kUdQpn = 0x44;
  static constexpr std::uint32_t kQkey = 0x1234;
  std::unique_ptr<Srq> srq;
  std::unique_ptr<RcQp> qp2;
  std::unique_ptr<UdQp> ud;
  VecCq rcq2;
  VecCq scq2;
  VecCq ud_scq;
  VecCq ud_rcq;
  CaptureTx tx2;
  RcIo<CaptureTx, VecCq, VecCq, FakeTimer> io2{tx2, scq2, rcq2, timer};
  // Large enough for a full-MTU packet at the largest path MTU.
  std::vector<std::uint8_t> payload = std::vector<std::uint8_t>(4096, 0x5a);

  void make_all(std::uint32_t srq_depth = 16, RecvRefill refill = {}) {
    srq = std::make_unique<Srq>(
        SrqConfig{.srq_num = 5, .pd = kPd, .max_wr = srq_depth, .refill = refill});
    cfg.srq = srq.get();
    make_qp();
    RcQpConfig c2 = cfg;
    c2.qpn = kQpn2;
    qp2 = std::make_unique<RcQp>(c2, mrs);
    connect(*qp2, kPeerQpn, kMacB, kIpB, cp);
    UdQpConfig uc;
    uc.qpn = kUdQpn;
    uc.pd = kPd;
    uc.local = {kMacA, kIpA};
    uc.srq = srq.get();
    ud = std::make_unique<UdQp>(uc, mrs);
    QpAttrValues v;
    v.qp_state = QpState::kInit;
    v.qkey = kQkey;
    ASSERT_EQ(ud->modify(qp_attr::kState | qp_attr::kPkeyIndex | qp_attr::kPort | qp_attr::kQkey,
                         v),
              0);
    v.qp_state = QpState::kRtr;
    ASSERT_EQ(ud->modify(qp_attr::kState, v), 0);
  }
  // Receive WR `id` with a `len`-byte buffer at local offset id * 4096.
  void post_srq(std::uint64_t id, std::uint32_t len = 4096) {
    ASSERT_EQ(srq->post_recv(recv_wr(id, id * 4096, len)), 0);
  }
  PktPtr rc_send(std::uint32_t qpn, std::uint32_t psn, std::size_t len,
                 std::uint8_t op = o::kRcSendOnly) const {
    wire::PacketSpec s = peer_spec(op, psn);
    s.dest_qp = qpn;
    s.ack_req = true;
    s.payload = std::span<const std::uint8_t>(payload.data(), len);
    return build(s);
  }
  PktPtr ud_send(std::size_t len) const {
    wire::PacketSpec s = peer_spec(o::kUdSendOnly, 1);
    s.dest_qp = kUdQpn;
    s.deth = wire::DethHdr::make(kQkey, 0x99);
    s.payload = std::span<const std::uint8_t>(payload.data(), len);
    return build(s);
  }
};

TEST_F(SrqQps, Receive_TwoRcQpsAndUdQpTakeInPostingOrder) {
  make_all();
  for (std::uint64_t id = 1; id <= 4; ++id) post_srq(id);
  deliver(rc_send(kQpn, 500, 10));
  qp2->on_packet(rc_send(kQpn2, 500, 20)->p, 0, io2);
  EXPECT_EQ(ud->on_packet(ud_send(30)->p, ud_rcq), UdRx::kDelivered);
  deliver(rc_send(kQpn, 501, 40));
  ASSERT_EQ(rcq.wc.size(), 2u);
  ASSERT_EQ(rcq2.wc.size(), 1u);
  ASSERT_EQ(ud_rcq.wc.size(), 1u);
  EXPECT_EQ(rcq.wc[0].wr_id, 1u);
  EXPECT_EQ(rcq.wc[0].byte_len, 10u);
  EXPECT_EQ(rcq2.wc[0].wr_id, 2u);
  EXPECT_EQ(rcq2.wc[0].byte_len, 20u);
  EXPECT_EQ(rcq2.wc[0].qp_num, kQpn2);
  EXPECT_EQ(ud_rcq.wc[0].wr_id, 3u);
  EXPECT_EQ(ud_rcq.wc[0].byte_len, kUdGrhSize + 30);
  EXPECT_EQ(rcq.wc[1].wr_id, 4u);
  EXPECT_EQ(srq->size(), 0u);
  EXPECT_EQ(local[2 * 4096], 0x5a);
  EXPECT_EQ(local[4 * 4096 + 39], 0x5a);
}

TEST_F(SrqQps, PostRecv_QpWithSrqIsEinval) {
  make_all();
  EXPECT_EQ(qp->post_recv(recv_wr(1, 0, 64)), EINVAL);
  EXPECT_EQ(ud->post_recv(recv_wr(1, 0, 64)), EINVAL);
}

TEST_F(SrqQps, Receive_LimitEventFiresOnceAtTheTakeThatCrossesIt) {
  make_all();
  for (std::uint64_t id = 1; id <= 4; ++id) post_srq(id);
  ASSERT_EQ(srq->modify(srq_attr::kLimit, {.srq_limit = 3}), 0);
  deliver(rc_send(kQpn, 500, 8));  // 3 left
  EXPECT_TRUE(srq->events().empty());
  qp2->on_packet(rc_send(kQpn2, 500, 8)->p, 0, io2);  // 2 left: fires
  ASSERT_EQ(srq->events().size(), 1u);
  EXPECT_EQ(srq->events().at(0).type, AsyncEventType::kSrqLimitReached);
  EXPECT_EQ(srq->events().at(0).id, 5u);
  ud->on_packet(ud_send(8)->p, ud_rcq);  // 1 left: disarmed, nothing
  EXPECT_EQ(srq->events().size(), 1u);
  EXPECT_EQ(srq->query().srq_limit, 0u);
  EXPECT_FALSE(qp->has_events());
}

TEST_F(SrqQps, Receive_EmptySrqGivesRnrNakForRcAndCountedDropForUd) {
  make_all();
  deliver(rc_send(kQpn, 500, 8));
  ASSERT_EQ(tx.size(), 1u);
  EXPECT_EQ(tx.at(0).bth.opcode(), o::kRcAck);
  EXPECT_EQ(tx.at(0).aeth.syndrome(), wire::aeth_rnr_nak_syndrome(cp.min_rnr_timer));
  EXPECT_EQ(qp->counters().tx_rnr_naks, 1u);
  EXPECT_EQ(qp->state(), QpState::kRts);
  EXPECT_EQ(ud->on_packet(ud_send(8)->p, ud_rcq), UdRx::kDropNoRecvWqe);
  EXPECT_EQ(ud->counters().rx_count(UdRx::kDropNoRecvWqe), 1u);
  EXPECT_EQ(srq->counters().empty, 2u);
  // A WR posted later is taken by the retried SEND.
  post_srq(1);
  deliver(rc_send(kQpn, 500, 8));
  ASSERT_EQ(rcq.wc.size(), 1u);
  EXPECT_EQ(rcq.wc[0].wr_id, 1u);
}

TEST_F(SrqQps, Receive_EmptySrqAsksTheRefillForRcAndUd) {
  test::HeldRecvs<Srq> held;
  make_all(16, held.refill(1));
  held.q = srq.get();
  held.wrs = {recv_wr(1, 4096, 4096)};
  deliver(rc_send(kQpn, 500, 8));
  EXPECT_EQ(held.asks, 1);
  ASSERT_EQ(rcq.wc.size(), 1u);
  EXPECT_EQ(rcq.wc[0].wr_id, 1u);
  EXPECT_EQ(qp->counters().tx_rnr_naks, 0u);
  held.wrs = {recv_wr(2, 8192, 4096)};
  EXPECT_EQ(ud->on_packet(ud_send(8)->p, ud_rcq), UdRx::kDelivered);
  EXPECT_EQ(held.asks, 2);
  ASSERT_EQ(ud_rcq.wc.size(), 1u);
  EXPECT_EQ(ud_rcq.wc[0].wr_id, 2u);
  EXPECT_EQ(srq->counters().empty, 0u);
}

TEST_F(SrqQps, Receive_MultiPacketSendHoldsItsWrWhileOtherQpsTake) {
  make_all();
  post_srq(1);
  post_srq(2);
  deliver(rc_send(kQpn, 500, mtu(), o::kRcSendFirst));
  EXPECT_EQ(qp->recv_queue_depth(), 1u);  // WR 1 held by QP 0x11
  qp2->on_packet(rc_send(kQpn2, 500, 16)->p, 0, io2);
  ASSERT_EQ(rcq2.wc.size(), 1u);
  EXPECT_EQ(rcq2.wc[0].wr_id, 2u);
  deliver(rc_send(kQpn, 501, 5, o::kRcSendLast));
  ASSERT_EQ(rcq.wc.size(), 1u);
  EXPECT_EQ(rcq.wc[0].wr_id, 1u);
  EXPECT_EQ(rcq.wc[0].byte_len, mtu() + 5);
}

TEST_F(SrqQps, Modify_ErrFlushesHeldWrThenRaisesLastWqeReached) {
  make_all();
  post_srq(1);
  post_srq(2);
  deliver(rc_send(kQpn, 500, mtu(), o::kRcSendFirst));  // holds WR 1
  QpAttrValues a;
  a.qp_state = QpState::kErr;
  ASSERT_EQ(qp->modify(qp_attr::kState, a), 0);
  EXPECT_FALSE(qp->has_events());  // not before the held WR is flushed
  qp->flush(scq, rcq);
  ASSERT_EQ(rcq.wc.size(), 1u);
  EXPECT_EQ(rcq.wc[0].wr_id, 1u);
  EXPECT_EQ(status(rcq.wc[0]), WcStatus::kWrFlushErr);
  EXPECT_EQ(srq->size(), 1u);  // the SRQ's WRs belong to no QP: not flushed
  EventLog log;
  ASSERT_EQ(qp->drain_events(log), 1u);
  EXPECT_EQ(log.ev[0].type, AsyncEventType::kQpLastWqeReached);
  EXPECT_EQ(log.ev[0].element, EventElement::kQp);
  EXPECT_EQ(log.ev[0].id, kQpn);
  qp->flush(scq, rcq);  // once per entry into ERR
  EXPECT_FALSE(qp->has_events());
}

TEST_F(SrqQps, Modify_UdToErrRaisesLastWqeReached) {
  make_all();
  QpAttrValues a;
  a.qp_state = QpState::kErr;
  ASSERT_EQ(ud->modify(qp_attr::kState, a), 0);
  ud->flush(ud_scq, ud_rcq);
  EventLog log;
  ASSERT_EQ(ud->drain_events(log), 1u);
  EXPECT_EQ(log.ev[0].type, AsyncEventType::kQpLastWqeReached);
  EXPECT_EQ(log.ev[0].id, kUdQpn);
}

TEST_F(SrqQps, OnRequest_ErrorWhileHoldingWrCompletesItWithTheError) {
  make_all();
  post_srq(1, 1100);
  deliver(rc_send(kQpn, 500, mtu(), o::kRcSendFirst));
  deliver(rc_send(kQpn, 501, 300, o::kRcSendLast));  // 1024 + 300 > 1100
  EXPECT_EQ(qp->state(), QpState::kErr);
  ASSERT_EQ(rcq.wc.size(), 1u);
  EXPECT_EQ(status(rcq.wc[0]), WcStatus::kLocLenErr);
  EventLog log;
  qp->drain_events(log);
  ASSERT_EQ(log.ev.size(), 2u);
  EXPECT_EQ(log.ev[0].type, AsyncEventType::kQpReqErr);
  EXPECT_EQ(log.ev[1].type, AsyncEventType::kQpLastWqeReached);
}

}  // namespace
}  // namespace uroce::transport
