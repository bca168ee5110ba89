// The ibv_wr_* API (ibv_qp_ex), which perftest 4.5 uses by default.
//
// wr_start takes the SQ lock and notes how many slots are free; each builder
// (wr_send, wr_rdma_write, ...) writes the fixed part of one WQE into the
// next slot past the producer index; the setters (wr_set_sge*,
// wr_set_inline_data*, wr_set_ud_addr, and on a DCI uroce_dv_qp_ex's
// wr_set_dc_addr[_stream]) complete the WQE built last.
// wr_complete publishes them all with one store-release, or, if anything
// failed, publishes nothing and returns the first error; wr_abort drops
// them. Errors as rxe: ENOSPC when the ring is full or inline data is too
// long; EINVAL for a setter with no WQE, too many SGEs or a foreign AH;
// and EINVAL for a DCI WR (other than LOCAL_INV) left without a target, a
// bad target, or a DC setter on another QP type.
#include <cerrno>

#include "datapath/shm/wqe_write.h"
#include "verbs-provider/ah.h"
#include "verbs-provider/ops.h"
#include "verbs-provider/qp.h"

namespace uroce::provider {

namespace {

// Starts the next WQE of the batch; null when the batch already failed or
// the ring is full (then wr_err says why).
std::span<std::byte> begin_wqe(UroceQp* qp, std::uint32_t opcode, shm::SendWqeFields* f) {
  if (qp->wr_err == 0 && qp->wr_need_target) qp->wr_err = EINVAL;  // the last WR has none
  if (qp->wr_err != 0) return {};
  if (qp->wr_built >= qp->wr_free) {
    qp->wr_err = ENOSPC;
    return {};
  }
  const std::span<std::byte> slot{qp->sq.slot_bytes(qp->wr_built), qp->sq.elem_size()};
  const ibv_qp_ex& x = qp->vqp.qp_ex;
  f->wr_id = x.wr_id;
  f->opcode = opcode;
  f->send_flags = x.wr_flags;
  return slot;
}

void finish_wqe(UroceQp* qp, std::span<std::byte> slot, const shm::SendWqeFields& f) {
  if (shm::write_send_fixed(slot, f) != shm::WqeWriteError::kOk) {
    qp->wr_err = EINVAL;
    return;
  }
  ++qp->wr_built;
  // Every DCI WR goes to a target but LOCAL_INV, which stays local.
  qp->wr_need_target = qp->dc_type == ctl::kDcDci && f.opcode != IBV_WR_LOCAL_INV;
}

// The WQE the setters complete: the one built last.
std::span<std::byte> last_wqe(UroceQp* qp) {
  if (qp->wr_err != 0) return {};
  if (qp->wr_built == 0) {
    qp->wr_err = EINVAL;
    return {};
  }
  return {qp->sq.slot_bytes(qp->wr_built - 1), qp->sq.elem_size()};
}

void build_plain(ibv_qp_ex* ibqp, std::uint32_t opcode, std::uint32_t imm_or_inv) {
  UroceQp* qp = to_uqp(ibqp);
  shm::SendWqeFields f;
  const auto slot = begin_wqe(qp, opcode, &f);
  if (slot.empty()) return;
  f.imm_or_inv = imm_or_inv;
  finish_wqe(qp, slot, f);
}

void build_rdma(ibv_qp_ex* ibqp, std::uint32_t opcode, std::uint32_t rkey,
                std::uint64_t remote_addr, std::uint32_t imm) {
  UroceQp* qp = to_uqp(ibqp);
  shm::SendWqeFields f;
  const auto slot = begin_wqe(qp, opcode, &f);
  if (slot.empty()) return;
  f.rkey = rkey;
  f.remote_addr = remote_addr;
  f.imm_or_inv = imm;
  finish_wqe(qp, slot, f);
}

void build_atomic(ibv_qp_ex* ibqp, std::uint32_t opcode, std::uint32_t rkey,
                  std::uint64_t remote_addr, std::uint64_t compare_add, std::uint64_t swap) {
  UroceQp* qp = to_uqp(ibqp);
  shm::SendWqeFields f;
  const auto slot = begin_wqe(qp, opcode, &f);
  if (slot.empty()) return;
  if ((remote_addr & 7u) != 0) {
    qp->wr_err = EINVAL;
    return;
  }
  f.rkey = rkey;
  f.remote_addr = remote_addr;
  f.compare_add = compare_add;
  f.swap = swap;
  finish_wqe(qp, slot, f);
}

void wr_send(ibv_qp_ex* q) { build_plain(q, IBV_WR_SEND, 0); }
void wr_send_imm(ibv_qp_ex* q, __be32 imm) { build_plain(q, IBV_WR_SEND_WITH_IMM, imm); }
void wr_send_inv(ibv_qp_ex* q, std::uint32_t rkey) { build_plain(q, IBV_WR_SEND_WITH_INV, rkey); }
void wr_local_inv(ibv_qp_ex* q, std::uint32_t rkey) { build_plain(q, IBV_WR_LOCAL_INV, rkey); }
void wr_bind_mw(ibv_qp_ex* q, ibv_mw* mw, std::uint32_t rkey, const ibv_mw_bind_info* b) {
  UroceQp* qp = to_uqp(q);
  shm::SendWqeFields f;
  const auto slot = begin_wqe(qp, IBV_WR_BIND_MW, &f);
  if (slot.empty()) return;
  if (mw == nullptr || b == nullptr || (b->length != 0 && b->mr == nullptr)) {
    qp->wr_err = EINVAL;
    return;
  }
  f.imm_or_inv = mw->rkey;
  f.rkey = rkey;
  f.remote_addr = b->addr;
  f.compare_add = b->length;
  f.mr_lkey = b->mr != nullptr ? b->mr->lkey : 0;
  f.mw_access = b->mw_access_flags;
  finish_wqe(qp, slot, f);
}
void wr_rdma_write(ibv_qp_ex* q, std::uint32_t rkey, std::uint64_t addr) {
  build_rdma(q, IBV_WR_RDMA_WRITE, rkey, addr, 0);
}
void wr_rdma_write_imm(ibv_qp_ex* q, std::uint32_t rkey, std::uint64_t addr, __be32 imm) {
  build_rdma(q, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, addr, imm);
}
void wr_rdma_read(ibv_qp_ex* q, std::uint32_t rkey, std::uint64_t addr) {
  build_rdma(q, IBV_WR_RDMA_READ, rkey, addr, 0);
}
void wr_atomic_cmp_swp(ibv_qp_ex* q, std::uint32_t rkey, std::uint64_t addr, std::uint64_t compare,
                       std::uint64_t swap) {
  build_atomic(q, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, addr, compare, swap);
}
void wr_atomic_fetch_add(ibv_qp_ex* q, std::uint32_t rkey, std::uint64_t addr, std::uint64_t add) {
  build_atomic(q, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, addr, add, 0);
}

void wr_set_ud_addr(ibv_qp_ex* ibqp, ibv_ah* ah, std::uint32_t remote_qpn,
                    std::uint32_t remote_qkey) {
  UroceQp* qp = to_uqp(ibqp);
  const auto slot = last_wqe(qp);
  if (slot.empty()) return;
  // wr.ud overlaps the atomic fields a DCI's WQE may carry; a DCI names its
  // target with wr_set_dc_addr instead.
  if (ah == nullptr || ah->context != qp->vqp.qp.context || is_dc(*qp)) {
    qp->wr_err = EINVAL;
    return;
  }
  shm::set_send_ud(slot, remote_qpn, remote_qkey, to_uah(ah)->ah_num);
}

void wr_set_dc_addr_stream(uroce_dv_qp_ex* dv, ibv_ah* ah, std::uint32_t remote_dctn,
                           std::uint64_t remote_dc_key, std::uint16_t stream_id) {
  UroceQp* qp = to_uqp(dv);
  const auto slot = last_wqe(qp);
  if (slot.empty()) return;
  // Streams 0 .. 2^dci_log_streams - 1 (dci_log_streams <= 4).
  if (qp->dc_type != ctl::kDcDci || ah == nullptr || ah->context != qp->vqp.qp.context ||
      remote_dctn > 0xFFFFFFu || (stream_id >> qp->dci_log_streams) != 0) {
    qp->wr_err = EINVAL;
    return;
  }
  shm::set_send_dc(slot, {to_uah(ah)->ah_num, remote_dctn, remote_dc_key, stream_id});
  qp->wr_need_target = false;
}

void wr_set_dc_addr(uroce_dv_qp_ex* dv, ibv_ah* ah, std::uint32_t remote_dctn,
                    std::uint64_t remote_dc_key) {
  wr_set_dc_addr_stream(dv, ah, remote_dctn, remote_dc_key, 0);
}

void wr_set_sge(ibv_qp_ex* ibqp, std::uint32_t lkey, std::uint64_t addr, std::uint32_t length) {
  UroceQp* qp = to_uqp(ibqp);
  const auto slot = last_wqe(qp);
  if (slot.empty()) return;
  // As rxe: a zero-length SGE means no payload.
  const shm::WqeSge sge{addr, length, lkey};
  const std::size_t n = length != 0 ? 1 : 0;
  if (shm::set_send_sges(slot, {&sge, n}, qp->max_send_sge) != shm::WqeWriteError::kOk) {
    qp->wr_err = EINVAL;
  }
}

void wr_set_sge_list(ibv_qp_ex* ibqp, std::size_t num_sge, const ibv_sge* sg_list) {
  UroceQp* qp = to_uqp(ibqp);
  const auto slot = last_wqe(qp);
  if (slot.empty()) return;
  shm::WqeSge sges[32];
  if (num_sge > qp->max_send_sge || num_sge > std::size(sges)) {
    qp->wr_err = EINVAL;
    return;
  }
  shm::to_wqe_sges(sg_list, num_sge, sges);
  if (shm::set_send_sges(slot, {sges, num_sge}, qp->max_send_sge) != shm::WqeWriteError::kOk) {
    qp->wr_err = EINVAL;
  }
}

void wr_set_inline_data_list(ibv_qp_ex* ibqp, std::size_t num_buf, const ibv_data_buf* bufs) {
  UroceQp* qp = to_uqp(ibqp);
  const auto slot = last_wqe(qp);
  if (slot.empty()) return;
  shm::InlineWriter w(slot, qp->max_inline);
  for (std::size_t i = 0; i < num_buf; ++i) {
    if (!w.append(bufs[i].addr, bufs[i].length)) break;
  }
  if (w.finish() != shm::WqeWriteError::kOk) qp->wr_err = ENOSPC;
}

void wr_set_inline_data(ibv_qp_ex* ibqp, void* addr, std::size_t length) {
  const ibv_data_buf buf{addr, length};
  wr_set_inline_data_list(ibqp, 1, &buf);
}

void wr_start(ibv_qp_ex* ibqp) {
  UroceQp* qp = to_uqp(ibqp);
  pthread_spin_lock(&qp->sq_lock);
  qp->wr_err = 0;
  qp->wr_built = 0;
  qp->wr_need_target = false;
  qp->wr_free = qp->sq.free_slots();
}

int wr_complete(ibv_qp_ex* ibqp) {
  UroceQp* qp = to_uqp(ibqp);
  int rc = qp->wr_err;
  if (rc == 0 && qp->wr_need_target) rc = EINVAL;
  if (rc == 0 && qp->st->dead()) rc = EIO;
  if (rc == 0 && qp->wr_built != 0 && !sq_accepts(qp->vqp.qp)) rc = EINVAL;
  if (rc == 0 && qp->wr_built != 0) {
    qp->sq.publish(qp->wr_built);
    qp->st->bells.ring(qp->sq_doorbell);
  }
  const bool posted = rc == 0 && qp->wr_built != 0;
  qp->wr_built = 0;
  qp->wr_need_target = false;
  pthread_spin_unlock(&qp->sq_lock);
  // Embedded mode: the new WQEs go out now, not at the next poll.
  if (posted) qp->st->drive_post();
  return rc;
}

void wr_abort(ibv_qp_ex* ibqp) {
  UroceQp* qp = to_uqp(ibqp);
  qp->wr_built = 0;
  qp->wr_need_target = false;
  pthread_spin_unlock(&qp->sq_lock);
}

}  // namespace

void install_qp_ex_ops(UroceQp* qp, std::uint64_t ops) {
  ibv_qp_ex& x = qp->vqp.qp_ex;
  if ((ops & IBV_QP_EX_WITH_SEND) != 0) x.wr_send = wr_send;
  if ((ops & IBV_QP_EX_WITH_SEND_WITH_IMM) != 0) x.wr_send_imm = wr_send_imm;
  if ((ops & IBV_QP_EX_WITH_SEND_WITH_INV) != 0) x.wr_send_inv = wr_send_inv;
  if ((ops & IBV_QP_EX_WITH_LOCAL_INV) != 0) x.wr_local_inv = wr_local_inv;
  if ((ops & IBV_QP_EX_WITH_BIND_MW) != 0) x.wr_bind_mw = wr_bind_mw;
  if ((ops & IBV_QP_EX_WITH_RDMA_WRITE) != 0) x.wr_rdma_write = wr_rdma_write;
  if ((ops & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM) != 0) x.wr_rdma_write_imm = wr_rdma_write_imm;
  if ((ops & IBV_QP_EX_WITH_RDMA_READ) != 0) x.wr_rdma_read = wr_rdma_read;
  if ((ops & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP) != 0) x.wr_atomic_cmp_swp = wr_atomic_cmp_swp;
  if ((ops & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD) != 0) x.wr_atomic_fetch_add = wr_atomic_fetch_add;
  x.wr_set_ud_addr = wr_set_ud_addr;
  x.wr_set_sge = wr_set_sge;
  x.wr_set_sge_list = wr_set_sge_list;
  x.wr_set_inline_data = wr_set_inline_data;
  x.wr_set_inline_data_list = wr_set_inline_data_list;
  x.wr_start = wr_start;
  x.wr_complete = wr_complete;
  x.wr_abort = wr_abort;
}

void install_dv_ops(UroceQp* qp) {
  qp->dv.pub.comp_mask = 0;
  qp->dv.pub.wr_set_dc_addr = wr_set_dc_addr;
  qp->dv.pub.wr_set_dc_addr_stream = wr_set_dc_addr_stream;
  qp->dv.qp = qp;
}

}  // namespace uroce::provider
