// post_send and post_recv: WQEs written into the shared rings under the
// queue's lock, published with one store-release per call, then the ring's
// doorbell rung in the connection's doorbell page (datapath/shm/doorbell.h);
// no system call.
#include <cerrno>
#include <cstring>

#include "datapath/shm/wqe_write.h"
#include "verbs-provider/ah.h"
#include "verbs-provider/ops.h"
#include "verbs-provider/qp.h"
#include "verbs-provider/srq.h"

namespace uroce::provider {

namespace {

constexpr std::uint32_t kKnownSendFlags =
    IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | IBV_SEND_INLINE;

bool is_atomic(std::uint32_t op) {
  return op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

bool has_outgoing_payload(std::uint32_t op) {
  return op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_SEND_WITH_INV ||
         op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM;
}

constexpr std::size_t kMaxSgeOnStack = 32;

}  // namespace

int validate_send_wr(const UroceQp& qp, const ibv_send_wr& wr, std::uint32_t* flags) {
  const std::uint32_t op = raw_opcode(wr);
  if (!send_opcode_allowed(qp.type, op)) return EINVAL;
  std::uint32_t f = wr.send_flags;
  if ((f & ~kKnownSendFlags) != 0) return EINVAL;
  if (wr.num_sge < 0 || static_cast<std::uint32_t>(wr.num_sge) > qp.max_send_sge ||
      static_cast<std::size_t>(wr.num_sge) > kMaxSgeOnStack) {
    return EINVAL;
  }
  if (wr.num_sge > 0 && wr.sg_list == nullptr) return EINVAL;
  std::uint64_t length = 0;
  for (int i = 0; i < wr.num_sge; ++i) length += wr.sg_list[i].length;
  if (!has_outgoing_payload(op)) f &= ~static_cast<std::uint32_t>(IBV_SEND_INLINE);
  if ((f & IBV_SEND_INLINE) != 0 && length > qp.max_inline) return EINVAL;
  if (is_atomic(op) && (length < 8 || (wr.wr.atomic.remote_addr & 7u) != 0)) {
    return EINVAL;
  }
  if (qp.type == IBV_QPT_UD &&
      (wr.wr.ud.ah == nullptr || wr.wr.ud.ah->context != qp.vqp.qp.context)) {
    return EINVAL;
  }
  if (op == IBV_WR_BIND_MW &&
      (wr.bind_mw.mw == nullptr || wr.bind_mw.mw->context != qp.vqp.qp.context ||
       (wr.bind_mw.bind_info.length != 0 && wr.bind_mw.bind_info.mr == nullptr))) {
    return EINVAL;
  }
  *flags = f;
  return 0;
}

int build_send_wqe(const UroceQp& qp, const ibv_send_wr& wr, std::uint32_t flags,
                   std::span<std::byte> slot) {
  shm::SendWqeFields f;
  f.wr_id = wr.wr_id;
  f.opcode = raw_opcode(wr);  // validated by validate_send_wr
  f.send_flags = flags;
  f.imm_or_inv = wr.imm_data;  // the same four bytes as invalidate_rkey
  switch (f.opcode) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
    case IBV_WR_RDMA_READ:
      f.remote_addr = wr.wr.rdma.remote_addr;
      f.rkey = wr.wr.rdma.rkey;
      break;
    case IBV_WR_ATOMIC_CMP_AND_SWP:
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
      f.remote_addr = wr.wr.atomic.remote_addr;
      f.rkey = wr.wr.atomic.rkey;
      f.compare_add = wr.wr.atomic.compare_add;
      f.swap = wr.wr.atomic.swap;
      break;
    case IBV_WR_BIND_MW: {
      const ibv_mw_bind_info& b = wr.bind_mw.bind_info;
      f.imm_or_inv = wr.bind_mw.mw->rkey;
      f.rkey = wr.bind_mw.rkey;
      f.remote_addr = b.addr;
      f.compare_add = b.length;
      f.mr_lkey = b.mr != nullptr ? b.mr->lkey : 0;
      f.mw_access = b.mw_access_flags;
      break;
    }
    default:
      if (qp.type == IBV_QPT_UD) {
        f.remote_qpn = wr.wr.ud.remote_qpn;
        f.remote_qkey = wr.wr.ud.remote_qkey;
        f.ah_num = to_uah(wr.wr.ud.ah)->ah_num;
      }
      break;
  }
  if (shm::write_send_fixed(slot, f) != shm::WqeWriteError::kOk) return EINVAL;
  const std::size_t n = static_cast<std::size_t>(wr.num_sge);
  shm::WqeWriteError e;
  if ((flags & IBV_SEND_INLINE) != 0) {
    shm::InlineWriter w(slot, qp.max_inline);
    for (std::size_t i = 0; i < n; ++i) {
      const void* src =
          reinterpret_cast<const void*>(static_cast<std::uintptr_t>(wr.sg_list[i].addr));
      if (!w.append(src, wr.sg_list[i].length)) break;
    }
    e = w.finish();
  } else {
    shm::WqeSge sges[kMaxSgeOnStack];
    shm::to_wqe_sges(wr.sg_list, n, sges);
    e = shm::set_send_sges(slot, {sges, n}, qp.max_send_sge);
  }
  return e == shm::WqeWriteError::kOk ? 0 : EINVAL;
}

int post_send(ibv_qp* ibqp, ibv_send_wr* wr, ibv_send_wr** bad_wr) noexcept {
  UroceQp* qp = to_uqp(ibqp);
  if (bad_wr == nullptr) return EINVAL;
  *bad_wr = nullptr;
  if (qp->st->dead()) {
    *bad_wr = wr;
    errno = EIO;
    return EIO;
  }
  // A DCI's WRs name their targets, which ibv_send_wr has no field for:
  // they go through ibv_wr_* and uroce_dv_wr_set_dc_addr (as with mlx5). A
  // DCT has no send queue. C10-96: a QP takes sends only from RTS on (ERR
  // flushes them).
  if (is_dc(*qp) || !sq_accepts(*ibqp)) {
    *bad_wr = wr;
    return EINVAL;
  }
  pthread_spin_lock(&qp->sq_lock);
  std::uint32_t free = qp->sq.free_slots();
  std::uint32_t built = 0;
  int rc = 0;
  for (; wr != nullptr; wr = wr->next) {
    std::uint32_t flags = 0;
    rc = validate_send_wr(*qp, *wr, &flags);
    if (rc != 0) break;
    if (built == free) {
      free = qp->sq.free_slots();
      if (built == free) {
        rc = ENOMEM;
        break;
      }
    }
    rc = build_send_wqe(*qp, *wr, flags, {qp->sq.slot_bytes(built), qp->sq.elem_size()});
    if (rc != 0) break;
    ++built;
  }
  if (built != 0) {
    qp->sq.publish(built);
    qp->st->bells.ring(qp->sq_doorbell);
  }
  pthread_spin_unlock(&qp->sq_lock);
  // Embedded mode: the new WQEs go out now, not at the next poll.
  if (built != 0) qp->st->drive_post();
  if (rc != 0) *bad_wr = wr;
  return rc;
}

int post_recv(ibv_qp* ibqp, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) noexcept {
  UroceQp* qp = to_uqp(ibqp);
  if (bad_wr == nullptr) return EINVAL;
  *bad_wr = nullptr;
  if (qp->st->dead()) {
    *bad_wr = wr;
    errno = EIO;
    return EIO;
  }
  // C10-97.2.1: no receives in RESET; none at all on a QP with an SRQ, nor
  // on a DC QP (a DCT receives through its SRQ, a DCI has no receive queue).
  if (!qp->has_rq || !rq_accepts(*ibqp)) {
    *bad_wr = wr;
    return EINVAL;
  }
  pthread_spin_lock(&qp->rq_lock);
  const int rc =
      post_recv_chain(&qp->rq, qp->max_recv_sge, &qp->st->bells, qp->rq_doorbell, wr, bad_wr);
  pthread_spin_unlock(&qp->rq_lock);
  return rc;
}

}  // namespace uroce::provider
