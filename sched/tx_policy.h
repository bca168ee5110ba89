// The engine's TX policy (tx_scheduler.h's interface): the device's
// isolation mode picks, once at construction, which policy serves its QPs.
//   kOff      round robin on frames (round_robin.h), what the engine did
//             before classes existed; a QP's class is recorded but unused.
//   kClasses  eight traffic classes, strict or weighted, DRR on bytes within
//             a class (traffic_classes.h).
// The choice is one predictable branch per activate and per round, so with
// isolation off the packet path costs what it did with round robin alone;
// only the chosen policy's per-flow arrays are allocated.
//
// Threading: owned by one engine lcore; not thread-safe.
#pragma once

#include <cassert>
#include <cstdint>
#include <string_view>

#include "sched/round_robin.h"
#include "sched/traffic_classes.h"
#include "sched/tx_scheduler.h"

namespace uroce::sched {

enum class Isolation : std::uint8_t { kOff, kClasses };

// The config spelling of each mode (`isolation = "off" | "classes"`).
inline constexpr std::string_view isolation_name(Isolation i) {
  return i == Isolation::kClasses ? "classes" : "off";
}
inline bool parse_isolation(std::string_view s, Isolation* out) {
  if (s == "off") {
    *out = Isolation::kOff;
  } else if (s == "classes") {
    *out = Isolation::kClasses;
  } else {
    return false;
  }
  return true;
}

struct TxPolicyConfig {
  Isolation isolation = Isolation::kOff;
  TrafficClassConfig classes{};
};

class TxPolicy {
 public:
  static constexpr bool kSharesBytes = true;

  explicit TxPolicy(std::uint32_t capacity, const TxPolicyConfig& cfg = {})
      : classes_on_(cfg.isolation == Isolation::kClasses),
        rr_(classes_on_ ? 1 : capacity),
        tc_(classes_on_ ? capacity : 1, cfg.classes),
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
  Isolation isolation() const { return classes_on_ ? Isolation::kClasses : Isolation::kOff; }
  const TrafficClasses& classes() const { return tc_; }

 private:
  [[gnu::noinline]] void activate_classes(FlowId f) { tc_.activate(f); }
  template <class Serve>
  [[gnu::noinline]] std::uint32_t round_classes(Serve& serve) {
    return tc_.round(serve);
  }

  bool classes_on_;
  RoundRobin rr_;
  TrafficClasses tc_;
  std::vector<std::uint8_t> cls_;  // recorded in both modes (status, mode changes)
};

static_assert(TxScheduler<TxPolicy> && kSharesBytes<TxPolicy>);

}  // namespace uroce::sched
