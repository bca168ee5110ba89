// UD multicast (docs/multicast.md): ibv_attach_mcast and ibv_detach_mcast
// ask uroced, which keeps the kernel uverbs layer's rules (a repeated
// attach succeeds, a detach of a group the QP is not in is EINVAL, a QP
// still attached cannot be destroyed) and puts the QP in the engine's group
// table. `lid` means nothing on RoCE and is passed on unread.
#include <cerrno>
#include <cstring>

#include "verbs-provider/context.h"
#include "verbs-provider/ops.h"

namespace uroce::provider {

namespace {

ctl::McastReq mcast_req(const ibv_qp* qp, const ibv_gid* gid, std::uint16_t lid) {
  ctl::McastReq req{};
  req.qp_handle = qp->handle;
  req.lid = lid;
  std::memcpy(req.gid, gid->raw, sizeof(req.gid));
  return req;
}

}  // namespace

int attach_mcast(ibv_qp* qp, const ibv_gid* gid, std::uint16_t lid) noexcept {
  ContextState* st = state_of(qp->context);
  if (st->dead()) return EIO;
  return st->ctl.call<ctl::Op::kAttachMcast>(mcast_req(qp, gid, lid), nullptr);
}

int detach_mcast(ibv_qp* qp, const ibv_gid* gid, std::uint16_t lid) noexcept {
  return destroy_status(
      state_of(qp->context)->ctl.call<ctl::Op::kDetachMcast>(mcast_req(qp, gid, lid), nullptr));
}

}  // namespace uroce::provider
