#include "pfc/pause_gate.h"

#include <cassert>

namespace uroce::pfc {

std::string_view pause_gate_config_error_name(PauseGateConfigError e) {
  switch (e) {
    case PauseGateConfigError::kOk: return "Ok";
    case PauseGateConfigError::kZeroLinkSpeed: return "ZeroLinkSpeed";
    case PauseGateConfigError::kZeroMaxQuanta: return "ZeroMaxQuanta";
  }
  return "Unknown";
}

PauseGateConfigError PauseGate::check(const PauseGateConfig& cfg) {
  if (cfg.link_bps == 0) return PauseGateConfigError::kZeroLinkSpeed;
  if (cfg.max_quanta == 0) return PauseGateConfigError::kZeroMaxQuanta;
  return PauseGateConfigError::kOk;
}

wire::PfcParseError PauseGate::on_frame(std::span<const std::uint8_t> frame, TimeNs now) {
  ++c_.frames_rx;
  wire::PfcFrame f;
  const wire::PfcParseError e = wire::parse_pfc(frame, f);
  const auto idx = static_cast<std::size_t>(e);
  // The guard keeps a code added to the codec later from indexing past the
  // array.
  if (idx < kNumPfcParseErrors) {
    ++c_.parse[idx];
  } else {
    ++c_.parse_unknown;
  }
  if (e == wire::PfcParseError::kOk) on_pfc(f, now);
  return e;
}

void PauseGate::on_pfc(const wire::PfcFrame& f, TimeNs now) {
  if (f.pfc.class_enable() == 0) {
    ++c_.empty_class_vector;
    return;
  }
  for (std::uint8_t p = 0; p < kNumPriorities; ++p) {
    if (!f.pfc.enabled(p)) continue;
    if (((cfg_.pfc_enable >> p) & 1) == 0) {
      ++c_.prio[p].disabled_rx;
      continue;
    }
    apply(p, f.pfc.pause_time(p), now);
  }
}

void PauseGate::apply(std::uint8_t prio, std::uint16_t quanta, TimeNs now) {
  PauseGatePrioCounters& pc = c_.prio[prio];
  if (quanta == 0) {
    ++pc.resume_rx;
    if (now < until_[prio]) until_[prio] = now;
    assert(start_[prio] <= until_[prio]);
    return;
  }
  if (quanta > cfg_.max_quanta) {
    ++pc.quanta_clamped;
    quanta = cfg_.max_quanta;
  }
  ++pc.pause_rx;
  if (override_[prio] == GateOverride::kIgnorePauses) ++pc.ignored_stormed;
  if (now > until_[prio]) {
    // The previous pause had lapsed: close it, start a new interval.
    closed_ns_[prio] += until_[prio] - start_[prio];
    start_[prio] = now;
  }
  until_[prio] = now + wire::pfc_quanta_to_ns(quanta, cfg_.link_bps);
  assert(start_[prio] <= until_[prio]);
}

std::uint8_t PauseGate::blocked_mask(TimeNs now) const {
  std::uint8_t m = 0;
  for (std::uint8_t p = 0; p < kNumPriorities; ++p) {
    if (override_[p] == GateOverride::kNone && now < until_[p]) {
      m = static_cast<std::uint8_t>(m | (1u << p));
    }
  }
  return m;
}

TimeNs PauseGate::paused_ns(std::uint8_t prio, TimeNs now) const {
  prio &= 7;
  const TimeNs end = now < until_[prio] ? now : until_[prio];
  return closed_ns_[prio] + (end > start_[prio] ? end - start_[prio] : 0);
}

}  // namespace uroce::pfc
