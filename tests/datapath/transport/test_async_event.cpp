#include "datapath/transport/async_event.h"

#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <vector>

#include "datapath/transport/ud_qp.h"
#include "tests/datapath/transport/rc_test_support.h"

namespace uroce::transport {
namespace {

using namespace rctest;
namespace o = wire::op;

static_assert(static_cast<int>(AsyncEventType::kCqErr) == IBV_EVENT_CQ_ERR);
static_assert(static_cast<int>(AsyncEventType::kQpFatal) == IBV_EVENT_QP_FATAL);
static_assert(static_cast<int>(AsyncEventType::kQpReqErr) == IBV_EVENT_QP_REQ_ERR);
static_assert(static_cast<int>(AsyncEventType::kQpAccessErr) == IBV_EVENT_QP_ACCESS_ERR);
static_assert(static_cast<int>(AsyncEventType::kSqDrained) == IBV_EVENT_SQ_DRAINED);
static_assert(static_cast<int>(AsyncEventType::kDeviceFatal) == IBV_EVENT_DEVICE_FATAL);
static_assert(static_cast<int>(AsyncEventType::kPortActive) == IBV_EVENT_PORT_ACTIVE);
static_assert(static_cast<int>(AsyncEventType::kSrqErr) == IBV_EVENT_SRQ_ERR);
static_assert(static_cast<int>(AsyncEventType::kSrqLimitReached) == IBV_EVENT_SRQ_LIMIT_REACHED);
static_assert(static_cast<int>(AsyncEventType::kQpLastWqeReached) == IBV_EVENT_QP_LAST_WQE_REACHED);
static_assert(static_cast<int>(AsyncEventType::kWqFatal) == IBV_EVENT_WQ_FATAL);

struct EventLog {
  std::vector<AsyncEvent> ev;
  void event(const AsyncEvent& e) { ev.push_back(e); }
};
static_assert(EventSink<EventLog>);

AsyncEvent qp_event(AsyncEventType t, std::uint32_t qpn) {
  return {t, EventElement::kQp, CqRole::kNone, qpn};
}

TEST(PendingEvents_Raise, KeepsOrderAndCountsWhatDoesNotFit) {
  PendingEvents p;
  for (std::uint32_t i = 0; i < PendingEvents::kCapacity; ++i) {
    EXPECT_TRUE(p.raise(qp_event(AsyncEventType::kQpFatal, i)));
  }
  EXPECT_FALSE(p.raise(qp_event(AsyncEventType::kQpFatal, 99)));
  EXPECT_EQ(p.lost(), 1u);
  EventLog log;
  EXPECT_EQ(p.drain(log), PendingEvents::kCapacity);
  for (std::uint32_t i = 0; i < PendingEvents::kCapacity; ++i) {
    EXPECT_EQ(log.ev[i].id, i);
  }
  EXPECT_TRUE(p.empty());
  EXPECT_TRUE(p.raise(qp_event(AsyncEventType::kQpFatal, 7)));
  EXPECT_EQ(p.size(), 1u);
}

TEST(QpEventState_Post, RefusedCompletionIsParkedWithCqErrAndQpFatalOnce) {
  QpEventState s(0x42);
  VecCq cq;
  cq.limit = 0;
  Cqe c{};
  c.wr_id = 9;
  EXPECT_FALSE(s.post(cq, c, CqRole::kRecv));
  EXPECT_TRUE(s.parked(CqRole::kRecv));
  EXPECT_FALSE(s.parked(CqRole::kSend));
  s.cq_refused(CqRole::kRecv);  // a later flush refusal: no new events
  ASSERT_EQ(s.pending().size(), 2u);
  EXPECT_EQ(s.pending().at(0).type, AsyncEventType::kCqErr);
  EXPECT_EQ(s.pending().at(0).element, EventElement::kCq);
  EXPECT_EQ(s.pending().at(0).cq, CqRole::kRecv);
  EXPECT_EQ(s.pending().at(0).id, 0x42u);
  EXPECT_EQ(s.pending().at(1).type, AsyncEventType::kQpFatal);
  EXPECT_FALSE(s.repost(cq, CqRole::kRecv));  // still full
  cq.limit = SIZE_MAX;
  EXPECT_TRUE(s.repost(cq, CqRole::kRecv));
  ASSERT_EQ(cq.wc.size(), 1u);
  EXPECT_EQ(cq.wc[0].wr_id, 9u);
  EXPECT_TRUE(s.repost(cq, CqRole::kRecv));  // nothing parked: no-op
  EXPECT_EQ(cq.wc.size(), 1u);
  EXPECT_EQ(s.cqe_parked(), 1u);
  EXPECT_EQ(s.cqe_reposted(), 1u);
  EXPECT_EQ(s.cqe_lost(), 0u);
}

TEST(QpEventState_Reset, NextErrorRaisesAgain) {
  QpEventState s(1);
  s.qp_error(AsyncEventType::kQpAccessErr);
  s.qp_error(AsyncEventType::kQpFatal);
  s.last_wqe_reached();
  s.last_wqe_reached();
  EXPECT_EQ(s.pending().size(), 2u);
  s.reset();
  s.qp_error(AsyncEventType::kQpFatal);
  s.last_wqe_reached();
  ASSERT_EQ(s.pending().size(), 4u);
  EXPECT_EQ(s.pending().at(0).type, AsyncEventType::kQpAccessErr);
  EXPECT_EQ(s.pending().at(2).type, AsyncEventType::kQpFatal);
  EXPECT_EQ(s.pending().at(3).type, AsyncEventType::kQpLastWqeReached);
}

// --- raised by the QPs ---------------------------------------------------

struct RcEvents : RcFixture {
  std::vector<std::uint8_t> payload = std::vector<std::uint8_t>(64, 0x11);
  PktPtr peer_req(std::uint8_t op, std::uint32_t psn, std::size_t len) const {
    wire::PacketSpec s = peer_spec(op, psn);
    s.ack_req = true;
    s.payload = std::span<const std::uint8_t>(payload.data(), len);
    return build(s);
  }
  std::vector<AsyncEvent> events() {
    EventLog log;
    qp->drain_events(log);
    return log.ev;
  }
};

TEST_F(RcEvents, OnAck_SendCqOverflowParksCompletionRaisesCqErrAndQpFatal) {
  make_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kSend, 0, 8)), 0);
  ASSERT_EQ(qp->post_send(send_wr(2, WrOpcode::kSend, 8, 8)), 0);
  ASSERT_EQ(qp->post_send(send_wr(3, WrOpcode::kSend, 16, 8)), 0);
  ASSERT_EQ(pump(), 3u);
  scq.limit = 1;
  deliver(ack(101));  // completes WR 1 and 2; WR 2 does not fit
  EXPECT_EQ(qp->state(), QpState::kErr);
  EXPECT_EQ(qp->counters().cq_overflow, 1u);
  ASSERT_EQ(scq.wc.size(), 1u);
  const std::vector<AsyncEvent> ev = events();
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].type, AsyncEventType::kCqErr);
  EXPECT_EQ(ev[0].element, EventElement::kCq);
  EXPECT_EQ(ev[0].cq, CqRole::kSend);
  EXPECT_EQ(ev[0].id, RcFixture::kQpn);
  EXPECT_EQ(ev[1].type, AsyncEventType::kQpFatal);
  EXPECT_EQ(ev[1].id, RcFixture::kQpn);
  // The application drains its CQ: the parked completion comes first, with
  // its success status, then the flush of WR 3.
  scq.wc.clear();
  scq.limit = SIZE_MAX;
  qp->flush(scq, rcq);
  ASSERT_EQ(scq.wc.size(), 2u);
  EXPECT_EQ(scq.wc[0].wr_id, 2u);
  EXPECT_EQ(status(scq.wc[0]), WcStatus::kSuccess);
  EXPECT_EQ(wc_op(scq.wc[0]), WcOpcode::kSend);
  EXPECT_EQ(scq.wc[1].wr_id, 3u);
  EXPECT_EQ(status(scq.wc[1]), WcStatus::kWrFlushErr);
  EXPECT_EQ(qp->event_state().cqe_parked(), 1u);
  EXPECT_EQ(qp->event_state().cqe_reposted(), 1u);
  EXPECT_FALSE(qp->has_events());
}

TEST_F(RcEvents, OnRequest_RecvCqOverflowParksCompletion) {
  make_qp();
  ASSERT_EQ(qp->post_recv(recv_wr(1, 0, 64)), 0);
  ASSERT_EQ(qp->post_recv(recv_wr(2, 64, 64)), 0);
  rcq.limit = 0;
  deliver(peer_req(o::kRcSendOnly, 500, 16));
  EXPECT_EQ(qp->state(), QpState::kErr);
  EXPECT_EQ(qp->counters().cq_overflow, 1u);
  const std::vector<AsyncEvent> ev = events();
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].type, AsyncEventType::kCqErr);
  EXPECT_EQ(ev[0].cq, CqRole::kRecv);
  EXPECT_EQ(ev[1].type, AsyncEventType::kQpFatal);
  rcq.limit = SIZE_MAX;
  qp->flush(scq, rcq);
  ASSERT_EQ(rcq.wc.size(), 2u);
  EXPECT_EQ(rcq.wc[0].wr_id, 1u);
  EXPECT_EQ(status(rcq.wc[0]), WcStatus::kSuccess);
  EXPECT_EQ(rcq.wc[0].byte_len, 16u);
  EXPECT_EQ(rcq.wc[1].wr_id, 2u);
  EXPECT_EQ(status(rcq.wc[1]), WcStatus::kWrFlushErr);
}

TEST_F(RcEvents, Flush_RefusedFlushKeepsWrQueuedAndRaisesOnce) {
  make_qp();
  ASSERT_EQ(qp->post_recv(recv_wr(1, 0, 64)), 0);
  QpAttrValues a;
  a.qp_state = QpState::kErr;
  ASSERT_EQ(qp->modify(qp_attr::kState, a), 0);
  rcq.limit = 0;
  EXPECT_EQ(qp->flush(scq, rcq), 0u);
  EXPECT_EQ(qp->flush(scq, rcq), 0u);
  EXPECT_EQ(qp->recv_queue_depth(), 1u);
  EXPECT_EQ(qp->counters().cq_overflow, 2u);
  const std::vector<AsyncEvent> ev = events();
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].type, AsyncEventType::kCqErr);
  EXPECT_EQ(ev[1].type, AsyncEventType::kQpFatal);
  rcq.limit = SIZE_MAX;
  EXPECT_EQ(qp->flush(scq, rcq), 1u);
  EXPECT_EQ(rcq.wc[0].wr_id, 1u);
  EXPECT_EQ(qp->event_state().cqe_parked(), 0u);
}

TEST_F(RcEvents, OnRequest_RemoteAccessErrorRaisesQpAccessErr) {
  make_qp();
  wire::PacketSpec s = peer_spec(o::kRcWriteOnly, 500);
  s.ack_req = true;
  s.reth = wire::RethHdr::make(kRemoteVa, 0x7777, 8);
  s.payload = std::span<const std::uint8_t>(payload.data(), 8);
  deliver(build(s));
  EXPECT_EQ(qp->state(), QpState::kErr);
  const std::vector<AsyncEvent> ev = events();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].type, AsyncEventType::kQpAccessErr);
  EXPECT_EQ(ev[0].element, EventElement::kQp);
  EXPECT_EQ(ev[0].id, RcFixture::kQpn);
}

TEST_F(RcEvents, OnRequest_InvalidRequestRaisesQpReqErr) {
  make_qp();
  deliver(peer_req(o::kRcSendMiddle, 500, 0));
  EXPECT_EQ(qp->state(), QpState::kErr);
  const std::vector<AsyncEvent> ev = events();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].type, AsyncEventType::kQpReqErr);
}

TEST_F(RcEvents, OnAck_RequesterErrorsRaiseNoEvent) {
  make_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaWrite, 0, 8)), 0);
  ASSERT_EQ(pump(), 1u);
  deliver(ack(100, wire::aeth_nak_syndrome(wire::NakCode::kRemoteAccessError)));
  EXPECT_EQ(qp->state(), QpState::kErr);
  ASSERT_EQ(scq.wc.size(), 1u);
  EXPECT_EQ(status(scq.wc[0]), WcStatus::kRemAccessErr);
  EXPECT_FALSE(qp->has_events());  // reported by the completion
}

TEST_F(RcEvents, Modify_ResetThenErrRaisesAgain) {
  make_qp();
  rcq.limit = 0;
  ASSERT_EQ(qp->post_recv(recv_wr(1, 0, 64)), 0);
  deliver(peer_req(o::kRcSendOnly, 500, 8));
  EXPECT_EQ(events().size(), 2u);
  QpAttrValues a;
  a.qp_state = QpState::kReset;
  ASSERT_EQ(qp->modify(qp_attr::kState, a), 0);
  EXPECT_EQ(qp->recv_queue_depth(), 0u);
  connect(*qp, kPeerQpn, kMacB, kIpB, cp);
  ASSERT_EQ(qp->post_recv(recv_wr(2, 0, 64)), 0);
  deliver(peer_req(o::kRcSendOnly, 500, 8));
  EXPECT_EQ(events().size(), 2u);
  EXPECT_EQ(qp->event_state().cqe_parked(), 2u);
}

// UD: the receive completion that does not fit.
TEST(UdQpEvents, OnPacket_RecvCqOverflowParksAndRaises) {
  MrTable mrs(8);
  std::vector<std::uint8_t> mem(4096);
  int err = 0;
  const std::uint32_t key = mrs.reg({1, 0x1000, mem.size(), access::kLocalWrite, mem.data()}, &err);
  UdQpConfig c;
  c.qpn = 0x55;
  c.pd = 1;
  UdQp q(c, mrs);
  QpAttrValues v;
  v.qp_state = QpState::kInit;
  v.qkey = 7;
  ASSERT_EQ(q.modify(qp_attr::kState | qp_attr::kPkeyIndex | qp_attr::kPort | qp_attr::kQkey, v),
            0);
  v.qp_state = QpState::kRtr;
  ASSERT_EQ(q.modify(qp_attr::kState, v), 0);
  for (std::uint64_t id = 1; id <= 2; ++id) {
    RecvWr r;
    r.wr_id = id;
    r.num_sge = 1;
    r.sge[0] = {0x1000 + (id - 1) * 2048, 2048, key};
    ASSERT_EQ(q.post_recv(r), 0);
  }
  wire::PacketSpec s;
  s.opcode = o::kUdSendOnly;
  s.dest_qp = 0x55;
  s.deth = wire::DethHdr::make(7, 0x66);
  PktPtr k = build(s);
  VecCq scq;
  VecCq rcq;
  rcq.limit = 0;
  EXPECT_EQ(q.on_packet(k->p, rcq), UdRx::kCqOverflow);
  EXPECT_EQ(q.state(), QpState::kErr);
  EventLog log;
  ASSERT_EQ(q.drain_events(log), 2u);
  EXPECT_EQ(log.ev[0].type, AsyncEventType::kCqErr);
  EXPECT_EQ(log.ev[0].cq, CqRole::kRecv);
  EXPECT_EQ(log.ev[0].id, 0x55u);
  EXPECT_EQ(log.ev[1].type, AsyncEventType::kQpFatal);
  rcq.limit = SIZE_MAX;
  EXPECT_EQ(q.flush(scq, rcq), 1u);  // the flushed WR 2; the parked one too
  ASSERT_EQ(rcq.wc.size(), 2u);
  EXPECT_EQ(rcq.wc[0].wr_id, 1u);
  EXPECT_EQ(status(rcq.wc[0]), WcStatus::kSuccess);
  EXPECT_EQ(rcq.wc[0].byte_len, kUdGrhSize);
  EXPECT_EQ(rcq.wc[1].wr_id, 2u);
  EXPECT_EQ(status(rcq.wc[1]), WcStatus::kWrFlushErr);
  EXPECT_FALSE(q.has_events());  // no SRQ: no LAST_WQE_REACHED
}

}  // namespace
}  // namespace uroce::transport
