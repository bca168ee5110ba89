// The engine's TX policy (tx_scheduler.h's interface): the device's
// isolation mode picks, once at construction, which policy serves its QPs.
//   kOff      round robin on frames (round_robin.h), what the engine did
//             before classes existed; a QP's class is recorded but unused.
//   kClasses  eight traffic classes, strict or weighted, DRR on bytes within
//             a class (traffic_classes.h).
//   kAuto     the classes, with each flow's class chosen by what it posts
//             (flow_classifier.h: latency, throughput, bandwidth), the
//             latency class strict; the engine reports each send WR
//             (observe()) and a QP pinned through set_qp_sched keeps its
//             class.
// The choice is one predictable branch per activate and per round, so with
// isolation off the packet path costs what it did with round robin alone;
// only the chosen policy's per-flow arrays are allocated.
//
// Threading: owned by one engine lcore; not thread-safe.
#pragma once

#include <cassert>
#include <cstdint>
#include <string_view>

#include "sched/flow_classifier.h"
#include "sched/round_robin.h"
#include "sched/traffic_classes.h"
#include "sched/tx_scheduler.h"

namespace uroce::sched {

enum class Isolation : std::uint8_t { kOff, kClasses, kAuto };

// The config spelling of each mode (`isolation = "off" | "classes" | "auto"`).
inline constexpr std::string_view isolation_name(Isolation i) {
  switch (i) {
    case Isolation::kOff: return "off";
    case Isolation::kClasses: return "classes";
    case Isolation::kAuto: return "auto";
  }
  return "off";
}
// The modes as error messages list them (uroced's config, the testbed's).
inline constexpr std::string_view kIsolationModes = "\"off\", \"classes\" or \"auto\"";
inline bool parse_isolation(std::string_view s, Isolation* out) {
  for (Isolation i : {Isolation::kOff, Isolation::kClasses, Isolation::kAuto}) {
    if (s == isolation_name(i)) {
      *out = i;
      return true;
    }
  }
  return false;
}

struct TxPolicyConfig {
  Isolation isolation = Isolation::kOff;
  TrafficClassConfig classes{};
  FlowClassifierConfig classifier{};
};

// The classes as a mode uses them: auto makes its latency class strict.
inline TrafficClassConfig effective_classes(const TxPolicyConfig& cfg) {
  TrafficClassConfig c = cfg.classes;
  if (cfg.isolation == Isolation::kAuto) c.classes[kAutoClassLatency].mode = ClassMode::kStrict;
  return c;
}

class TxPolicy {
 public:
  static constexpr bool kSharesBytes = true;

  explicit TxPolicy(std::uint32_t capacity, const TxPolicyConfig& cfg = {})
      : classes_on_(cfg.isolation != Isolation::kOff),
        auto_(cfg.isolation == Isolation::kAuto),
        rr_(classes_on_ ? 1 : capacity),
        tc_(classes_on_ ? capacity : 1, effective_classes(cfg)),
        fc_(auto_ ? capacity : 0, cfg.classifier),
        cls_(capacity == 0 ? 1 : capacity, 0) {}

  [[gnu::always_inline]] void activate(FlowId f) {
    if (classes_on_) {
      activate_classes(f);
    } else {
      rr_.activate(f);
    }
  }
  void remove(FlowId f) {
    if (classes_on_) {
      tc_.remove(f);
    } else {
      rr_.remove(f);
    }
  }
  bool active(FlowId f) const { return classes_on_ ? tc_.active(f) : rr_.active(f); }
  std::uint32_t size() const { return classes_on_ ? tc_.size() : rr_.size(); }

  // The classes' round (much larger than round robin's) stays out of line
  // so that it does not change what the compiler inlines into the pump.
  template <class Serve>
  [[gnu::always_inline]] std::uint32_t round(Serve&& serve) {
    if (classes_on_) return round_classes(serve);
    return rr_.round(serve);
  }
  // round() for a caller that knows isolation is off (no test at all).
  template <class Serve>
  [[gnu::always_inline]] std::uint32_t round_plain(Serve&& serve) {
    assert(!classes_on_);
    return rr_.round(serve);
  }

  // Control path: f's class in [0, kNumClasses) (others are ignored and
  // return false).
  bool set_class(FlowId f, std::uint8_t c) {
    if (f >= cls_.size() || c >= kNumClasses) return false;
    cls_[f] = c;
    if (classes_on_) tc_.set_class(f, c);
    return true;
  }
  std::uint8_t class_of(FlowId f) const { return f < cls_.size() ? cls_[f] : 0; }
  Isolation isolation() const {
    return auto_ ? Isolation::kAuto : classes_on_ ? Isolation::kClasses : Isolation::kOff;
  }
  const TrafficClasses& classes() const { return tc_; }
  // Control path: new class settings from `cfg` (its isolation is ignored:
  // the mode a policy was built with stays), effective as at construction.
  // The round robin of isolation off has no classes: they are kept for when
  // they are read, and change nothing.
  void set_classes(const TxPolicyConfig& cfg, TimeNs now) {
    TxPolicyConfig t = cfg;
    t.isolation = isolation();
    const TrafficClassConfig c = effective_classes(t);
    tc_.reconfigure(c.classes, c.class_quantum, now);
  }

  // Class rate limits (traffic_classes.h): the time of the next round, and
  // when a class held back by its rate may send again.
  void set_now(TimeNs now) {
    if (classes_on_) tc_.set_now(now);
  }
  TimeNs next_rate_due() const { return classes_on_ ? tc_.next_rate_due() : ~TimeNs{0}; }

  // Isolation auto. Whether the engine should report send WRs.
  bool auto_classify() const { return auto_; }
  // One send WR of f's: its length and f's send-queue depth after it. f
  // moves to its kind's class when the kind changed (set_class: O(class
  // size), so the classifier's hysteresis keeps moves rare). Per WR, not
  // per packet; only called with auto_classify().
  void observe(FlowId f, std::uint64_t bytes, std::uint32_t depth) {
    assert(auto_);
    if (f >= cls_.size()) return;
    const std::uint8_t c = auto_class(fc_.observe(f, bytes, depth));
    if (c == cls_[f]) return;
    set_class(f, c);
    ++reclassified_;
  }
  FlowKind kind(FlowId f) const { return fc_.kind(f); }
  // f's QP is gone: its successor in the slot starts afresh.
  void forget(FlowId f) {
    if (auto_) fc_.reset(f);
  }
  // Moves observe() made between classes.
  std::uint64_t reclassified() const { return reclassified_; }

 private:
  [[gnu::noinline]] void activate_classes(FlowId f) { tc_.activate(f); }
  template <class Serve>
  [[gnu::noinline]] std::uint32_t round_classes(Serve& serve) {
    return tc_.round(serve);
  }

  bool classes_on_;
  bool auto_;
  RoundRobin rr_;
  TrafficClasses tc_;
  FlowClassifier fc_;
  std::uint64_t reclassified_ = 0;
  std::vector<std::uint8_t> cls_;  // recorded in both modes (status, mode changes)
};

static_assert(TxScheduler<TxPolicy> && kSharesBytes<TxPolicy>);

}  // namespace uroce::sched
