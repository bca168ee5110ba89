#include "pfc/ingress_accounting.h"

#include <bit>

namespace uroce::pfc {

std::string_view ingress_config_error_name(IngressConfigError e) {
  switch (e) {
    case IngressConfigError::kOk: return "Ok";
    case IngressConfigError::kZeroLinkSpeed: return "ZeroLinkSpeed";
    case IngressConfigError::kZeroQuanta: return "ZeroQuanta";
    case IngressConfigError::kBadRefreshPercent: return "BadRefreshPercent";
    case IngressConfigError::kPauseTooShort: return "PauseTooShort";
    case IngressConfigError::kBadBufferSize: return "BadBufferSize";
    case IngressConfigError::kHeadroomExceedsBuffer: return "HeadroomExceedsBuffer";
    case IngressConfigError::kBadStaticThresholds: return "BadStaticThresholds";
    case IngressConfigError::kBadAlpha: return "BadAlpha";
  }
  return "Unknown";
}

namespace {

std::uint64_t reserved_headroom(const IngressConfig& cfg) {
  return static_cast<std::uint64_t>(std::popcount(cfg.pfc_enable)) * cfg.headroom_bytes;
}

}  // namespace

IngressConfigError IngressAccounting::check(const IngressConfig& cfg) {
  if (cfg.link_bps == 0) return IngressConfigError::kZeroLinkSpeed;
  if (cfg.xoff_quanta == 0) return IngressConfigError::kZeroQuanta;
  if (!refresh_percent_ok(cfg.refresh_percent)) return IngressConfigError::kBadRefreshPercent;
  if (refresh_interval(cfg.xoff_quanta, cfg.link_bps, cfg.refresh_percent) == 0) {
    return IngressConfigError::kPauseTooShort;
  }
  if (!buffer_size_ok(cfg.buffer_bytes)) return IngressConfigError::kBadBufferSize;
  // headroom <= buffer first, so E x headroom (E <= 8) cannot overflow.
  if (cfg.headroom_bytes > cfg.buffer_bytes || reserved_headroom(cfg) >= cfg.buffer_bytes) {
    return IngressConfigError::kHeadroomExceedsBuffer;
  }
  const std::uint64_t shared = cfg.buffer_bytes - reserved_headroom(cfg);
  if (cfg.mode == ThresholdMode::kStatic) {
    if (cfg.xon_bytes >= cfg.xoff_bytes || cfg.xoff_bytes > shared) {
      return IngressConfigError::kBadStaticThresholds;
    }
  } else if (!alpha_ok(cfg.alpha_num, cfg.alpha_den)) {
    return IngressConfigError::kBadAlpha;
  }
  return IngressConfigError::kOk;
}

IngressAccounting::IngressAccounting(const IngressConfig& cfg)
    : cfg_(cfg),
      pause_(cfg.pfc_enable, cfg.xoff_quanta, pause_time(cfg.xoff_quanta, cfg.link_bps),
             refresh_interval(cfg.xoff_quanta, cfg.link_bps, cfg.refresh_percent)),
      shared_(cfg.buffer_bytes - reserved_headroom(cfg)) {}

RxAdmit IngressAccounting::admit(std::uint8_t prio, std::uint32_t bytes) {
  if (prio >= kNumPriorities) {
    ++c_.bad_priority;
    return RxAdmit::kDropBadPriority;
  }
  IngressPrioCounters& pc = c_.prio[prio];
  const bool lossless = ((cfg_.pfc_enable >> prio) & 1) != 0;
  const std::uint64_t limit = lossless ? cfg_.buffer_bytes : shared_;
  if (total_ + bytes > limit) {
    if (lossless) {
      ++pc.drops_headroom_full;
      return RxAdmit::kDropHeadroomFull;
    }
    ++pc.drops_lossy_full;
    return RxAdmit::kDropLossyFull;
  }
  occ_[prio] += bytes;
  total_ += bytes;
  ++pc.rx_packets;
  pc.rx_bytes += bytes;
  if (occ_[prio] > pc.peak_bytes) pc.peak_bytes = occ_[prio];
  return RxAdmit::kAccepted;
}

bool IngressAccounting::release(std::uint8_t prio, std::uint32_t bytes) {
  if (prio >= kNumPriorities) {
    ++c_.bad_priority;
    return false;
  }
  std::uint64_t n = bytes;
  if (n > occ_[prio]) {
    ++c_.release_underflow;
    n = occ_[prio];
  }
  occ_[prio] -= n;
  total_ -= n;
  c_.prio[prio].processed_bytes += n;
  return true;
}

std::uint64_t IngressAccounting::xoff_threshold() const {
  if (cfg_.mode == ThresholdMode::kStatic) return cfg_.xoff_bytes;
  return dynamic_threshold(shared_, total_, cfg_.alpha_num, cfg_.alpha_den);
}

std::uint64_t IngressAccounting::xon_threshold() const {
  if (cfg_.mode == ThresholdMode::kStatic) return cfg_.xon_bytes;
  const std::uint64_t t = xoff_threshold();
  return t > cfg_.xon_offset_bytes ? t - cfg_.xon_offset_bytes : 0;
}

TimeNs IngressAccounting::next_deadline() const { return retry_ ? 0 : pause_.next_refresh(); }

}  // namespace uroce::pfc
