// Round-robin TX scheduling (tx_scheduler.h): the first policy, what the
// engine did before sched/ existed, now behind the interface.
//
// Active flows wait in one FIFO. A round serves each flow that was queued
// when the round began at most once, oldest first, with the same budget
// (`quantum` frames); a flow with more output goes to the back, so within a
// round a busy flow never starves the others and across rounds each active
// flow gets an equal share of turns. A flow the port could not serve
// (ServeResult::stop) keeps its place at the front for the next round.
//
// Storage: a ring of flow ids and one "queued" flag per flow, both sized at
// construction (capacity = the engine's QP slots); activate, round and
// active are O(1) per flow and never allocate; remove is O(queued).
//
// Threading: owned by one engine lcore; not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "sched/tx_scheduler.h"

namespace uroce::sched {

class RoundRobin {
 public:
  static constexpr std::uint32_t kDefaultQuantum = 32;

  // Flows are ids in [0, capacity); quantum (frames per turn) is at least 1.
  explicit RoundRobin(std::uint32_t capacity, std::uint32_t quantum = kDefaultQuantum)
      : ring_(capacity == 0 ? 1 : capacity, 0),
        queued_(capacity == 0 ? 1 : capacity, 0),
        quantum_(quantum == 0 ? 1 : quantum) {}

  // Queues `f` at the back unless it is queued already. Ids out of range are
  // ignored (counted in bad_ids()).
  void activate(FlowId f) {
    if (f >= queued_.size()) {
      ++bad_ids_;
      return;
    }
    if (queued_[f] != 0) return;
    queued_[f] = 1;
    push_back(f);
  }

  // Forgets `f` (no-op when not queued), keeping the others' order.
  void remove(FlowId f) {
    if (f >= queued_.size() || queued_[f] == 0) return;
    queued_[f] = 0;
    const std::uint32_t n = count_;
    std::uint32_t kept = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
      const FlowId g = ring_[index(i)];
      if (g != f) ring_[index(kept++)] = g;
    }
    count_ = kept;
  }

  bool active(FlowId f) const { return f < queued_.size() && queued_[f] != 0; }
  std::uint32_t size() const { return count_; }
  std::uint32_t quantum() const { return quantum_; }
  std::uint64_t bad_ids() const { return bad_ids_; }

  // One round (see the header comment). serve(FlowId, budget) ->
  // ServeResult; serve may activate other flows (they join the back and wait
  // for the next round) but must not remove any.
  template <class Serve>
  [[gnu::always_inline]] std::uint32_t round(Serve&& serve) {
    std::uint32_t total = 0;
    const std::uint32_t turns = count_;
    for (std::uint32_t t = 0; t < turns && count_ != 0; ++t) {
      const FlowId f = pop_front();
      // queued_[f] stays set during the turn, so an activate(f) from inside
      // serve cannot queue f a second time.
      const ServeResult r = serve(f, quantum_);
      total += r.sent;
      if (r.stop) {
        push_front(f);
        break;
      }
      if (r.more) {
        push_back(f);
      } else {
        queued_[f] = 0;
      }
    }
    return total;
  }

 private:
  std::uint32_t cap() const { return static_cast<std::uint32_t>(ring_.size()); }
  std::uint32_t index(std::uint32_t i) const { return (head_ + i) % cap(); }
  // The ring never overflows: each flow is in it at most once.
  void push_back(FlowId f) {
    ring_[index(count_)] = f;
    ++count_;
  }
  void push_front(FlowId f) {
    head_ = (head_ + cap() - 1) % cap();
    ring_[head_] = f;
    ++count_;
  }
  FlowId pop_front() {
    const FlowId f = ring_[head_];
    head_ = (head_ + 1) % cap();
    --count_;
    return f;
  }

  std::vector<FlowId> ring_;
  std::vector<std::uint8_t> queued_;
  std::uint32_t head_ = 0;
  std::uint32_t count_ = 0;
  std::uint32_t quantum_;
  std::uint64_t bad_ids_ = 0;
};

static_assert(TxScheduler<RoundRobin> && !kSharesBytes<RoundRobin>);

}  // namespace uroce::sched
