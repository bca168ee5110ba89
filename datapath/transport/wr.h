// Work requests as the transport sees them: a private copy the engine makes
// of each rxe_send_wqe / rxe_recv_wqe it takes from a shared ring (never a
// pointer into memory the application can still change).
//
// Opcode, flag and status values are the verbs ABI's (ib_user_verbs.h), so
// the provider and the engine pass them through without translation.
#pragma once

#include <rdma/ib_user_verbs.h>

#include <array>
#include <cassert>
#include <cstdint>
#include <cstring>

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
  kBindMw = IB_UVERBS_WR_BIND_MW,
};

// LOCAL_INV and BIND_MW run in the sending engine and put nothing on the
// wire (rc_requester.h).
constexpr bool is_local_op(WrOpcode op) {
  return op == WrOpcode::kLocalInv || op == WrOpcode::kBindMw;
}

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

// Where a UD send or a DCI's WR goes, resolved from the address handle by
// the engine. With `ipv6` the packet goes over IPv6 to dip6 from the QP's
// link-local or (global_src) global address, and dip is unused.
// shm::copy_send_wqe fills ah_num and remote_qpn (UD: the destination QP;
// DCI: the target DCT's number), remote_qkey for UD, dc_key and dc_stream
// for a DCI; the engine resolves ah_num into the rest.
struct UdDest {
  wire::MacAddr dmac{};
  wire::Ipv4Addr dip{};
  std::uint32_t remote_qpn = 0;
  std::uint32_t remote_qkey = 0;
  std::uint32_t ah_num = 0;     // the daemon's AH handle, never 0 once copied
  std::uint64_t dc_key = 0;     // DCI: the target DCT's access key
  std::uint16_t dc_stream = 0;  // DCI: the stream the WR runs on
  std::uint8_t dscp = 0;
  std::uint8_t ttl = 64;
  bool ipv6 = false;
  bool global_src = false;
  wire::Ipv6Addr dip6{};
};

// The fields of a send WR other than its data: everything but the SGE list
// and the inline bytes.
struct SendWrFields {
  std::uint64_t wr_id = 0;
  WrOpcode opcode = WrOpcode::kSend;
  std::uint32_t flags = 0;
  // Immediate data exactly as the application gave it (network order, as
  // ibv_send_wr.imm_data), or the rkey to invalidate for kSendInv/kLocalInv.
  // kBindMw (rxe_send_wr.wr.mw) keeps its fields in these: imm_or_inv the
  // window's key, rkey the new key, remote_addr and compare_add the
  // window's start and length, swap the MR's lkey (high 32 bits) and the
  // window's access flags (low 32), as rc_requester.cpp reads them.
  std::uint32_t imm_or_inv = 0;
  std::uint64_t remote_addr = 0;
  std::uint32_t rkey = 0;
  std::uint64_t compare_add = 0;
  std::uint64_t swap = 0;
  UdDest ud{};
  std::uint32_t num_sge = 0;
  // With send_flag::kInline the payload is the inline bytes, and the SGE
  // list is ignored.
  std::uint32_t inline_len = 0;
};

constexpr std::uint64_t pack_mw_lkey_access(std::uint32_t mr_lkey, std::uint32_t access) {
  return (std::uint64_t{mr_lkey} << 32) | access;
}

constexpr bool is_atomic(WrOpcode op) {
  return op == WrOpcode::kCmpSwap || op == WrOpcode::kFetchAdd;
}

// A send WR as it is posted: room for the most SGEs and inline bytes any QP
// accepts. One lives in the engine's scratch, where a WQE taken from a ring
// is validated; queues hold QueuedSendWr instead.
struct SendWr : SendWrFields {
  std::array<Sge, kMaxSge> sge{};
  std::array<std::uint8_t, kMaxInline> inline_data{};

  // Total payload length (for atomics: 8, the result size).
  std::uint64_t length() const {
    if (is_atomic(opcode)) return 8;
    if ((flags & send_flag::kInline) != 0) return inline_len;
    std::uint64_t n = 0;
    for (std::uint32_t i = 0; i < num_sge; ++i) n += sge[i].length;
    return n;
  }
};

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

// Sge entries a send queue slot needs for a QP's caps: its SGE list or its
// inline bytes (never both), rounded up to whole entries.
constexpr std::uint32_t send_area_sges(std::uint32_t max_sge, std::uint32_t max_inline) {
  const std::uint32_t inl = (max_inline + sizeof(Sge) - 1) / sizeof(Sge);
  return max_sge > inl ? max_sge : inl;
}

// The area of a queue's storage that belongs to one slot (WrQueue,
// wr_queue.h): its SGE list or inline bytes, sized by the QP's caps. bind()
// sets it once; a slot is never copied as a whole (its area would go with
// it), only filled by assign_used.
class SlotArea {
 public:
  SlotArea() = default;
  SlotArea(const SlotArea&) = delete;
  SlotArea& operator=(const SlotArea&) = delete;

  void bind(Sge* area, std::uint32_t sges) {
    area_ = area;
    area_sges_ = sges;
  }
  std::uint32_t area_sges() const { return area_sges_; }
  std::uint32_t area_bytes() const { return area_sges_ * static_cast<std::uint32_t>(sizeof(Sge)); }
  const Sge* sge() const { return area_; }

 protected:
  Sge* area_ = nullptr;
  std::uint32_t area_sges_ = 0;
};

// A send WR as a queue slot holds it: the fields, the message length summed
// once at post, and the SGEs or inline bytes in the slot's area.
struct QueuedSendWr : SendWrFields, SlotArea {
  std::uint64_t length() const { return len_; }
  const std::uint8_t* inline_data() const { return reinterpret_cast<const std::uint8_t*>(area_); }

 private:
  friend void assign_used(QueuedSendWr* dst, const SendWr& src);
  std::uint64_t len_ = 0;
};

struct QueuedRecvWr : SlotArea {
  std::uint64_t length() const { return len_; }

  std::uint64_t wr_id = 0;
  std::uint32_t num_sge = 0;

 private:
  friend void assign_used(QueuedRecvWr* dst, const RecvWr& src);
  friend void assign_used(QueuedRecvWr* dst, const QueuedRecvWr& src);
  std::uint64_t len_ = 0;
};

// Fills a queue slot from a posted WR: every field, the first num_sge SGEs
// (or, with kInline, inline_len bytes) into the slot's area, and the length.
// The caller has checked the WR against the QP's caps, which sized the area.
inline void assign_used(QueuedSendWr* dst, const SendWr& src) {
  static_cast<SendWrFields&>(*dst) = src;
  if ((src.flags & send_flag::kInline) != 0) {
    assert(src.inline_len <= dst->area_bytes());
    if (src.inline_len != 0) std::memcpy(dst->area_, src.inline_data.data(), src.inline_len);
  } else {
    assert(src.num_sge <= dst->area_sges());
    for (std::uint32_t i = 0; i < src.num_sge; ++i) dst->area_[i] = src.sge[i];
  }
  dst->len_ = src.length();
}

inline void assign_used(QueuedRecvWr* dst, const RecvWr& src) {
  assert(src.num_sge <= dst->area_sges());
  dst->wr_id = src.wr_id;
  dst->num_sge = src.num_sge;
  std::uint64_t n = 0;
  for (std::uint32_t i = 0; i < src.num_sge; ++i) {
    dst->area_[i] = src.sge[i];
    n += src.sge[i].length;
  }
  dst->len_ = n;
}

// From one queue's slot to another's (an SRQ's WR into a QP's RQ).
inline void assign_used(QueuedRecvWr* dst, const QueuedRecvWr& src) {
  assert(src.num_sge <= dst->area_sges());
  dst->wr_id = src.wr_id;
  dst->num_sge = src.num_sge;
  for (std::uint32_t i = 0; i < src.num_sge; ++i) dst->area_[i] = src.area_[i];
  dst->len_ = src.len_;
}

}  // namespace uroce::transport
