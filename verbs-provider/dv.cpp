// uroce direct verbs (uroce_dv.h): the exported C entry points. They live in
// the shared object only, beside device.cpp, whose device ops identify a
// uroce device (a QP's context's device was allocated by our alloc_device).
#include "verbs-provider/include/infiniband/uroce_dv.h"

#include <cerrno>

#include "verbs-provider/ops.h"
#include "verbs-provider/qp.h"

static_assert(UROCE_DV_TX_CLASS_FROM_DSCP == uroce::ctl::kSchedClassFromDscp);

namespace {

using uroce::provider::device_ops;
using uroce::verbs_abi::verbs_device;

bool is_uroce(ibv_device* dev) {
  return dev != nullptr && reinterpret_cast<verbs_device*>(dev)->ops == device_ops();
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) bool uroce_dv_is_supported(ibv_device* device) {
  return is_uroce(device);
}

__attribute__((visibility("default"))) int uroce_dv_modify_qp_sched(ibv_qp* qp,
                                                                    const uroce_dv_qp_sched* attr) {
  if (qp == nullptr || attr == nullptr) return EINVAL;
  if (qp->context == nullptr || !is_uroce(qp->context->device)) return EOPNOTSUPP;
  constexpr std::uint32_t kKnown = UROCE_DV_QP_SCHED_RATE | UROCE_DV_QP_SCHED_CLASS;
  if ((attr->mask & ~kKnown) != 0 || attr->reserved != 0) return EINVAL;
  uroce::ctl::SetQpSchedReq req{};
  if ((attr->mask & UROCE_DV_QP_SCHED_RATE) != 0) {
    req.flags |= uroce::ctl::kSchedRate;
    req.rate_kbps = attr->rate_kbps;
    req.max_burst_bytes = attr->max_burst_bytes;
    req.typical_pkt_bytes = attr->typical_pkt_bytes;
  }
  if ((attr->mask & UROCE_DV_QP_SCHED_CLASS) != 0) {
    req.flags |= uroce::ctl::kSchedClass;
    req.tx_class = attr->tx_class;
  }
  return uroce::provider::set_qp_sched(qp, req);
}

__attribute__((visibility("default"))) ibv_qp* uroce_dv_create_qp(ibv_context* context,
                                                                  ibv_qp_init_attr_ex* qp_attr,
                                                                  uroce_dv_qp_init_attr* dv_attr) {
  if (context == nullptr || qp_attr == nullptr || dv_attr == nullptr) {
    errno = EINVAL;
    return nullptr;
  }
  if (!is_uroce(context->device)) {
    errno = EOPNOTSUPP;
    return nullptr;
  }
  return uroce::provider::dv_create_qp(context, qp_attr, dv_attr);
}

__attribute__((visibility("default"))) uroce_dv_qp_ex* uroce_dv_qp_ex_from_ibv_qp_ex(
    ibv_qp_ex* qp) {
  if (qp == nullptr) {
    errno = EINVAL;
    return nullptr;
  }
  if (qp->qp_base.context == nullptr || !is_uroce(qp->qp_base.context->device)) {
    errno = EOPNOTSUPP;
    return nullptr;
  }
  return &uroce::provider::to_uqp(qp)->dv.pub;
}

__attribute__((visibility("default"))) int uroce_dv_query_device(ibv_context* context,
                                                                 uroce_dv_context* attrs) {
  if (context == nullptr || attrs == nullptr) return EINVAL;
  if (!is_uroce(context->device)) return EOPNOTSUPP;
  return uroce::provider::dv_query_device(uroce::provider::state_of(context)->hello, attrs);
}

}  // extern "C"
