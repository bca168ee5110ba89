#include "datapath/port/neighbor_table.h"

#include <cassert>

#include "datapath/wire/byteorder.h"

namespace uroce::port {

namespace {

// What home_slot hashes: the address, or the low 64 bits of an IPv6
// address (the interface identifier, where neighbours on a link differ),
// folded with the high 64.
std::uint64_t neighbor_key(wire::Ipv4Addr ip) { return ip.v; }
std::uint64_t neighbor_key(const wire::Ipv6Addr& ip) {
  return wire::load_be64(ip.b.data() + 8) ^ (wire::load_be64(ip.b.data()) >> 1);
}

}  // namespace

const char* to_string(NeighborState s) {
  switch (s) {
    case NeighborState::kIncomplete: return "incomplete";
    case NeighborState::kReachable: return "reachable";
    case NeighborState::kStale: return "stale";
    case NeighborState::kFailed: return "failed";
  }
  return "?";
}

template <class Addr>
BasicNeighborTable<Addr>::BasicNeighborTable(const NeighborConfig& cfg) : cfg_(cfg) {
  const std::uint32_t cap = cfg.capacity == 0 ? 1 : cfg.capacity;
  entries_.resize(cap);
  // At most half the slots are used, so probe sequences stay short.
  std::uint32_t n = 2;
  while (n < 2 * static_cast<std::uint64_t>(cap)) n <<= 1;
  slots_.assign(n, kNil);
  slot_mask_ = n - 1;
  for (std::uint32_t i = 0; i < cap; ++i) entries_[i].lru_next_ = i + 1 < cap ? i + 1 : kNil;
  free_head_ = 0;
}

template <class Addr>
std::uint32_t BasicNeighborTable<Addr>::home_slot(const Addr& ip) const {
  // Fibonacci hashing: neighbours usually differ only in the low octet, and
  // the multiply spreads those bits into the high half we keep.
  const std::uint64_t h = neighbor_key(ip) * 0x9E3779B97F4A7C15ull;
  return static_cast<std::uint32_t>(h >> 32) & slot_mask_;
}

template <class Addr>
std::uint32_t BasicNeighborTable<Addr>::find_slot(const Addr& ip) const {
  for (std::uint32_t s = home_slot(ip);; s = (s + 1) & slot_mask_) {
    const std::uint32_t e = slots_[s];
    if (e == kNil) return kNil;
    if (entries_[e].ip == ip) return s;
  }
}

template <class Addr>
const typename BasicNeighborTable<Addr>::Entry* BasicNeighborTable<Addr>::peek(
    const Addr& ip) const {
  const std::uint32_t s = find_slot(ip);
  return s == kNil ? nullptr : &entries_[slots_[s]];
}

template <class Addr>
typename BasicNeighborTable<Addr>::Entry* BasicNeighborTable<Addr>::lookup(const Addr& ip,
                                                                           TimeNs now) {
  const std::uint32_t s = find_slot(ip);
  if (s == kNil) return nullptr;
  const std::uint32_t e = slots_[s];
  if (!age_entry(s, now)) return nullptr;
  lru_unlink(e);
  lru_push_front(e);
  return &entries_[e];
}

template <class Addr>
bool BasicNeighborTable<Addr>::age_entry(std::uint32_t slot, TimeNs now) {
  Entry& n = entries_[slots_[slot]];
  const TimeNs since = now > n.confirmed ? now - n.confirmed : 0;
  if (n.state == NeighborState::kReachable && since >= cfg_.reachable_time)
    n.state = NeighborState::kStale;
  bool expire = false;
  if (n.state == NeighborState::kStale) expire = since >= cfg_.reachable_time + cfg_.stale_time;
  else if (n.state == NeighborState::kFailed) expire = now >= n.timer;
  if (!expire) return true;
  ++stats_.expired;
  remove_at_slot(slot);
  return false;
}

template <class Addr>
std::uint32_t BasicNeighborTable<Addr>::age(TimeNs now) {
  std::uint32_t removed = 0;
  for (std::uint32_t e = lru_head_; e != kNil;) {
    const std::uint32_t next = entries_[e].lru_next_;
    if (!age_entry(find_slot(entries_[e].ip), now)) ++removed;
    e = next;
  }
  return removed;
}

template <class Addr>
typename BasicNeighborTable<Addr>::Entry* BasicNeighborTable<Addr>::insert(const Addr& ip,
                                                                           TimeNs now) {
  if (free_head_ == kNil) {
    // Full: replace the least recently used entry that is not incomplete.
    std::uint32_t victim = lru_tail_;
    while (victim != kNil && entries_[victim].state == NeighborState::kIncomplete)
      victim = entries_[victim].lru_prev_;
    if (victim == kNil) {
      ++stats_.insert_full;
      return nullptr;
    }
    ++stats_.evictions;
    remove_at_slot(find_slot(entries_[victim].ip));
  }
  const std::uint32_t e = free_head_;
  free_head_ = entries_[e].lru_next_;
  Entry& n = entries_[e];
  n = Entry{};
  n.ip = ip;
  n.confirmed = now;
  std::uint32_t s = home_slot(ip);
  while (slots_[s] != kNil) s = (s + 1) & slot_mask_;
  slots_[s] = e;
  lru_push_front(e);
  ++size_;
  // The index stays at most half full (the header's invariant): probes end.
  assert(2 * size_ <= slot_mask_ + 1);
  ++stats_.inserts;
  return &n;
}

template <class Addr>
typename BasicNeighborTable<Addr>::Entry* BasicNeighborTable<Addr>::create_incomplete(
    const Addr& ip, TimeNs now) {
  Entry* n = insert(ip, now);
  if (n != nullptr) n->state = NeighborState::kIncomplete;
  return n;
}

template <class Addr>
typename BasicNeighborTable<Addr>::Entry* BasicNeighborTable<Addr>::confirm(
    const Addr& ip, const wire::MacAddr& mac, TimeNs now, bool create) {
  Entry* n = nullptr;
  const std::uint32_t s = find_slot(ip);
  if (s != kNil) {
    const std::uint32_t e = slots_[s];
    n = &entries_[e];
    lru_unlink(e);
    lru_push_front(e);
  } else if (create) {
    n = insert(ip, now);
  }
  if (n == nullptr) return nullptr;
  n->mac = mac;
  n->state = NeighborState::kReachable;
  n->confirmed = now;
  n->retries = 0;
  n->timer = now;
  return n;
}

template <class Addr>
bool BasicNeighborTable<Addr>::erase(const Addr& ip) {
  const std::uint32_t s = find_slot(ip);
  if (s == kNil) return false;
  remove_at_slot(s);
  return true;
}

template <class Addr>
void BasicNeighborTable<Addr>::remove_at_slot(std::uint32_t slot) {
  const std::uint32_t e = slots_[slot];
  lru_unlink(e);
  entries_[e].lru_next_ = free_head_;
  free_head_ = e;
  --size_;
  // Backward-shift deletion: pull later members of the probe run into the
  // hole when their home slot does not lie cyclically in (hole, j].
  std::uint32_t hole = slot;
  for (std::uint32_t j = (slot + 1) & slot_mask_; slots_[j] != kNil; j = (j + 1) & slot_mask_) {
    const std::uint32_t home = home_slot(entries_[slots_[j]].ip);
    const bool home_in_range = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (!home_in_range) {
      slots_[hole] = slots_[j];
      hole = j;
    }
  }
  slots_[hole] = kNil;
}

template <class Addr>
void BasicNeighborTable<Addr>::lru_unlink(std::uint32_t e) {
  Entry& n = entries_[e];
  if (n.lru_prev_ != kNil) entries_[n.lru_prev_].lru_next_ = n.lru_next_;
  else lru_head_ = n.lru_next_;
  if (n.lru_next_ != kNil) entries_[n.lru_next_].lru_prev_ = n.lru_prev_;
  else lru_tail_ = n.lru_prev_;
  n.lru_prev_ = n.lru_next_ = kNil;
}

template <class Addr>
void BasicNeighborTable<Addr>::lru_push_front(std::uint32_t e) {
  Entry& n = entries_[e];
  n.lru_prev_ = kNil;
  n.lru_next_ = lru_head_;
  if (lru_head_ != kNil) entries_[lru_head_].lru_prev_ = e;
  lru_head_ = e;
  if (lru_tail_ == kNil) lru_tail_ = e;
}

template class BasicNeighborTable<wire::Ipv4Addr>;
template class BasicNeighborTable<wire::Ipv6Addr>;

}  // namespace uroce::port
