#include "datapath/cm/machine.h"

#include <cerrno>
#include <cstring>

#include "datapath/wire/cm_drep.h"
#include "datapath/wire/cm_dreq.h"
#include "datapath/wire/cm_mra.h"
#include "datapath/wire/cm_rej.h"
#include "datapath/wire/cm_rep.h"
#include "datapath/wire/cm_req.h"
#include "datapath/wire/cm_rtu.h"
#include "datapath/wire/cm_sidr_rep.h"
#include "datapath/wire/cm_sidr_req.h"

namespace uroce::cm {

namespace {

TimeNs wait_for(std::uint8_t response_timeout) {
  return cm_timeout_ns(response_timeout) + 2 * cm_timeout_ns(kPacketLifetime);
}

PrivateData private_of(const std::uint8_t* p, std::size_t n) {
  PrivateData pd;
  std::memcpy(pd.b.data(), p, n);
  pd.len = static_cast<std::uint8_t>(n);
  return pd;
}

std::uint64_t tid_of(const Mad& m) { return wire::MadHdr::read(m.b.data()).tid(); }

}  // namespace

const char* state_name(State s) {
  switch (s) {
    case State::kReqSent: return "REQ_SENT";
    case State::kMraRcvd: return "MRA_RCVD";
    case State::kRepRcvd: return "REP_RCVD";
    case State::kReqRcvd: return "REQ_RCVD";
    case State::kRepSent: return "REP_SENT";
    case State::kEstablished: return "ESTABLISHED";
    case State::kDreqSent: return "DREQ_SENT";
    case State::kDreqRcvd: return "DREQ_RCVD";
    case State::kTimewait: return "TIMEWAIT";
    case State::kClosed: return "CLOSED";
    case State::kSidrReqSent: return "SIDR_REQ_SENT";
    case State::kSidrReqRcvd: return "SIDR_REQ_RCVD";
    case State::kSidrRepSent: return "SIDR_REP_SENT";
  }
  return "?";
}

Conn* Machine::lookup(ConnId id) {
  auto it = conns_.find(id);
  return it == conns_.end() ? nullptr : &it->second;
}

const Conn* Machine::find(ConnId id) const {
  auto it = conns_.find(id);
  return it == conns_.end() || it->second.orphan ? nullptr : &it->second;
}

ConnId Machine::alloc_id() {
  while (next_id_ == 0 || conns_.count(next_id_) != 0) ++next_id_;
  return next_id_++;
}

std::uint64_t Machine::new_tid() { return (std::uint64_t{next_id_} << 32) | ++tid_seq_; }

void Machine::send_to(const Path& p, const Mad& m, Output* out) {
  out->mads.push_back(OutMad{p, m});
  ++ctr_.tx_mads;
}

void Machine::send(Conn& c, const Mad& m, Output* out) { send_to(c.path, m, out); }

void Machine::send_timed(Conn& c, const Mad& m, TimeNs interval, TimeNs now, Output* out) {
  send(c, m, out);
  c.last = m;
  c.interval = interval;
  c.deadline = now + interval;
  c.retries_left = c.max_retries;
}

void Machine::event(const Conn& c, EventType t, int status, Output* out, const PrivateData* pd) {
  if (c.orphan) return;
  Event e;
  e.type = t;
  e.conn = c.id;
  e.listener = c.listener;
  e.status = status;
  e.remote = c.remote;
  e.remote_port = c.remote_port;
  e.local_port = c.local_port;
  if (pd != nullptr) e.private_data = *pd;
  out->events.push_back(e);
}

void Machine::erase(ConnId id) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  if (it->second.remote_id != 0) {
    auto r = by_remote_.find({it->second.path.remote_ip, it->second.remote_id});
    if (r != by_remote_.end() && r->second == id) by_remote_.erase(r);
  }
  conns_.erase(it);
}

void Machine::close(Conn& c) {
  stop_timer(c);
  if (c.orphan) {
    erase(c.id);
    return;
  }
  c.state = State::kClosed;
}

void Machine::enter_timewait(Conn& c, TimeNs now) {
  c.state = State::kTimewait;
  c.deadline = now + cm_timeout_ns(kTimewaitTimeout);
  c.retries_left = 0;
}

Conn& Machine::open_active(const ConnectArgs& a, State state) {
  const ConnId cid = alloc_id();
  Conn& c = conns_[cid];
  c.id = cid;
  c.active = true;
  c.state = state;
  c.path = a.path;
  c.local_port = a.src_port;
  c.remote_port = a.dst_port;
  c.local = a.local;
  c.remote_response_timeout = a.response_timeout;
  c.max_retries = a.max_retries;
  c.tid = new_tid();
  return c;
}

Conn& Machine::open_passive(const Path& from, std::uint16_t local_port, std::uint16_t remote_port,
                            ListenId lid, std::uint32_t remote_id, std::uint64_t tid, State state) {
  const ConnId cid = alloc_id();
  Conn& c = conns_[cid];
  c.id = cid;
  c.state = state;
  c.remote_id = remote_id;
  c.path = from;
  c.local_port = local_port;
  c.remote_port = remote_port;
  c.listener = lid;
  c.tid = tid;
  return c;
}

int Machine::connect(const ConnectArgs& a, TimeNs now, Output* out, ConnId* id) {
  if (a.private_data.len > kReqConsumerBytes) return EINVAL;
  Conn& c = open_active(a, State::kReqSent);
  const ConnId cid = c.id;
  c.local_response_timeout = a.response_timeout;
  ReqFields f;
  f.local_id = cid;
  f.service_id = wire::ip_service_id(wire::kIpProtoTcp, a.dst_port);
  f.local = a.local;
  f.remote_response_timeout = a.response_timeout;
  f.local_response_timeout = a.response_timeout;
  f.max_retries = a.max_retries;
  f.local_ip = a.path.local_ip;
  f.remote_ip = a.path.remote_ip;
  f.src_port = a.src_port;
  f.consumer = a.private_data;
  send_timed(c, build_req(f, c.tid), wait_for(c.remote_response_timeout), now, out);
  *id = cid;
  return 0;
}

int Machine::accept(ConnId id, const QpParams& local, const PrivateData& pd, TimeNs now,
                    Output* out) {
  Conn* c = lookup(id);
  if (c == nullptr || c->orphan) return ENOENT;
  if (c->state == State::kReqRcvd) {
    if (pd.len > kRepPrivateBytes) return EINVAL;
    c->local = local;
    c->state = State::kRepSent;
    send_timed(*c, build_rep(c->id, c->remote_id, local, pd, c->tid),
               wait_for(c->remote_response_timeout), now, out);
    return 0;
  }
  if (c->state == State::kSidrReqRcvd) {
    if (pd.len > kSidrRepPrivateBytes) return EINVAL;
    sidr_reply(*c, wire::kSidrSuccess, local, pd, out);
    return 0;
  }
  if (c->state == State::kRepRcvd) {
    c->state = State::kEstablished;
    c->last = build_rtu(c->id, c->remote_id, c->tid);
    send(*c, c->last, out);
    return 0;
  }
  return EINVAL;
}

int Machine::reject(ConnId id, const PrivateData& pd, TimeNs, Output* out) {
  Conn* c = lookup(id);
  if (c == nullptr || c->orphan) return ENOENT;
  if (c->state == State::kSidrReqRcvd) {
    if (pd.len > kSidrRepPrivateBytes) return EINVAL;
    sidr_reply(*c, wire::kSidrRejected, {}, pd, out);
    return 0;
  }
  if (pd.len > kRejPrivateBytes) return EINVAL;
  if (c->state != State::kReqRcvd && c->state != State::kRepRcvd) return EINVAL;
  const std::uint8_t msg = c->state == State::kReqRcvd ? wire::kCmMsgReq : wire::kCmMsgRep;
  send(*c, build_rej(c->id, c->remote_id, msg, wire::kRejConsumer, pd, c->tid), out);
  close(*c);
  return 0;
}

int Machine::disconnect(ConnId id, const PrivateData& pd, TimeNs now, Output* out) {
  Conn* c = lookup(id);
  if (c == nullptr || c->orphan) return ENOENT;
  return release(*c, pd, now, out);
}

int Machine::release(Conn& c, const PrivateData& pd, TimeNs now, Output* out) {
  if (c.state == State::kEstablished) {
    if (pd.len > kDreqPrivateBytes) return EINVAL;
    c.state = State::kDreqSent;
    c.dreq_tid = new_tid();
    send_timed(c, build_dreq(c.id, c.remote_id, c.remote.qpn, pd, c.dreq_tid),
               wait_for(c.remote_response_timeout), now, out);
    return 0;
  }
  if (c.state == State::kDreqRcvd) {
    if (pd.len > kDrepPrivateBytes) return EINVAL;
    c.last = build_drep(c.id, c.remote_id, pd, c.dreq_tid);
    send(c, c.last, out);
    enter_timewait(c, now);
    return 0;
  }
  return EINVAL;
}

int Machine::destroy(ConnId id, TimeNs now, Output* out) {
  Conn* c = lookup(id);
  if (c == nullptr || c->orphan) return ENOENT;
  c->orphan = true;
  const PrivateData none{};
  switch (c->state) {
    case State::kReqSent:
    case State::kMraRcvd:
      // The Linux CM tells the peer "timeout" when an unanswered connect is
      // abandoned; the peer may already hold state for it.
      send(*c, build_rej(c->id, c->remote_id, wire::kCmMsgReq, wire::kRejTimeout, none, c->tid),
           out);
      close(*c);
      break;
    case State::kReqRcvd:
    case State::kRepRcvd:
    case State::kRepSent: {
      const std::uint8_t msg = c->state == State::kRepRcvd ? wire::kCmMsgRep : wire::kCmMsgReq;
      send(*c, build_rej(c->id, c->remote_id, msg, wire::kRejConsumer, none, c->tid), out);
      close(*c);
      break;
    }
    case State::kEstablished:
    case State::kDreqRcvd: (void)release(*c, none, now, out); break;
    case State::kDreqSent:
    case State::kTimewait: break;
    case State::kClosed:
    case State::kSidrReqSent:
    case State::kSidrReqRcvd:
    case State::kSidrRepSent: close(*c); break;
  }
  return 0;
}

void Machine::on_mad(const Path& from, const Mad& m, TimeNs now, Output* out) {
  ++ctr_.rx_mads;
  wire::CmAttr attr{};
  switch (check_header(m, &attr)) {
    case HeaderCheck::kBadHeader: ++ctr_.drop_bad_header; return;
    case HeaderCheck::kUnknownAttr: ++ctr_.drop_unknown_attr; return;
    case HeaderCheck::kOk: break;
  }
  switch (attr) {
    case wire::CmAttr::kReq: on_req(from, m, out, true, now); break;
    case wire::CmAttr::kRep: on_rep(m, out); break;
    case wire::CmAttr::kRtu: on_rtu(m, out); break;
    case wire::CmAttr::kMra: on_mra(m, now); break;
    case wire::CmAttr::kRej: on_rej(m, out); break;
    case wire::CmAttr::kDreq: on_dreq(from, m, now, out); break;
    case wire::CmAttr::kDrep: on_drep(m, now, out); break;
    case wire::CmAttr::kSidrReq: on_sidr_req(from, m, out, true, now); break;
    case wire::CmAttr::kSidrRep: on_sidr_rep(m, out); break;
    default: ++ctr_.drop_unknown_attr; break;
  }
}

bool Machine::park(const Path& from, const Mad& m, std::uint32_t remote_id, TimeNs now) {
  for (const Parked& p : parked_) {
    if (p.from.remote_ip == from.remote_ip && p.remote_id == remote_id) return true;
  }
  if (parked_.size() >= kMaxParked) return false;
  parked_.push_back(Parked{from, m, remote_id, now + kListenGraceNs});
  return true;
}

void Machine::retry_parked(TimeNs now, Output* out) {
  if (parked_.empty()) return;
  std::vector<Parked> all;
  all.swap(parked_);
  for (const Parked& p : all) {
    // Parked again while the listener is still missing and time is left.
    const bool park_again = now < p.deadline;
    const auto attr = static_cast<wire::CmAttr>(wire::MadHdr::read(p.mad.b.data()).attr_id());
    const std::size_t before = parked_.size();
    if (attr == wire::CmAttr::kReq) {
      on_req(p.from, p.mad, out, park_again, now);
    } else {
      on_sidr_req(p.from, p.mad, out, park_again, now);
    }
    // Keep the original deadline, not a fresh one.
    if (parked_.size() > before) parked_.back().deadline = p.deadline;
  }
}

void Machine::on_req(const Path& from, const Mad& m, Output* out, bool park_it, TimeNs now) {
  const wire::CmReq r = wire::CmReq::read(m.data());
  auto dup = by_remote_.find({from.remote_ip, r.local_comm_id()});
  if (dup != by_remote_.end()) {
    Conn* c = lookup(dup->second);
    ++ctr_.duplicates;
    if (c == nullptr) return;
    if (c->state == State::kReqRcvd) {
      // Still with the user: ask the peer to wait (12.6.6).
      send(*c, build_mra(c->id, c->remote_id, wire::kCmMsgReq, c->local_response_timeout, c->tid),
           out);
    } else if (c->state == State::kRepSent) {
      send(*c, c->last, out);  // our REP was lost
    }
    return;
  }
  const PrivateData none{};
  std::uint8_t proto = 0;
  std::uint16_t port = 0;
  const wire::CmIpPrivate ip = wire::CmIpPrivate::read(r.private_data());
  if (r.transport_type() != wire::kCmTransportRc || r.local_comm_id() == 0 ||
      ip.major_version() != 0 || ip.ip_version() != 4) {
    ++ctr_.drop_bad_req;
    return;
  }
  ListenId lid = 0;
  if (!wire::parse_ip_service_id(r.service_id(), &proto, &port) || proto != wire::kIpProtoTcp ||
      !listeners_.find(wire::kIpProtoTcp, ip.dst_v4(), port, &lid)) {
    if (park_it && proto == wire::kIpProtoTcp && park(from, m, r.local_comm_id(), now)) return;
    ++ctr_.rej_no_listener;
    send_to(from,
            build_rej(0, r.local_comm_id(), wire::kCmMsgReq, wire::kRejInvalidServiceId, none,
                      tid_of(m)),
            out);
    return;
  }
  Conn& c =
      open_passive(from, port, ip.src_port(), lid, r.local_comm_id(), tid_of(m), State::kReqRcvd);
  const ConnId cid = c.id;
  c.remote.qpn = r.local_qpn();
  c.remote.psn = r.starting_psn();
  c.remote.qkey = r.local_qkey();
  c.remote.ca_guid = r.local_ca_guid();
  c.remote.responder_resources = r.responder_resources();
  c.remote.initiator_depth = r.initiator_depth();
  c.remote.flow_control = r.flow_control() ? 1 : 0;
  c.remote.retry_count = r.retry_count();
  c.remote.rnr_retry_count = r.rnr_retry_count();
  c.remote.srq = r.srq() ? 1 : 0;
  c.remote.path_mtu = r.path_mtu();
  c.remote.local_ack_timeout = r.primary_local_ack_timeout();
  // Our REP waits for the peer's RTU as long as the peer said it needs.
  c.remote_response_timeout = r.local_cm_response_timeout();
  c.local_response_timeout = r.remote_cm_response_timeout();
  c.max_retries = r.max_cm_retries();
  by_remote_[{from.remote_ip, c.remote_id}] = cid;
  const PrivateData pd = private_of(r.private_data() + wire::CmIpPrivate::kSize, kReqConsumerBytes);
  event(c, EventType::kConnectRequest, 0, out, &pd);
}

void Machine::on_rep(const Mad& m, Output* out) {
  const wire::CmRep r = wire::CmRep::read(m.data());
  Conn* c = lookup(r.remote_comm_id());
  if (c == nullptr || !c->active) {
    ++ctr_.drop_unknown_conn;
    return;
  }
  if (c->state == State::kRepRcvd) {
    ++ctr_.duplicates;
    return;
  }
  if (c->state == State::kEstablished && r.local_comm_id() == c->remote_id) {
    ++ctr_.duplicates;
    send(*c, c->last, out);  // our RTU was lost
    return;
  }
  if (c->state != State::kReqSent && c->state != State::kMraRcvd) {
    ++ctr_.drop_wrong_state;
    return;
  }
  stop_timer(*c);
  c->state = State::kRepRcvd;
  c->remote_id = r.local_comm_id();
  by_remote_[{c->path.remote_ip, c->remote_id}] = c->id;
  c->remote.qpn = r.local_qpn();
  c->remote.psn = r.starting_psn();
  c->remote.qkey = r.local_qkey();
  c->remote.ca_guid = r.local_ca_guid();
  c->remote.responder_resources = r.responder_resources();
  c->remote.initiator_depth = r.initiator_depth();
  c->remote.flow_control = r.flow_control() ? 1 : 0;
  c->remote.rnr_retry_count = r.rnr_retry_count();
  c->remote.srq = r.srq() ? 1 : 0;
  c->remote.path_mtu = c->local.path_mtu;
  c->remote.local_ack_timeout = r.target_ack_delay();
  const PrivateData pd = private_of(r.private_data(), kRepPrivateBytes);
  event(*c, EventType::kConnectResponse, 0, out, &pd);
}

void Machine::on_rtu(const Mad& m, Output* out) {
  const wire::CmRtu r = wire::CmRtu::read(m.data());
  Conn* c = lookup(r.remote_comm_id());
  if (c == nullptr || c->remote_id != r.local_comm_id()) {
    ++ctr_.drop_unknown_conn;
    return;
  }
  if (c->state != State::kRepSent) {
    ++ctr_.drop_wrong_state;
    return;
  }
  stop_timer(*c);
  c->state = State::kEstablished;
  const PrivateData pd = private_of(r.private_data(), wire::CmRtu::kPrivateBytes);
  event(*c, EventType::kEstablished, 0, out, &pd);
}

void Machine::on_mra(const Mad& m, TimeNs now) {
  const wire::CmMra r = wire::CmMra::read(m.data());
  Conn* c = lookup(r.remote_comm_id());
  if (c == nullptr) {
    ++ctr_.drop_unknown_conn;
    return;
  }
  const bool for_req = c->state == State::kReqSent && r.message_mraed() == wire::kCmMsgReq;
  const bool for_rep = c->state == State::kRepSent && r.message_mraed() == wire::kCmMsgRep &&
                       r.local_comm_id() == c->remote_id;
  if (!for_req && !for_rep) {
    ++ctr_.drop_wrong_state;
    return;
  }
  if (for_req) {
    c->state = State::kMraRcvd;
    c->remote_id = r.local_comm_id();
  }
  // The peer promised an answer within its service timeout: wait that long
  // (plus the path) before the next retransmission.
  c->deadline = now + wait_for(r.service_timeout());
}

void Machine::on_rej(const Mad& m, Output* out) {
  const wire::CmRej r = wire::CmRej::read(m.data());
  Conn* c = lookup(r.remote_comm_id());
  if (c == nullptr) {
    ++ctr_.drop_unknown_conn;
    return;
  }
  switch (c->state) {
    case State::kReqSent:
    case State::kMraRcvd:
    case State::kRepRcvd:
    case State::kReqRcvd:
    case State::kRepSent: {
      const PrivateData pd = private_of(r.private_data(), kRejPrivateBytes);
      event(*c, EventType::kRejected, r.reason(), out, &pd);
      close(*c);
      return;
    }
    default: ++ctr_.drop_wrong_state; return;
  }
}

void Machine::on_dreq(const Path& from, const Mad& m, TimeNs now, Output* out) {
  const wire::CmDreq r = wire::CmDreq::read(m.data());
  Conn* c = lookup(r.remote_comm_id());
  const PrivateData none{};
  if (c == nullptr || c->remote_id != r.local_comm_id()) {
    // 12.9.8.6: a DREQ for a connection we do not know gets a DREP anyway,
    // so that a peer whose DREP was lost after our timewait ends.
    ++ctr_.drop_unknown_conn;
    send_to(from, build_drep(r.remote_comm_id(), r.local_comm_id(), none, tid_of(m)), out);
    return;
  }
  const PrivateData pd = private_of(r.raw + wire::CmDreq::kPrivateOffset, kDreqPrivateBytes);
  switch (c->state) {
    case State::kRepSent:  // the RTU was lost; the peer is established
    case State::kEstablished:
      stop_timer(*c);
      c->state = State::kDreqRcvd;
      c->dreq_tid = tid_of(m);
      event(*c, EventType::kDisconnected, 0, out, &pd);
      if (c->orphan) (void)release(*c, none, now, out);
      return;
    case State::kDreqSent:  // both sides disconnect at once
      c->dreq_tid = tid_of(m);
      c->last = build_drep(c->id, c->remote_id, none, c->dreq_tid);
      send(*c, c->last, out);
      enter_timewait(*c, now);
      event(*c, EventType::kDisconnected, 0, out, &pd);
      return;
    case State::kTimewait:
      ++ctr_.duplicates;
      send(*c, build_drep(c->id, c->remote_id, none, tid_of(m)), out);
      return;
    case State::kDreqRcvd: ++ctr_.duplicates; return;
    default: ++ctr_.drop_wrong_state; return;
  }
}

void Machine::on_drep(const Mad& m, TimeNs now, Output* out) {
  const wire::CmDrep r = wire::CmDrep::read(m.data());
  Conn* c = lookup(r.remote_comm_id());
  if (c == nullptr || c->remote_id != r.local_comm_id()) {
    ++ctr_.drop_unknown_conn;
    return;
  }
  if (c->state != State::kDreqSent) {
    ++ctr_.drop_wrong_state;
    return;
  }
  enter_timewait(*c, now);
  event(*c, EventType::kDisconnected, 0, out);
}

int Machine::sidr_request(const ConnectArgs& a, TimeNs now, Output* out, ConnId* id) {
  if (a.private_data.len > kSidrReqConsumerBytes) return EINVAL;
  Conn& c = open_active(a, State::kSidrReqSent);
  const ConnId cid = c.id;
  c.service_id = wire::ip_service_id(wire::kIpProtoUdp, a.dst_port);
  send_timed(c,
             build_sidr_req(cid, a.dst_port, a.src_port, a.path.local_ip, a.path.remote_ip,
                            a.private_data, c.tid),
             wait_for(c.remote_response_timeout), now, out);
  *id = cid;
  return 0;
}

void Machine::sidr_reply(Conn& c, std::uint8_t status, const QpParams& local, const PrivateData& pd,
                         Output* out) {
  c.local = local;
  c.last = build_sidr_rep(c.remote_id, status, local.qpn, local.qkey, c.service_id, pd, c.tid);
  send(c, c.last, out);
  c.state = State::kSidrRepSent;
}

void Machine::on_sidr_req(const Path& from, const Mad& m, Output* out, bool park_it, TimeNs now) {
  const wire::CmSidrReq r = wire::CmSidrReq::read(m.data());
  auto dup = by_remote_.find({from.remote_ip, r.request_id()});
  if (dup != by_remote_.end()) {
    ++ctr_.duplicates;
    Conn* c = lookup(dup->second);
    if (c != nullptr && c->state == State::kSidrRepSent) send(*c, c->last, out);
    return;
  }
  const wire::CmIpPrivate ip = wire::CmIpPrivate::read(r.private_data());
  if (ip.major_version() != 0 || ip.ip_version() != 4) {
    ++ctr_.drop_bad_req;
    return;
  }
  std::uint8_t proto = 0;
  std::uint16_t port = 0;
  ListenId lid = 0;
  if (!wire::parse_ip_service_id(r.service_id(), &proto, &port) || proto != wire::kIpProtoUdp ||
      !listeners_.find(wire::kIpProtoUdp, ip.dst_v4(), port, &lid)) {
    if (park_it && proto == wire::kIpProtoUdp && park(from, m, r.request_id(), now)) return;
    ++ctr_.rej_no_listener;
    send_to(from,
            build_sidr_rep(r.request_id(), wire::kSidrUnsupportedSid, 0, 0, r.service_id(), {},
                           tid_of(m)),
            out);
    return;
  }
  Conn& c =
      open_passive(from, port, ip.src_port(), lid, r.request_id(), tid_of(m), State::kSidrReqRcvd);
  const ConnId cid = c.id;
  c.service_id = r.service_id();
  by_remote_[{from.remote_ip, c.remote_id}] = cid;
  const PrivateData pd =
      private_of(r.private_data() + wire::CmIpPrivate::kSize, kSidrReqConsumerBytes);
  event(c, EventType::kSidrRequest, 0, out, &pd);
}

void Machine::on_sidr_rep(const Mad& m, Output* out) {
  const wire::CmSidrRep r = wire::CmSidrRep::read(m.data());
  Conn* c = lookup(r.request_id());
  if (c == nullptr || !c->active) {
    ++ctr_.drop_unknown_conn;
    return;
  }
  if (c->state != State::kSidrReqSent) {
    ++ctr_.drop_wrong_state;
    return;
  }
  c->remote.qpn = r.qpn();
  c->remote.qkey = r.qkey();
  const PrivateData pd = private_of(r.private_data(), kSidrRepPrivateBytes);
  event(*c, EventType::kSidrReply, r.status(), out, &pd);
  close(*c);
}

void Machine::timeout(Conn& c, TimeNs now, Output* out) {
  if (c.state == State::kTimewait) {
    close(c);
    return;
  }
  if (c.retries_left > 0) {
    --c.retries_left;
    ++ctr_.retransmits;
    send(c, c.last, out);
    c.deadline = now + c.interval;
    return;
  }
  ++ctr_.timeouts;
  const PrivateData none{};
  switch (c.state) {
    case State::kReqSent:
    case State::kMraRcvd:
      send(c, build_rej(c.id, c.remote_id, wire::kCmMsgReq, wire::kRejTimeout, none, c.tid), out);
      event(c, EventType::kUnreachable, ETIMEDOUT, out);
      close(c);
      return;
    case State::kRepSent:
      send(c, build_rej(c.id, c.remote_id, wire::kCmMsgRep, wire::kRejTimeout, none, c.tid), out);
      event(c, EventType::kConnectError, ETIMEDOUT, out);
      close(c);
      return;
    case State::kDreqSent:
      enter_timewait(c, now);
      event(c, EventType::kDisconnected, ETIMEDOUT, out);
      return;
    case State::kSidrReqSent:
      event(c, EventType::kUnreachable, ETIMEDOUT, out);
      close(c);
      return;
    default: stop_timer(c); return;
  }
}

void Machine::on_timer(TimeNs now, Output* out) {
  retry_parked(now, out);
  // Collect first: timeout() may erase orphans.
  std::vector<ConnId> due;
  for (const auto& [id, c] : conns_) {
    if (c.deadline != 0 && c.deadline <= now) due.push_back(id);
  }
  for (ConnId id : due) {
    Conn* c = lookup(id);
    if (c != nullptr) timeout(*c, now, out);
  }
}

TimeNs Machine::next_deadline() const {
  TimeNs best = 0;
  for (const Parked& p : parked_) {
    if (best == 0 || p.deadline < best) best = p.deadline;
  }
  for (const auto& [id, c] : conns_) {
    if (c.deadline != 0 && (best == 0 || c.deadline < best)) best = c.deadline;
  }
  return best;
}

}  // namespace uroce::cm
