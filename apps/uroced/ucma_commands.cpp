// CmService (cm_service.h): one handler per ucma command. Command bodies are
// the application's bytes: each handler copies its struct out of the
// zero-padded body (the interposer checked `in` against the body room) and
// checks every handle and field.
#include <arpa/inet.h>
#include <endian.h>
#include <infiniband/verbs.h>

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "apps/uroced/cm_service.h"
#include "apps/uroced/ucma_body.h"

namespace uroce::daemon {
namespace {

using ucma::body_as;
using ucma::ipv4_of;
using ucma::respond;

void put_sockaddr(sockaddr_in6* dst, std::uint32_t ip, std::uint16_t port) {
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_addr.s_addr = htonl(ip);
  in.sin_port = htons(port);
  std::memset(dst, 0, sizeof(*dst));
  std::memcpy(dst, &in, sizeof(in));
}

constexpr std::uint8_t kMinRnrTimer = 12;  // 0.64 ms

cm::QpParams local_params(const rdma_ucm_conn_param& p, std::uint32_t psn, std::uint64_t guid,
                          std::uint8_t mtu) {
  cm::QpParams q;
  q.qpn = p.qp_num & wire::kQpnMask;
  q.psn = psn;
  q.qkey = p.qkey;
  q.ca_guid = be64toh(guid);
  q.responder_resources = p.responder_resources;
  q.initiator_depth = p.initiator_depth;
  q.flow_control = p.flow_control;
  q.retry_count = p.retry_count & 7;
  q.rnr_retry_count = p.rnr_retry_count & 7;
  q.srq = p.srq;
  q.path_mtu = mtu;
  q.local_ack_timeout = cm::kLocalAckTimeout;
  return q;
}

// The access flags of an RC QP moved to INIT for an id, as the Linux CM
// gives them: none before the id has a connection (cma.c, before
// rdma_connect or without a REQ), then remote WRITE always and remote READ
// and atomics when the QP answers any (cm.c, non-zero responder
// resources). librdmacm moves the QP to INIT again with these just before
// RTR, once the REQ or REP has set them.
std::uint32_t rc_init_access(const cm::Conn* conn) {
  if (conn == nullptr) return 0;
  std::uint32_t f = IBV_ACCESS_REMOTE_WRITE;
  if (cm::qp_responder_resources(*conn) != 0)
    f |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
  return f;
}

cm::PrivateData private_of(const std::uint8_t* p, std::size_t n) {
  cm::PrivateData d;
  if (n > d.b.size()) n = d.b.size();
  std::memcpy(d.b.data(), p, n);
  d.len = static_cast<std::uint8_t>(n);
  return d;
}

}  // namespace

int CmService::dispatch(File& f, const ctl::CmCommandReq& req, ctl::CmCommandRep* rep, TimeNs now) {
  if (req.in > ctl::kUcmaMaxBody) return EINVAL;
  std::uint8_t b[ctl::kUcmaMaxBody] = {};
  std::memcpy(b, req.body, req.in);
  cur_file_ = f.token;
  switch (req.cmd) {
    case RDMA_USER_CM_CMD_CREATE_ID: return on_create_id(f, b, rep);
    case RDMA_USER_CM_CMD_DESTROY_ID: return on_destroy_id(b, rep, now);
    case RDMA_USER_CM_CMD_BIND_IP: return on_bind_cmd<rdma_ucm_bind_ip>(b);
    case RDMA_USER_CM_CMD_BIND: return on_bind_cmd<rdma_ucm_bind>(b);
    case RDMA_USER_CM_CMD_RESOLVE_IP: return on_resolve_ip(b, now);
    case RDMA_USER_CM_CMD_RESOLVE_ADDR: return on_resolve_addr(b, now);
    case RDMA_USER_CM_CMD_RESOLVE_ROUTE: return on_resolve_route(b);
    case RDMA_USER_CM_CMD_QUERY_ROUTE: return on_query_route(b, rep);
    case RDMA_USER_CM_CMD_CONNECT: return on_connect(b, now);
    case RDMA_USER_CM_CMD_LISTEN: return on_listen(b, now);
    case RDMA_USER_CM_CMD_ACCEPT: return on_accept(b, now);
    case RDMA_USER_CM_CMD_REJECT: return on_reject(b, now);
    case RDMA_USER_CM_CMD_DISCONNECT: return on_disconnect(b, now);
    case RDMA_USER_CM_CMD_INIT_QP_ATTR: return on_init_qp_attr(b, rep);
    case RDMA_USER_CM_CMD_GET_EVENT: return on_get_event(f, b, rep);
    case RDMA_USER_CM_CMD_SET_OPTION: return on_set_option(b);
    case RDMA_USER_CM_CMD_MIGRATE_ID: return on_migrate_id(f, req.migrate_file, b, rep);
    case RDMA_USER_CM_CMD_JOIN_IP_MCAST: return on_join_ip_mcast(b, rep);
    case RDMA_USER_CM_CMD_JOIN_MCAST: return on_join_mcast(b, rep);
    case RDMA_USER_CM_CMD_LEAVE_MCAST: return on_leave_mcast(b, rep);
    default:
      // QUERY (AF_IB only) and NOTIFY: not served (docs/cm.md).
      return ENOSYS;
  }
}

int CmService::on_create_id(File& f, const std::uint8_t* b, ctl::CmCommandRep* rep) {
  const auto c = body_as<rdma_ucm_create_id>(b);
  // RDMA_PS_IB is librdmacm's AF_IB probe (its BIND then fails with
  // EAFNOSUPPORT); RDMA_PS_UDP resolves UD QPs with SIDR; IPoIB is not served.
  if (c.ps != RDMA_PS_TCP && c.ps != RDMA_PS_IB && c.ps != RDMA_PS_UDP) return EPROTONOSUPPORT;
  if (c.qp_type != (c.ps == RDMA_PS_UDP ? IBV_QPT_UD : IBV_QPT_RC)) return EINVAL;
  const std::uint32_t handle = take_handle();
  Id& id = ids_[handle];
  id.handle = handle;
  id.file = f.token;
  id.uid = c.uid;
  id.ps = c.ps;
  id.qp_type = c.qp_type;
  rdma_ucm_create_id_resp r{};
  r.id = id.handle;
  respond(rep, c.response, 0xffff, r);
  return 0;
}

int CmService::on_destroy_id(const std::uint8_t* b, ctl::CmCommandRep* rep, TimeNs now) {
  const auto c = body_as<rdma_ucm_destroy_id>(b);
  Id* id = find_id(c.id);
  if (id == nullptr) return ENOENT;
  rdma_ucm_destroy_id_resp r{};
  r.events_reported = id->events_reported;
  destroy_id(*id, now);
  respond(rep, c.response, 0xffff, r);
  return 0;
}

// BIND_IP and BIND differ only in the struct around the address.
template <class Cmd>
int CmService::on_bind_cmd(const std::uint8_t* b) {
  const auto c = body_as<Cmd>(b);
  Id* id = find_id(c.id);
  if (id == nullptr) return ENOENT;
  std::uint32_t ip = 0;
  std::uint16_t port = 0;
  if (!ipv4_of(&c.addr, &ip, &port)) return EAFNOSUPPORT;
  return bind_addr(*id, ip, port);
}

int CmService::on_resolve_ip(const std::uint8_t* b, TimeNs now) {
  const auto c = body_as<rdma_ucm_resolve_ip>(b);
  Id* id = find_id(c.id);
  if (id == nullptr) return ENOENT;
  std::uint32_t src = 0, dst = 0;
  std::uint16_t sport = 0, dport = 0;
  if (!ipv4_of(&c.dst_addr, &dst, &dport)) return EAFNOSUPPORT;
  sockaddr_in s;
  std::memcpy(&s, &c.src_addr, sizeof(s));
  if (s.sin_family != 0 && !ipv4_of(&c.src_addr, &src, &sport)) return EAFNOSUPPORT;
  return start_resolve(*id, src, dst, dport, now);
}

int CmService::on_resolve_addr(const std::uint8_t* b, TimeNs now) {
  const auto c = body_as<rdma_ucm_resolve_addr>(b);
  Id* id = find_id(c.id);
  if (id == nullptr) return ENOENT;
  std::uint32_t src = 0, dst = 0;
  std::uint16_t sport = 0, dport = 0;
  if (!ipv4_of(&c.dst_addr, &dst, &dport)) return EAFNOSUPPORT;
  if (c.src_size != 0 && !ipv4_of(&c.src_addr, &src, &sport)) return EAFNOSUPPORT;
  return start_resolve(*id, src, dst, dport, now);
}

int CmService::on_resolve_route(const std::uint8_t* b) {
  const auto c = body_as<rdma_ucm_resolve_route>(b);
  Id* id = find_id(c.id);
  if (id == nullptr) return ENOENT;
  if (!id->addr_resolved) return EINVAL;
  // RoCE has no path records to ask for: the route is the resolved address.
  id->route_resolved = true;
  queue_event(id->handle, id->handle, kEvRouteResolved, 0);
  return 0;
}

int CmService::on_query_route(const std::uint8_t* b, ctl::CmCommandRep* rep) {
  const auto c = body_as<rdma_ucm_query>(b);
  Id* id = find_id(c.id);
  if (id == nullptr) return ENOENT;
  rdma_ucm_query_route_resp r{};
  // The device index is left "unknown" so that librdmacm matches devices
  // by GUID (the index it knows comes from netlink, which uroce lacks).
  r.ibdev_index = 0xffffffffu;
  put_sockaddr(&r.src_addr, id->src_ip, id->src_port);
  put_sockaddr(&r.dst_addr, id->dst_ip, id->dst_port);
  if (id->dev >= 0) {
    r.node_guid = guid_be(id->dev);
    r.port_num = 1;
    const auto sgid = cm::ipv4_gid(id->src_ip);
    std::memcpy(r.ib_route[0].sgid, sgid.data(), 16);
    r.ib_route[0].pkey = htons(0xffff);
    r.ib_route[0].mtu = static_cast<std::uint8_t>(devices_[id->dev]->active_mtu());
    r.ib_route[0].hop_limit = 64;
    if (id->addr_resolved) {
      const auto dgid = cm::ipv4_gid(id->dst_ip);
      std::memcpy(r.ib_route[0].dgid, dgid.data(), 16);
    }
    if (id->route_resolved) {
      r.num_paths = 1;
      r.ib_route[0].numb_path = 1;
      r.ib_route[0].reversible = 1;
      r.ib_route[0].packet_life_time = cm::kPacketLifetime;
    }
  }
  respond(rep, c.response, 0xffff, r);
  return 0;
}

int CmService::on_connect(const std::uint8_t* b, TimeNs now) {
  const auto c = body_as<rdma_ucm_connect>(b);
  Id* id = find_id(c.id);
  if (id == nullptr) return ENOENT;
  if (!id->route_resolved || id->connected || id->dev < 0) return EINVAL;
  const bool ud = id->ps == RDMA_PS_UDP;
  if (c.conn_param.private_data_len > (ud ? cm::kSidrReqConsumerBytes : cm::kReqConsumerBytes)) {
    return EINVAL;
  }
  cm::ConnectArgs a;
  a.path = {static_cast<std::uint32_t>(id->dev), id->src_ip, id->dst_ip};
  a.src_port = id->src_port;
  a.dst_port = id->dst_port;
  const auto mtu = static_cast<std::uint8_t>(devices_[id->dev]->active_mtu());
  a.local = local_params(c.conn_param, id->local_psn, guid_be(id->dev), mtu);
  a.private_data = private_of(c.conn_param.private_data, c.conn_param.private_data_len);
  id->local = a.local;
  cm::ConnId conn = 0;
  const int rc =
      ud ? machine_.sidr_request(a, now, &out_, &conn) : machine_.connect(a, now, &out_, &conn);
  if (rc != 0) return rc;
  id->conn = conn;
  id->connected = true;
  conn_ids_[conn] = id->handle;
  return 0;
}

int CmService::on_listen(const std::uint8_t* b, TimeNs now) {
  const auto c = body_as<rdma_ucm_listen>(b);
  Id* id = find_id(c.id);
  if (id == nullptr) return ENOENT;
  if (id->listening || id->connected) return EINVAL;
  if (!id->bound) {
    if (int rc = bind_addr(*id, 0, 0); rc != 0) return rc;
  }
  if (int rc = machine_.listen(id->src_ip, id->src_port, id->handle, proto_of(*id)); rc != 0) {
    return rc;
  }
  id->listening = true;
  // Requests that arrived just before this listener wait for it.
  machine_.retry_parked(now, &out_);
  return 0;
}

int CmService::on_accept(const std::uint8_t* b, TimeNs now) {
  const auto c = body_as<rdma_ucm_accept>(b);
  Id* id = find_id(c.id);
  if (id == nullptr) return ENOENT;
  if (!id->connected) return EINVAL;
  const cm::Conn* conn = machine_.find(id->conn);
  if (conn == nullptr) return EINVAL;
  if (conn->state == cm::State::kRepRcvd) {
    // The active side's ACCEPT (librdmacm after CONNECT_RESPONSE): RTU.
    return machine_.accept(id->conn, {}, {}, now, &out_);
  }
  if (c.conn_param.private_data_len > cm::kRepPrivateBytes) return EINVAL;
  if (c.uid != 0) id->uid = c.uid;
  const auto mtu = static_cast<std::uint8_t>(devices_[id->dev]->active_mtu());
  id->local = local_params(c.conn_param, id->local_psn, guid_be(id->dev), mtu);
  // librdmacm leaves the Q_Key 0 for UD: the port space's Q_Key then.
  if (id->ps == RDMA_PS_UDP && id->local.qkey == 0) id->local.qkey = kUdpQkey;
  return machine_.accept(id->conn, id->local,
                         private_of(c.conn_param.private_data, c.conn_param.private_data_len), now,
                         &out_);
}

int CmService::on_reject(const std::uint8_t* b, TimeNs now) {
  const auto c = body_as<rdma_ucm_reject>(b);
  Id* id = find_id(c.id);
  if (id == nullptr) return ENOENT;
  if (!id->connected) return EINVAL;
  return machine_.reject(id->conn, private_of(c.private_data, c.private_data_len), now, &out_);
}

int CmService::on_disconnect(const std::uint8_t* b, TimeNs now) {
  const auto c = body_as<rdma_ucm_disconnect>(b);
  Id* id = find_id(c.id);
  if (id == nullptr) return ENOENT;
  if (!id->connected) return EINVAL;
  return machine_.disconnect(id->conn, {}, now, &out_);
}

int CmService::on_init_qp_attr(const std::uint8_t* b, ctl::CmCommandRep* rep) {
  const auto c = body_as<rdma_ucm_init_qp_attr>(b);
  Id* id = find_id(c.id);
  if (id == nullptr) return ENOENT;
  if (id->dev < 0) return EINVAL;
  ib_uverbs_qp_attr a{};
  a.qp_state = c.qp_state;
  if (c.qp_state == IBV_QPS_INIT && id->qp_type == IBV_QPT_UD) {
    a.qkey = kUdpQkey;
    a.pkey_index = 0;
    a.port_num = 1;
    a.qp_attr_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
    respond(rep, c.response, 0xffff, a);
    return 0;
  }
  const cm::Conn* conn = id->connected ? machine_.find(id->conn) : nullptr;
  if (c.qp_state == IBV_QPS_INIT) {
    a.qp_access_flags = rc_init_access(conn);
    a.pkey_index = 0;
    a.port_num = 1;
    a.qp_attr_mask = IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
    respond(rep, c.response, 0xffff, a);
    return 0;
  }
  if (conn == nullptr) return EINVAL;
  if (c.qp_state == IBV_QPS_RTR) {
    const auto own = static_cast<std::uint8_t>(devices_[id->dev]->active_mtu());
    const std::uint8_t peer = conn->remote.path_mtu;
    a.path_mtu = peer != 0 && peer < own ? peer : own;
    a.dest_qp_num = conn->remote.qpn;
    // Each side's Starting PSN (REQ, REP) is the PSN it expects to
    // receive, and the peer sends from it: what the Linux CM does (checked
    // against rxe: its requester starts at our REP's PSN).
    a.rq_psn = id->local_psn;
    a.max_dest_rd_atomic = cm::qp_responder_resources(*conn);
    a.min_rnr_timer = kMinRnrTimer;
    const auto dgid = cm::ipv4_gid(id->dst_ip);
    std::memcpy(a.ah_attr.grh.dgid, dgid.data(), 16);
    a.ah_attr.grh.sgid_index = 1;  // ::ffff:IPv4, the RoCEv2 GID
    a.ah_attr.grh.hop_limit = 64;
    a.ah_attr.is_global = 1;
    a.ah_attr.port_num = 1;
    a.qp_attr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
  } else if (c.qp_state == IBV_QPS_RTS) {
    a.sq_psn = conn->remote.psn;
    a.timeout = cm::qp_ack_timeout(*conn);
    a.retry_cnt = conn->active ? id->local.retry_count : conn->remote.retry_count;
    a.rnr_retry = conn->remote.rnr_retry_count;  // as the peer asked in its REQ or REP
    a.max_rd_atomic = cm::qp_initiator_depth(*conn);
    a.qp_attr_mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
  } else {
    return EINVAL;
  }
  respond(rep, c.response, 0xffff, a);
  return 0;
}

int CmService::on_get_event(File& f, const std::uint8_t* b, ctl::CmCommandRep* rep) {
  const auto c = body_as<rdma_ucm_get_event>(b);
  // The interposer asks after it took a wake-up byte; an event dropped by
  // a destroy since leaves the queue empty: ENODATA, and it waits again.
  if (f.events.empty()) return ENODATA;
  const QueuedEvent e = f.events.front();
  f.events.pop_front();
  auto it = ids_.find(e.counted);
  if (it != ids_.end()) ++it->second.events_reported;
  if (e.mc != 0) {
    auto m = mcs_.find(e.mc);
    if (m != mcs_.end()) ++m->second.events_reported;
  }
  respond(rep, c.response, 0xffff, e.resp);
  return 0;
}

int CmService::on_set_option(const std::uint8_t* b) {
  const auto c = body_as<rdma_ucm_set_option>(b);
  Id* id = find_id(c.id);
  if (id == nullptr) return ENOENT;
  // TOS, REUSEADDR, AFONLY and ACK_TIMEOUT are accepted and have no effect
  // (docs/cm.md); IB path records do not exist on RoCE.
  if (c.level == RDMA_OPTION_ID && c.optname <= RDMA_OPTION_ID_ACK_TIMEOUT) return 0;
  return ENOSYS;
}

int CmService::on_migrate_id(File& f, std::uint32_t from_file, const std::uint8_t* b,
                             ctl::CmCommandRep* rep) {
  // Written to the file the id moves TO; the body's fd (the interposer
  // translated it into from_file) names the file it leaves.
  const auto c = body_as<rdma_ucm_migrate_id>(b);
  auto it = ids_.find(c.id);
  if (it == ids_.end() || it->second.file != from_file) return ENOENT;
  Id& id = it->second;
  auto from = files_.find(from_file);
  if (from == files_.end()) return EBADF;
  if (from_file != f.token) {
    // The id's queued events move with it (and a wake-up byte each; the
    // old file's stray bytes only cost a spurious ENODATA round).
    auto& q = from->second.events;
    for (auto e = q.begin(); e != q.end();) {
      if (e->id == id.handle) {
        f.events.push_back(*e);
        const char one = 1;
        if (write(f.event_wr, &one, 1) != 1) ++ctr_.event_pipe_full;
        e = q.erase(e);
      } else {
        ++e;
      }
    }
    id.file = f.token;
  }
  rdma_ucm_migrate_resp r{};
  r.events_reported = id.events_reported;
  respond(rep, c.response, 0xffff, r);
  return 0;
}

}  // namespace uroce::daemon
