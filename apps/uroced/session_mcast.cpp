// AttachMcast / DetachMcast (docs/multicast.md): ibv_attach_mcast and
// ibv_detach_mcast, with the kernel uverbs layer's rules. A QP's second
// attach to the same group succeeds without a change; a detach from a group
// the QP is not attached to is EINVAL; DestroyQp of a QP still attached is
// EBUSY (session_queues.cpp); a client's exit detaches its QPs (destroying
// a QP in the engine leaves its groups).
#include <algorithm>
#include <cerrno>
#include <cstring>

#include "apps/uroced/client_session.h"
#include "datapath/engine/mcast_table.h"

namespace uroce::daemon {

namespace {

wire::Ipv6Addr gid_of(const ctl::McastReq& r) {
  wire::Ipv6Addr g;
  std::memcpy(g.b.data(), r.gid, g.b.size());
  return g;
}

}  // namespace

int ClientSession::on_attach_mcast(const ctl::McastReq& r, ctl::NoReply*, InFds&, OutFds*) {
  const auto it = qps_.find(r.qp_handle);
  if (it == qps_.end()) return ENOENT;
  QpObj& q = it->second;
  const wire::Ipv6Addr gid = gid_of(r);
  if (q.type != IBV_QPT_UD || !engine::is_mcast_gid(gid)) return EINVAL;
  // A device of several engine lcores: a group's packets would reach
  // whichever lcore RSS picks, not the QP's (vnic/mcast.h).
  if (shard_ != dev_) return EOPNOTSUPP;
  if (std::find(q.mcast.begin(), q.mcast.end(), gid) != q.mcast.end()) return 0;
  if (const int rc = shard_->attach_mcast(r.qp_handle, gid); rc != 0) {
    return rc;
  }
  q.mcast.push_back(gid);
  return 0;
}

int ClientSession::on_detach_mcast(const ctl::McastReq& r, ctl::NoReply*, InFds&, OutFds*) {
  const auto it = qps_.find(r.qp_handle);
  if (it == qps_.end()) return ENOENT;
  QpObj& q = it->second;
  const wire::Ipv6Addr gid = gid_of(r);
  const auto g = std::find(q.mcast.begin(), q.mcast.end(), gid);
  if (g == q.mcast.end()) return EINVAL;
  if (const int rc = shard_->detach_mcast(r.qp_handle, gid); rc != 0) return rc;
  q.mcast.erase(g);
  return 0;
}

}  // namespace uroce::daemon
