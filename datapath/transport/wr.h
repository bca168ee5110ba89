// Work requests as the transport sees them: a private copy the engine makes
// of each rxe_send_wqe / rxe_recv_wqe it takes from a shared ring (never a
// pointer into memory the application can still change).
//
// Opcode, flag and status values are the verbs ABI's (ib_user_verbs.h), so
// the provider and the engine pass them through without translation.
#pragma once

#include <rdma/ib_user_verbs.h>

#include <array>
#include <cstdint>

#include "datapath/wire/addr.h"

namespace uroce::transport {

// ib_uverbs_wr_opcode values.
enum class WrOpcode : std::uint8_t {
  kRdmaWrite = IB_UVERBS_WR_RDMA_WRITE,
  kRdmaWriteImm = IB_UVERBS_WR_RDMA_WRITE_WITH_IMM,
  kSend = IB_UVERBS_WR_SEND,
  kSendImm = IB_UVERBS_WR_SEND_WITH_IMM,
  kRdmaRead = IB_UVERBS_WR_RDMA_READ,
  kCmpSwap = IB_UVERBS_WR_ATOMIC_CMP_AND_SWP,
  kFetchAdd = IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD,
  kLocalInv = IB_UVERBS_WR_LOCAL_INV,
  kSendInv = IB_UVERBS_WR_SEND_WITH_INV,
};

// ibv_send_flags values.
namespace send_flag {
inline constexpr std::uint32_t kFence = 1u << 0;
inline constexpr std::uint32_t kSignaled = 1u << 1;
inline constexpr std::uint32_t kSolicited = 1u << 2;
inline constexpr std::uint32_t kInline = 1u << 3;
}  // namespace send_flag

// Limits a QP is created with; also what query_device reports.
inline constexpr std::uint32_t kMaxSge = 32;
inline constexpr std::uint32_t kMaxInline = 256;

struct Sge {
  std::uint64_t addr = 0;
  std::uint32_t length = 0;
  std::uint32_t lkey = 0;
};

// Where a UD send goes, resolved from the address handle by the engine.
struct UdDest {
  wire::MacAddr dmac{};
  wire::Ipv4Addr dip{};
  std::uint32_t remote_qpn = 0;
  std::uint32_t remote_qkey = 0;
  std::uint8_t dscp = 0;
  std::uint8_t ttl = 64;
};

struct SendWr {
  std::uint64_t wr_id = 0;
  WrOpcode opcode = WrOpcode::kSend;
  std::uint32_t flags = 0;
  // Immediate data exactly as the application gave it (network order, as
  // ibv_send_wr.imm_data), or the rkey to invalidate for kSendInv/kLocalInv.
  std::uint32_t imm_or_inv = 0;
  std::uint64_t remote_addr = 0;
  std::uint32_t rkey = 0;
  std::uint64_t compare_add = 0;
  std::uint64_t swap = 0;
  UdDest ud{};
  std::uint32_t num_sge = 0;
  std::array<Sge, kMaxSge> sge{};
  // With send_flag::kInline the payload is here and sge is ignored.
  std::uint32_t inline_len = 0;
  std::array<std::uint8_t, kMaxInline> inline_data{};

  // Total payload length (for atomics: 8, the result size).
  std::uint64_t length() const {
    if (opcode == WrOpcode::kCmpSwap || opcode == WrOpcode::kFetchAdd) return 8;
    if ((flags & send_flag::kInline) != 0) return inline_len;
    std::uint64_t n = 0;
    for (std::uint32_t i = 0; i < num_sge; ++i) n += sge[i].length;
    return n;
  }
};

// Copies into `dst` what `src` uses: every field, but of the SGE array only
// the first num_sge entries and of the inline buffer only inline_len bytes
// (with kInline). The rest of dst keeps whatever it held; nothing reads
// past num_sge / inline_len. For queue slots (WorkQueue::push_slot), where a
// whole-struct copy of a ~1 KiB SendWr per post showed up in profiles.
inline void assign_used(SendWr* dst, const SendWr& src) {
  dst->wr_id = src.wr_id;
  dst->opcode = src.opcode;
  dst->flags = src.flags;
  dst->imm_or_inv = src.imm_or_inv;
  dst->remote_addr = src.remote_addr;
  dst->rkey = src.rkey;
  dst->compare_add = src.compare_add;
  dst->swap = src.swap;
  dst->ud = src.ud;
  dst->num_sge = src.num_sge;
  const std::uint32_t n = src.num_sge < kMaxSge ? src.num_sge : kMaxSge;
  for (std::uint32_t i = 0; i < n; ++i) dst->sge[i] = src.sge[i];
  dst->inline_len = src.inline_len;
  if ((src.flags & send_flag::kInline) != 0) {
    const std::uint32_t m = src.inline_len < kMaxInline ? src.inline_len : kMaxInline;
    for (std::uint32_t i = 0; i < m; ++i) dst->inline_data[i] = src.inline_data[i];
  }
}

struct RecvWr {
  std::uint64_t wr_id = 0;
  std::uint32_t num_sge = 0;
  std::array<Sge, kMaxSge> sge{};

  std::uint64_t length() const {
    std::uint64_t n = 0;
    for (std::uint32_t i = 0; i < num_sge; ++i) n += sge[i].length;
    return n;
  }
};

// As assign_used(SendWr*, ...): the first num_sge SGEs only.
inline void assign_used(RecvWr* dst, const RecvWr& src) {
  dst->wr_id = src.wr_id;
  dst->num_sge = src.num_sge;
  const std::uint32_t n = src.num_sge < kMaxSge ? src.num_sge : kMaxSge;
  for (std::uint32_t i = 0; i < n; ++i) dst->sge[i] = src.sge[i];
}

}  // namespace uroce::transport
