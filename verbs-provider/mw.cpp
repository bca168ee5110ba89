// Memory windows (docs/memory-windows.md). A window is a plain ibv_mw whose
// handle is the daemon's and whose rkey the engine's MR table gave it.
// Binding runs on a QP's send queue: ibv_bind_mw (type 1) posts a BIND_MW WR
// with the window's next key, as rxe's provider does, and the application's
// IBV_WR_BIND_MW (type 2) goes through post_send; the engine executes both
// in send-queue order (datapath/transport/rc_requester.h).
#include <cerrno>
#include <cstdlib>

#include "verbs-provider/context.h"
#include "verbs-provider/ops.h"

namespace uroce::provider {

namespace {

// The key byte a type-1 bind moves to (rxe's next_rkey, verbs'
// ibv_inc_rkey): the index bits stay.
std::uint32_t next_rkey(std::uint32_t rkey) { return (rkey & ~0xFFu) | ((rkey + 1) & 0xFFu); }

}  // namespace

ibv_mw* alloc_mw(ibv_pd* pd, ibv_mw_type type) noexcept {
  ContextState* st = state_of(pd->context);
  if (st->dead()) {
    errno = EIO;
    return nullptr;
  }
  ctl::AllocMwReq req{};
  req.pd_handle = pd->handle;
  req.type = static_cast<std::uint32_t>(type);
  ctl::AllocMwRep rep{};
  const int rc = st->ctl.call<ctl::Op::kAllocMw>(req, &rep);
  if (rc != 0) {
    errno = rc;
    return nullptr;
  }
  auto* mw = static_cast<ibv_mw*>(std::calloc(1, sizeof(ibv_mw)));
  if (mw == nullptr) {
    ctl::DeallocMwReq d{};
    d.mw_handle = rep.mw_handle;
    st->ctl.call<ctl::Op::kDeallocMw>(d, nullptr);
    errno = ENOMEM;
    return nullptr;
  }
  mw->context = pd->context;
  mw->pd = pd;
  mw->rkey = rep.rkey;
  mw->handle = rep.mw_handle;
  mw->type = type;
  return mw;
}

int dealloc_mw(ibv_mw* mw) noexcept {
  ctl::DeallocMwReq req{};
  req.mw_handle = mw->handle;
  const int rc = destroy_status(state_of(mw->context)->ctl.call<ctl::Op::kDeallocMw>(req, nullptr));
  if (rc == 0) std::free(mw);
  return rc;
}

int bind_mw(ibv_qp* qp, ibv_mw* mw, ibv_mw_bind* bind) noexcept {
  const ibv_mw_bind_info& info = bind->bind_info;
  // The checks rxe's provider makes before it posts (the engine makes the
  // rest and fails the WR with IBV_WC_MW_BIND_ERR).
  int rc = 0;
  if (mw->type != IBV_MW_TYPE_1 || (info.mr == nullptr && (info.addr != 0 || info.length != 0)) ||
      (info.mw_access_flags & IBV_ACCESS_ZERO_BASED) != 0) {
    rc = EINVAL;
  } else if (info.mr != nullptr && info.mr->pd != mw->pd) {
    rc = EPERM;
  }
  if (rc == 0) {
    ibv_send_wr wr{};
    wr.wr_id = bind->wr_id;
    wr.opcode = IBV_WR_BIND_MW;
    wr.send_flags = bind->send_flags;
    wr.bind_mw.mw = mw;
    wr.bind_mw.rkey = next_rkey(mw->rkey);
    wr.bind_mw.bind_info = info;
    ibv_send_wr* bad = nullptr;
    rc = post_send(qp, &wr, &bad);
    // As rxe: the new key is the window's from the post on; a bind that
    // then fails leaves the application to undo it.
    if (rc == 0) mw->rkey = wr.bind_mw.rkey;
  }
  if (rc != 0) errno = rc;
  return rc;
}

}  // namespace uroce::provider
