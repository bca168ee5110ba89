#include "sched/grant_scheduler.h"

#include <algorithm>
#include <bit>
#include <cassert>

namespace uroce::sched::homa {

namespace {

// Fibonacci hashing of the 64-bit key onto the table.
std::uint32_t hash(std::uint64_t key, std::uint32_t mask) {
  return static_cast<std::uint32_t>((key * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

}  // namespace

GrantScheduler::GrantScheduler(const GrantConfig& cfg) : cfg_(cfg) {
  assert(cfg_.priorities >= 1 && cfg_.priorities <= 8);
  assert(cfg_.unsched_priorities < cfg_.priorities || cfg_.priorities == 1);
  assert(cfg_.max_messages > 0 && cfg_.overcommit > 0 && cfg_.overcommit <= kMaxOvercommit);
  sched_levels_ = static_cast<std::uint8_t>(
      cfg_.priorities > cfg_.unsched_priorities ? cfg_.priorities - cfg_.unsched_priorities : 1);
  msgs_.resize(cfg_.max_messages);
  free_.reserve(cfg_.max_messages);
  for (std::uint32_t i = cfg_.max_messages; i-- > 0;) free_.push_back(i);
  const std::uint32_t slots = std::bit_ceil(cfg_.max_messages * 2);
  slots_.assign(slots, kNone);
  slot_mask_ = slots - 1;
  order_.reserve(cfg_.max_messages);
  live_list_.reserve(cfg_.max_messages);
  peers_.reserve(cfg_.overcommit);
}

std::uint32_t GrantScheduler::find(std::uint64_t key) const {
  for (std::uint32_t s = hash(key, slot_mask_);; s = (s + 1) & slot_mask_) {
    const std::uint32_t i = slots_[s];
    if (i == kNone) return kNone;
    if (msgs_[i].key == key) return i;
  }
}

std::uint32_t GrantScheduler::insert(std::uint64_t key) {
  if (free_.empty()) return kNone;
  const std::uint32_t i = free_.back();
  free_.pop_back();
  std::uint32_t s = hash(key, slot_mask_);
  while (slots_[s] != kNone) s = (s + 1) & slot_mask_;
  slots_[s] = i;
  msgs_[i] = Msg{};
  msgs_[i].key = key;
  msgs_[i].live_pos = static_cast<std::uint32_t>(live_list_.size());
  live_list_.push_back(i);
  return i;
}

// Linear probing's deletion by backward shift: the entries after the hole
// that hash at or before it move into it, so find() never stops early.
void GrantScheduler::erase(std::uint32_t idx) {
  const Msg& m = msgs_[idx];
  std::uint32_t s = hash(m.key, slot_mask_);
  while (slots_[s] != idx) s = (s + 1) & slot_mask_;
  std::uint32_t hole = s;
  for (std::uint32_t t = (hole + 1) & slot_mask_; slots_[t] != kNone; t = (t + 1) & slot_mask_) {
    const std::uint32_t home = hash(msgs_[slots_[t]].key, slot_mask_);
    // Moves when home is not within (hole, t] cyclically.
    const bool between = hole <= t ? (hole < home && home <= t) : (hole < home || home <= t);
    if (!between) {
      slots_[hole] = slots_[t];
      hole = t;
    }
  }
  slots_[hole] = kNone;
  const std::uint32_t last = live_list_.back();
  live_list_[m.live_pos] = last;
  msgs_[last].live_pos = m.live_pos;
  live_list_.pop_back();
  free_.push_back(idx);
}

namespace {

// What a message was granted beyond its unscheduled bytes and has not
// received yet: the share of max_incoming it holds.
std::uint64_t owed(std::uint64_t granted, std::uint64_t received, std::uint64_t unsched) {
  const std::uint64_t floor = std::max(received, unsched);
  return granted > floor ? granted - floor : 0;
}

}  // namespace

DataResult GrantScheduler::on_data(std::uint64_t key, std::uint32_t peer, std::uint64_t length,
                                   std::uint64_t bytes, TimeNs now) {
  const std::uint64_t unsched = std::min<std::uint64_t>(cfg_.unsched_bytes, length);
  std::uint32_t i = find(key);
  if (i == kNone) {
    if (length <= cfg_.unsched_bytes) return DataResult::kCompleted;  // needs no grant
    if (bytes >= length) return DataResult::kCompleted;
    i = insert(key);
    if (i == kNone) {
      ++ctr_.table_full;
      return DataResult::kTableFull;
    }
    Msg& m = msgs_[i];
    m.length = length;
    m.granted = unsched;
    m.peer = peer;
    m.first_ns = now;
    ++ctr_.messages;
  }
  Msg& m = msgs_[i];
  if (m.length != length || bytes > m.length - m.received) {
    ++ctr_.bad_length;
    outstanding_ -= owed(m.granted, m.received, cfg_.unsched_bytes);
    erase(i);
    return DataResult::kBadLength;
  }
  const std::uint64_t before = owed(m.granted, m.received, cfg_.unsched_bytes);
  m.received += bytes;
  m.last_data_ns = now;
  outstanding_ = outstanding_ - before + owed(m.granted, m.received, cfg_.unsched_bytes);
  dirty_ = true;
  if (m.received == m.length) {
    ++ctr_.completed;
    erase(i);
    return DataResult::kCompleted;
  }
  return DataResult::kTracked;
}

void GrantScheduler::drop(std::uint64_t key) {
  const std::uint32_t i = find(key);
  if (i == kNone) return;
  const Msg& m = msgs_[i];
  outstanding_ -= owed(m.granted, m.received, cfg_.unsched_bytes);
  erase(i);
  dirty_ = true;
}

bool GrantScheduler::grant(Msg& m, std::uint8_t priority, bool fifo, std::vector<Grant>* out) {
  std::uint64_t target = std::min(m.length, m.received + cfg_.rtt_bytes);
  if (fifo) target = std::min(m.length, std::max(target, m.granted + cfg_.rtt_bytes));
  if (target <= m.granted) return false;
  // Not worth a packet yet, unless it finishes the message.
  if (target - m.granted < cfg_.grant_increment && target != m.length) return false;
  const std::uint64_t before = owed(m.granted, m.received, cfg_.unsched_bytes);
  const std::uint64_t room =
      cfg_.max_incoming > outstanding_ ? cfg_.max_incoming - outstanding_ : 0;
  const std::uint64_t after_want = owed(target, m.received, cfg_.unsched_bytes);
  if (after_want - before > room) {
    ++ctr_.incoming_capped;
    target -= (after_want - before) - room;
    if (target <= m.granted || (target - m.granted < cfg_.grant_increment && target != m.length)) {
      return false;
    }
  }
  const std::uint64_t added = target - m.granted;
  m.granted = target;
  outstanding_ = outstanding_ - before + owed(m.granted, m.received, cfg_.unsched_bytes);
  out->push_back(Grant{m.key, m.peer, m.granted, priority, false, fifo});
  next_resend_ = std::min(next_resend_, m.last_data_ns + cfg_.resend_ns);
  ++ctr_.grants;
  ctr_.granted_bytes += added;
  if (fifo) {
    ++ctr_.fifo_grants;
  } else {
    fifo_credit_ += added;
  }
  return true;
}

void GrantScheduler::poll(TimeNs now, std::vector<Grant>* out) {
  out->clear();
  // Resends: granted bytes outstanding and nothing heard for resend_ns.
  if (now >= next_resend_) {
    next_resend_ = ~TimeNs{0};
    for (const std::uint32_t i : live_list_) {
      Msg& m = msgs_[i];
      if (m.granted <= std::max(m.received, std::uint64_t{cfg_.unsched_bytes})) continue;
      if (now >= m.last_data_ns + cfg_.resend_ns) {
        m.last_data_ns = now;
        out->push_back(Grant{m.key, m.peer, m.granted, 0, true, false});
        ++ctr_.grants;
        ++ctr_.resends;
      }
      next_resend_ = std::min(next_resend_, m.last_data_ns + cfg_.resend_ns);
    }
  }
  if (!dirty_ || live_list_.empty()) return;
  dirty_ = false;
  order_.assign(live_list_.begin(), live_list_.end());
  // SRPT: fewest bytes left first; ties to the oldest.
  auto shorter = [&](std::uint32_t a, std::uint32_t b) {
    const std::uint64_t ra = remaining(msgs_[a]), rb = remaining(msgs_[b]);
    return ra != rb ? ra < rb : msgs_[a].first_ns < msgs_[b].first_ns;
  };
  std::sort(order_.begin(), order_.end(), shorter);
  // The active set: one message per peer first, then second messages of
  // peers while slots are left.
  peers_.clear();
  std::uint32_t chosen[kMaxOvercommit];
  std::uint32_t k = 0;
  const std::uint32_t cap = cfg_.overcommit;
  for (std::uint32_t i : order_) {
    if (k == cap) break;
    if (std::find(peers_.begin(), peers_.end(), msgs_[i].peer) != peers_.end()) continue;
    peers_.push_back(msgs_[i].peer);
    chosen[k++] = i;
  }
  for (std::uint32_t i : order_) {
    if (k == cap) break;
    if (std::find(chosen, chosen + k, i) != chosen + k) continue;
    chosen[k++] = i;
  }
  std::sort(chosen, chosen + k, shorter);
  // Rank r of k (0 = shortest) gets scheduled level k-1-r, capped at the top
  // scheduled level.
  for (std::uint32_t r = 0; r < k; ++r) {
    const std::uint32_t level = std::min<std::uint32_t>(k - 1 - r, sched_levels_ - 1u);
    grant(msgs_[chosen[r]], static_cast<std::uint8_t>(level), false, out);
  }
  // FIFO: after every rtt_bytes x (1000 / fifo_permille - 1) bytes of SRPT
  // grants, rtt_bytes to the oldest message, at the lowest level.
  if (cfg_.fifo_permille == 0 || cfg_.fifo_permille >= 1000) return;
  const std::uint64_t every =
      std::uint64_t{cfg_.rtt_bytes} * (1000 - cfg_.fifo_permille) / cfg_.fifo_permille;
  if (fifo_credit_ < every) return;
  std::uint32_t oldest = kNone;
  for (std::uint32_t i : order_) {
    if (oldest == kNone || msgs_[i].first_ns < msgs_[oldest].first_ns) oldest = i;
  }
  if (oldest != kNone && grant(msgs_[oldest], 0, true, out)) fifo_credit_ = 0;
}

}  // namespace uroce::sched::homa
