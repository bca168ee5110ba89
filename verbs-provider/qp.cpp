#include "verbs-provider/qp.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "datapath/shm/rxe_layout.h"
#include "datapath/shm/wqe_write.h"
#include "datapath/transport/qp_attr.h"
#include "verbs-provider/cq.h"
#include "verbs-provider/ops.h"
#include "verbs-provider/srq.h"

namespace uroce::provider {

namespace {

constexpr std::uint64_t kUdSendOps = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
// UC binds windows too (a local operation, as rxe's UC does).
constexpr std::uint64_t kUcSendOps = kUdSendOps | IBV_QP_EX_WITH_RDMA_WRITE |
                                     IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_BIND_MW;
constexpr std::uint64_t kRcSendOps =
    kUcSendOps | IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
    IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_SEND_WITH_INV |
    IBV_QP_EX_WITH_BIND_MW;

constexpr std::uint32_t kSupportedCompMask =
    IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;

void destroy_on_daemon(ContextState* st, std::uint32_t handle) {
  ctl::DestroyQpReq d{};
  d.qp_handle = handle;
  st->ctl.call<ctl::Op::kDestroyQp>(d, nullptr);
}

}  // namespace

std::uint32_t raw_opcode(const ibv_send_wr& wr) {
  std::uint32_t op;
  static_assert(sizeof(op) == sizeof(wr.opcode));
  std::memcpy(&op, &wr.opcode, sizeof(op));
  return op;
}

bool send_opcode_allowed(ibv_qp_type type, std::uint32_t op) {
  switch (op) {
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_IMM:
      return type == IBV_QPT_RC || type == IBV_QPT_UC || type == IBV_QPT_UD;
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM: return type == IBV_QPT_RC || type == IBV_QPT_UC;
    case IBV_WR_RDMA_READ:
    case IBV_WR_ATOMIC_CMP_AND_SWP:
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
    case IBV_WR_LOCAL_INV:
    case IBV_WR_SEND_WITH_INV: return type == IBV_QPT_RC;
    case IBV_WR_BIND_MW: return type == IBV_QPT_RC || type == IBV_QPT_UC;
    default: return false;  // TSO, DRIVER1, ATOMIC_WRITE: not executed
  }
}

std::uint64_t supported_send_ops(ibv_qp_type type) {
  switch (type) {
    case IBV_QPT_RC: return kRcSendOps;
    case IBV_QPT_UC: return kUcSendOps;
    case IBV_QPT_UD: return kUdSendOps;
    default: return 0;
  }
}

bool sq_accepts(const ibv_qp& qp) {
  return qp.state == IBV_QPS_RTS || qp.state == IBV_QPS_SQD || qp.state == IBV_QPS_SQE ||
         qp.state == IBV_QPS_ERR;
}

bool rq_accepts(const ibv_qp& qp) { return qp.state != IBV_QPS_RESET; }

ibv_qp* create_qp_ex(ibv_context* ctx, ibv_qp_init_attr_ex* attr) noexcept {
  return create_qp_dc(ctx, attr, DcInit{});
}

namespace {

// The checks of create_qp_dc before anything is sent: 0, EOPNOTSUPP (a
// comp_mask bit, create flag or send op uroce does not have for the type) or
// EINVAL (a missing or foreign object, or a DC rule of uroce_dv.h).
int check_create(ibv_context* ctx, const ibv_qp_init_attr_ex& a, const DcInit& dc) {
  const bool dct = dc.type == ctl::kDcDct;
  const bool dci = dc.type == ctl::kDcDci;
  // A DCI executes what RC does; a DCT has no send queue at all.
  // A DCI takes RC's operations but binds no memory window (rxe binds on RC
  // and UC QPs only; the engine refuses BIND_MW from a DCI's ring).
  const std::uint64_t ops =
      dci ? (kRcSendOps & ~std::uint64_t{IBV_QP_EX_WITH_BIND_MW}) : supported_send_ops(a.qp_type);
  const bool send_ops = (a.comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) != 0;
  if ((a.comp_mask & ~kSupportedCompMask) != 0 ||
      ((a.comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) != 0 && a.create_flags != 0) ||
      (!dct && ops == 0) || (!dct && send_ops && (a.send_ops_flags & ~ops) != 0)) {
    return EOPNOTSUPP;
  }
  if ((dc.type != ctl::kDcNone) != (a.qp_type == IBV_QPT_DRIVER)) return EINVAL;
  if ((a.comp_mask & IBV_QP_INIT_ATTR_PD) == 0 || a.pd == nullptr || a.pd->context != ctx ||
      (a.srq != nullptr && a.srq->context != ctx)) {
    return EINVAL;
  }
  // The CQs the type uses (a DCT ignores send_cq, a DCI recv_cq).
  if (!dct && (a.send_cq == nullptr || a.send_cq->context != ctx)) return EINVAL;
  if (!dci && (a.recv_cq == nullptr || a.recv_cq->context != ctx)) return EINVAL;
  if (dct && (a.srq == nullptr || send_ops)) return EINVAL;
  if (dci && (a.srq != nullptr || a.cap.max_recv_wr != 0 ||
              !transport::dci_streams_valid(dc.log_streams, dc.log_errored))) {
    return EINVAL;
  }
  return 0;
}

}  // namespace

ibv_qp* create_qp_dc(ibv_context* ctx, ibv_qp_init_attr_ex* attr, const DcInit& dc) noexcept {
  ContextState* st = state_of(ctx);
  if (int rc = check_create(ctx, *attr, dc); rc != 0) {
    errno = rc;
    return nullptr;
  }
  if (st->dead()) {
    errno = EIO;
    return nullptr;
  }
  UroceQp* qp = make_object<UroceQp>();
  if (qp == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  const bool dct = dc.type == ctl::kDcDct;
  const bool dci = dc.type == ctl::kDcDci;
  ctl::CreateQpReq req{};
  req.pd_handle = attr->pd->handle;
  req.qp_type = attr->qp_type;
  req.send_cq_handle = dct ? 0 : to_ucq(attr->send_cq)->handle;
  req.recv_cq_handle = dci ? 0 : to_ucq(attr->recv_cq)->handle;
  req.srq_handle = attr->srq != nullptr ? to_usrq(attr->srq)->handle : 0;
  req.sq_sig_all = attr->sq_sig_all != 0 ? 1 : 0;
  req.cap = attr->cap;
  if (dct) {  // ignored, as mlx5 does: a DCT has no send queue
    req.cap.max_send_wr = 0;
    req.cap.max_send_sge = 0;
    req.cap.max_inline_data = 0;
  }
  if (dci) req.cap.max_recv_sge = 0;  // no receive queue (max_recv_wr is 0)
  req.user_handle = reinterpret_cast<std::uintptr_t>(&qp->vqp.qp);
  req.dc_type = dc.type;
  req.dct_key = dct ? dc.dct_key : 0;
  req.dci_log_streams = dci ? dc.log_streams : 0;
  req.dci_log_errored = dci ? dc.log_errored : 0;
  ctl::CreateQpRep rep{};
  int rc = st->ctl.call<ctl::Op::kCreateQp>(req, &rep);
  if (rc == 0) {
    if (!dct) {
      rc = attach_arena_ring(st, rep.sq_offset, rep.sq_bytes, rep.sq_log2_elem_size,
                             rep.sq_log2_slots, shm::kSendWqeFlexOffset, &qp->sq);
      qp->has_sq = rc == 0;
    }
    if (rc == 0 && attr->srq == nullptr && dc.type == ctl::kDcNone) {
      rc = attach_arena_ring(st, rep.rq_offset, rep.rq_bytes, rep.rq_log2_elem_size,
                             rep.rq_log2_slots, shm::kRecvWqeFlexOffset, &qp->rq);
      qp->has_rq = rc == 0;
    }
    if (rc != 0) destroy_on_daemon(st, rep.qp_handle);
  }
  if (rc != 0) {
    free_object(qp);
    errno = rc;
    return nullptr;
  }
  pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
  pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
  qp->st = st;
  qp->handle = rep.qp_handle;
  qp->type = attr->qp_type;
  qp->dc_type = dc.type;
  qp->dci_log_streams = dci ? dc.log_streams : 0;
  qp->sq_doorbell = rep.sq_doorbell;
  qp->rq_doorbell = rep.rq_doorbell;
  if (qp->has_sq) {
    const std::size_t sq_elem = qp->sq.elem_size();
    qp->max_send_sge = std::min(rep.cap.max_send_sge, shm::send_sge_room(sq_elem));
    qp->max_inline = static_cast<std::uint32_t>(
        std::min<std::size_t>(rep.cap.max_inline_data, sq_elem - shm::kSendWqeFlexOffset));
  }
  if (qp->has_rq)
    qp->max_recv_sge = std::min(rep.cap.max_recv_sge, shm::recv_sge_room(qp->rq.elem_size()));

  // What ibv_cmd_create_qp would fill for a kernel provider; a DC QP keeps
  // only the CQ it uses.
  ibv_qp& q = qp->vqp.qp;
  q.context = ctx;
  q.qp_context = attr->qp_context;
  q.pd = attr->pd;
  q.send_cq = dct ? nullptr : attr->send_cq;
  q.recv_cq = dci ? nullptr : attr->recv_cq;
  q.srq = attr->srq;
  q.handle = rep.qp_handle;
  q.qp_num = rep.qpn;
  q.state = IBV_QPS_RESET;
  q.qp_type = attr->qp_type;
  q.events_completed = 0;
  pthread_mutex_init(&q.mutex, nullptr);
  pthread_cond_init(&q.cond, nullptr);
  if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) != 0) {
    install_qp_ex_ops(qp, attr->send_ops_flags);
    qp->vqp.comp_mask |= verbs_abi::kVerbsQpEx;
  }
  install_dv_ops(qp);
  attr->cap = rep.cap;
  qp->target.element = &qp->vqp.qp;
  st->objects.add(&qp->target);
  return &q;
}

ibv_qp* create_qp(ibv_pd* pd, ibv_qp_init_attr* attr) noexcept {
  ibv_qp_init_attr_ex ex{};
  ex.qp_context = attr->qp_context;
  ex.send_cq = attr->send_cq;
  ex.recv_cq = attr->recv_cq;
  ex.srq = attr->srq;
  ex.cap = attr->cap;
  ex.qp_type = attr->qp_type;
  ex.sq_sig_all = attr->sq_sig_all;
  ex.comp_mask = IBV_QP_INIT_ATTR_PD;
  ex.pd = pd;
  ibv_qp* qp = create_qp_ex(pd->context, &ex);
  if (qp != nullptr) attr->cap = ex.cap;
  return qp;
}

// Every QP type, DC ones included, sends the modify as it is: the engine's
// transport checks it (transport/qp_modify_rules.h, which has the DCI and
// DCT transitions) and its EINVAL comes back as the verb's.
int modify_qp(ibv_qp* ibqp, ibv_qp_attr* attr, int attr_mask) noexcept {
  UroceQp* qp = to_uqp(ibqp);
  ctl::ModifyQpReq req{};
  req.qp_handle = qp->handle;
  req.attr_mask = static_cast<std::uint32_t>(attr_mask);
  req.attr = *attr;
  const int rc = qp->st->ctl.call<ctl::Op::kModifyQp>(req, nullptr);
  if (rc == 0 && (attr_mask & IBV_QP_STATE) != 0 && attr->qp_state == IBV_QPS_RESET) {
    // The engine completes nothing more for this QP once it is in RESET, so
    // its leftover completions can be removed without racing new ones. A
    // DC QP has one CQ only (the other is null).
    if (ibqp->send_cq != nullptr) cq_clean(to_ucq(ibqp->send_cq), ibqp->qp_num);
    if (ibqp->recv_cq != nullptr && ibqp->recv_cq != ibqp->send_cq) {
      cq_clean(to_ucq(ibqp->recv_cq), ibqp->qp_num);
    }
  }
  return rc;
}

// The daemon paces the QP (sched/pacer.h): rate_limit 0 removes the limit;
// max_burst_sz and typical_pkt_sz 0 take the defaults (one packet, a full
// frame of the MTU). EINVAL for a comp_mask or a rate out of range.
int modify_qp_rate_limit(ibv_qp* ibqp, ibv_qp_rate_limit_attr* attr) noexcept {
  if (attr == nullptr || attr->comp_mask != 0) return EINVAL;
  ctl::SetQpSchedReq req{};
  req.flags = ctl::kSchedRate;
  req.rate_kbps = attr->rate_limit;
  req.max_burst_bytes = attr->max_burst_sz;
  req.typical_pkt_bytes = attr->typical_pkt_sz;
  return set_qp_sched(ibqp, req);
}

int set_qp_sched(ibv_qp* ibqp, ctl::SetQpSchedReq req) noexcept {
  UroceQp* qp = to_uqp(ibqp);
  req.qp_handle = qp->handle;
  return qp->st->ctl.call<ctl::Op::kSetQpSched>(req, nullptr);
}

int query_qp(ibv_qp* ibqp, ibv_qp_attr* attr, int attr_mask, ibv_qp_init_attr* init) noexcept {
  UroceQp* qp = to_uqp(ibqp);
  ctl::QueryQpReq req{};
  req.qp_handle = qp->handle;
  req.attr_mask = static_cast<std::uint32_t>(attr_mask);
  ctl::QueryQpRep rep{};
  const int rc = qp->st->ctl.call<ctl::Op::kQueryQp>(req, &rep);
  if (rc != 0) return rc;
  *attr = rep.attr;
  attr->cap = rep.cap;
  if (init != nullptr) {
    std::memset(init, 0, sizeof(*init));
    init->qp_context = ibqp->qp_context;
    init->send_cq = ibqp->send_cq;
    init->recv_cq = ibqp->recv_cq;
    init->srq = ibqp->srq;
    init->cap = rep.cap;
    init->qp_type = ibqp->qp_type;
    init->sq_sig_all = static_cast<int>(rep.sq_sig_all);
  }
  return 0;
}

int destroy_qp(ibv_qp* ibqp) noexcept {
  UroceQp* qp = to_uqp(ibqp);
  ContextState* st = qp->st;
  ctl::DestroyQpReq req{};
  req.qp_handle = qp->handle;
  const int rc = destroy_status(st->ctl.call<ctl::Op::kDestroyQp>(req, nullptr));
  if (rc != 0) return rc;
  st->objects.remove(&qp->target);
  wait_events_acked(&ibqp->mutex, &ibqp->cond, &ibqp->events_completed, qp->target.reported);
  pthread_spin_destroy(&qp->sq_lock);
  pthread_spin_destroy(&qp->rq_lock);
  pthread_mutex_destroy(&ibqp->mutex);
  pthread_cond_destroy(&ibqp->cond);
  free_object(qp);
  return 0;
}

}  // namespace uroce::provider
