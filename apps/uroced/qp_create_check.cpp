#include "apps/uroced/qp_create_check.h"

#include <infiniband/verbs.h>

#include <cerrno>

#include "apps/uroced/device_attr.h"

namespace uroce::daemon {

namespace {

int check_dct(const ctl::CreateQpReq& r, QpShape* out) {
  const ibv_qp_cap& c = r.cap;
  if (r.srq_handle == 0 || r.send_cq_handle != 0 || c.max_send_wr != 0 || c.max_send_sge != 0 ||
      c.max_inline_data != 0 || r.dci_log_streams != 0 || r.dci_log_errored != 0) {
    return EINVAL;
  }
  out->type = transport::QpType::kDct;
  out->send_cq = false;
  out->sq = false;
  out->rq = false;
  out->dct_key = r.dct_key;
  return 0;
}

int check_dci(const ctl::CreateQpReq& r, QpShape* out) {
  if (r.srq_handle != 0 || r.recv_cq_handle != 0 || r.cap.max_recv_wr != 0 ||
      r.cap.max_recv_sge != 0 || r.dct_key != 0 ||
      !transport::dci_streams_valid(r.dci_log_streams, r.dci_log_errored)) {
    return EINVAL;
  }
  out->type = transport::QpType::kDci;
  out->recv_cq = false;
  out->rq = false;
  out->dci_log_streams = r.dci_log_streams;
  out->dci_log_errored = r.dci_log_errored;
  return 0;
}

int check_type(const ctl::CreateQpReq& r, QpShape* out) {
  switch (r.qp_type) {
    case IBV_QPT_RC:
    case IBV_QPT_UC:
    case IBV_QPT_UD:
      if (r.dc_type != ctl::kDcNone || r.dct_key != 0 || r.dci_log_streams != 0 ||
          r.dci_log_errored != 0) {
        return EINVAL;
      }
      out->type = static_cast<transport::QpType>(r.qp_type);
      out->rq = r.srq_handle == 0;
      return 0;
    case IBV_QPT_DRIVER:
      if (r.dc_type == ctl::kDcDct) return check_dct(r, out);
      if (r.dc_type == ctl::kDcDci) return check_dci(r, out);
      return EINVAL;
    default: return EINVAL;
  }
}

}  // namespace

int check_create_qp(const ctl::CreateQpReq& r, QpShape* out) {
  *out = QpShape{};
  if (r.sq_sig_all > 1) return EINVAL;
  if (int rc = check_type(r, out); rc != 0) return rc;
  // The receive capacities count only for a QP with a receive ring (with an
  // SRQ they are ignored, as verbs has it); a DCT's send ones are 0.
  const ibv_qp_cap& c = r.cap;
  if (c.max_send_wr > kMaxQpWr || c.max_send_sge > kMaxSge || c.max_inline_data > kMaxInline ||
      (out->rq && (c.max_recv_wr > kMaxQpWr || c.max_recv_sge > kMaxSge))) {
    return EINVAL;
  }
  return 0;
}

}  // namespace uroce::daemon
