// The daemon's copy-out of work requests from the shared SQ, RQ and SRQ
// rings: one rxe_send_wqe / rxe_recv_wqe slot (rxe_layout.h) into a private
// transport::SendWr / RecvWr, validated.
//
// The application can rewrite a slot while we read it, so every field is read
// exactly once, by memcpy into private memory, and validated only there; the
// transport never sees a pointer into shared memory. A torn value can make a
// WR wrong (the application's own loss) but never makes us read or write
// outside the slot or our structures.
//
// What is taken from the slot (C ABI offsets, rxe_layout.h):
//   wr.wr_id, wr.opcode (IB_UVERBS_WR_*), wr.send_flags (IBV_SEND_* bits),
//   wr.ex.imm_data / wr.ex.invalidate_rkey,
//   wr.wr.rdma {remote_addr, rkey}          WRITE, WRITE_IMM, READ
//   wr.wr.atomic {remote_addr, compare_add, swap, rkey}   CMP_SWP, FETCH_ADD
//   wr.wr.ud {remote_qpn, remote_qkey, ah_num}            SEND[_IMM] on UD
//   the DC block {ah_num, dctn, dc_key, stream}   every opcode on a DCI but
//                                                 LOCAL_INV (rxe_layout.h)
//   dma.num_sge and sge[] (16 bytes each at the flexible offset), or
//   dma.length bytes of inline data there with IBV_SEND_INLINE.
// What is ignored: wr.ud.av and wr.ud.pkey_index (an address vector the
// application wrote itself cannot be trusted; the engine resolves ah_num in
// its own AH table, which also checks the AH belongs to the client and the
// QP's PD, and fills UdDest's dmac, dip, dscp and ttl from it); iova and the
// kernel bookkeeping fields (status, state, psns, ...); dma.length,
// resid, cur_sge and sge_offset of a non-inline WQE (the SGE list is the
// truth).
//
// On any error, wr->wr_id and wr->flags are set (and wr->opcode once the
// opcode is known) so that the engine can complete the WQE with an error
// (wc_status_for) and move on; the other fields are unspecified.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "datapath/transport/cqe.h"
#include "datapath/transport/qp_attr.h"
#include "datapath/transport/wr.h"

namespace uroce::shm {

enum class WqeError : std::uint8_t {
  kOk = 0,
  kElemTooSmall,     // the slot is shorter than the fixed WQE (caller bug)
  kBadOpcode,        // not an opcode the transport executes
  kOpcodeForQpType,  // e.g. RDMA WRITE on UD, READ on UC
  kBadFlags,         // send_flags bits other than FENCE/SIGNALED/SOLICITED/INLINE
  kInlineForOpcode,  // IBV_SEND_INLINE on an opcode without outgoing payload
  kInlineTooLong,    // inline length over max_inline or past the slot
  kTooManySge,       // num_sge over max_sge or past the slot
  kMessageTooLong,   // SGE lengths sum over kMaxMessageBytes
  kAtomicLength,     // atomic whose SGEs hold fewer than 8 bytes
  kAtomicAlign,      // atomic remote address not 8-byte aligned
  kBadRemoteQpn,     // UD remote QPN wider than 24 bits
  kNoAh,             // UD send or DCI WR without an address handle number
  kBadDcStream,      // DCI WR on a stream the DCI does not have
};

// How many WqeError values there are (the engine counts each).
inline constexpr std::size_t kNumWqeErrors = static_cast<std::size_t>(WqeError::kBadDcStream) + 1;

const char* to_string(WqeError e);

// The completion status a WQE rejected with `e` completes with.
transport::WcStatus wc_status_for(WqeError e);

// Longest message (ibv_query_device max_msg_sz), as the RC and UC
// transports enforce it.
inline constexpr std::uint64_t kMaxMessageBytes = 1ull << 31;

// What the QP was created with. Limits above the transport's kMaxSge and
// kMaxInline are clamped to them.
struct SqLimits {
  transport::QpType type = transport::QpType::kRc;
  std::uint32_t max_sge = transport::kMaxSge;
  std::uint32_t max_inline = transport::kMaxInline;
  // A DCI's streams: 2^dci_log_streams (QpCreate::dci_log_streams).
  std::uint8_t dci_log_streams = 0;
};

// Copies the send WQE in `elem` (a whole ring slot) into `wr`. For UD sends,
// wr->ud.remote_qpn, remote_qkey and ah_num are set; for a DCI's WRs (all
// but LOCAL_INV, which has no target) wr->ud.ah_num, remote_qpn (the DCT
// number), dc_key and dc_stream. *ah_num receives the AH number for the
// engine to resolve (== wr->ud.ah_num), 0 when the WR names none.
WqeError copy_send_wqe(std::span<const std::byte> elem, const SqLimits& lim, transport::SendWr* wr,
                       std::uint32_t* ah_num);

// Copies the receive WQE in `elem` into `wr`; `max_sge` is the RQ's or SRQ's.
WqeError copy_recv_wqe(std::span<const std::byte> elem, std::uint32_t max_sge,
                       transport::RecvWr* wr);

}  // namespace uroce::shm
