#include "datapath/shm/wqe_copy.h"

#include <algorithm>
#include <cstring>

#include "datapath/shm/rxe_layout.h"

namespace uroce::shm {

using transport::QpType;
using transport::WcStatus;
using transport::WrOpcode;

const char* to_string(WqeError e) {
  switch (e) {
    case WqeError::kOk: return "ok";
    case WqeError::kElemTooSmall: return "slot smaller than a WQE";
    case WqeError::kBadOpcode: return "unknown opcode";
    case WqeError::kOpcodeForQpType: return "opcode not valid for QP type";
    case WqeError::kBadFlags: return "unknown send flags";
    case WqeError::kInlineForOpcode: return "inline data on opcode without payload";
    case WqeError::kInlineTooLong: return "inline data too long";
    case WqeError::kTooManySge: return "too many SGEs";
    case WqeError::kMessageTooLong: return "message too long";
    case WqeError::kAtomicLength: return "atomic SGE shorter than 8 bytes";
    case WqeError::kAtomicAlign: return "atomic address not 8-byte aligned";
    case WqeError::kBadRemoteQpn: return "remote QPN over 24 bits";
    case WqeError::kNoAh: return "send without AH";
    case WqeError::kBadDcStream: return "DCI stream out of range";
  }
  return "unknown WQE error";
}

WcStatus wc_status_for(WqeError e) {
  switch (e) {
    case WqeError::kOk: return WcStatus::kSuccess;
    case WqeError::kInlineTooLong:
    case WqeError::kTooManySge:
    case WqeError::kMessageTooLong:
    case WqeError::kAtomicLength: return WcStatus::kLocLenErr;
    case WqeError::kElemTooSmall:
    case WqeError::kBadOpcode:
    case WqeError::kOpcodeForQpType:
    case WqeError::kBadFlags:
    case WqeError::kInlineForOpcode:
    case WqeError::kAtomicAlign:
    case WqeError::kBadRemoteQpn:
    case WqeError::kNoAh:
    case WqeError::kBadDcStream: return WcStatus::kLocQpOpErr;
  }
  return WcStatus::kLocQpOpErr;
}

namespace {

// A WR's destination before its type's fields are read (UD, DCI).
constexpr transport::UdDest kNoUdDest{};

constexpr std::uint32_t kKnownSendFlags =
    transport::send_flag::kFence | transport::send_flag::kSignaled |
    transport::send_flag::kSolicited | transport::send_flag::kInline;

bool decode_opcode(std::uint32_t raw, WrOpcode* op) {
  switch (raw) {
    case IB_UVERBS_WR_RDMA_WRITE: *op = WrOpcode::kRdmaWrite; return true;
    case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM: *op = WrOpcode::kRdmaWriteImm; return true;
    case IB_UVERBS_WR_SEND: *op = WrOpcode::kSend; return true;
    case IB_UVERBS_WR_SEND_WITH_IMM: *op = WrOpcode::kSendImm; return true;
    case IB_UVERBS_WR_RDMA_READ: *op = WrOpcode::kRdmaRead; return true;
    case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP: *op = WrOpcode::kCmpSwap; return true;
    case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD: *op = WrOpcode::kFetchAdd; return true;
    case IB_UVERBS_WR_LOCAL_INV: *op = WrOpcode::kLocalInv; return true;
    case IB_UVERBS_WR_SEND_WITH_INV: *op = WrOpcode::kSendInv; return true;
    case IB_UVERBS_WR_BIND_MW: *op = WrOpcode::kBindMw; return true;
    default: return false;
  }
}

// Which opcodes each transport executes (the same sets its post_send takes).
bool opcode_allowed(QpType type, WrOpcode op) {
  switch (type) {
    case QpType::kRc: return true;
    case QpType::kDci: return op != WrOpcode::kBindMw;  // windows bind on RC and UC QPs
    case QpType::kDct: return false;                    // no send queue
    case QpType::kUc:
      return op == WrOpcode::kSend || op == WrOpcode::kSendImm || op == WrOpcode::kRdmaWrite ||
             op == WrOpcode::kRdmaWriteImm || op == WrOpcode::kBindMw;
    case QpType::kUd: return op == WrOpcode::kSend || op == WrOpcode::kSendImm;
  }
  return false;
}

// Opcodes that carry outgoing payload, the only ones inline data makes sense for.
bool has_outgoing_payload(WrOpcode op) {
  return op == WrOpcode::kSend || op == WrOpcode::kSendImm || op == WrOpcode::kSendInv ||
         op == WrOpcode::kRdmaWrite || op == WrOpcode::kRdmaWriteImm;
}

// Copies `n` SGEs from `src` (C ABI rxe_sge array) and sums their lengths.
std::uint64_t copy_sges(const std::byte* src, std::uint32_t n, transport::Sge* dst) {
  std::uint64_t total = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    rxe_sge s;
    std::memcpy(&s, src + std::size_t{i} * kRxeSgeBytes, kRxeSgeBytes);
    dst[i].addr = s.addr;
    dst[i].length = s.length;
    dst[i].lkey = s.lkey;
    total += s.length;
  }
  return total;
}

template <class T>
T read_at(const void* base, std::size_t offset) {
  T v;
  std::memcpy(&v, static_cast<const std::byte*>(base) + offset, sizeof(v));
  return v;
}

std::uint32_t sges_fitting(std::size_t elem_size, std::size_t flex_offset) {
  return static_cast<std::uint32_t>((elem_size - flex_offset) / kRxeSgeBytes);
}

}  // namespace

WqeError copy_send_wqe(std::span<const std::byte> elem, const SqLimits& lim, transport::SendWr* wr,
                       std::uint32_t* ah_num) {
  *ah_num = 0;
  if (elem.size() < kSendWqeFlexOffset) return WqeError::kElemTooSmall;

  // The single read of the fixed part; everything below looks at `w` only.
  rxe_send_wqe w{};
  std::memcpy(&w, elem.data(), kSendWqeFlexOffset);
  const std::byte* flex = elem.data() + kSendWqeFlexOffset;
  const std::size_t flex_bytes = elem.size() - kSendWqeFlexOffset;

  wr->wr_id = w.wr.wr_id;
  wr->flags = w.wr.send_flags;
  WrOpcode op;
  if (!decode_opcode(w.wr.opcode, &op)) return WqeError::kBadOpcode;
  wr->opcode = op;
  if (!opcode_allowed(lim.type, op)) return WqeError::kOpcodeForQpType;
  if ((wr->flags & ~kKnownSendFlags) != 0) return WqeError::kBadFlags;

  wr->num_sge = 0;
  wr->inline_len = 0;
  if ((wr->flags & transport::send_flag::kInline) != 0) {
    if (!has_outgoing_payload(op)) return WqeError::kInlineForOpcode;
    const std::size_t max_inline =
        std::min<std::size_t>({lim.max_inline, transport::kMaxInline, flex_bytes});
    const std::uint32_t len = w.dma.length;
    if (len > max_inline) return WqeError::kInlineTooLong;
    std::memcpy(wr->inline_data.data(), flex, len);
    wr->inline_len = len;
  } else {
    const std::uint32_t max_sge =
        std::min({lim.max_sge, transport::kMaxSge, sges_fitting(elem.size(), kSendWqeFlexOffset)});
    const std::uint32_t n = w.dma.num_sge;
    if (n > max_sge) return WqeError::kTooManySge;
    const std::uint64_t total = copy_sges(flex, n, wr->sge.data());
    wr->num_sge = n;
    if (total > kMaxMessageBytes) return WqeError::kMessageTooLong;
    if (is_atomic(op) && total < 8) return WqeError::kAtomicLength;
  }

  wr->imm_or_inv = 0;
  wr->remote_addr = 0;
  wr->rkey = 0;
  wr->compare_add = 0;
  wr->swap = 0;
  // Copied from a constant: a temporary would be built with stores of
  // several sizes and read back at once, which the CPU cannot forward.
  wr->ud = kNoUdDest;
  switch (op) {
    case WrOpcode::kRdmaWriteImm: wr->imm_or_inv = w.wr.ex.imm_data; [[fallthrough]];
    case WrOpcode::kRdmaWrite:
    case WrOpcode::kRdmaRead:
      wr->remote_addr = w.wr.wr.rdma.remote_addr;
      wr->rkey = w.wr.wr.rdma.rkey;
      break;
    case WrOpcode::kCmpSwap:
    case WrOpcode::kFetchAdd:
      wr->remote_addr = w.wr.wr.atomic.remote_addr;
      wr->rkey = w.wr.wr.atomic.rkey;
      wr->compare_add = w.wr.wr.atomic.compare_add;
      wr->swap = w.wr.wr.atomic.swap;
      if ((wr->remote_addr & 7u) != 0) return WqeError::kAtomicAlign;
      break;
    case WrOpcode::kSendImm: wr->imm_or_inv = w.wr.ex.imm_data; break;
    case WrOpcode::kSendInv:
    case WrOpcode::kLocalInv: wr->imm_or_inv = w.wr.ex.invalidate_rkey; break;
    case WrOpcode::kBindMw:
      wr->imm_or_inv = w.wr.wr.mw.mw_rkey;
      wr->rkey = w.wr.wr.mw.rkey;
      wr->remote_addr = w.wr.wr.mw.addr;
      wr->compare_add = w.wr.wr.mw.length;
      wr->swap = transport::pack_mw_lkey_access(w.wr.wr.mw.mr_lkey, w.wr.wr.mw.access);
      break;
    case WrOpcode::kSend: break;
  }
  if (lim.type == QpType::kUd) {
    // Only SEND and SEND_WITH_IMM get here (opcode_allowed).
    if (w.wr.wr.ud.remote_qpn > 0xFFFFFFu) return WqeError::kBadRemoteQpn;
    if (w.wr.wr.ud.ah_num == 0) return WqeError::kNoAh;
    wr->ud.remote_qpn = w.wr.wr.ud.remote_qpn;
    wr->ud.remote_qkey = w.wr.wr.ud.remote_qkey;
    wr->ud.ah_num = w.wr.wr.ud.ah_num;
    *ah_num = w.wr.wr.ud.ah_num;
  } else if (lim.type == QpType::kDci && !transport::is_local_op(op)) {
    // The DC block of the private copy (rxe_layout.h): the opcode's own
    // fields above come from the union members it does not overlap.
    const auto ah = read_at<std::uint32_t>(&w, kDcAhNumOffset);
    const auto dctn = read_at<std::uint32_t>(&w, kDcDctnOffset);
    const auto stream = read_at<std::uint16_t>(&w, kDcStreamOffset);
    if (ah == 0) return WqeError::kNoAh;
    if (dctn > 0xFFFFFFu) return WqeError::kBadRemoteQpn;
    // Streams 0 .. 2^dci_log_streams - 1 (every 16-bit id past log 15).
    if (lim.dci_log_streams < 16 && (stream >> lim.dci_log_streams) != 0) {
      return WqeError::kBadDcStream;
    }
    wr->ud.ah_num = ah;
    wr->ud.remote_qpn = dctn;
    wr->ud.dc_key = read_at<std::uint64_t>(&w, kDcKeyOffset);
    wr->ud.dc_stream = stream;
    *ah_num = ah;
  }
  return WqeError::kOk;
}

WqeError copy_recv_wqe(std::span<const std::byte> elem, std::uint32_t max_sge,
                       transport::RecvWr* wr) {
  if (elem.size() < kRecvWqeFlexOffset) return WqeError::kElemTooSmall;
  rxe_recv_wqe w{};
  std::memcpy(&w, elem.data(), kRecvWqeFlexOffset);
  wr->wr_id = w.wr_id;
  wr->num_sge = 0;
  const std::uint32_t limit =
      std::min({max_sge, transport::kMaxSge, sges_fitting(elem.size(), kRecvWqeFlexOffset)});
  const std::uint32_t n = w.dma.num_sge;
  if (n > limit) return WqeError::kTooManySge;
  const std::uint64_t total = copy_sges(elem.data() + kRecvWqeFlexOffset, n, wr->sge.data());
  wr->num_sge = n;
  if (total > kMaxMessageBytes) return WqeError::kMessageTooLong;
  return WqeError::kOk;
}

}  // namespace uroce::shm
