#include "datapath/shm/wqe_write.h"

#include <emmintrin.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_rxe.h>

#include <utility>

namespace uroce::shm {

const char* to_string(WqeWriteError e) {
  switch (e) {
    case WqeWriteError::kOk: return "ok";
    case WqeWriteError::kSlotTooSmall: return "slot smaller than a WQE";
    case WqeWriteError::kTooManySge: return "too many SGEs";
    case WqeWriteError::kInlineTooLong: return "inline data too long";
  }
  return "unknown WQE write error";
}

namespace {

// IBV_SEND_INLINE (ibv_send_flags); the same bit wqe_copy tests.
constexpr std::uint32_t kSendInline = 1u << 3;

constexpr std::size_t kSendFlagsOffset =
    offsetof(rxe_send_wqe, wr) + offsetof(rxe_send_wr, send_flags);

void put_u32(std::byte* p, std::uint32_t v) { std::memcpy(p, &v, sizeof(v)); }
void put_u64(std::byte* p, std::uint64_t v) { std::memcpy(p, &v, sizeof(v)); }

// Zeroes N bytes with straight-line 16-byte stores. Why not memset: for a
// fixed part this size it compiles to rep stos, whose start-up costs more
// than the stores (and so does a loop, which the compiler turns into one).
template <std::size_t... I>
void clear_blocks(std::byte* p, std::index_sequence<I...>) {
  (_mm_storeu_si128(reinterpret_cast<__m128i*>(p + 16 * I), _mm_setzero_si128()), ...);
}
template <std::size_t N>
void clear(std::byte* p) {
  clear_blocks(p, std::make_index_sequence<N / 16>{});
  if constexpr (N % 16 != 0) std::memset(p + N / 16 * 16, 0, N % 16);
}

std::uint32_t get_u32(const std::byte* p) {
  std::uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// dma.length, dma.resid and dma.num_sge of the rxe_dma_info at `dma`; the
// other dma fields (cur_sge, sge_offset, reserved) stay as
// write_send_fixed/write_recv_wqe cleared them.
void put_dma(std::byte* dma, std::uint32_t length, std::uint32_t num_sge) {
  put_u32(dma + offsetof(rxe_dma_info, length), length);
  put_u32(dma + offsetof(rxe_dma_info, resid), length);
  put_u32(dma + offsetof(rxe_dma_info, num_sge), num_sge);
}

std::uint32_t put_sges(std::byte* dst, std::span<const WqeSge> sges) {
  std::uint32_t total = 0;
  static_assert(sizeof(rxe_sge) == kRxeSgeBytes && sizeof(rxe_sge) == 8 + 4 + 4,
                "every byte of an rxe_sge is one of its three fields");
  for (std::size_t i = 0; i < sges.size(); ++i) {
    std::byte* const e = dst + i * kRxeSgeBytes;
    put_u64(e + offsetof(rxe_sge, addr), sges[i].addr);
    put_u32(e + offsetof(rxe_sge, length), sges[i].length);
    put_u32(e + offsetof(rxe_sge, lkey), sges[i].lkey);
    total += sges[i].length;
  }
  return total;
}

void set_flag(std::byte* slot, std::uint32_t bit, bool on) {
  std::uint32_t flags = get_u32(slot + kSendFlagsOffset);
  flags = on ? (flags | bit) : (flags & ~bit);
  put_u32(slot + kSendFlagsOffset, flags);
}

}  // namespace

// write_send_fixed and write_recv_wqe clear the fixed part in the slot and
// store each field in place. Why not build the struct in private memory and
// copy it: the copy reads back a struct whose bytes were just stored by
// stores of other sizes, which the CPU cannot forward, and each such read
// waits for the stores to retire (the sender of a 64 B ib_send_bw spent 6 %
// of its time there, the receiver 7 % in write_recv_wqe).
WqeWriteError write_send_fixed(std::span<std::byte> slot, const SendWqeFields& f) {
  if (slot.size() < kSendWqeFlexOffset) return WqeWriteError::kSlotTooSmall;
  std::byte* const s = slot.data();
  clear<kSendWqeFlexOffset>(s);
  put_u64(s + offsetof(rxe_send_wqe, wr.wr_id), f.wr_id);
  put_u32(s + offsetof(rxe_send_wqe, wr.opcode), f.opcode);
  put_u32(s + offsetof(rxe_send_wqe, wr.send_flags), f.send_flags);
  put_u32(s + offsetof(rxe_send_wqe, wr.ex.imm_data), f.imm_or_inv);
  switch (f.opcode) {
    case IB_UVERBS_WR_RDMA_WRITE:
    case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
    case IB_UVERBS_WR_RDMA_READ:
      put_u64(s + offsetof(rxe_send_wqe, wr.wr.rdma.remote_addr), f.remote_addr);
      put_u32(s + offsetof(rxe_send_wqe, wr.wr.rdma.rkey), f.rkey);
      put_u64(s + offsetof(rxe_send_wqe, iova), f.remote_addr);
      break;
    case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
    case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
      put_u64(s + offsetof(rxe_send_wqe, wr.wr.atomic.remote_addr), f.remote_addr);
      put_u64(s + offsetof(rxe_send_wqe, wr.wr.atomic.compare_add), f.compare_add);
      put_u64(s + offsetof(rxe_send_wqe, wr.wr.atomic.swap), f.swap);
      put_u32(s + offsetof(rxe_send_wqe, wr.wr.atomic.rkey), f.rkey);
      put_u64(s + offsetof(rxe_send_wqe, iova), f.remote_addr);
      break;
    case IB_UVERBS_WR_BIND_MW:
      put_u64(s + offsetof(rxe_send_wqe, wr.wr.mw.addr), f.remote_addr);
      put_u64(s + offsetof(rxe_send_wqe, wr.wr.mw.length), f.compare_add);
      put_u32(s + offsetof(rxe_send_wqe, wr.wr.mw.mr_lkey), f.mr_lkey);
      put_u32(s + offsetof(rxe_send_wqe, wr.wr.mw.mw_rkey), f.imm_or_inv);
      put_u32(s + offsetof(rxe_send_wqe, wr.wr.mw.rkey), f.rkey);
      put_u32(s + offsetof(rxe_send_wqe, wr.wr.mw.access), f.mw_access);
      break;
    default:
      put_u32(s + offsetof(rxe_send_wqe, wr.wr.ud.remote_qpn), f.remote_qpn);
      put_u32(s + offsetof(rxe_send_wqe, wr.wr.ud.remote_qkey), f.remote_qkey);
      put_u32(s + offsetof(rxe_send_wqe, wr.wr.ud.ah_num), f.ah_num);
      break;
  }
  return WqeWriteError::kOk;
}

WqeWriteError set_send_ud(std::span<std::byte> slot, std::uint32_t remote_qpn,
                          std::uint32_t remote_qkey, std::uint32_t ah_num) {
  if (slot.size() < kSendWqeFlexOffset) return WqeWriteError::kSlotTooSmall;
  rxe_send_wqe w{};
  std::memcpy(&w, slot.data(), kSendWqeFlexOffset);
  w.wr.wr.ud.remote_qpn = remote_qpn;
  w.wr.wr.ud.remote_qkey = remote_qkey;
  w.wr.wr.ud.ah_num = ah_num;
  std::memcpy(slot.data(), &w, kSendWqeFlexOffset);
  return WqeWriteError::kOk;
}

WqeWriteError set_send_dc(std::span<std::byte> slot, const WqeDcAddr& a) {
  if (slot.size() < kSendWqeFlexOffset) return WqeWriteError::kSlotTooSmall;
  std::byte block[kDcBytes] = {};
  std::memcpy(block + (kDcAhNumOffset - kSendWqeDcOffset), &a.ah_num, sizeof(a.ah_num));
  std::memcpy(block + (kDcDctnOffset - kSendWqeDcOffset), &a.dctn, sizeof(a.dctn));
  std::memcpy(block + (kDcKeyOffset - kSendWqeDcOffset), &a.key, sizeof(a.key));
  std::memcpy(block + (kDcStreamOffset - kSendWqeDcOffset), &a.stream, sizeof(a.stream));
  std::memcpy(slot.data() + kSendWqeDcOffset, block, kDcBytes);
  return WqeWriteError::kOk;
}

WqeWriteError set_send_sges(std::span<std::byte> slot, std::span<const WqeSge> sges,
                            std::uint32_t max_sge) {
  if (slot.size() < kSendWqeFlexOffset) return WqeWriteError::kSlotTooSmall;
  if (sges.size() > max_sge || sges.size() > send_sge_room(slot.size())) {
    return WqeWriteError::kTooManySge;
  }
  const std::uint32_t total = put_sges(slot.data() + kSendWqeFlexOffset, sges);
  put_dma(slot.data() + kSendWqeDmaOffset, total, static_cast<std::uint32_t>(sges.size()));
  set_flag(slot.data(), kSendInline, false);
  return WqeWriteError::kOk;
}

InlineWriter::InlineWriter(std::span<std::byte> slot, std::uint32_t max_inline) : slot_(slot) {
  if (slot.size() < kSendWqeFlexOffset) {
    err_ = WqeWriteError::kSlotTooSmall;
    return;
  }
  const std::size_t room = slot.size() - kSendWqeFlexOffset;
  limit_ = max_inline < room ? max_inline : room;
}

bool InlineWriter::append(const void* src, std::size_t len) {
  if (err_ != WqeWriteError::kOk) return false;
  if (len > limit_ - used_) {
    err_ = WqeWriteError::kInlineTooLong;
    return false;
  }
  if (len != 0) std::memcpy(slot_.data() + kSendWqeFlexOffset + used_, src, len);
  used_ += len;
  return true;
}

WqeWriteError InlineWriter::finish() {
  if (err_ == WqeWriteError::kSlotTooSmall) return err_;
  std::byte* slot = slot_.data();
  if (err_ != WqeWriteError::kOk) {
    put_dma(slot + kSendWqeDmaOffset, 0, 0);
    set_flag(slot, kSendInline, false);
    return err_;
  }
  put_dma(slot + kSendWqeDmaOffset, static_cast<std::uint32_t>(used_), 0);
  set_flag(slot, kSendInline, true);
  return WqeWriteError::kOk;
}

WqeWriteError set_send_inline(std::span<std::byte> slot, std::span<const InlineBuf> bufs,
                              std::uint32_t max_inline) {
  InlineWriter w(slot, max_inline);
  for (const InlineBuf& b : bufs) {
    if (!w.append(b.addr, b.length)) break;
  }
  return w.finish();
}

WqeWriteError write_recv_wqe(std::span<std::byte> slot, std::uint64_t wr_id,
                             std::span<const WqeSge> sges, std::uint32_t max_sge) {
  if (slot.size() < kRecvWqeFlexOffset) return WqeWriteError::kSlotTooSmall;
  if (sges.size() > max_sge || sges.size() > recv_sge_room(slot.size())) {
    return WqeWriteError::kTooManySge;
  }
  clear<kRecvWqeFlexOffset>(slot.data());
  put_u64(slot.data() + offsetof(rxe_recv_wqe, wr_id), wr_id);
  const std::uint32_t total = put_sges(slot.data() + kRecvWqeFlexOffset, sges);
  put_dma(slot.data() + kRecvWqeDmaOffset, total, static_cast<std::uint32_t>(sges.size()));
  return WqeWriteError::kOk;
}

}  // namespace uroce::shm
