// The provider's writer of work requests into ring slots: one rxe_send_wqe or
// rxe_recv_wqe (rxe_layout.h) built in a slot of the shared SQ, RQ or SRQ
// ring. It is the mirror of wqe_copy.h: what these functions write,
// shm::copy_send_wqe / copy_recv_wqe read back (the round-trip test pins it).
//
// Layout written (C ABI offsets; never sizeof(rxe_send_wqe) or wqe->dma.sge,
// whose C++ offsets differ, see rxe_layout.h):
//   send: wr.wr_id, wr.opcode (IB_UVERBS_WR_*), wr.send_flags (IBV_SEND_*),
//         wr.ex (imm_data or invalidate_rkey), the wr union member the opcode
//         uses (rdma, atomic or ud), iova (remote address, as rxe), then
//         dma.{length, resid, num_sge} and at kSendWqeFlexOffset either the
//         SGE list or the inline bytes (with IBV_SEND_INLINE set in
//         send_flags); on a DCI, the target in the DC block at
//         kSendWqeDcOffset (set_send_dc). Everything else in the fixed part
//         is zero.
//   recv: wr_id, dma.{length, resid, num_sge}, SGEs at kRecvWqeFlexOffset.
//
// Use (provider, under its per-queue lock): write_send_fixed() on the slot at
// the producer index, then exactly one of set_send_sges / set_send_inline (or
// none for a WQE without payload), then RingProducer::publish(). The slot is
// shared memory the daemon reads only after publish, so nothing here needs
// atomics. No allocation, no system call, no exception.
//
// The limits checked are the ones the slot and the QP impose (max_sge,
// max_inline, the slot's tail); opcode/QP-type rules are the caller's
// (the provider validates them before building, as rxe does).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "datapath/shm/rxe_layout.h"

namespace uroce::shm {

enum class WqeWriteError : std::uint8_t {
  kOk = 0,
  kSlotTooSmall,   // the slot cannot hold the fixed part (caller bug)
  kTooManySge,     // more SGEs than max_sge or than fit in the slot
  kInlineTooLong,  // inline bytes over max_inline or the slot's tail
};

const char* to_string(WqeWriteError e);

// One scatter/gather entry, laid out as ibv_sge and rxe_sge.
// No default member initializers, on purpose: the provider keeps an array
// of 32 on the stack per post and fills only the WR's SGEs, and initializers
// would clear all 512 bytes on every post. `WqeSge{}` is still all zero.
struct WqeSge {
  std::uint64_t addr;
  std::uint32_t length;
  std::uint32_t lkey;
};
static_assert(sizeof(WqeSge) == kRxeSgeBytes);

// The fixed fields of a send work request. Which of them land in the slot
// depends on the opcode: remote_addr/rkey for RDMA WRITE[_IMM] and READ;
// remote_addr/rkey/compare_add/swap for the atomics; for BIND_MW (wr.mw)
// imm_or_inv the window's key, rkey its new key, remote_addr/compare_add its
// start and length, mr_lkey and mw_access; remote_qpn/remote_qkey/ah_num for
// every other opcode (zero unless the QP is UD).
struct SendWqeFields {
  std::uint64_t wr_id = 0;
  std::uint32_t opcode = 0;      // IB_UVERBS_WR_* (== IBV_WR_*)
  std::uint32_t send_flags = 0;  // IBV_SEND_* bits
  // imm_data exactly as the application gave it (network order), or the
  // rkey to invalidate (SEND_WITH_INV, LOCAL_INV): the same four bytes.
  std::uint32_t imm_or_inv = 0;
  std::uint64_t remote_addr = 0;
  std::uint32_t rkey = 0;
  std::uint64_t compare_add = 0;
  std::uint64_t swap = 0;
  std::uint32_t remote_qpn = 0;
  std::uint32_t remote_qkey = 0;
  std::uint32_t ah_num = 0;
  std::uint32_t mr_lkey = 0;    // BIND_MW
  std::uint32_t mw_access = 0;  // BIND_MW
};

// SGEs a slot of `slot_bytes` can carry after the fixed part of a send or
// receive WQE.
inline constexpr std::uint32_t send_sge_room(std::size_t slot_bytes) {
  return slot_bytes < kSendWqeFlexOffset
             ? 0
             : static_cast<std::uint32_t>((slot_bytes - kSendWqeFlexOffset) / kRxeSgeBytes);
}
inline constexpr std::uint32_t recv_sge_room(std::size_t slot_bytes) {
  return slot_bytes < kRecvWqeFlexOffset
             ? 0
             : static_cast<std::uint32_t>((slot_bytes - kRecvWqeFlexOffset) / kRxeSgeBytes);
}

// Writes the fixed part of a send WQE: clears all kSendWqeFlexOffset bytes,
// then sets the fields above. The WQE carries no payload until one of the
// set_send_* calls below.
WqeWriteError write_send_fixed(std::span<std::byte> slot, const SendWqeFields& f);

// ibv_wr_set_ud_addr: the UD destination of a send WQE already written.
WqeWriteError set_send_ud(std::span<std::byte> slot, std::uint32_t remote_qpn,
                          std::uint32_t remote_qkey, std::uint32_t ah_num);

// A DC WR's target (uroce_dv_wr_set_dc_addr[_stream]).
struct WqeDcAddr {
  std::uint32_t ah_num = 0;  // the daemon's AH handle
  std::uint32_t dctn = 0;    // the target DCT's number
  std::uint64_t key = 0;     // the DCT's access key
  std::uint16_t stream = 0;  // the DCI stream
};

// Writes `a` into the DC block (rxe_layout.h) of a send WQE already written
// with write_send_fixed, which left the block zero; the opcode's own fields
// are untouched. Range checks (24-bit DCT number, stream count) are the
// caller's.
WqeWriteError set_send_dc(std::span<std::byte> slot, const WqeDcAddr& a);

// The payload as an SGE list: writes the n SGEs at kSendWqeFlexOffset and
// dma.num_sge, dma.length and dma.resid (the sum of the lengths, truncated
// to 32 bits as in rxe). Clears IBV_SEND_INLINE.
WqeWriteError set_send_sges(std::span<std::byte> slot, std::span<const WqeSge> sges,
                            std::uint32_t max_sge);

// The payload as inline bytes, gathered from buffers in order: the writer
// appends each buffer at kSendWqeFlexOffset and finish() sets
// IBV_SEND_INLINE, dma.length and dma.resid (dma.num_sge is 0). Once an
// append would pass min(max_inline, the slot's tail), finish() returns
// kInlineTooLong and leaves the slot's payload empty and the flag clear.
class InlineWriter {
 public:
  InlineWriter(std::span<std::byte> slot, std::uint32_t max_inline);
  // False (and the writer failed) when `len` more bytes do not fit.
  bool append(const void* src, std::size_t len);
  WqeWriteError finish();

 private:
  std::span<std::byte> slot_;
  std::size_t limit_ = 0;
  std::size_t used_ = 0;
  WqeWriteError err_ = WqeWriteError::kOk;
};

struct InlineBuf {
  const void* addr = nullptr;
  std::size_t length = 0;
};
// InlineWriter over a list of buffers.
WqeWriteError set_send_inline(std::span<std::byte> slot, std::span<const InlineBuf> bufs,
                              std::uint32_t max_inline);

// A receive WQE (RQ or SRQ): wr_id, the SGE list and its dma header.
WqeWriteError write_recv_wqe(std::span<std::byte> slot, std::uint64_t wr_id,
                             std::span<const WqeSge> sges, std::uint32_t max_sge);

// Copies SGEs of any type with members addr, length and lkey (ibv_sge) into
// `out`; returns how many were copied (at most out.size()).
template <class S>
std::size_t to_wqe_sges(const S* in, std::size_t n, std::span<WqeSge> out) {
  const std::size_t k = n < out.size() ? n : out.size();
  for (std::size_t i = 0; i < k; ++i) {
    out[i].addr = in[i].addr;
    out[i].length = in[i].length;
    out[i].lkey = in[i].lkey;
  }
  return k;
}

}  // namespace uroce::shm
