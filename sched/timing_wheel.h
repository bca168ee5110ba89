// A timing wheel of flows (Carousel, as eRPC paces with): a paced flow that
// may not send before time t waits in the slot of t; advancing the wheel
// to `now` releases every flow whose slot has come. Slots are `granularity`
// ns wide and there are `slots` of them (a power of two), so the wheel spans
// granularity * slots ns; a time further out waits in the last slot of the
// span and is released early, when that slot comes (the pacer re-checks
// and parks it again). A time at or before the wheel's position is due at
// the next advance.
//
// Each flow is in the wheel at most once (insert moves it); flows of one
// slot are released in insertion order. Storage: one list head per slot and
// per-flow links, sized at construction; insert, remove and the release of
// one flow are O(1); advance also costs one step per slot it passes, so its
// cost per call is bounded by the slots passed since the previous call, not
// by the flows waiting.
//
// Threading: owned by one engine lcore; not thread-safe.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "datapath/base/time.h"
#include "sched/tx_scheduler.h"

namespace uroce::sched {

class TimingWheel {
 public:
  // Flows are ids in [0, capacity); `slots` is rounded up to a power of two.
  TimingWheel(std::uint32_t capacity, TimeNs granularity_ns, std::uint32_t slots, TimeNs now)
      : gran_(granularity_ns == 0 ? 1 : granularity_ns),
        heads_(std::bit_ceil(slots == 0 ? 1u : slots), kNone),
        tails_(heads_.size(), kNone),
        next_(capacity == 0 ? 1 : capacity, kNone),
        prev_(next_.size(), kNone),
        slot_of_(next_.size(), kNone),
        mask_(static_cast<std::uint32_t>(heads_.size()) - 1),
        tick_(now / gran_) {}

  // `f` may send at `t`: it waits in t's slot (moved if it was waiting).
  void insert(FlowId f, TimeNs t) {
    if (f >= next_.size()) return;
    if (slot_of_[f] != kNone) remove(f);
    std::uint64_t tick = t / gran_;
    if (tick <= tick_) tick = tick_ + 1;             // due at the next advance
    if (tick - tick_ > mask_) tick = tick_ + mask_;  // beyond the span: its last slot
    const auto s = static_cast<std::uint32_t>(tick & mask_);
    slot_of_[f] = s;
    next_[f] = kNone;
    prev_[f] = tails_[s];
    if (tails_[s] == kNone) {
      heads_[s] = f;
    } else {
      next_[tails_[s]] = f;
    }
    tails_[s] = f;
    ++size_;
  }

  void remove(FlowId f) {
    if (f >= next_.size() || slot_of_[f] == kNone) return;
    const std::uint32_t s = slot_of_[f];
    if (prev_[f] == kNone) {
      heads_[s] = next_[f];
    } else {
      next_[prev_[f]] = next_[f];
    }
    if (next_[f] == kNone) {
      tails_[s] = prev_[f];
    } else {
      prev_[next_[f]] = prev_[f];
    }
    slot_of_[f] = kNone;
    --size_;
  }

  bool waiting(FlowId f) const { return f < slot_of_.size() && slot_of_[f] != kNone; }
  std::uint32_t size() const { return size_; }
  std::uint32_t capacity() const { return static_cast<std::uint32_t>(next_.size()); }
  TimeNs granularity() const { return gran_; }

  // Makes room for ids up to `capacity` (never shrinks). Control path: it
  // may allocate; waiting flows keep their slots.
  void grow(std::uint32_t capacity) {
    if (capacity <= next_.size()) return;
    next_.resize(capacity, kNone);
    prev_.resize(capacity, kNone);
    slot_of_.resize(capacity, kNone);
  }

  // The start of the first non-empty slot after the last advance (when an
  // advance would release something), or `none` when nothing waits. For a
  // caller on a virtual clock: O(slots) in the worst case, never on the
  // packet path.
  TimeNs next_due(TimeNs none) const {
    if (size_ == 0) return none;
    for (std::uint64_t t = tick_ + 1; t <= tick_ + std::max<std::uint32_t>(mask_, 1); ++t) {
      if (heads_[static_cast<std::uint32_t>(t & mask_)] != kNone) return t * gran_;
    }
    return none;
  }

  // Releases, through release(FlowId), every flow whose slot is at or
  // before `now`, slot by slot. release may insert flows again (they wait
  // for a later slot). Returns the flows released.
  template <class Release>
  std::uint32_t advance(TimeNs now, Release&& release) {
    const std::uint64_t target = now / gran_;
    std::uint32_t n = 0;
    while (tick_ < target) {
      ++tick_;
      if (size_ == 0) {
        tick_ = target;
        break;
      }
      const auto s = static_cast<std::uint32_t>(tick_ & mask_);
      // Detach the slot first: what release inserts goes to later slots.
      std::uint32_t f = heads_[s];
      heads_[s] = tails_[s] = kNone;
      while (f != kNone) {
        const std::uint32_t nx = next_[f];
        slot_of_[f] = kNone;
        --size_;
        ++n;
        release(f);
        f = nx;
      }
    }
    return n;
  }

 private:
  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;

  TimeNs gran_;
  std::vector<std::uint32_t> heads_;
  std::vector<std::uint32_t> tails_;
  std::vector<std::uint32_t> next_;
  std::vector<std::uint32_t> prev_;
  std::vector<std::uint32_t> slot_of_;
  std::uint32_t mask_;
  std::uint64_t tick_;  // the last slot released
  std::uint32_t size_ = 0;
};

// A flow's rate limit as a token bucket in time: sending `bytes` at `rate`
// costs bytes * 8 / rate seconds, and the flow may run up to `burst` bytes
// ahead of its rate. may_send(now) says whether it may send now; sent()
// charges what it sent; next_send() is when it may send again (for the
// wheel). A rate of 0 is unlimited.
//
// `slack_ns` is how late the flow may be woken (the wheel's granularity, an
// engine iteration): the credit kept is at least that long, or a flow whose
// packets take less than a slot would lose the difference at every wake
// (at 100 Gb/s a 4 KiB packet takes 0.33 us; with 1 us slots and a 4 KiB
// burst it would reach two thirds of its rate).
class RateLimit {
 public:
  RateLimit() = default;
  RateLimit(std::uint64_t rate_bps, std::uint32_t burst_bytes, TimeNs slack_ns = 0) {
    set(rate_bps, burst_bytes, 0, slack_ns);
  }

  void set(std::uint64_t rate_bps, std::uint32_t burst_bytes, TimeNs now, TimeNs slack_ns = 0) {
    rate_ = rate_bps;
    burst_ns_ = rate_bps == 0 ? 0 : std::max(cost_ns(burst_bytes), slack_ns);
    next_ = now;
  }
  // A new rate (not 0) for a flow already limited: the wait it still owes
  // is rescaled to the new rate (a flow slowed down waits longer, one sped
  // up sooner), and its credit is one burst at the new rate.
  void set_rate(std::uint64_t rate_bps, std::uint32_t burst_bytes, TimeNs now, TimeNs slack_ns) {
    if (rate_ != 0 && next_ > now) {
      next_ = now +
              static_cast<TimeNs>((static_cast<unsigned __int128>(next_ - now) * rate_) / rate_bps);
    }
    rate_ = rate_bps;
    burst_ns_ = std::max(cost_ns(burst_bytes), slack_ns);
  }
  std::uint64_t rate_bps() const { return rate_; }
  bool limited() const { return rate_ != 0; }

  bool may_send(TimeNs now) const { return rate_ == 0 || next_ <= now; }
  // Charges `bytes` sent at `now`: the credit a flow can save is one burst,
  // or `keep_ns` of its rate when that is longer (a caller that knows the
  // flow was held back rather than idle: Pacer's backlog credit).
  void sent(std::uint64_t bytes, TimeNs now, TimeNs keep_ns = 0) {
    if (rate_ == 0) return;
    const TimeNs credit = std::max(burst_ns_, keep_ns);
    const TimeNs floor = now > credit ? now - credit : 0;
    if (next_ < floor) next_ = floor;
    next_ += cost_ns(bytes);
  }
  TimeNs next_send() const { return next_; }

 private:
  TimeNs cost_ns(std::uint64_t bytes) const {
    // bytes * 8e9 / rate, in 128-bit so that a 1 GiB burst at 1 kb/s fits.
    return static_cast<TimeNs>((static_cast<unsigned __int128>(bytes) * 8'000'000'000u) / rate_);
  }

  std::uint64_t rate_ = 0;
  TimeNs burst_ns_ = 0;
  TimeNs next_ = 0;
};

}  // namespace uroce::sched
