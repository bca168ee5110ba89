// The CM state machine against itself and against hand-made MADs, on a
// fake clock: handshakes, rejects, releases, retries and timeouts, and bad,
// duplicated and out-of-order MADs.
#include "datapath/cm/machine.h"

#include <gtest/gtest.h>

#include "datapath/wire/cm_dreq.h"
#include "datapath/wire/cm_mra.h"
#include "datapath/wire/cm_rej.h"
#include "datapath/wire/cm_rep.h"
#include "datapath/wire/cm_req.h"
#include "datapath/wire/cm_sidr_rep.h"

namespace uroce::cm {
namespace {

constexpr std::uint32_t kIpA = 0x0a000001;
constexpr std::uint32_t kIpB = 0x0a000002;
constexpr std::uint16_t kPort = 7174;
// What A's REQ asks for as the Primary Local ACK Timeout (the Linux 6.1
// CM's value on RoCE), unlike our own kLocalAckTimeout.
constexpr std::uint8_t kReqAckTimeout = 19;

wire::CmAttr attr_of(const Mad& m) {
  return static_cast<wire::CmAttr>(wire::MadHdr::read(m.b.data()).attr_id());
}

// Two machines, A (active, 10.0.0.1) and B (passive, 10.0.0.2), whose MADs
// the test moves by hand so that it can lose, repeat or reorder them.
struct Pair {
  Machine a{100};
  Machine b{500};
  Output oa, ob;
  TimeNs now = 1'000;
  const Path a_to_b{0, kIpA, kIpB};
  const Path b_to_a{1, kIpB, kIpA};

  ConnId connect() {
    ConnectArgs args;
    args.path = a_to_b;
    args.src_port = 40000;
    args.dst_port = kPort;
    args.local.qpn = 0x11;
    args.local.psn = 0x1234;
    args.local.path_mtu = 5;
    args.local.responder_resources = 4;
    args.local.initiator_depth = 4;
    args.local.local_ack_timeout = kReqAckTimeout;
    args.private_data.len = 3;
    args.private_data.b = {'h', 'i', '!'};
    ConnId id = 0;
    EXPECT_EQ(a.connect(args, now, &oa, &id), 0);
    return id;
  }
  // Delivers A's MADs to B (and clears A's output), and back.
  void a_to_b_all() {
    std::vector<OutMad> m = std::move(oa.mads);
    oa.mads.clear();
    for (const OutMad& x : m) b.on_mad(b_to_a, x.mad, now, &ob);
  }
  void b_to_a_all() {
    std::vector<OutMad> m = std::move(ob.mads);
    ob.mads.clear();
    for (const OutMad& x : m) a.on_mad(a_to_b, x.mad, now, &oa);
  }
  // Full handshake; returns {A's id, B's id}.
  std::pair<ConnId, ConnId> establish() {
    const ConnId ia = connect();
    a_to_b_all();
    EXPECT_EQ(ob.events.size(), 1u);
    const ConnId ib = ob.events.at(0).conn;
    ob.events.clear();
    QpParams p;
    p.qpn = 0x22;
    p.psn = 0x5678;
    EXPECT_EQ(b.accept(ib, p, {}, now, &ob), 0);
    b_to_a_all();
    EXPECT_EQ(a.accept(ia, {}, {}, now, &oa), 0);
    a_to_b_all();
    oa.events.clear();
    ob.events.clear();
    return {ia, ib};
  }
};

TEST(Machine_Connect, HandshakeCarriesParametersAndPrivateData) {
  Pair t;
  ASSERT_EQ(t.b.listen(0, kPort, 77), 0);
  const ConnId ia = t.connect();
  ASSERT_EQ(t.oa.mads.size(), 1u);
  EXPECT_EQ(attr_of(t.oa.mads[0].mad), wire::CmAttr::kReq);
  EXPECT_EQ(t.oa.mads[0].path.remote_ip, kIpB);
  t.a_to_b_all();
  ASSERT_EQ(t.ob.events.size(), 1u);
  const Event req = t.ob.events[0];
  EXPECT_EQ(req.type, EventType::kConnectRequest);
  EXPECT_EQ(req.listener, 77u);
  EXPECT_EQ(req.remote.qpn, 0x11u);
  EXPECT_EQ(req.remote.psn, 0x1234u);
  EXPECT_EQ(req.remote.responder_resources, 4);
  EXPECT_EQ(req.remote_port, 40000);
  EXPECT_EQ(req.local_port, kPort);
  EXPECT_EQ(req.private_data.len, kReqConsumerBytes);
  EXPECT_EQ(req.private_data.b[0], 'h');
  EXPECT_EQ(req.private_data.b[2], '!');
  EXPECT_EQ(t.b.find(req.conn)->state, State::kReqRcvd);

  QpParams p;
  p.qpn = 0x22;
  p.psn = 0x5678;
  PrivateData pd;
  pd.len = 1;
  pd.b[0] = 'R';
  ASSERT_EQ(t.b.accept(req.conn, p, pd, t.now, &t.ob), 0);
  EXPECT_EQ(t.b.find(req.conn)->state, State::kRepSent);
  t.b_to_a_all();
  ASSERT_EQ(t.oa.events.size(), 1u);
  EXPECT_EQ(t.oa.events[0].type, EventType::kConnectResponse);
  EXPECT_EQ(t.oa.events[0].remote.qpn, 0x22u);
  EXPECT_EQ(t.oa.events[0].remote.psn, 0x5678u);
  EXPECT_EQ(t.oa.events[0].private_data.b[0], 'R');
  EXPECT_EQ(t.a.find(ia)->state, State::kRepRcvd);

  ASSERT_EQ(t.a.accept(ia, {}, {}, t.now, &t.oa), 0);
  EXPECT_EQ(t.a.find(ia)->state, State::kEstablished);
  t.a_to_b_all();
  ASSERT_EQ(t.ob.events.size(), 2u);
  EXPECT_EQ(t.ob.events[1].type, EventType::kEstablished);
  EXPECT_EQ(t.b.find(req.conn)->state, State::kEstablished);
  EXPECT_EQ(t.a.next_deadline(), 0u);
  EXPECT_EQ(t.b.next_deadline(), 0u);
}

TEST(QpAckTimeout, ActiveSideUsesItsOwnPassiveSideTheReqs) {
  Pair p;
  ASSERT_EQ(p.b.listen(0, kPort, 1), 0);
  const auto [ia, ib] = p.establish();
  ASSERT_NE(p.a.find(ia), nullptr);
  ASSERT_NE(p.b.find(ib), nullptr);
  EXPECT_EQ(qp_ack_timeout(*p.a.find(ia)), kLocalAckTimeout);
  EXPECT_EQ(qp_ack_timeout(*p.b.find(ib)), kReqAckTimeout);
  // 537 ms: the packet lifetime plus one, as the Linux CM derives it.
  EXPECT_EQ(cm_timeout_ns(kLocalAckTimeout), TimeNs{4096} << 17);
}

TEST(QpAckTimeout, ReqWithoutOneGivesTheDefault) {
  Conn c;
  c.active = false;
  c.remote.local_ack_timeout = 0;
  EXPECT_EQ(qp_ack_timeout(c), kLocalAckTimeout);
}

// A asks for 4 responder resources and an initiator depth of 4; B answers
// with 0 and 3. Each QP follows the newest parameters of its CM, as the
// Linux CM's cm_id does.
TEST(QpRdAtomic, FollowsTheNewestParametersOfEachSide) {
  Pair p;
  ASSERT_EQ(p.b.listen(0, kPort, 1), 0);
  const ConnId ia = p.connect();
  ASSERT_NE(p.a.find(ia), nullptr);
  EXPECT_EQ(qp_responder_resources(*p.a.find(ia)), 4);  // A's own REQ
  EXPECT_EQ(qp_initiator_depth(*p.a.find(ia)), 4);
  p.a_to_b_all();
  ASSERT_EQ(p.ob.events.size(), 1u);
  const ConnId ib = p.ob.events[0].conn;
  EXPECT_EQ(qp_responder_resources(*p.b.find(ib)), 4);  // the REQ's initiator depth
  EXPECT_EQ(qp_initiator_depth(*p.b.find(ib)), 4);      // the REQ's responder resources
  QpParams rep;
  rep.qpn = 0x22;
  rep.responder_resources = 0;
  rep.initiator_depth = 3;
  ASSERT_EQ(p.b.accept(ib, rep, {}, p.now, &p.ob), 0);
  EXPECT_EQ(qp_responder_resources(*p.b.find(ib)), 0);  // B's own REP now
  EXPECT_EQ(qp_initiator_depth(*p.b.find(ib)), 3);
  p.b_to_a_all();
  EXPECT_EQ(qp_responder_resources(*p.a.find(ia)), 3);  // the REP's initiator depth
  EXPECT_EQ(qp_initiator_depth(*p.a.find(ia)), 0);      // the REP's responder resources
  ASSERT_EQ(p.a.accept(ia, {}, {}, p.now, &p.oa), 0);
  EXPECT_EQ(qp_responder_resources(*p.a.find(ia)), 3);
  EXPECT_EQ(qp_initiator_depth(*p.a.find(ia)), 0);
}

TEST(Machine_Connect, PrivateDataOverTheReqRoomIsRefused) {
  Pair t;
  ConnectArgs args;
  args.private_data.len = kReqConsumerBytes + 1;
  ConnId id = 0;
  EXPECT_EQ(t.a.connect(args, t.now, &t.oa, &id), EINVAL);
  EXPECT_TRUE(t.oa.mads.empty());
}

TEST(Machine_Listen, SecondListenerOnTheSamePortIsRefused) {
  Machine m{1};
  EXPECT_EQ(m.listen(0, kPort, 1), 0);
  EXPECT_EQ(m.listen(0, kPort, 2), EADDRINUSE);
  EXPECT_EQ(m.listen(kIpB, kPort, 3), 0);
  EXPECT_EQ(m.unlisten(0, kPort), 0);
  EXPECT_EQ(m.unlisten(0, kPort), ENOENT);
}

TEST(Machine_OnMad, ReqForAPortNobodyListensOnIsRejectedAfterTheGrace) {
  Pair t;
  t.connect();
  t.a_to_b_all();
  // Parked: a listener may still come (kListenGraceNs).
  EXPECT_TRUE(t.ob.mads.empty());
  EXPECT_EQ(t.b.next_deadline(), t.now + kListenGraceNs);
  t.b.on_timer(t.now + kListenGraceNs - 1, &t.ob);
  EXPECT_TRUE(t.ob.mads.empty());
  t.now += kListenGraceNs;
  t.b.on_timer(t.now, &t.ob);
  EXPECT_TRUE(t.ob.events.empty());
  ASSERT_EQ(t.ob.mads.size(), 1u);
  const wire::CmRej rej = wire::CmRej::read(t.ob.mads[0].mad.data());
  EXPECT_EQ(rej.reason(), wire::kRejInvalidServiceId);
  EXPECT_EQ(rej.message_rejected(), wire::kCmMsgReq);
  EXPECT_EQ(t.b.counters().rej_no_listener, 1u);
  EXPECT_EQ(t.b.conn_count(), 0u);
  t.b_to_a_all();
  ASSERT_EQ(t.oa.events.size(), 1u);
  EXPECT_EQ(t.oa.events[0].type, EventType::kRejected);
  EXPECT_EQ(t.oa.events[0].status, wire::kRejInvalidServiceId);
}

TEST(Machine_RetryParked, ReqBeforeListenIsServedOnceTheListenerAppears) {
  Pair t;
  t.connect();
  t.a_to_b_all();
  // A retransmitted copy while parked is not parked twice.
  t.connect();
  t.b.retry_parked(t.now, &t.ob);
  EXPECT_TRUE(t.ob.events.empty());
  ASSERT_EQ(t.b.listen(0, kPort, 5), 0);
  t.now += kListenGraceNs / 2;
  t.b.retry_parked(t.now, &t.ob);
  ASSERT_EQ(t.ob.events.size(), 1u);
  EXPECT_EQ(t.ob.events[0].type, EventType::kConnectRequest);
  EXPECT_EQ(t.ob.events[0].listener, 5u);
  EXPECT_EQ(t.b.counters().rej_no_listener, 0u);
  EXPECT_EQ(t.b.next_deadline(), 0u);
}

TEST(Machine_OnMad, ExactAddressListenerWinsOverWildcard) {
  Pair t;
  ASSERT_EQ(t.b.listen(0, kPort, 1), 0);
  ASSERT_EQ(t.b.listen(kIpB, kPort, 2), 0);
  t.connect();
  t.a_to_b_all();
  ASSERT_EQ(t.ob.events.size(), 1u);
  EXPECT_EQ(t.ob.events[0].listener, 2u);
}

TEST(Machine_Reject, ConsumerRejectReachesTheActiveSide) {
  Pair t;
  ASSERT_EQ(t.b.listen(0, kPort, 1), 0);
  const ConnId ia = t.connect();
  t.a_to_b_all();
  const ConnId ib = t.ob.events.at(0).conn;
  PrivateData pd;
  pd.len = 2;
  pd.b[0] = 'n';
  ASSERT_EQ(t.b.reject(ib, pd, t.now, &t.ob), 0);
  EXPECT_EQ(t.b.reject(ib, pd, t.now, &t.ob), EINVAL);
  EXPECT_EQ(t.b.find(ib)->state, State::kClosed);
  t.b_to_a_all();
  ASSERT_EQ(t.oa.events.size(), 1u);
  EXPECT_EQ(t.oa.events[0].status, wire::kRejConsumer);
  EXPECT_EQ(t.oa.events[0].private_data.b[0], 'n');
  EXPECT_EQ(t.a.find(ia)->state, State::kClosed);
  EXPECT_EQ(t.a.next_deadline(), 0u);
}

TEST(Machine_Accept, WrongStateAndUnknownIdAreRefused) {
  Pair t;
  const ConnId ia = t.connect();
  EXPECT_EQ(t.a.accept(ia, {}, {}, t.now, &t.oa), EINVAL);
  EXPECT_EQ(t.a.accept(9999, {}, {}, t.now, &t.oa), ENOENT);
  EXPECT_EQ(t.a.disconnect(ia, {}, t.now, &t.oa), EINVAL);
}

TEST(Machine_OnTimer, PeerThatNeverAnswersIsRetriedThenGivenUp) {
  Pair t;
  ConnectArgs args;
  args.path = t.a_to_b;
  args.dst_port = kPort;
  args.max_retries = 3;
  args.response_timeout = 10;
  ConnId id = 0;
  ASSERT_EQ(t.a.connect(args, t.now, &t.oa, &id), 0);
  t.oa.clear();
  const TimeNs step = cm_timeout_ns(10) + 2 * cm_timeout_ns(kPacketLifetime);
  EXPECT_EQ(t.a.next_deadline(), t.now + step);
  // Just before the deadline nothing happens.
  t.a.on_timer(t.now + step - 1, &t.oa);
  EXPECT_TRUE(t.oa.mads.empty());
  for (int i = 1; i <= 3; ++i) {
    t.now += step;
    t.a.on_timer(t.now, &t.oa);
    ASSERT_EQ(t.oa.mads.size(), 1u) << i;
    EXPECT_EQ(attr_of(t.oa.mads[0].mad), wire::CmAttr::kReq);
    t.oa.clear();
  }
  EXPECT_EQ(t.a.counters().retransmits, 3u);
  t.now += step;
  t.a.on_timer(t.now, &t.oa);
  ASSERT_EQ(t.oa.mads.size(), 1u);
  EXPECT_EQ(wire::CmRej::read(t.oa.mads[0].mad.data()).reason(), wire::kRejTimeout);
  ASSERT_EQ(t.oa.events.size(), 1u);
  EXPECT_EQ(t.oa.events[0].type, EventType::kUnreachable);
  EXPECT_EQ(t.oa.events[0].status, ETIMEDOUT);
  EXPECT_EQ(t.a.counters().timeouts, 1u);
  EXPECT_EQ(t.a.next_deadline(), 0u);
}

TEST(Machine_OnTimer, ActiveSideVanishingAfterRepGivesConnectError) {
  Pair t;
  ASSERT_EQ(t.b.listen(0, kPort, 1), 0);
  t.connect();
  t.a_to_b_all();
  const ConnId ib = t.ob.events.at(0).conn;
  ASSERT_EQ(t.b.accept(ib, {}, {}, t.now, &t.ob), 0);
  t.ob.clear();
  const int retries = t.b.find(ib)->max_retries;
  for (int i = 0; i < retries; ++i) {
    t.now = t.b.next_deadline();
    t.b.on_timer(t.now, &t.ob);
    ASSERT_EQ(t.ob.mads.size(), 1u);
    EXPECT_EQ(attr_of(t.ob.mads[0].mad), wire::CmAttr::kRep);
    t.ob.clear();
  }
  t.now = t.b.next_deadline();
  t.b.on_timer(t.now, &t.ob);
  ASSERT_EQ(t.ob.events.size(), 1u);
  EXPECT_EQ(t.ob.events[0].type, EventType::kConnectError);
  EXPECT_EQ(t.ob.events[0].status, ETIMEDOUT);
  EXPECT_EQ(wire::CmRej::read(t.ob.mads.at(0).mad.data()).message_rejected(), wire::kCmMsgRep);
}

TEST(Machine_OnMad, DuplicateReqWhileUserDecidesGetsMraAndStretchesTheWait) {
  Pair t;
  ASSERT_EQ(t.b.listen(0, kPort, 1), 0);
  const ConnId ia = t.connect();
  const Mad req = t.oa.mads.at(0).mad;
  t.a_to_b_all();
  t.ob.events.clear();
  t.b.on_mad(t.b_to_a, req, t.now, &t.ob);
  EXPECT_TRUE(t.ob.events.empty());
  ASSERT_EQ(t.ob.mads.size(), 1u);
  EXPECT_EQ(attr_of(t.ob.mads[0].mad), wire::CmAttr::kMra);
  EXPECT_EQ(t.b.counters().duplicates, 1u);
  EXPECT_EQ(t.b.conn_count(), 1u);
  t.b_to_a_all();
  EXPECT_EQ(t.a.find(ia)->state, State::kMraRcvd);
  // B's service timeout is the REQ's remote response timeout (the default).
  EXPECT_EQ(t.a.next_deadline(),
            t.now + cm_timeout_ns(kDefaultResponseTimeout) + 2 * cm_timeout_ns(kPacketLifetime));
}

TEST(Machine_OnMad, DuplicateReqAfterRepResendsTheRep) {
  Pair t;
  ASSERT_EQ(t.b.listen(0, kPort, 1), 0);
  t.connect();
  const Mad req = t.oa.mads.at(0).mad;
  t.a_to_b_all();
  ASSERT_EQ(t.b.accept(t.ob.events.at(0).conn, {}, {}, t.now, &t.ob), 0);
  const Mad rep = t.ob.mads.at(0).mad;
  t.ob.clear();
  t.b.on_mad(t.b_to_a, req, t.now, &t.ob);
  ASSERT_EQ(t.ob.mads.size(), 1u);
  EXPECT_EQ(t.ob.mads[0].mad.b, rep.b);
}

TEST(Machine_OnMad, DuplicateRepAfterRtuResendsTheRtu) {
  Pair t;
  ASSERT_EQ(t.b.listen(0, kPort, 1), 0);
  const ConnId ia = t.connect();
  t.a_to_b_all();
  ASSERT_EQ(t.b.accept(t.ob.events.at(0).conn, {}, {}, t.now, &t.ob), 0);
  const Mad rep = t.ob.mads.at(0).mad;
  t.b_to_a_all();
  ASSERT_EQ(t.a.accept(ia, {}, {}, t.now, &t.oa), 0);
  t.oa.clear();  // the RTU is lost
  t.a.on_mad(t.a_to_b, rep, t.now, &t.oa);
  ASSERT_EQ(t.oa.mads.size(), 1u);
  EXPECT_EQ(attr_of(t.oa.mads[0].mad), wire::CmAttr::kRtu);
  EXPECT_TRUE(t.oa.events.empty());
  t.a_to_b_all();
  EXPECT_EQ(t.ob.events.back().type, EventType::kEstablished);
}

TEST(Machine_OnMad, OutOfOrderAndUnknownMessagesAreDroppedAndCounted) {
  Pair t;
  ASSERT_EQ(t.b.listen(0, kPort, 1), 0);
  const ConnId ia = t.connect();
  t.oa.clear();
  // An RTU and a DREP for a connection still in REQ_SENT.
  t.a.on_mad(t.a_to_b, build_rtu(7, ia, 1), t.now, &t.oa);
  t.a.on_mad(t.a_to_b, build_drep(7, ia, {}, 1), t.now, &t.oa);
  EXPECT_EQ(t.a.counters().drop_unknown_conn, 2u);  // remote ID 7 is not the peer's
  // A REP for a Communication ID nobody has.
  t.a.on_mad(t.a_to_b, build_rep(7, 4242, {}, {}, 1), t.now, &t.oa);
  EXPECT_EQ(t.a.counters().drop_unknown_conn, 3u);
  // An MRA for a REP we never sent.
  t.a.on_mad(t.a_to_b, build_mra(7, ia, wire::kCmMsgRep, 5, 1), t.now, &t.oa);
  EXPECT_EQ(t.a.counters().drop_wrong_state, 1u);
  EXPECT_TRUE(t.oa.mads.empty());
  EXPECT_TRUE(t.oa.events.empty());
  EXPECT_EQ(t.a.find(ia)->state, State::kReqSent);
}

TEST(Machine_OnMad, MalformedHeadersAreDroppedByReason) {
  Pair t;
  ASSERT_EQ(t.b.listen(0, kPort, 1), 0);
  t.connect();
  Mad bad = t.oa.mads.at(0).mad;
  bad.b[0] = 2;  // base version
  t.b.on_mad(t.b_to_a, bad, t.now, &t.ob);
  bad = t.oa.mads[0].mad;
  bad.b[1] = 0x03;  // another management class
  t.b.on_mad(t.b_to_a, bad, t.now, &t.ob);
  bad = t.oa.mads[0].mad;
  bad.b[2] = 1;  // class version
  t.b.on_mad(t.b_to_a, bad, t.now, &t.ob);
  bad = t.oa.mads[0].mad;
  bad.b[3] = 0x83;  // a response
  t.b.on_mad(t.b_to_a, bad, t.now, &t.ob);
  EXPECT_EQ(t.b.counters().drop_bad_header, 4u);
  bad = t.oa.mads[0].mad;
  wire::store_be16(bad.b.data() + 16, static_cast<std::uint16_t>(wire::CmAttr::kLap));
  t.b.on_mad(t.b_to_a, bad, t.now, &t.ob);
  EXPECT_EQ(t.b.counters().drop_unknown_attr, 1u);
  bad = t.oa.mads[0].mad;
  wire::CmReq r = wire::CmReq::read(bad.data());
  r.set_transport_type(wire::kCmTransportRd);
  r.write(bad.data());
  t.b.on_mad(t.b_to_a, bad, t.now, &t.ob);
  EXPECT_EQ(t.b.counters().drop_bad_req, 1u);
  EXPECT_EQ(t.b.counters().rx_mads, 6u);
  EXPECT_TRUE(t.ob.mads.empty());
  EXPECT_TRUE(t.ob.events.empty());
  EXPECT_EQ(t.b.conn_count(), 0u);
}

TEST(Machine_Disconnect, DreqDrepBothSidesThenTimewaitEnds) {
  Pair t;
  ASSERT_EQ(t.b.listen(0, kPort, 1), 0);
  const auto [ia, ib] = t.establish();
  ASSERT_EQ(t.a.disconnect(ia, {}, t.now, &t.oa), 0);
  EXPECT_EQ(t.a.find(ia)->state, State::kDreqSent);
  EXPECT_EQ(wire::CmDreq::read(t.oa.mads.at(0).mad.data()).remote_qpn(), 0x22u);
  t.a_to_b_all();
  ASSERT_EQ(t.ob.events.size(), 1u);
  EXPECT_EQ(t.ob.events[0].type, EventType::kDisconnected);
  EXPECT_EQ(t.b.find(ib)->state, State::kDreqRcvd);
  EXPECT_TRUE(t.ob.mads.empty());
  ASSERT_EQ(t.b.disconnect(ib, {}, t.now, &t.ob), 0);
  EXPECT_EQ(t.b.find(ib)->state, State::kTimewait);
  t.b_to_a_all();
  ASSERT_EQ(t.oa.events.size(), 1u);
  EXPECT_EQ(t.oa.events[0].type, EventType::kDisconnected);
  EXPECT_EQ(t.oa.events[0].status, 0);
  EXPECT_EQ(t.a.find(ia)->state, State::kTimewait);
  t.now = t.a.next_deadline();
  t.a.on_timer(t.now, &t.oa);
  EXPECT_EQ(t.a.find(ia)->state, State::kClosed);
  EXPECT_EQ(t.a.destroy(ia, t.now, &t.oa), 0);
  EXPECT_EQ(t.a.conn_count(), 0u);
}

TEST(Machine_OnMad, DreqForAnUnknownConnectionGetsADrep) {
  Pair t;
  t.b.on_mad(t.b_to_a, build_dreq(55, 66, 0, {}, 9), t.now, &t.ob);
  ASSERT_EQ(t.ob.mads.size(), 1u);
  EXPECT_EQ(attr_of(t.ob.mads[0].mad), wire::CmAttr::kDrep);
  EXPECT_EQ(wire::MadHdr::read(t.ob.mads[0].mad.b.data()).tid(), 9u);
  EXPECT_EQ(t.b.counters().drop_unknown_conn, 1u);
}

TEST(Machine_OnTimer, UnansweredDreqEndsInDisconnectedWithTimeout) {
  Pair t;
  ASSERT_EQ(t.b.listen(0, kPort, 1), 0);
  const auto [ia, ib] = t.establish();
  (void)ib;
  ASSERT_EQ(t.a.disconnect(ia, {}, t.now, &t.oa), 0);
  t.oa.clear();
  for (int i = 0; i <= kDefaultMaxRetries; ++i) {
    t.now = t.a.next_deadline();
    t.a.on_timer(t.now, &t.oa);
  }
  EXPECT_EQ(t.a.counters().retransmits, kDefaultMaxRetries);
  ASSERT_EQ(t.oa.events.size(), 1u);
  EXPECT_EQ(t.oa.events[0].type, EventType::kDisconnected);
  EXPECT_EQ(t.oa.events[0].status, ETIMEDOUT);
  EXPECT_EQ(t.a.find(ia)->state, State::kTimewait);
}

TEST(Machine_Destroy, EstablishedIdSendsDreqAndLeavesWithoutEvents) {
  Pair t;
  ASSERT_EQ(t.b.listen(0, kPort, 1), 0);
  const auto [ia, ib] = t.establish();
  ASSERT_EQ(t.a.destroy(ia, t.now, &t.oa), 0);
  EXPECT_EQ(t.a.find(ia), nullptr);
  EXPECT_EQ(t.a.destroy(ia, t.now, &t.oa), ENOENT);
  ASSERT_EQ(t.oa.mads.size(), 1u);
  EXPECT_EQ(attr_of(t.oa.mads[0].mad), wire::CmAttr::kDreq);
  t.a_to_b_all();
  ASSERT_EQ(t.b.disconnect(ib, {}, t.now, &t.ob), 0);
  t.b_to_a_all();
  EXPECT_TRUE(t.oa.events.empty());
  EXPECT_EQ(t.a.conn_count(), 1u);  // timewait
  t.now = t.a.next_deadline();
  t.a.on_timer(t.now, &t.oa);
  EXPECT_EQ(t.a.conn_count(), 0u);
}

TEST(Machine_OnMad, DreqWhileRepSentMeansTheRtuWasLost) {
  Pair t;
  ASSERT_EQ(t.b.listen(0, kPort, 1), 0);
  const ConnId ia = t.connect();
  t.a_to_b_all();
  const ConnId ib = t.ob.events.at(0).conn;
  t.ob.events.clear();
  ASSERT_EQ(t.b.accept(ib, {}, {}, t.now, &t.ob), 0);
  t.b_to_a_all();
  ASSERT_EQ(t.a.accept(ia, {}, {}, t.now, &t.oa), 0);
  t.oa.clear();  // RTU lost
  ASSERT_EQ(t.a.disconnect(ia, {}, t.now, &t.oa), 0);
  t.a_to_b_all();
  ASSERT_EQ(t.ob.events.size(), 1u);
  EXPECT_EQ(t.ob.events[0].type, EventType::kDisconnected);
  EXPECT_EQ(t.b.find(ib)->state, State::kDreqRcvd);
  EXPECT_EQ(t.b.next_deadline(), 0u);
}

TEST(Machine_Disconnect, SimultaneousDreqsBothEndInTimewait) {
  Pair t;
  ASSERT_EQ(t.b.listen(0, kPort, 1), 0);
  const auto [ia, ib] = t.establish();
  ASSERT_EQ(t.a.disconnect(ia, {}, t.now, &t.oa), 0);
  ASSERT_EQ(t.b.disconnect(ib, {}, t.now, &t.ob), 0);
  t.a_to_b_all();
  t.b_to_a_all();
  t.a_to_b_all();
  EXPECT_EQ(t.a.find(ia)->state, State::kTimewait);
  EXPECT_EQ(t.b.find(ib)->state, State::kTimewait);
  EXPECT_EQ(t.oa.events.size(), 1u);
  EXPECT_EQ(t.ob.events.size(), 1u);
}

ConnectArgs sidr_args(const Pair& t) {
  ConnectArgs a;
  a.path = t.a_to_b;
  a.src_port = 41000;
  a.dst_port = kPort;
  a.private_data.len = 2;
  a.private_data.b[0] = 'u';
  a.private_data.b[1] = 'd';
  return a;
}

TEST(Machine_SidrRequest, ResolvesTheListenersQpAndQkey) {
  Pair t;
  ASSERT_EQ(t.b.listen(0, kPort, 9, wire::kIpProtoUdp), 0);
  ConnId ia = 0;
  ASSERT_EQ(t.a.sidr_request(sidr_args(t), t.now, &t.oa, &ia), 0);
  EXPECT_EQ(t.a.find(ia)->state, State::kSidrReqSent);
  const Mad req = t.oa.mads.at(0).mad;
  t.a_to_b_all();
  ASSERT_EQ(t.ob.events.size(), 1u);
  const Event e = t.ob.events[0];
  EXPECT_EQ(e.type, EventType::kSidrRequest);
  EXPECT_EQ(e.listener, 9u);
  EXPECT_EQ(e.remote_port, 41000);
  EXPECT_EQ(e.private_data.b[0], 'u');
  QpParams p;
  p.qpn = 0x33;
  p.qkey = 0x01234567;
  ASSERT_EQ(t.b.accept(e.conn, p, {}, t.now, &t.ob), 0);
  EXPECT_EQ(t.b.find(e.conn)->state, State::kSidrRepSent);
  const Mad rep = t.ob.mads.at(0).mad;
  // A duplicate SIDR_REQ gets the same SIDR_REP, and no second event.
  t.b.on_mad(t.b_to_a, req, t.now, &t.ob);
  ASSERT_EQ(t.ob.mads.size(), 2u);
  EXPECT_EQ(t.ob.mads[1].mad.b, rep.b);
  EXPECT_EQ(t.ob.events.size(), 1u);
  t.ob.mads.pop_back();
  t.b_to_a_all();
  ASSERT_EQ(t.oa.events.size(), 1u);
  EXPECT_EQ(t.oa.events[0].type, EventType::kSidrReply);
  EXPECT_EQ(t.oa.events[0].status, wire::kSidrSuccess);
  EXPECT_EQ(t.oa.events[0].remote.qpn, 0x33u);
  EXPECT_EQ(t.oa.events[0].remote.qkey, 0x01234567u);
  EXPECT_EQ(t.a.find(ia)->state, State::kClosed);
  EXPECT_EQ(t.a.next_deadline(), 0u);
}

TEST(Machine_SidrRequest, NoListenerAndRejectAnswerWithTheirStatus) {
  Pair t;
  ConnId ia = 0;
  ASSERT_EQ(t.a.sidr_request(sidr_args(t), t.now, &t.oa, &ia), 0);
  t.a_to_b_all();
  t.now += kListenGraceNs;
  t.b.on_timer(t.now, &t.ob);
  EXPECT_EQ(t.b.counters().rej_no_listener, 1u);
  t.b_to_a_all();
  ASSERT_EQ(t.oa.events.size(), 1u);
  EXPECT_EQ(t.oa.events[0].status, wire::kSidrUnsupportedSid);
  t.oa.clear();
  ASSERT_EQ(t.b.listen(0, kPort, 9, wire::kIpProtoUdp), 0);
  ASSERT_EQ(t.a.sidr_request(sidr_args(t), t.now, &t.oa, &ia), 0);
  t.a_to_b_all();
  ASSERT_EQ(t.b.reject(t.ob.events.at(0).conn, {}, t.now, &t.ob), 0);
  t.b_to_a_all();
  ASSERT_EQ(t.oa.events.size(), 1u);
  EXPECT_EQ(t.oa.events[0].status, wire::kSidrRejected);
}

TEST(Machine_OnTimer, UnansweredSidrRequestIsUnreachable) {
  Pair t;
  ConnectArgs a = sidr_args(t);
  a.max_retries = 2;
  ConnId ia = 0;
  ASSERT_EQ(t.a.sidr_request(a, t.now, &t.oa, &ia), 0);
  t.oa.clear();
  for (int i = 0; i < 2; ++i) {
    t.now = t.a.next_deadline();
    t.a.on_timer(t.now, &t.oa);
    ASSERT_EQ(t.oa.mads.size(), 1u);
    EXPECT_EQ(attr_of(t.oa.mads[0].mad), wire::CmAttr::kSidrReq);
    t.oa.clear();
  }
  t.now = t.a.next_deadline();
  t.a.on_timer(t.now, &t.oa);
  EXPECT_TRUE(t.oa.mads.empty());
  ASSERT_EQ(t.oa.events.size(), 1u);
  EXPECT_EQ(t.oa.events[0].type, EventType::kUnreachable);
  EXPECT_EQ(t.oa.events[0].status, ETIMEDOUT);
}

}  // namespace
}  // namespace uroce::cm
