// The DC target's bounded table (docs/dc.md, "Target"): which responder
// context serves an initiator's stream, and what to answer when none does.
//
// Per device: `contexts` slots, each serving one identity (initiator
// address, DCI QPN, lane) in one connection `conn`; and 2^records_log2
// record slots, direct-mapped by the identity's hash, each keeping the
// last context retired into it ({identity tag, conn, expected PSN}) and a
// floor: the newest `conn` ever retired into the slot, which never goes
// down. The table decides; the caller (the engine) owns the RC responder
// state of each slot, resets it when a slot opens, and reports after each
// packet whether the slot is quiescent (no response owed, no message half
// received) and its expected PSN (settle()).
//
// The rules that keep a request from ever running twice:
//   - a context opens only for a SYN request whose conn is newer than its
//     record slot's floor;
//   - retiring a context raises that floor to its conn (so no packet of
//     that connection, however late, opens a context again);
//   - a context is retired under pressure only once clean: quiescent, and
//     the initiator's acknowledged PSN (DCETH) has reached its expected
//     PSN, so the initiator holds every response (an atomic's result too)
//     and will never send those requests again; on the initiator's
//     DISCONNECT naming its expected PSN; or after `stale_ns` without a
//     packet (the initiator has stopped retrying by then; docs/dc.md says
//     why that must hold);
//   - a context whose connection failed (its responder sent a class C NAK
//     and owes nothing more) is retired at once: the NAK'd request and
//     everything after it never ran (its expected PSN stayed at the NAK'd
//     one), so a retry of that connection is answered GONE and runs again
//     only in a new connection, where it fails the same way.
// So an UNKNOWN answer to a connection that never saw a response means
// the target never opened a context for it: nothing ran.
//
// No allocation after construction; every call is O(1) but the index
// probe. Owned by one engine lcore.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "datapath/base/counter_fields.h"
#include "datapath/base/time.h"

namespace uroce::transport {

// Who a context serves. IPv4 sources are stored as ::ffff:a.b.c.d.
struct DcIdentity {
  std::array<std::uint8_t, 16> src{};
  std::uint32_t dci_qpn = 0;  // 24 bits
  std::uint16_t lane = 0;

  friend bool operator==(const DcIdentity&, const DcIdentity&) = default;
};
std::uint64_t dc_identity_hash(const DcIdentity& id);

// Connection numbers are compared with 32-bit serial arithmetic.
constexpr bool dc_conn_newer(std::uint32_t a, std::uint32_t b) {
  return static_cast<std::int32_t>(a - b) > 0;
}

struct DcTargetLimits {
  std::uint32_t contexts = 4096;
  std::uint32_t records_log2 = 16;
  // A context without a packet for this long is retired whatever its state.
  TimeNs stale_ns = 10 * kNsPerSec;
};

enum class DcVerdict : std::uint8_t {
  kRun,      // process in `ctx` as RC processes a request
  kOpened,   // `ctx` was (re)opened for this connection: reset its responder
             // to expect the start PSN, then process
  kStale,    // an older connection than the context's: drop
  kGone,     // answer GONE: the connection was retired, `value` = its expected PSN
  kUnknown,  // answer UNKNOWN: `value` = the record slot's floor
  kBusy,     // answer BUSY: every context is busy or unconfirmed
  kIgnore,   // a DISCONNECT that retires nothing (not quiescent, or PSN differs)
};

struct DcLookup {
  DcVerdict verdict = DcVerdict::kUnknown;
  std::uint32_t ctx = 0;
  std::uint32_t value = 0;
  // kOpened into a slot that served another connection until now (retired
  // on the way; the caller sends that initiator a GONE notice with
  // `old_conn` and `old_epsn` before resetting the slot): `old` is its
  // identity.
  bool evicted = false;
  DcIdentity old{};
  std::uint32_t old_conn = 0;
  std::uint32_t old_epsn = 0;
};

struct DcTargetCounters {
  std::uint64_t opened = 0;
  std::uint64_t restarted = 0;  // a newer SYN connection took an identity's context
  std::uint64_t retired_pressure = 0;
  std::uint64_t retired_disconnect = 0;
  std::uint64_t retired_stale = 0;
  std::uint64_t retired_error = 0;      // its responder NAKed a request (class C)
  std::uint64_t stale_conn = 0;         // packets of an older connection than the context's
  std::uint64_t gone = 0;               // GONE answers from a record
  std::uint64_t unknown = 0;            // UNKNOWN answers
  std::uint64_t busy = 0;               // SYN requests that found the pool full (the DCT
                                        // answers BUSY to each connection's opening one)
  std::uint64_t record_overwrites = 0;  // a record replaced another identity's
};

inline constexpr counters::FieldList<DcTargetCounters, 11> kDcTargetCounterFields{{
    {"opened", &DcTargetCounters::opened, "contexts opened for a new connection"},
    {"restarted", &DcTargetCounters::restarted,
     "a newer SYN connection took an identity's context"},
    {"retired_pressure", &DcTargetCounters::retired_pressure,
     "contexts retired to make room for a new connection"},
    {"retired_disconnect", &DcTargetCounters::retired_disconnect,
     "contexts retired by a DISCONNECT"},
    {"retired_stale", &DcTargetCounters::retired_stale,
     "contexts retired after being idle too long"},
    {"retired_error", &DcTargetCounters::retired_error,
     "contexts retired after their responder NAKed a request (class C: the connection failed)"},
    {"stale_conn", &DcTargetCounters::stale_conn,
     "packets of an older connection than the context's"},
    {"gone", &DcTargetCounters::gone, "GONE answers from a record"},
    {"unknown", &DcTargetCounters::unknown, "UNKNOWN answers"},
    {"busy", &DcTargetCounters::busy,
     "SYN requests that found the pool full (the DCT answers BUSY to each connection's opening "
     "one)"},
    {"record_overwrites", &DcTargetCounters::record_overwrites,
     "a record replaced another identity's"},
}};
static_assert(counters::covers(kDcTargetCounterFields));
constexpr const auto& counter_fields(const DcTargetCounters&) { return kDcTargetCounterFields; }

class DcTargetTable {
 public:
  static constexpr std::uint32_t kNone = 0xFFFFFFFF;

  // Allocates everything (control path).
  explicit DcTargetTable(const DcTargetLimits& limits);

  // A request of `id` in connection `conn`; `syn` and `acked` (the
  // initiator's acknowledged PSN) from its DCETH. The context (kRun,
  // kOpened) is marked not quiescent until settle().
  DcLookup on_request(const DcIdentity& id, std::uint32_t conn, bool syn, std::uint32_t acked,
                      TimeNs now);
  // After the caller processed a packet in `ctx` (and sent what it could):
  // whether the context owes nothing, and its expected PSN.
  void settle(std::uint32_t ctx, bool quiescent, std::uint32_t epsn);
  // DC_DISCONNECT of `id` for `conn` with the initiator's next PSN: kGone
  // (retired now: `ctx` is the context; or from the record: `ctx` kNone;
  // `value` the expected PSN), kIgnore, or kUnknown (`ctx` kNone).
  DcLookup on_disconnect(const DcIdentity& id, std::uint32_t conn, std::uint32_t psn);
  // Retires the context that has gone longest without a packet if that is
  // `stale_ns` or more; returns it (the caller sends its GONE notice and
  // forgets its state) or kNone. Call until kNone.
  std::uint32_t retire_stale(TimeNs now);
  // The connection of `ctx` failed: its responder sent a class C NAK at
  // `epsn` and owes nothing more. The context goes now; its record keeps
  // `epsn` for the initiator's retries (GONE).
  void retire_failed(std::uint32_t ctx, std::uint32_t epsn);
  // A DCT was destroyed or the device reset: every context goes (records
  // and floors stay).
  void clear();
  // One context goes now, as a retirement (its DCT was destroyed).
  void release(std::uint32_t ctx);

  // For the caller's GONE notices and status.
  const DcIdentity& identity(std::uint32_t ctx) const { return ctx_[ctx].id; }
  std::uint32_t conn(std::uint32_t ctx) const { return ctx_[ctx].conn; }
  std::uint32_t epsn(std::uint32_t ctx) const { return ctx_[ctx].epsn; }
  bool in_use(std::uint32_t ctx) const { return ctx_[ctx].used; }
  std::uint32_t size() const { return used_; }
  std::uint32_t capacity() const { return static_cast<std::uint32_t>(ctx_.size()); }
  const DcTargetCounters& counters() const { return ctr_; }
  // Bytes this table holds (not counting the caller's responders).
  std::size_t memory_bytes() const;

 private:
  // A context's place in one of the two intrusive lists below.
  struct Links {
    std::uint32_t prev = kNone, next = kNone;
  };
  struct Context {
    DcIdentity id{};
    std::uint64_t hash = 0;
    std::uint32_t conn = 0;
    std::uint32_t epsn = 0;
    TimeNs last = 0;
    // The initiator's acknowledged PSN, the newest seen (24 bits).
    std::uint32_t peer_acked = 0;
    bool used = false;
    bool quiescent = false;
    // Every used context, oldest packet first (stale retirement).
    Links all{};
    // Clean ones (quiescent, everything acknowledged to the initiator),
    // least recently used first (pressure).
    Links q{};
    bool on_q = false;
  };
  struct Record {
    std::uint32_t tag = 0;
    std::uint32_t conn = 0;
    std::uint32_t epsn = 0;
    std::uint32_t floor = 0;
    bool has_record = false;
    bool has_floor = false;
  };
  struct List {
    std::uint32_t head = kNone, tail = kNone;
  };

  std::uint32_t find(const DcIdentity& id, std::uint64_t h) const;
  void index_insert(std::uint32_t ctx, std::uint64_t h);
  void index_erase(std::uint32_t ctx);
  Record& record_of(std::uint64_t h) { return rec_[h & rec_mask_]; }
  static std::uint32_t tag_of(std::uint64_t h) { return static_cast<std::uint32_t>(h >> 32); }
  void retire(std::uint32_t ctx);
  // retire, and the slot back on the free list.
  void retire_to_free(std::uint32_t ctx);
  std::uint32_t take_slot(DcLookup& out);
  void open(std::uint32_t ctx, const DcIdentity& id, std::uint64_t h, std::uint32_t conn,
            TimeNs now);
  void touch(std::uint32_t ctx, TimeNs now);

  // Intrusive lists over ctx_ (all_: the stale order, through
  // Context::all; q_: the clean one, through Context::q).
  void list_push(List& l, Links Context::*links, std::uint32_t c);
  void list_remove(List& l, Links Context::*links, std::uint32_t c);
  void all_push(std::uint32_t c) { list_push(all_, &Context::all, c); }
  void all_remove(std::uint32_t c) { list_remove(all_, &Context::all, c); }
  void q_push(std::uint32_t c);
  void q_remove(std::uint32_t c);

  TimeNs stale_ns_;
  std::vector<Context> ctx_;
  std::vector<std::uint32_t> free_;
  std::uint32_t used_ = 0;
  // Open addressing with linear probing: slot -> ctx index or kNone;
  // capacity a power of two, at least twice the contexts.
  std::vector<std::uint32_t> index_;
  std::uint64_t index_mask_ = 0;
  std::vector<Record> rec_;
  std::uint64_t rec_mask_ = 0;
  List all_{}, q_{};
  DcTargetCounters ctr_{};
};

}  // namespace uroce::transport
