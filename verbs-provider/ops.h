// The verbs the provider implements: one function per verbs_context_ops
// member we set (device.cpp puts them in the table). Each is defined in the
// file of its object (context.cpp, pd_mr.cpp, cq.cpp, qp.cpp, qp_post.cpp,
// srq.cpp, ah.cpp, object_registry.cpp's async_event in async.cpp).
//
// Conventions (rdma-core's): functions returning int return 0 or a positive
// errno value; functions returning a pointer return null with errno set.
// All are noexcept: nothing may unwind into libibverbs.
#pragma once

#include <infiniband/verbs.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

#include "datapath/ctl/protocol.h"
#include "verbs-provider/driver_abi.h"

namespace uroce::provider {

// device.cpp: the table libibverbs gets for every context.
extern const verbs_abi::verbs_context_ops kUroceOps;

// context.cpp
verbs_context* alloc_context(ibv_device* dev, int cmd_fd, void* private_data) noexcept;
void free_context(ibv_context* ctx) noexcept;
int query_device_ex(ibv_context* ctx, const ibv_query_device_ex_input* in, ibv_device_attr_ex* attr,
                    std::size_t attr_size) noexcept;
int query_port(ibv_context* ctx, std::uint8_t port, ibv_port_attr* attr) noexcept;

// async.cpp
void async_event(ibv_context* ctx, ibv_async_event* ev) noexcept;

// pd_mr.cpp
ibv_pd* alloc_pd(ibv_context* ctx) noexcept;
int dealloc_pd(ibv_pd* pd) noexcept;
ibv_mr* reg_mr(ibv_pd* pd, void* addr, std::size_t length, std::uint64_t hca_va,
               int access) noexcept;
int dereg_mr(verbs_abi::verbs_mr* vmr) noexcept;
int rereg_mr(verbs_abi::verbs_mr* vmr, int flags, ibv_pd* pd, void* addr, std::size_t length,
             int access) noexcept;

// mcast.cpp
int attach_mcast(ibv_qp* qp, const ibv_gid* gid, std::uint16_t lid) noexcept;
int detach_mcast(ibv_qp* qp, const ibv_gid* gid, std::uint16_t lid) noexcept;

// mw.cpp
ibv_mw* alloc_mw(ibv_pd* pd, ibv_mw_type type) noexcept;
int dealloc_mw(ibv_mw* mw) noexcept;
int bind_mw(ibv_qp* qp, ibv_mw* mw, ibv_mw_bind* bind) noexcept;

// cq.cpp, cq_ex.cpp
ibv_cq* create_cq(ibv_context* ctx, int cqe, ibv_comp_channel* channel, int comp_vector) noexcept;
ibv_cq_ex* create_cq_ex(ibv_context* ctx, ibv_cq_init_attr_ex* attr) noexcept;
int destroy_cq(ibv_cq* cq) noexcept;
int resize_cq(ibv_cq* cq, int cqe) noexcept;
int poll_cq(ibv_cq* cq, int ne, ibv_wc* wc) noexcept;
int req_notify_cq(ibv_cq* cq, int solicited_only) noexcept;
void cq_event(ibv_cq* cq) noexcept;

// qp.cpp, qp_post.cpp
ibv_qp* create_qp(ibv_pd* pd, ibv_qp_init_attr* attr) noexcept;
ibv_qp* create_qp_ex(ibv_context* ctx, ibv_qp_init_attr_ex* attr) noexcept;
int modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int attr_mask) noexcept;
int modify_qp_rate_limit(ibv_qp* qp, ibv_qp_rate_limit_attr* attr) noexcept;
// SetQpSched for `qp` (req.qp_handle is filled in): ibv_modify_qp_rate_limit
// and uroce_dv_modify_qp_sched.
int set_qp_sched(ibv_qp* qp, ctl::SetQpSchedReq req) noexcept;
// The device ops libibverbs knows uroce devices by (device.cpp).
const verbs_abi::verbs_device_ops* device_ops() noexcept;
int query_qp(ibv_qp* qp, ibv_qp_attr* attr, int attr_mask, ibv_qp_init_attr* init) noexcept;
int destroy_qp(ibv_qp* qp) noexcept;
int post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad_wr) noexcept;
int post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) noexcept;

// srq.cpp
ibv_srq* create_srq(ibv_pd* pd, ibv_srq_init_attr* attr) noexcept;
int modify_srq(ibv_srq* srq, ibv_srq_attr* attr, int attr_mask) noexcept;
int query_srq(ibv_srq* srq, ibv_srq_attr* attr) noexcept;
int destroy_srq(ibv_srq* srq) noexcept;
int post_srq_recv(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) noexcept;
int get_srq_num(ibv_srq* srq, std::uint32_t* srq_num) noexcept;

// ah.cpp
ibv_ah* create_ah(ibv_pd* pd, ibv_ah_attr* attr) noexcept;
int destroy_ah(ibv_ah* ah) noexcept;

// Helpers shared by the files above.

// Destroy verbs succeed locally once the daemon is gone (it reclaimed
// everything when the connection closed), as rdma-core treats destroy after
// a device disassociation.
inline int destroy_status(int rc) { return rc == EIO ? 0 : rc; }

// malloc + placement new / destructor + free: the provider must not depend
// on libstdc++'s operator new.
template <class T>
T* make_object() noexcept {
  void* mem = std::malloc(sizeof(T));
  if (mem == nullptr) return nullptr;
  return new (mem) T();
}
template <class T>
void free_object(T* p) noexcept {
  if (p == nullptr) return;
  p->~T();
  std::free(p);
}

}  // namespace uroce::provider
