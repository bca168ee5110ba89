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

// Bounds that keep free x alpha_num within 64 bits.
constexpr std::uint32_t kMaxAlphaTerm = 1u << 16;
constexpr std::uint64_t kMaxBufferBytes = std::uint64_t{1} << 40;

std::uint64_t reserved_headroom(const IngressConfig& cfg) {
  return static_cast<std::uint64_t>(std::popcount(cfg.pfc_enable)) * cfg.headroom_bytes;
}

TimeNs refresh_interval(const IngressConfig& cfg) {
  return wire::pfc_quanta_to_ns(cfg.xoff_quanta, cfg.link_bps) * cfg.refresh_percent / 100;
}

}  // namespace

IngressConfigError IngressAccounting::check(const IngressConfig& cfg) {
  if (cfg.link_bps == 0) return IngressConfigError::kZeroLinkSpeed;
  if (cfg.xoff_quanta == 0) return IngressConfigError::kZeroQuanta;
  if (cfg.refresh_percent == 0 || cfg.refresh_percent >= 100) {
    return IngressConfigError::kBadRefreshPercent;
  }
  if (refresh_interval(cfg) == 0) return IngressConfigError::kPauseTooShort;
  if (cfg.buffer_bytes == 0 || cfg.buffer_bytes > kMaxBufferBytes) {
    return IngressConfigError::kBadBufferSize;
  }
  // headroom <= buffer first, so E x headroom (E <= 8) cannot overflow.
  if (cfg.headroom_bytes > cfg.buffer_bytes || reserved_headroom(cfg) >= cfg.buffer_bytes) {
    return IngressConfigError::kHeadroomExceedsBuffer;
  }
  const std::uint64_t shared = cfg.buffer_bytes - reserved_headroom(cfg);
  if (cfg.mode == ThresholdMode::kStatic) {
    if (cfg.xon_bytes >= cfg.xoff_bytes || cfg.xoff_bytes > shared) {
      return IngressConfigError::kBadStaticThresholds;
    }
  } else if (cfg.alpha_num == 0 || cfg.alpha_den == 0 || cfg.alpha_num > kMaxAlphaTerm ||
             cfg.alpha_den > kMaxAlphaTerm) {
    return IngressConfigError::kBadAlpha;
  }
  return IngressConfigError::kOk;
}

IngressAccounting::IngressAccounting(const IngressConfig& cfg)
    : cfg_(cfg),
      pause_ns_(wire::pfc_quanta_to_ns(cfg.xoff_quanta, cfg.link_bps)),
      refresh_ns_(refresh_interval(cfg)),
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
  const std::uint64_t free = shared_ > total_ ? shared_ - total_ : 0;
  return free * cfg_.alpha_num / cfg_.alpha_den;
}

std::uint64_t IngressAccounting::xon_threshold() const {
  if (cfg_.mode == ThresholdMode::kStatic) return cfg_.xon_bytes;
  const std::uint64_t t = xoff_threshold();
  return t > cfg_.xon_offset_bytes ? t - cfg_.xon_offset_bytes : 0;
}

TimeNs IngressAccounting::next_deadline() const {
  if (retry_) return 0;
  TimeNs d = kNoDeadline;
  for (std::uint8_t p = 0; p < kNumPriorities; ++p) {
    if (asserted_[p] && last_sent_[p] + refresh_ns_ < d) d = last_sent_[p] + refresh_ns_;
  }
  return d;
}

TimeNs IngressAccounting::asserted_ns(std::uint8_t prio, TimeNs now) const {
  prio &= 7;
  TimeNs t = asserted_closed_ns_[prio];
  if (asserted_[prio] && now > asserted_since_[prio]) t += now - asserted_since_[prio];
  return t;
}

bool IngressAccounting::plan(TimeNs now, Plan& p) const {
  const std::uint64_t xoff = xoff_threshold();
  const std::uint64_t xon = xon_threshold();
  for (std::uint8_t prio = 0; prio < kNumPriorities; ++prio) {
    const std::uint8_t bit = static_cast<std::uint8_t>(1u << prio);
    if ((cfg_.pfc_enable & bit) == 0) continue;
    const std::uint64_t q = occ_[prio];
    if (asserted_[prio]) {
      if (q <= xon) {
        p.xon |= bit;
        p.quanta[prio] = 0;
      } else if (now >= last_sent_[prio] + refresh_ns_) {
        p.refresh |= bit;
        p.quanta[prio] = cfg_.xoff_quanta;
      } else {
        continue;
      }
    } else if (q > xoff) {
      p.xoff |= bit;
      p.quanta[prio] = cfg_.xoff_quanta;
    } else {
      continue;
    }
    p.mask |= bit;
  }
  return p.mask != 0;
}

void IngressAccounting::commit(const Plan& p, TimeNs now) {
  retry_ = false;
  ++c_.frames_sent;
  for (std::uint8_t prio = 0; prio < kNumPriorities; ++prio) {
    const std::uint8_t bit = static_cast<std::uint8_t>(1u << prio);
    IngressPrioCounters& pc = c_.prio[prio];
    if ((p.xoff & bit) != 0) {
      ++pc.xoff_sent;
      asserted_[prio] = true;
      asserted_since_[prio] = now;
      last_sent_[prio] = now;
    } else if ((p.refresh & bit) != 0) {
      ++pc.refresh_sent;
      if (now > last_sent_[prio] + pause_ns_) ++pc.refresh_late;
      last_sent_[prio] = now;
    } else if ((p.xon & bit) != 0) {
      ++pc.xon_sent;
      asserted_[prio] = false;
      asserted_closed_ns_[prio] += now - asserted_since_[prio];
    }
  }
}

}  // namespace uroce::pfc
