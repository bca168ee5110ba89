// Memory regions and their protection checks (IBTA Vol1 10.6, 9.4.1.1 and
// C9-88..C9-96 for the checks a responder makes on RETH/AtomicETH).
//
// A key is (slot index << 8) | variant byte, as rxe forms them: the variant
// changes on every reuse of a slot, so a stale key no longer matches. lkey and
// rkey are the same value; an rkey is only honoured when the region grants a
// remote access flag.
//
// Threading: the table is owned by one engine lcore; registration and
// deregistration reach it as control messages processed on that lcore, so
// lookups on the packet path take no lock. Capacity is fixed at construction;
// nothing allocates after that.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace uroce::transport {

// ibv_access_flags values.
namespace access {
inline constexpr std::uint32_t kLocalWrite = 1u << 0;
inline constexpr std::uint32_t kRemoteWrite = 1u << 1;
inline constexpr std::uint32_t kRemoteRead = 1u << 2;
inline constexpr std::uint32_t kRemoteAtomic = 1u << 3;
inline constexpr std::uint32_t kMwBind = 1u << 4;
inline constexpr std::uint32_t kZeroBased = 1u << 5;
inline constexpr std::uint32_t kOnDemand = 1u << 6;
inline constexpr std::uint32_t kRemoteAny = kRemoteWrite | kRemoteRead | kRemoteAtomic;
}  // namespace access

using PdHandle = std::uint32_t;

struct MrDesc {
  PdHandle pd = 0;
  std::uint64_t iova = 0;  // address the application names (or 0 when zero-based)
  std::uint64_t length = 0;
  std::uint32_t access = 0;
  std::uint8_t* host = nullptr;  // where iova maps in this process
};

enum class MrError : std::uint8_t {
  kOk = 0,
  kBadKey,        // no region with this key (never was, deregistered, stale variant)
  kInvalidated,   // key invalidated by SEND_WITH_INV / local invalidate
  kWrongPd,       // region belongs to another protection domain
  kOutOfBounds,   // [va, va + len) not inside the region, or wraps
  kAccessDenied,  // region lacks the access flag the operation needs
  kMisaligned,    // atomic target not 8-byte aligned
};
const char* mr_error_name(MrError e);

class MrTable {
 public:
  // Keys hold the slot index in 24 bits; larger capacities are clamped.
  static constexpr std::uint32_t kMaxSlots = 1u << 24;
  explicit MrTable(std::uint32_t capacity);

  // Registers a region; returns its key, or 0 with `err` set when the table
  // is full (ENOMEM) or the descriptor is invalid (EINVAL: remote write or
  // atomic without local write, as verbs requires; null host with length).
  std::uint32_t reg(const MrDesc& d, int* err);
  // Deregisters; returns 0 or EINVAL for an unknown key.
  int dereg(std::uint32_t key);
  // Replaces the descriptor of a live region (rereg); the key keeps working.
  int rereg(std::uint32_t key, const MrDesc& d);
  // Invalidates a key (IETH / local invalidate); the region stays allocated
  // until deregistered. EINVAL for unknown keys.
  int invalidate(std::uint32_t key);

  // Resolves [va, va + len) under `key` for an operation needing `need`
  // access flags, in protection domain `pd`. On success returns kOk and the
  // host pointer for va in *out. A zero-length access checks nothing and
  // succeeds with *out = nullptr (IBTA 9.4.1.1: rkey not validated for
  // zero-length RDMA). Atomic accesses (need has kRemoteAtomic) must also be
  // 8-byte aligned.
  MrError resolve(std::uint32_t key, PdHandle pd, std::uint64_t va, std::uint64_t len,
                  std::uint32_t need, std::uint8_t** out) const;

  const MrDesc* find(std::uint32_t key) const;
  std::uint32_t live() const { return live_; }
  std::uint32_t capacity() const { return static_cast<std::uint32_t>(slots_.size()); }

 private:
  struct Slot {
    MrDesc desc;
    std::uint8_t variant = 0;
    bool used = false;
    bool invalidated = false;
  };
  const Slot* slot_for(std::uint32_t key) const;
  Slot* slot_for(std::uint32_t key) {
    return const_cast<Slot*>(static_cast<const MrTable*>(this)->slot_for(key));
  }

  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_;  // free slot indices, used as a stack
  std::uint32_t live_ = 0;
};

}  // namespace uroce::transport
