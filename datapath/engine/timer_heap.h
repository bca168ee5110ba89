// The engine's timers: one deadline per id (a QP slot), kept in an indexed
// binary min-heap, so the timer phase costs O(1) when nothing is due and
// O(log armed) per timer that fires or moves; QPs without an armed timer
// (idle ones) cost nothing.
//
// Ids are dense in [0, capacity); storage (the heap array and one position
// word per id) is allocated at construction only.
//
// Invariants (asserted): pos_[id] == kNone exactly when id is not in the
// heap; heap_[pos_[id]].id == id otherwise; every parent's deadline is <= its
// children's.
//
// Threading: owned by one engine lcore; not thread-safe.
#pragma once

#include <cassert>
#include <cstdint>
#include <limits>
#include <vector>

#include "datapath/base/time.h"

namespace uroce::engine {

class TimerHeap {
 public:
  static constexpr TimeNs kNever = std::numeric_limits<TimeNs>::max();

  explicit TimerHeap(std::uint32_t capacity) : pos_(capacity, kNone) { heap_.reserve(capacity); }

  // Arms `id` at `at`, or moves its deadline there when it is armed.
  void set(std::uint32_t id, TimeNs at) {
    assert(id < pos_.size());
    std::uint32_t p = pos_[id];
    if (p == kNone) {
      p = static_cast<std::uint32_t>(heap_.size());
      heap_.push_back(Entry{at, id});
      pos_[id] = p;
      up(p);
      return;
    }
    const TimeNs old = heap_[p].at;
    heap_[p].at = at;
    if (at < old) {
      up(p);
    } else {
      down(p);
    }
  }
  // Disarms `id` (nothing when it is not armed).
  void cancel(std::uint32_t id) {
    assert(id < pos_.size());
    const std::uint32_t p = pos_[id];
    if (p == kNone) return;
    remove_at(p);
  }
  bool armed(std::uint32_t id) const { return id < pos_.size() && pos_[id] != kNone; }
  // The deadline of `id`, or 0 when it is not armed.
  TimeNs at(std::uint32_t id) const { return armed(id) ? heap_[pos_[id]].at : 0; }
  // The deadline of `id`, or kNever when it is not armed.
  TimeNs key(std::uint32_t id) const { return armed(id) ? heap_[pos_[id]].at : kNever; }
  // The earliest deadline, or kNever.
  TimeNs earliest() const { return heap_.empty() ? kNever : heap_[0].at; }
  // Removes and returns the id with the earliest deadline; the heap must not
  // be empty.
  std::uint32_t pop() {
    assert(!heap_.empty());
    const std::uint32_t id = heap_[0].id;
    remove_at(0);
    return id;
  }
  std::uint32_t size() const { return static_cast<std::uint32_t>(heap_.size()); }
  std::uint32_t capacity() const { return static_cast<std::uint32_t>(pos_.size()); }

 private:
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  struct Entry {
    TimeNs at;
    std::uint32_t id;
  };

  void place(std::uint32_t p, const Entry& e) {
    heap_[p] = e;
    pos_[e.id] = p;
  }
  void up(std::uint32_t p) {
    const Entry e = heap_[p];
    while (p > 0) {
      const std::uint32_t parent = (p - 1) / 2;
      if (heap_[parent].at <= e.at) break;
      place(p, heap_[parent]);
      p = parent;
    }
    place(p, e);
  }
  void down(std::uint32_t p) {
    const Entry e = heap_[p];
    const auto n = static_cast<std::uint32_t>(heap_.size());
    for (;;) {
      std::uint32_t c = 2 * p + 1;
      if (c >= n) break;
      if (c + 1 < n && heap_[c + 1].at < heap_[c].at) ++c;
      if (e.at <= heap_[c].at) break;
      place(p, heap_[c]);
      p = c;
    }
    place(p, e);
  }
  void remove_at(std::uint32_t p) {
    const std::uint32_t id = heap_[p].id;
    const Entry last = heap_.back();
    heap_.pop_back();
    pos_[id] = kNone;
    if (p == heap_.size()) return;
    const TimeNs old = heap_[p].at;
    place(p, last);
    if (last.at < old) {
      up(p);
    } else {
      down(p);
    }
  }

  std::vector<Entry> heap_;
  std::vector<std::uint32_t> pos_;
};

}  // namespace uroce::engine
