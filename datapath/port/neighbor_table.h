// A bounded IP -> MAC neighbour table for one interface: NeighborTable for
// IPv4 (ARP, arp_agent.h), Neighbor6Table for IPv6 (neighbour discovery,
// nd_agent.h); one template, instantiated for both in neighbor_table.cpp.
//
// Capacity is fixed at construction; nothing is allocated afterwards, so the
// table can sit on the packet path. Storage is an array of entries plus an
// open-addressing index (linear probing, power-of-two slots, at most half
// full, backward-shift deletion so there are no tombstones): a lookup touches
// one or two cache lines. Every live entry is also on an intrusive LRU list;
// when the table is full a new entry replaces the least recently used entry
// that is not incomplete (an outstanding request is never evicted).
//
// Ageing (lazy on lookup and eager in age()), measured from `confirmed`:
//   reachable --(reachable_time)--> stale --(stale_time more)--> removed
// Stale entries still give their MAC: RoCE traffic itself never confirms a
// neighbour, so the resolver re-probes them instead of stalling traffic.
// Failed entries are removed by age() once their hold-down (`timer`) ends.
//
// Not thread-safe: one lcore owns a table.
#pragma once

#include <cstdint>
#include <vector>

#include "datapath/base/time.h"
#include "datapath/wire/addr.h"

namespace uroce::port {

enum class NeighborState : std::uint8_t {
  kIncomplete,  // request sent, no answer yet; never evicted
  kReachable,   // confirmed less than reachable_time ago
  kStale,       // older confirmation; usable, to be re-probed
  kFailed,      // no answer after all retries; held down until `timer`
};

const char* to_string(NeighborState s);

template <class Addr>
struct BasicNeighborEntry {
  Addr ip{};
  wire::MacAddr mac{};  // meaningful unless incomplete
  NeighborState state = NeighborState::kIncomplete;
  // Requests sent for this entry since it last became incomplete, minus one
  // (the retransmissions so far).
  std::uint8_t retries = 0;
  // When the MAC was last confirmed (reachable/stale), or when the entry was
  // created (incomplete/failed).
  TimeNs confirmed = 0;
  // The resolver's deadline: incomplete -> next retransmission; stale -> no
  // re-probe before this; failed -> end of the hold-down.
  TimeNs timer = 0;

 private:
  template <class>
  friend class BasicNeighborTable;
  std::uint32_t lru_prev_ = 0;
  std::uint32_t lru_next_ = 0;
};

struct NeighborConfig {
  std::uint32_t capacity = 256;
  // Linux's base_reachable_time and gc_stale_time defaults.
  TimeNs reachable_time = 30 * kNsPerSec;
  TimeNs stale_time = 60 * kNsPerSec;
};

struct NeighborStats {
  std::uint64_t inserts = 0;
  std::uint64_t evictions = 0;    // LRU entries replaced by new ones
  std::uint64_t insert_full = 0;  // no room: every entry incomplete
  std::uint64_t expired = 0;      // removed by ageing
};

template <class Addr>
class BasicNeighborTable {
 public:
  using Entry = BasicNeighborEntry<Addr>;
  // capacity must be >= 1 (0 is treated as 1).
  explicit BasicNeighborTable(const NeighborConfig& cfg);

  // The entry for `ip` after ageing it to `now`, or nullptr. A hit marks the
  // entry most recently used.
  Entry* lookup(const Addr& ip, TimeNs now);
  // The entry as stored, without ageing or LRU effect (for inspection).
  const Entry* peek(const Addr& ip) const;

  // Creates an incomplete entry for an `ip` that has none. Returns nullptr
  // when the table is full of incomplete entries (counted in insert_full).
  Entry* create_incomplete(const Addr& ip, TimeNs now);
  // Records `mac` for `ip` as confirmed now (state reachable, retries 0).
  // Creates the entry only if `create`; returns nullptr when there is none
  // and none was created.
  Entry* confirm(const Addr& ip, const wire::MacAddr& mac, TimeNs now, bool create);
  bool erase(const Addr& ip);

  // Applies ageing to every entry; returns how many were removed.
  std::uint32_t age(TimeNs now);

  // Calls f(Entry&) for every live entry, most recently used first.
  // f must not insert or erase.
  template <class F>
  void for_each(F&& f) {
    for (std::uint32_t i = lru_head_; i != kNil; i = entries_[i].lru_next_) f(entries_[i]);
  }

  std::uint32_t size() const { return size_; }
  std::uint32_t capacity() const { return static_cast<std::uint32_t>(entries_.size()); }
  const NeighborStats& stats() const { return stats_; }
  TimeNs reachable_time() const { return cfg_.reachable_time; }

 private:
  static constexpr std::uint32_t kNil = 0xffffffffu;

  std::uint32_t home_slot(const Addr& ip) const;
  std::uint32_t find_slot(const Addr& ip) const;  // slot index or kNil
  Entry* insert(const Addr& ip, TimeNs now);
  void remove_at_slot(std::uint32_t slot);
  // Ages one entry; returns false if it was removed.
  bool age_entry(std::uint32_t slot, TimeNs now);
  void lru_unlink(std::uint32_t e);
  void lru_push_front(std::uint32_t e);

  NeighborConfig cfg_;
  std::vector<Entry> entries_;
  std::vector<std::uint32_t> slots_;  // entry index or kNil
  std::uint32_t slot_mask_ = 0;
  std::uint32_t free_head_ = kNil;  // free entries chained via lru_next_
  std::uint32_t lru_head_ = kNil;   // most recently used
  std::uint32_t lru_tail_ = kNil;   // least recently used
  std::uint32_t size_ = 0;
  NeighborStats stats_;
};

using NeighborEntry = BasicNeighborEntry<wire::Ipv4Addr>;
using NeighborTable = BasicNeighborTable<wire::Ipv4Addr>;
using Neighbor6Entry = BasicNeighborEntry<wire::Ipv6Addr>;
using Neighbor6Table = BasicNeighborTable<wire::Ipv6Addr>;
extern template class BasicNeighborTable<wire::Ipv4Addr>;
extern template class BasicNeighborTable<wire::Ipv6Addr>;

}  // namespace uroce::port
