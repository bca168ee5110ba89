#include "pfc/ttl_monitor.h"

#include <bit>

namespace uroce::pfc {

std::string_view ttl_monitor_config_error_name(TtlMonitorConfigError e) {
  switch (e) {
    case TtlMonitorConfigError::kOk: return "Ok";
    case TtlMonitorConfigError::kZeroTxTtl: return "ZeroTxTtl";
    case TtlMonitorConfigError::kBadReplaySlots: return "BadReplaySlots";
    case TtlMonitorConfigError::kZeroReplayWindow: return "ZeroReplayWindow";
    case TtlMonitorConfigError::kBadPeerSlots: return "BadPeerSlots";
    case TtlMonitorConfigError::kZeroOutlierDelta: return "ZeroOutlierDelta";
    case TtlMonitorConfigError::kBadMinSamples: return "BadMinSamples";
  }
  return "Unknown";
}

namespace {

constexpr std::uint32_t kMaxSlots = 1u << 20;
constexpr std::uint8_t kMaxMinSamples = 64;
constexpr std::size_t kKindOwn = 0;
constexpr std::size_t kKindReplay = 1;
constexpr std::size_t kKindOutlier = 2;

bool good_slots(std::uint32_t n) { return n != 0 && n <= kMaxSlots && std::has_single_bit(n); }

// A 64-bit finaliser (splitmix64's): spreads nearby keys over the table.
std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

// An event about the received packet `rx`; built only when one is raised,
// not for every packet classified.
PfcEvent event_of(const RxTtlInfo& rx, TimeNs now, PfcEventType type, std::uint8_t ref_ttl) {
  PfcEvent e;
  e.at = now;
  e.src_ip = rx.src_ip.v;
  e.qpn = rx.qpn;
  e.psn = rx.psn;
  e.ttl = rx.ttl;
  e.type = type;
  e.ref_ttl = ref_ttl;
  return e;
}

}  // namespace

TtlMonitorConfigError TtlMonitor::check(const TtlMonitorConfig& cfg) {
  if (cfg.tx_ttl == 0) return TtlMonitorConfigError::kZeroTxTtl;
  if (!good_slots(cfg.replay_slots)) return TtlMonitorConfigError::kBadReplaySlots;
  if (cfg.replay_window_ns == 0) return TtlMonitorConfigError::kZeroReplayWindow;
  if (!good_slots(cfg.peer_slots)) return TtlMonitorConfigError::kBadPeerSlots;
  if (cfg.outlier_delta == 0) return TtlMonitorConfigError::kZeroOutlierDelta;
  if (cfg.min_samples == 0 || cfg.min_samples > kMaxMinSamples) {
    return TtlMonitorConfigError::kBadMinSamples;
  }
  return TtlMonitorConfigError::kOk;
}

TtlMonitor::TtlMonitor(const TtlMonitorConfig& cfg)
    : cfg_(cfg),
      replay_(cfg.replay_slots),
      peers_(cfg.peer_slots),
      max_confidence_(static_cast<std::uint8_t>(2 * cfg.min_samples)) {}

bool TtlMonitor::admit_log(std::size_t kind, TimeNs now, PfcEvent& e) {
  if (logged_[kind] && now - last_log_[kind] < cfg_.log_interval_ns) {
    ++suppressed_[kind];
    ++c_.events_suppressed;
    return false;
  }
  logged_[kind] = true;
  last_log_[kind] = now;
  e.suppressed = suppressed_[kind];
  suppressed_[kind] = 0;
  ++c_.events_logged;
  return true;
}

std::uint8_t TtlMonitor::classify(const RxTtlInfo& rx, TimeNs now, std::array<PfcEvent, 2>& ev,
                                  std::size_t& n) {
  ++c_.rx_checked;
  const bool own_mac = !cfg_.own_mac.is_zero() && rx.src_mac == cfg_.own_mac;
  const bool own_ip = cfg_.own_ip.v != 0 && rx.src_ip == cfg_.own_ip;
  if (own_mac || own_ip) {
    ++c_.own_packets;
    PfcEvent e = event_of(rx, now, PfcEventType::kOwnPacket, cfg_.tx_ttl);
    if (admit_log(kKindOwn, now, e)) ev[n++] = e;
    return kLoopOwnPacket;
  }

  std::uint8_t signals = kLoopNone;

  // Replay of the same packet.
  const std::uint64_t key = (std::uint64_t{rx.src_ip.v} << 24) ^
                            (std::uint64_t{rx.qpn & 0xffffff} << 40) ^ (rx.psn & 0xffffff);
  ReplayEntry& r = replay_[mix(key) & (replay_.size() - 1)];
  const bool live = r.valid && now - r.at <= cfg_.replay_window_ns;
  if (live && r.ip == rx.src_ip.v && r.qpn == rx.qpn && r.psn == rx.psn) {
    if (rx.ttl < r.ttl) {
      ++c_.replay_lower_ttl;
      signals |= kLoopReplayLowerTtl;
      PfcEvent e = event_of(rx, now, PfcEventType::kLoopReplay, r.ttl);
      if (admit_log(kKindReplay, now, e)) ev[n++] = e;
    } else if (rx.ttl == r.ttl) {
      ++c_.replay_same_ttl;
    } else {
      ++c_.replay_higher_ttl;
    }
  } else if (live) {
    ++c_.replay_evictions;
  }
  r = ReplayEntry{rx.src_ip.v, rx.qpn, rx.psn, now, rx.ttl, true};

  // Outlier against the peer's usual TTL.
  PeerEntry& pe = peers_[mix(rx.src_ip.v) & (peers_.size() - 1)];
  if (!pe.valid || pe.ip != rx.src_ip.v) {
    if (pe.valid) ++c_.peer_evictions;
    pe = PeerEntry{rx.src_ip.v, rx.ttl, 1, true};
    return signals;
  }
  const int diff = int{rx.ttl} - int{pe.usual};
  if (pe.confidence >= cfg_.min_samples &&
      (diff >= cfg_.outlier_delta || -diff >= cfg_.outlier_delta)) {
    if (diff < 0) {
      ++c_.outliers_low;
      signals |= kLoopTtlOutlierLow;
    } else {
      ++c_.outliers_high;
      signals |= kLoopTtlOutlierHigh;
    }
    PfcEvent e = event_of(rx, now, PfcEventType::kTtlOutlier, pe.usual);
    if (admit_log(kKindOutlier, now, e)) ev[n++] = e;
  }
  if (diff == 0) {
    if (pe.confidence < max_confidence_) ++pe.confidence;
  } else if (--pe.confidence == 0) {
    pe.usual = rx.ttl;
    pe.confidence = 1;
  }
  return signals;
}

bool TtlMonitor::peer_usual_ttl(wire::Ipv4Addr ip, std::uint8_t& ttl,
                                std::uint8_t& confidence) const {
  const PeerEntry& pe = peers_[mix(ip.v) & (peers_.size() - 1)];
  if (!pe.valid || pe.ip != ip.v) return false;
  ttl = pe.usual;
  confidence = pe.confidence;
  return true;
}

}  // namespace uroce::pfc
