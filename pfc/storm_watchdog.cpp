#include "pfc/storm_watchdog.h"

namespace uroce::pfc {

std::string_view storm_watchdog_config_error_name(StormWatchdogConfigError e) {
  switch (e) {
    case StormWatchdogConfigError::kOk: return "Ok";
    case StormWatchdogConfigError::kZeroDetection: return "ZeroDetection";
    case StormWatchdogConfigError::kZeroRestoration: return "ZeroRestoration";
  }
  return "Unknown";
}

StormWatchdogConfigError StormWatchdog::check(const StormWatchdogConfig& cfg) {
  if (cfg.detection_ns == 0) return StormWatchdogConfigError::kZeroDetection;
  if (cfg.restoration_ns == 0) return StormWatchdogConfigError::kZeroRestoration;
  return StormWatchdogConfigError::kOk;
}

std::size_t StormWatchdog::step(TimeNs now, PauseGate& gate,
                                std::array<PfcEvent, kNumPriorities>& out) {
  std::size_t n = 0;
  for (std::uint8_t p = 0; p < kNumPriorities; ++p) {
    if (((cfg_.enable >> p) & 1) == 0) continue;
    PfcEvent e;
    e.at = now;
    e.prio = p;
    if (!stormed_[p]) {
      if (!gate.peer_paused(p, now)) continue;
      const TimeNs t0 = gate.pause_started(p);
      if (now - t0 < cfg_.detection_ns) continue;
      stormed_[p] = true;
      stormed_since_[p] = now;
      ++c_[p].storms_detected;
      gate.set_override(p, cfg_.action == StormAction::kDrop ? GateOverride::kDropTraffic
                                                             : GateOverride::kIgnorePauses);
      e.type = PfcEventType::kStormDetected;
      e.since = t0;
    } else {
      if (gate.peer_paused(p, now)) continue;
      if (now - gate.resume_at(p) < cfg_.restoration_ns) continue;
      stormed_[p] = false;
      stormed_closed_ns_[p] += now - stormed_since_[p];
      ++c_[p].storms_restored;
      gate.set_override(p, GateOverride::kNone);
      e.type = PfcEventType::kStormRestored;
      e.since = stormed_since_[p];
    }
    out[n++] = e;
  }
  return n;
}

TimeNs StormWatchdog::next_deadline(const PauseGate& gate, TimeNs now) const {
  TimeNs d = kNoDeadline;
  for (std::uint8_t p = 0; p < kNumPriorities; ++p) {
    if (((cfg_.enable >> p) & 1) == 0) continue;
    TimeNs t = kNoDeadline;
    if (!stormed_[p]) {
      if (gate.peer_paused(p, now)) t = gate.pause_started(p) + cfg_.detection_ns;
    } else {
      t = gate.resume_at(p) + cfg_.restoration_ns;
    }
    if (t < d) d = t;
  }
  return d;
}

TimeNs StormWatchdog::stormed_ns(std::uint8_t prio, TimeNs now) const {
  prio &= 7;
  TimeNs t = stormed_closed_ns_[prio];
  if (stormed_[prio] && now > stormed_since_[prio]) t += now - stormed_since_[prio];
  return t;
}

}  // namespace uroce::pfc
