// rdma_cm multicast (docs/multicast.md): JOIN_IP_MCAST, JOIN_MCAST and
// LEAVE_MCAST, checked in the kernel's ucma/cma order (address size, join
// flags, the id, its device and state) with its errors, but for two
// answers of our own: an IPv6 group is EAFNOSUPPORT (our rdma_cm is IPv4:
// docs/cm.md), and a unicast "group" is EINVAL (a QP could not attach to
// it: mcast_table.h).
//
// A join of an IPv4 group (224.0.0.0/4) by a UD id bound or resolved to a
// device gets a handle of its own and, at once, a MULTICAST_JOIN event
// whose UD parameters address the group: QPN 0xFFFFFF, the id's Q_Key
// (RDMA_PS_UDP: 0x01234567) and an AH to the group's GID (::ffff:group,
// our RoCEv2 GID as source, hop limit 64). librdmacm then attaches the
// id's QP to the group itself (ibv_attach_mcast) and detaches it on
// leave. Nothing is sent on the wire (Linux's cma sends an IGMP report for
// a full member; we send none). A leave answers how many events of the
// join were reported; destroying the id leaves its groups.
#include <arpa/inet.h>
#include <rdma/rdma_user_cm.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "apps/uroced/cm_service.h"
#include "apps/uroced/ucma_body.h"
#include "datapath/cm/types.h"

namespace uroce::daemon {

namespace {

// The size of a sockaddr of the family `sa` names; 0 for a family rdma_cm
// does not know.
std::size_t addr_size_of(const void* sa) {
  sa_family_t family;
  std::memcpy(&family, sa, sizeof(family));
  if (family == AF_INET) return sizeof(sockaddr_in);
  if (family == AF_INET6) return sizeof(sockaddr_in6);
  return 0;
}

}  // namespace

int CmService::on_join_ip_mcast(const std::uint8_t* b, ctl::CmCommandRep* rep) {
  const auto c = ucma::body_as<rdma_ucm_join_ip_mcast>(b);
  if (addr_size_of(&c.addr) == 0) return EINVAL;
  Id* id = find_id(c.id);
  if (id == nullptr) return ENOENT;
  return join(*id, &c.addr, c.uid, c.response, rep);
}

int CmService::on_join_mcast(const std::uint8_t* b, ctl::CmCommandRep* rep) {
  const auto c = ucma::body_as<rdma_ucm_join_mcast>(b);
  const std::size_t size = addr_size_of(&c.addr);
  if (size == 0 || c.addr_size != size) return EINVAL;
  if (c.join_flags != RDMA_MC_JOIN_FLAG_FULLMEMBER &&
      c.join_flags != RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER) {
    return EINVAL;
  }
  Id* id = find_id(c.id);
  if (id == nullptr) return ENOENT;
  return join(*id, &c.addr, c.uid, c.response, rep);
}

int CmService::join(Id& id, const void* addr, std::uint64_t uid, std::uint64_t response,
                    ctl::CmCommandRep* rep) {
  // On the id's device, bound to it or resolved through it (mckey resolves
  // the group from its source address first), in the states the kernel
  // allows: ADDR_BOUND (no resolve begun, not listening) or ADDR_RESOLVED
  // (not yet routed or connected). A UD id: only its QP can attach.
  const bool addr_bound = id.bound && id.dst_ip == 0 && !id.listening;
  const bool addr_resolved = id.addr_resolved && !id.route_resolved && !id.connected;
  if (id.dev < 0 || !(addr_bound || addr_resolved) || id.qp_type != IBV_QPT_UD) return EINVAL;
  std::uint32_t group = 0;
  std::uint16_t port = 0;
  if (!ucma::ipv4_of(addr, &group, &port)) return EAFNOSUPPORT;
  if (!wire::Ipv4Addr{group}.is_multicast()) return EINVAL;
  const std::uint32_t handle = take_handle();
  Mc& mc = mcs_[handle];
  mc.handle = handle;
  mc.id = id.handle;
  mc.uid = uid;
  mc.group_ip = group;
  rdma_ucm_create_id_resp r{};
  r.id = mc.handle;
  ucma::respond(rep, response, 0xffff, r);

  QueuedEvent q;
  q.id = id.handle;
  q.counted = id.handle;
  q.mc = mc.handle;
  q.resp.uid = mc.uid;
  q.resp.id = mc.handle;
  q.resp.event = kEvMulticastJoin;
  rdma_ucm_ud_param& p = q.resp.param.ud;
  p.qp_num = wire::kMulticastQpn;
  p.qkey = id.local.qkey != 0 ? id.local.qkey : kUdpQkey;
  const auto dgid = cm::ipv4_gid(group);
  std::memcpy(p.ah_attr.grh.dgid, dgid.data(), 16);
  p.ah_attr.grh.sgid_index = 1;  // ::ffff:IPv4, the RoCEv2 GID
  p.ah_attr.grh.hop_limit = 64;
  p.ah_attr.is_global = 1;
  p.ah_attr.port_num = 1;
  push_event(id.file, q);
  return 0;
}

int CmService::on_leave_mcast(const std::uint8_t* b, ctl::CmCommandRep* rep) {
  const auto c = ucma::body_as<rdma_ucm_destroy_id>(b);
  auto it = mcs_.find(c.id);
  if (it == mcs_.end() || find_id(it->second.id) == nullptr) return ENOENT;
  rdma_ucm_destroy_id_resp r{};
  r.events_reported = it->second.events_reported;
  drop_mc(it->second);
  mcs_.erase(it);
  ucma::respond(rep, c.response, 0xffff, r);
  return 0;
}

void CmService::drop_mc(const Mc& mc) {
  auto id = ids_.find(mc.id);
  if (id == ids_.end()) return;
  auto f = files_.find(id->second.file);
  if (f == files_.end()) return;
  auto& q = f->second.events;
  q.erase(std::remove_if(q.begin(), q.end(),
                         [&](const QueuedEvent& e) { return e.mc == mc.handle; }),
          q.end());
}

}  // namespace uroce::daemon
