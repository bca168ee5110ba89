// ibv_cq_ex over the same ring as poll_cq: start_poll takes the CQ lock and
// the first completion, next_poll moves on, end_poll hands every completion
// taken back to the daemon (one store-release) and unlocks. The read_*
// functions read the current ib_uverbs_wc in place; it stays valid until
// end_poll releases it.
//
// Unlike rxe v44, next_poll keeps the lock when the ring runs dry (ENOENT):
// ibv_end_poll always follows and is the one that unlocks.
#include <cerrno>

#include "verbs-provider/cq.h"
#include "verbs-provider/ops.h"

namespace uroce::provider {

namespace {

// What rxe offers; timestamps, flow tags, cvlan and tag matching are not.
constexpr std::uint64_t kSupportedWcFlags =
    IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |
    IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL | IBV_WC_EX_WITH_DLID_PATH_BITS;

void take_current(UroceCq* cq, std::uint32_t k) {
  cq->ex_cur = cq->ring.slot(k);
  cq->vcq.cq_ex.status = static_cast<ibv_wc_status>(cq->ex_cur->status);
  cq->vcq.cq_ex.wr_id = cq->ex_cur->wr_id;
  cq->ex_taken = k + 1;
}

int start_poll(ibv_cq_ex* ibcq, ibv_poll_cq_attr* attr) {
  UroceCq* cq = to_ucq(ibcq);
  if (attr != nullptr && attr->comp_mask != 0) return EINVAL;
  // Embedded mode: the application's polls drive the engine.
  cq->st->drive();
  pthread_spin_lock(&cq->lock);
  if (cq->ring.ready() == 0) {
    pthread_spin_unlock(&cq->lock);
    if (!cq->st->dead()) {
      cq->st->empty_poll();
      return ENOENT;  // empty: not an error
    }
    errno = EIO;
    return EIO;
  }
  cq->st->found_poll();
  take_current(cq, 0);
  return 0;
}

int next_poll(ibv_cq_ex* ibcq) {
  UroceCq* cq = to_ucq(ibcq);
  if (cq->ring.ready() <= cq->ex_taken) return ENOENT;
  take_current(cq, cq->ex_taken);
  return 0;
}

void end_poll(ibv_cq_ex* ibcq) {
  UroceCq* cq = to_ucq(ibcq);
  if (cq->ex_taken != 0) cq->ring.release(cq->ex_taken);
  cq->ex_taken = 0;
  cq->ex_cur = nullptr;
  pthread_spin_unlock(&cq->lock);
}

const ib_uverbs_wc& cur(ibv_cq_ex* ibcq) { return *to_ucq(ibcq)->ex_cur; }

ibv_wc_opcode read_opcode(ibv_cq_ex* c) { return static_cast<ibv_wc_opcode>(cur(c).opcode); }
std::uint32_t read_vendor_err(ibv_cq_ex* c) { return cur(c).vendor_err; }
std::uint32_t read_byte_len(ibv_cq_ex* c) { return cur(c).byte_len; }
__be32 read_imm_data(ibv_cq_ex* c) { return cur(c).ex.imm_data; }
std::uint32_t read_qp_num(ibv_cq_ex* c) { return cur(c).qp_num; }
std::uint32_t read_src_qp(ibv_cq_ex* c) { return cur(c).src_qp; }
unsigned int read_wc_flags(ibv_cq_ex* c) { return cur(c).wc_flags; }
std::uint32_t read_slid(ibv_cq_ex* c) { return cur(c).slid; }
std::uint8_t read_sl(ibv_cq_ex* c) { return cur(c).sl; }
std::uint8_t read_dlid_path_bits(ibv_cq_ex* c) { return cur(c).dlid_path_bits; }

}  // namespace

std::uint64_t supported_wc_flags() { return kSupportedWcFlags; }

void install_cq_ex_ops(UroceCq* cq, std::uint64_t wc_flags) {
  ibv_cq_ex& x = cq->vcq.cq_ex;
  x.start_poll = start_poll;
  x.next_poll = next_poll;
  x.end_poll = end_poll;
  x.read_opcode = read_opcode;
  x.read_vendor_err = read_vendor_err;
  x.read_wc_flags = read_wc_flags;
  if ((wc_flags & IBV_WC_EX_WITH_BYTE_LEN) != 0) x.read_byte_len = read_byte_len;
  if ((wc_flags & IBV_WC_EX_WITH_IMM) != 0) x.read_imm_data = read_imm_data;
  if ((wc_flags & IBV_WC_EX_WITH_QP_NUM) != 0) x.read_qp_num = read_qp_num;
  if ((wc_flags & IBV_WC_EX_WITH_SRC_QP) != 0) x.read_src_qp = read_src_qp;
  if ((wc_flags & IBV_WC_EX_WITH_SLID) != 0) x.read_slid = read_slid;
  if ((wc_flags & IBV_WC_EX_WITH_SL) != 0) x.read_sl = read_sl;
  if ((wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS) != 0) x.read_dlid_path_bits = read_dlid_path_bits;
}

ibv_cq_ex* create_cq_ex(ibv_context* ctx, ibv_cq_init_attr_ex* attr) noexcept {
  if ((attr->wc_flags & ~kSupportedWcFlags) != 0) {
    errno = EOPNOTSUPP;
    return nullptr;
  }
  // Only the flags rxe takes: no PD-bound CQs, no IGNORE_OVERRUN.
  if ((attr->comp_mask & ~static_cast<std::uint32_t>(IBV_CQ_INIT_ATTR_MASK_FLAGS)) != 0 ||
      ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) != 0 && attr->flags != 0)) {
    errno = EOPNOTSUPP;
    return nullptr;
  }
  UroceCq* cq = create_cq_common(ctx, static_cast<int>(attr->cqe), attr->channel,
                                 static_cast<int>(attr->comp_vector));
  if (cq == nullptr) return nullptr;
  install_cq_ex_ops(cq, attr->wc_flags);
  return &cq->vcq.cq_ex;
}

}  // namespace uroce::provider
