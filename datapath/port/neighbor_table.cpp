#include "datapath/port/neighbor_table.h"

namespace uroce::port {

const char* to_string(NeighborState s) {
  switch (s) {
    case NeighborState::kIncomplete: return "incomplete";
    case NeighborState::kReachable: return "reachable";
    case NeighborState::kStale: return "stale";
    case NeighborState::kFailed: return "failed";
  }
  return "?";
}

NeighborTable::NeighborTable(const NeighborConfig& cfg) : cfg_(cfg) {
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

std::uint32_t NeighborTable::home_slot(wire::Ipv4Addr ip) const {
  // Fibonacci hashing: neighbours usually differ only in the low octet, and
  // the multiply spreads those bits into the high half we keep.
  const std::uint64_t h = std::uint64_t{ip.v} * 0x9E3779B97F4A7C15ull;
  return static_cast<std::uint32_t>(h >> 32) & slot_mask_;
}

std::uint32_t NeighborTable::find_slot(wire::Ipv4Addr ip) const {
  for (std::uint32_t s = home_slot(ip);; s = (s + 1) & slot_mask_) {
    const std::uint32_t e = slots_[s];
    if (e == kNil) return kNil;
    if (entries_[e].ip == ip) return s;
  }
}

const NeighborEntry* NeighborTable::peek(wire::Ipv4Addr ip) const {
  const std::uint32_t s = find_slot(ip);
  return s == kNil ? nullptr : &entries_[slots_[s]];
}

NeighborEntry* NeighborTable::lookup(wire::Ipv4Addr ip, TimeNs now) {
  const std::uint32_t s = find_slot(ip);
  if (s == kNil) return nullptr;
  const std::uint32_t e = slots_[s];
  if (!age_entry(s, now)) return nullptr;
  lru_unlink(e);
  lru_push_front(e);
  return &entries_[e];
}

bool NeighborTable::age_entry(std::uint32_t slot, TimeNs now) {
  NeighborEntry& n = entries_[slots_[slot]];
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

std::uint32_t NeighborTable::age(TimeNs now) {
  std::uint32_t removed = 0;
  for (std::uint32_t e = lru_head_; e != kNil;) {
    const std::uint32_t next = entries_[e].lru_next_;
    if (!age_entry(find_slot(entries_[e].ip), now)) ++removed;
    e = next;
  }
  return removed;
}

NeighborEntry* NeighborTable::insert(wire::Ipv4Addr ip, TimeNs now) {
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
  NeighborEntry& n = entries_[e];
  n = NeighborEntry{};
  n.ip = ip;
  n.confirmed = now;
  std::uint32_t s = home_slot(ip);
  while (slots_[s] != kNil) s = (s + 1) & slot_mask_;
  slots_[s] = e;
  lru_push_front(e);
  ++size_;
  ++stats_.inserts;
  return &n;
}

NeighborEntry* NeighborTable::create_incomplete(wire::Ipv4Addr ip, TimeNs now) {
  NeighborEntry* n = insert(ip, now);
  if (n != nullptr) n->state = NeighborState::kIncomplete;
  return n;
}

NeighborEntry* NeighborTable::confirm(wire::Ipv4Addr ip, const wire::MacAddr& mac, TimeNs now,
                                      bool create) {
  NeighborEntry* n = nullptr;
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

bool NeighborTable::erase(wire::Ipv4Addr ip) {
  const std::uint32_t s = find_slot(ip);
  if (s == kNil) return false;
  remove_at_slot(s);
  return true;
}

void NeighborTable::remove_at_slot(std::uint32_t slot) {
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

void NeighborTable::lru_unlink(std::uint32_t e) {
  NeighborEntry& n = entries_[e];
  if (n.lru_prev_ != kNil) entries_[n.lru_prev_].lru_next_ = n.lru_next_;
  else lru_head_ = n.lru_next_;
  if (n.lru_next_ != kNil) entries_[n.lru_next_].lru_prev_ = n.lru_prev_;
  else lru_tail_ = n.lru_prev_;
  n.lru_prev_ = n.lru_next_ = kNil;
}

void NeighborTable::lru_push_front(std::uint32_t e) {
  NeighborEntry& n = entries_[e];
  n.lru_prev_ = kNil;
  n.lru_next_ = lru_head_;
  if (lru_head_ != kNil) entries_[lru_head_].lru_prev_ = e;
  lru_head_ = e;
  if (lru_tail_ == kNil) lru_tail_ = e;
}

}  // namespace uroce::port
