#include "verbs-provider/pd_mr.h"

#include <atomic>
#include <cerrno>
#include <cstdlib>

#include "verbs-provider/ops.h"

namespace uroce::provider {

namespace {

// The accesses rxe pins pages for writing (ib_access_writable): read-only
// memory refuses them.
bool writable_access(unsigned access) {
  return (access & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC |
                    IBV_ACCESS_MW_BIND)) != 0;
}

static_assert(kMaxMrRuns == ctl::kMaxMrObjects);

// Whether libibverbs' fork support is on (ibv_fork_init, RDMAV_FORK_SAFE or
// IBV_FORK_SAFE): it then marks a range MADV_DONTFORK before calling our
// reg_mr, and the remap must keep that (mr_remap.h). Asked once: the answer
// cannot change after the first registration (ibv_fork_init then fails with
// EINVAL), and asking costs a netlink exchange (IBV_FORK_UNNEEDED, the
// kernel's copy-on-fork, is asked of the RDMA netlink family).
bool fork_protected() {
  static std::atomic<int> cached{-1};
  int v = cached.load(std::memory_order_relaxed);
  if (v < 0) {
    v = ibv_is_fork_initialized() == IBV_FORK_ENABLED ? 1 : 0;
    cached.store(v, std::memory_order_relaxed);
  }
  return v == 1;
}

}  // namespace

ibv_pd* alloc_pd(ibv_context* ctx) noexcept {
  ContextState* st = state_of(ctx);
  ctl::AllocPdReq req{};
  ctl::AllocPdRep rep{};
  const int rc = st->ctl.call<ctl::Op::kAllocPd>(req, &rep);
  if (rc != 0) {
    errno = rc;
    return nullptr;
  }
  auto* pd = static_cast<ibv_pd*>(std::calloc(1, sizeof(ibv_pd)));
  if (pd == nullptr) {
    ctl::DeallocPdReq d{};
    d.pd_handle = rep.pd_handle;
    st->ctl.call<ctl::Op::kDeallocPd>(d, nullptr);
    errno = ENOMEM;
    return nullptr;
  }
  pd->context = ctx;
  pd->handle = rep.pd_handle;
  return pd;
}

int dealloc_pd(ibv_pd* pd) noexcept {
  ctl::DeallocPdReq req{};
  req.pd_handle = pd->handle;
  const int rc = destroy_status(state_of(pd->context)->ctl.call<ctl::Op::kDeallocPd>(req, nullptr));
  if (rc == 0) std::free(pd);
  return rc;
}

ibv_mr* reg_mr(ibv_pd* pd, void* addr, std::size_t length, std::uint64_t hca_va,
               int access) noexcept {
  ContextState* st = state_of(pd->context);
  if (st->dead()) {
    errno = EIO;
    return nullptr;
  }
  // Binding memory windows needs MW support (a device with max_mw 0 has none).
  if ((access & IBV_ACCESS_MW_BIND) != 0 && st->hello.device.max_mw == 0) {
    errno = EOPNOTSUPP;
    return nullptr;
  }
  UroceMr* mr = make_object<UroceMr>();
  if (mr == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  int rc =
      st->memfds.acquire(addr, length, &mr->backing, writable_access(access), fork_protected());
  if (rc == 0) {
    ctl::RegMrReq req{};
    req.pd_handle = pd->handle;
    req.access = static_cast<std::uint32_t>(access);
    req.addr = reinterpret_cast<std::uintptr_t>(addr);
    req.length = length;
    req.iova = hca_va;
    // Every page is on a shared object now: the daemon maps them itself.
    req.source = ctl::MrSource::kProcessMapping;
    ctl::RegMrRep rep{};
    rc = st->ctl.call<ctl::Op::kRegMr>(req, &rep);
    if (rc == 0) {
      mr->st = st;
      mr->iova = hca_va;
      ibv_mr& m = mr->vmr.ibv_mr;
      m.context = pd->context;
      m.pd = pd;
      m.addr = addr;
      m.length = length;
      m.handle = rep.mr_handle;
      m.lkey = rep.lkey;
      m.rkey = rep.rkey;
      mr->vmr.mr_type = verbs_abi::verbs_mr_type::kMr;
      mr->vmr.access = access;
      return &m;
    }
    st->memfds.release(mr->backing);
  }
  free_object(mr);
  errno = rc;
  return nullptr;
}

int dereg_mr(verbs_abi::verbs_mr* vmr) noexcept {
  UroceMr* mr = to_umr(vmr);
  ctl::DeregMrReq req{};
  req.mr_handle = vmr->ibv_mr.handle;
  const int rc = destroy_status(mr->st->ctl.call<ctl::Op::kDeregMr>(req, nullptr));
  if (rc != 0) return rc;
  mr->st->memfds.release(mr->backing);
  free_object(mr);
  return 0;
}

int rereg_mr(verbs_abi::verbs_mr* vmr, int flags, ibv_pd* pd, void* addr, std::size_t length,
             int access) noexcept {
  UroceMr* mr = to_umr(vmr);
  ContextState* st = mr->st;
  if (st->dead()) return EIO;
  ctl::ReregMrReq req{};
  req.mr_handle = vmr->ibv_mr.handle;
  req.flags = static_cast<std::uint32_t>(flags);
  req.pd_handle = (flags & IBV_REREG_MR_CHANGE_PD) != 0 ? pd->handle : vmr->ibv_mr.pd->handle;
  req.access =
      static_cast<std::uint32_t>((flags & IBV_REREG_MR_CHANGE_ACCESS) != 0 ? access : vmr->access);
  MrBacking fresh;
  const bool translate = (flags & IBV_REREG_MR_CHANGE_TRANSLATION) != 0;
  if (translate) {
    const int rc =
        st->memfds.acquire(addr, length, &fresh, writable_access(req.access), fork_protected());
    if (rc != 0) return rc;
    req.addr = reinterpret_cast<std::uintptr_t>(addr);
    req.length = length;
    req.iova = req.addr;
    req.source = ctl::MrSource::kProcessMapping;
  } else {
    req.addr = reinterpret_cast<std::uintptr_t>(vmr->ibv_mr.addr);
    req.length = vmr->ibv_mr.length;
    req.iova = mr->iova;
  }
  ctl::ReregMrRep rep{};
  const int rc = st->ctl.call<ctl::Op::kReregMr>(req, &rep);
  if (rc != 0) {
    if (translate) st->memfds.release(fresh);
    return rc;
  }
  if (translate) {
    st->memfds.release(mr->backing);
    mr->backing = fresh;
    mr->iova = req.iova;
  }
  if ((flags & IBV_REREG_MR_CHANGE_ACCESS) != 0) vmr->access = access;
  vmr->ibv_mr.lkey = rep.lkey;
  vmr->ibv_mr.rkey = rep.rkey;
  return 0;
}

}  // namespace uroce::provider
