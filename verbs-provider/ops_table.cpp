// The context ops table every uroce context gets (verbs_set_ops in
// alloc_context). Kept apart from device.cpp, whose load-time constructor
// registers the driver and which only the shared object contains.
#include "verbs-provider/ops.h"

namespace uroce::provider {

// Designated initialisers must follow member order (driver_abi.h); these do.
// Unset members get libibverbs' EOPNOTSUPP/ENOSYS defaults: XRC, flows,
// counters, device memory, WQs, parent domains, import/export, ECE.
const verbs_abi::verbs_context_ops kUroceOps = {
    .alloc_mw = alloc_mw,
    .alloc_pd = alloc_pd,
    .async_event = async_event,
    .attach_mcast = attach_mcast,
    .bind_mw = bind_mw,
    .cq_event = cq_event,
    .create_ah = create_ah,
    .create_cq = create_cq,
    .create_cq_ex = create_cq_ex,
    .create_qp = create_qp,
    .create_qp_ex = create_qp_ex,
    .create_srq = create_srq,
    .dealloc_mw = dealloc_mw,
    .dealloc_pd = dealloc_pd,
    .dereg_mr = dereg_mr,
    .destroy_ah = destroy_ah,
    .destroy_cq = destroy_cq,
    .destroy_qp = destroy_qp,
    .destroy_srq = destroy_srq,
    .detach_mcast = detach_mcast,
    .free_context = free_context,
    .get_srq_num = get_srq_num,
    .modify_qp = modify_qp,
    .modify_qp_rate_limit = modify_qp_rate_limit,
    .modify_srq = modify_srq,
    .poll_cq = poll_cq,
    .post_recv = post_recv,
    .post_send = post_send,
    .post_srq_recv = post_srq_recv,
    .query_device_ex = query_device_ex,
    .query_port = query_port,
    .query_qp = query_qp,
    .query_srq = query_srq,
    .reg_mr = reg_mr,
    .req_notify_cq = req_notify_cq,
    .rereg_mr = rereg_mr,
    .resize_cq = resize_cq,
};

}  // namespace uroce::provider
