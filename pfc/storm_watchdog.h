// PFC pause-storm watchdog (in the manner of SONiC's PFC watchdog, whose
// defaults it takes: detection 200 ms, restoration 200 ms, action drop).
//
// Per enabled priority p, on every poll(now):
//   not stormed: if the peer has paused p continuously since t0 and
//                now - t0 >= detection, p is stormed from now on. The gate
//                is overridden: action drop -> forced open and every packet
//                of p dropped (counted by the gate); action ignore -> forced
//                open, further pauses counted but not obeyed.
//   stormed:     if no peer pause is in effect and the last one ended at t1
//                with now - t1 >= restoration, p is restored: the override
//                is lifted and the gate obeys pauses again.
// "Continuously" follows PauseGate: refreshes that arrive before the
// previous pause lapses keep one interval. A resume frame ends it.
// Each transition is counted and raised as an event for the log.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "datapath/base/counter_fields.h"
#include "datapath/base/time.h"
#include "pfc/events.h"
#include "pfc/pause_gate.h"
#include "pfc/priority_map.h"
#include "pfc/sinks.h"

namespace uroce::pfc {

enum class StormAction : std::uint8_t { kDrop = 0, kIgnore };

struct StormWatchdogConfig {
  TimeNs detection_ns = 200 * kNsPerMs;
  TimeNs restoration_ns = 200 * kNsPerMs;
  StormAction action = StormAction::kDrop;
  std::uint8_t enable = 0xff;  // bit p: watch priority p
};

enum class StormWatchdogConfigError : std::uint8_t {
  kOk = 0,
  kZeroDetection,
  kZeroRestoration,
};
std::string_view storm_watchdog_config_error_name(StormWatchdogConfigError e);

struct StormPrioCounters {
  std::uint64_t storms_detected = 0;
  std::uint64_t storms_restored = 0;
};

inline constexpr counters::FieldList<StormPrioCounters, 2> kStormPrioCounterFields{{
    {"storms_detected", &StormPrioCounters::storms_detected,
     "pause storms detected (paused longer than the detection time)"},
    {"storms_restored", &StormPrioCounters::storms_restored, "pause storms over (restored)"},
}};
static_assert(counters::covers(kStormPrioCounterFields));
constexpr const auto& counter_fields(const StormPrioCounters&) { return kStormPrioCounterFields; }

class StormWatchdog {
 public:
  static StormWatchdogConfigError check(const StormWatchdogConfig& cfg);

  // Precondition: check(cfg) == kOk.
  explicit StormWatchdog(const StormWatchdogConfig& cfg) : cfg_(cfg) {}

  template <EventSink E>
  void poll(TimeNs now, PauseGate& gate, E& events) {
    std::array<PfcEvent, kNumPriorities> ev;
    const std::size_t n = step(now, gate, ev);
    for (std::size_t i = 0; i < n; ++i) events.event(ev[i]);
  }

  // Earliest time a poll() could change something, given the gate as it is
  // now; kNoDeadline when nothing is pending.
  TimeNs next_deadline(const PauseGate& gate, TimeNs now) const;

  bool stormed(std::uint8_t prio) const { return stormed_[prio & 7]; }
  // Total time `prio` has spent stormed, up to `now`.
  TimeNs stormed_ns(std::uint8_t prio, TimeNs now) const;
  const std::array<StormPrioCounters, kNumPriorities>& counters() const { return c_; }
  const StormWatchdogConfig& config() const { return cfg_; }

 private:
  // Applies the transitions due at `now`; fills `out` with one event each.
  std::size_t step(TimeNs now, PauseGate& gate, std::array<PfcEvent, kNumPriorities>& out);

  StormWatchdogConfig cfg_;
  std::array<bool, kNumPriorities> stormed_{};
  std::array<TimeNs, kNumPriorities> stormed_since_{};
  std::array<TimeNs, kNumPriorities> stormed_closed_ns_{};
  std::array<StormPrioCounters, kNumPriorities> c_{};
};

}  // namespace uroce::pfc
