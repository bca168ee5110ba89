// Memory regions, memory windows and their protection checks (IBTA Vol1
// 10.6, 10.6.7 for windows, 9.4.1.1 and C9-88..C9-96 for the checks a
// responder makes on RETH/AtomicETH; behaviour as Linux rxe's rxe_mr.c and
// rxe_mw.c where the spec leaves room). docs/memory-windows.md.
//
// One table per device holds every MR and MW of every client and PD. A key
// is 32 bits: bits 31..8 the index, bits 7..0 the key byte (the byte a
// memory-window bind replaces, as verbs' ibv_inc_rkey expects). The index is
// (tag << slot_bits) | slot, where slot_bits is what the table's capacity
// needs and the tag fills the index's other bits. The tag and the key byte
// are drawn from the table's seeded generator at every registration or
// allocation (and the key byte at every bind), and a new key never equals
// the slot's previous one, so keys cannot be guessed from their order and a
// stale key never matches. lkey and rkey are the same value.
//
// Every lookup finds the slot by index, then compares its protection domain
// with the caller's before it looks at anything else of the slot (its key,
// its kind, its window state): a caller of another PD learns nothing.
//
// Kinds (ibv_alloc_mw types):
//   MR        reg/rereg/dereg. Never invalidated: IBTA and rxe invalidate
//             only fast-registration MRs, which uroce has not got.
//   MW type 1 allocated valid and unbound; bound and unbound (length 0) by
//             bind(); never invalidated.
//   MW type 2 allocated free; bind() makes it valid on one QP (the QP the
//             BIND_MW WR was posted to), IETH / LOCAL_INV make it free again.
// A window is bound to an MR of its PD that grants IBV_ACCESS_MW_BIND and
// is not zero-based; while windows are bound to an MR it can be neither
// deregistered nor re-registered (EINVAL, as rxe's dereg).
//
// Threading: the table is owned by one engine lcore; registration and
// deregistration reach it as control messages processed on that lcore, so
// lookups on the packet path take no lock. Capacity is fixed at construction;
// nothing allocates after that.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "datapath/base/counter_fields.h"
#include "datapath/base/rng.h"
#include "datapath/transport/wr.h"

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
// What a window bind may grant (rxe: its MR access flags and zero-based).
inline constexpr std::uint32_t kMwBindable =
    kLocalWrite | kRemoteWrite | kRemoteRead | kRemoteAtomic | kMwBind | kZeroBased;
}  // namespace access

using PdHandle = std::uint32_t;

struct MrDesc {
  PdHandle pd = 0;
  std::uint64_t iova = 0;  // address the application names (or 0 when zero-based)
  std::uint64_t length = 0;
  std::uint32_t access = 0;
  std::uint8_t* host = nullptr;  // where iova maps in this process
};

enum class MwType : std::uint8_t { kType1 = 1, kType2 = 2 };

enum class MrError : std::uint8_t {
  kOk = 0,
  kBadKey,        // no region or window with this key (never was, freed, stale key)
  kInvalidated,   // a window that is not bound (type 2 free or invalidated; type 1 unbound)
  kWrongPd,       // the key's object belongs to another protection domain
  kOutOfBounds,   // [va, va + len) not inside the region or window, or wraps
  kAccessDenied,  // region or window lacks the access flag the operation needs
  kMisaligned,    // atomic target not 8-byte aligned
  kWrongQp,       // a type-2 window bound to another QP
  kNotWindow,     // invalidation of a key that is no type-2 window (an MR, a type-1 MW)
};
const char* mr_error_name(MrError e);
inline constexpr std::size_t kMrErrorCount = 9;

// What one BIND_MW WR (or ibv_bind_mw) asks (rxe_send_wr.wr.mw).
struct MwBind {
  std::uint32_t mw_key = 0;   // the window's current key
  std::uint32_t mr_key = 0;   // the MR's lkey; unused when length is 0
  std::uint32_t new_key = 0;  // its low byte becomes the window's key byte
  std::uint64_t addr = 0;     // start of the window in the MR's iova space
  std::uint64_t length = 0;   // 0: unbind (type 1 only)
  std::uint32_t access = 0;   // IBV_ACCESS_* of the window
};

// The bind a BIND_MW WR asks, from the fields a send WR keeps it in (the
// WQE copy packs the MR's lkey and the access into `swap`,
// pack_mw_lkey_access). RC and UC execute it (rc_requester.cpp, uc_qp.cpp).
inline MwBind mw_bind_of(const SendWrFields& wr) {
  MwBind b;
  b.mw_key = wr.imm_or_inv;
  b.new_key = wr.rkey;
  b.addr = wr.remote_addr;
  b.length = wr.compare_add;
  b.mr_key = static_cast<std::uint32_t>(wr.swap >> 32);
  b.access = static_cast<std::uint32_t>(wr.swap);
  return b;
}

// Invalidations and binds refused, by reason (MrError index), device-wide.
struct MwCounters {
  std::uint64_t binds = 0;                                  // windows bound
  std::array<std::uint64_t, kMrErrorCount> bind_refused{};  // by MrError
  std::uint64_t invalidates = 0;                            // type-2 windows invalidated
  std::array<std::uint64_t, kMrErrorCount> inv_refused{};   // by MrError
};

// The arrays by reason are written apart (mr_error_name gives the names).
inline constexpr counters::FieldList<MwCounters, 2> kMwCounterFields{{
    {"binds", &MwCounters::binds, "windows bound"},
    {"invalidates", &MwCounters::invalidates, "type-2 windows invalidated"},
}};
static_assert(counters::covers(kMwCounterFields, &MwCounters::bind_refused,
                               &MwCounters::inv_refused));
constexpr const auto& counter_fields(const MwCounters&) { return kMwCounterFields; }

class MrTable {
 public:
  // Keys hold the index in 24 bits; larger capacities are clamped. `seed`
  // seeds the key generator (a given seed gives the same keys for the same
  // sequence of calls).
  static constexpr std::uint32_t kMaxSlots = 1u << 24;
  explicit MrTable(std::uint32_t capacity, std::uint64_t seed = 0);

  // Registers a region; returns its key, or 0 with `err` set when the table
  // is full (ENOMEM) or the descriptor is invalid (EINVAL: remote write or
  // atomic without local write, as verbs requires; null host with length).
  std::uint32_t reg(const MrDesc& d, int* err);
  // Deregisters; returns 0, or EINVAL for an unknown key or a region with
  // windows bound to it.
  int dereg(std::uint32_t key);
  // Replaces the descriptor of a live region (rereg); the key keeps working.
  // EINVAL as dereg.
  int rereg(std::uint32_t key, const MrDesc& d);

  // Allocates a window of `pd`: returns its key, or 0 with *err ENOMEM.
  std::uint32_t alloc_mw(PdHandle pd, MwType type, int* err);
  // Frees a window (bound or not); EINVAL for an unknown key. The key byte
  // is not compared: binds change it behind the owner's back (a type-2 bind
  // takes the byte from the WR), and only the owner of a live window, which
  // keeps the key it was allocated with, calls this.
  int dealloc_mw(std::uint32_t key);
  // Executes a bind posted to QP `qpn` of PD `pd` (rxe_bind_mw and
  // rxe_check_bind_mw; IBTA C10-72..C10-75). On success the window's key
  // takes b.new_key's low byte and *new_key is the key peers now use.
  MrError bind_mw(const MwBind& b, PdHandle pd, std::uint32_t qpn, std::uint32_t* new_key);
  // Invalidation by IETH (remote) or LOCAL_INV on a QP of PD `pd`: only a
  // type-2 window of that PD (one already free stays free, as rxe); anything
  // else is refused and nothing changes. Refusals are counted in
  // mw_counters().
  MrError invalidate(std::uint32_t key, PdHandle pd);

  // Resolves [va, va + len) under local key `key` (an lkey: MRs only) for
  // an operation needing `need` access flags, in protection domain `pd`. On
  // success returns kOk and the host pointer for va in *out. A zero-length
  // access checks nothing and succeeds with *out = nullptr (IBTA 9.4.1.1:
  // rkey not validated for zero-length RDMA). Atomic accesses (need has
  // kRemoteAtomic) must also be 8-byte aligned.
  MrError resolve(std::uint32_t key, PdHandle pd, std::uint64_t va, std::uint64_t len,
                  std::uint32_t need, std::uint8_t** out) const;
  // The same for an rkey arriving on QP `qpn`: an MR, or a bound window (a
  // type-2 window only on the QP that bound it; a zero-based window takes
  // va as an offset into it).
  MrError resolve_remote(std::uint32_t key, PdHandle pd, std::uint32_t qpn, std::uint64_t va,
                         std::uint64_t len, std::uint32_t need, std::uint8_t** out) const;

  // The descriptor of a live region (not a window), or null.
  const MrDesc* find(std::uint32_t key) const;
  std::uint32_t live() const { return live_; }
  std::uint32_t mws_live() const { return mws_live_; }
  std::uint32_t capacity() const { return static_cast<std::uint32_t>(slots_.size()); }
  const MwCounters& mw_counters() const { return mwc_; }

 private:
  enum class Kind : std::uint8_t { kFree, kMr, kMw1, kMw2 };
  struct Slot {
    MrDesc desc;  // MR: the region; MW: pd, and when bound the window
    std::uint32_t key = 0;
    Kind kind = Kind::kFree;
    bool bound = false;        // MW: has a window (valid with length > 0)
    std::uint32_t qpn = 0;     // type-2 MW: the QP it is bound to
    std::uint32_t mr_key = 0;  // bound MW: its MR
    std::uint32_t mws = 0;     // MR: windows bound to it
  };
  // The live slot `key` indexes and the PD check: kOk, kBadKey or kWrongPd.
  // The slot's key is compared only after its PD matched.
  MrError lookup(std::uint32_t key, PdHandle pd, const Slot** s) const;
  const Slot* by_index(std::uint32_t key) const;
  std::uint32_t take_slot(Kind kind, PdHandle pd, int* err);
  std::uint32_t fresh_key(std::uint32_t idx, std::uint32_t old_key);
  void unbind(Slot& mw);
  MrError check_range(const MrDesc& d, std::uint64_t va, std::uint64_t len, std::uint32_t need,
                      std::uint8_t** out) const;

  std::vector<Slot> slots_;
  std::vector<std::uint32_t> free_;  // free slot indices, used as a stack
  std::uint32_t slot_bits_ = 0;      // index bits that name the slot; the rest are the tag
  std::uint32_t live_ = 0;           // MRs
  std::uint32_t mws_live_ = 0;
  SeededRng rng_;
  MwCounters mwc_;
};

}  // namespace uroce::transport
