#include "testbed/switch/shared_buffer.h"

#include <bit>

namespace uroce::testbed {

std::string_view shared_buffer_config_error_name(SharedBufferConfigError e) {
  switch (e) {
    case SharedBufferConfigError::kOk: return "Ok";
    case SharedBufferConfigError::kNoPorts: return "NoPorts";
    case SharedBufferConfigError::kTooManyPorts: return "TooManyPorts";
    case SharedBufferConfigError::kZeroLinkSpeed: return "ZeroLinkSpeed";
    case SharedBufferConfigError::kZeroQuanta: return "ZeroQuanta";
    case SharedBufferConfigError::kBadRefreshPercent: return "BadRefreshPercent";
    case SharedBufferConfigError::kPauseTooShort: return "PauseTooShort";
    case SharedBufferConfigError::kBadBufferSize: return "BadBufferSize";
    case SharedBufferConfigError::kHeadroomExceedsBuffer: return "HeadroomExceedsBuffer";
    case SharedBufferConfigError::kBadAlpha: return "BadAlpha";
  }
  return "Unknown";
}

namespace {

// Bounds that keep free x alpha_num within 64 bits.
constexpr std::uint32_t kMaxAlphaTerm = 1u << 16;
constexpr std::uint64_t kMaxBufferBytes = std::uint64_t{1} << 40;

TimeNs refresh_interval(const SharedBufferConfig& cfg, std::uint64_t link_bps) {
  return wire::pfc_quanta_to_ns(cfg.xoff_quanta, link_bps) * cfg.refresh_percent / 100;
}

}  // namespace

SharedBufferConfigError SharedBuffer::check(const SharedBufferConfig& cfg,
                                            std::span<const SharedBufferPort> ports) {
  if (ports.empty()) return SharedBufferConfigError::kNoPorts;
  if (ports.size() > kMaxSwitchPorts) return SharedBufferConfigError::kTooManyPorts;
  if (cfg.xoff_quanta == 0) return SharedBufferConfigError::kZeroQuanta;
  if (cfg.refresh_percent == 0 || cfg.refresh_percent >= 100) {
    return SharedBufferConfigError::kBadRefreshPercent;
  }
  for (const SharedBufferPort& p : ports) {
    if (p.link_bps == 0) return SharedBufferConfigError::kZeroLinkSpeed;
    if (refresh_interval(cfg, p.link_bps) == 0) return SharedBufferConfigError::kPauseTooShort;
  }
  if (cfg.buffer_bytes == 0 || cfg.buffer_bytes > kMaxBufferBytes) {
    return SharedBufferConfigError::kBadBufferSize;
  }
  // headroom <= buffer first, so ports x 8 x headroom (<= 2^9 x 2^40)
  // cannot overflow.
  const std::uint64_t lossless = static_cast<std::uint64_t>(std::popcount(cfg.pfc_enable));
  if (cfg.headroom_bytes > cfg.buffer_bytes ||
      ports.size() * lossless * cfg.headroom_bytes >= cfg.buffer_bytes) {
    return SharedBufferConfigError::kHeadroomExceedsBuffer;
  }
  if (cfg.alpha_num == 0 || cfg.alpha_den == 0 || cfg.alpha_num > kMaxAlphaTerm ||
      cfg.alpha_den > kMaxAlphaTerm) {
    return SharedBufferConfigError::kBadAlpha;
  }
  return SharedBufferConfigError::kOk;
}

SharedBuffer::SharedBuffer(const SharedBufferConfig& cfg, std::span<const SharedBufferPort> ports)
    : cfg_(cfg),
      ports_(ports.begin(), ports.end()),
      port_times_(ports.size()),
      queues_(ports.size() * pfc::kNumPriorities) {
  for (std::size_t i = 0; i < ports.size(); ++i) {
    port_times_[i].pause_ns = wire::pfc_quanta_to_ns(cfg.xoff_quanta, ports[i].link_bps);
    port_times_[i].refresh_ns = refresh_interval(cfg, ports[i].link_bps);
  }
  const std::uint64_t lossless = static_cast<std::uint64_t>(std::popcount(cfg.pfc_enable));
  shared_cap_ = cfg.buffer_bytes - ports.size() * lossless * cfg.headroom_bytes;
}

std::uint64_t SharedBuffer::threshold() const {
  const std::uint64_t free = shared_cap_ > shared_used_ ? shared_cap_ - shared_used_ : 0;
  return free * cfg_.alpha_num / cfg_.alpha_den;
}

BufferAdmit SharedBuffer::admit(std::uint16_t port, std::uint8_t prio, std::uint32_t bytes) {
  if (port >= ports_.size() || prio >= pfc::kNumPriorities) {
    ++c_.bad_queue;
    return BufferAdmit::kDropBadQueue;
  }
  Queue& qu = q(port, prio);
  const bool lossless = ((cfg_.pfc_enable >> prio) & 1) != 0;
  BufferAdmit r;
  if (qu.shared + bytes <= threshold() && shared_used_ + bytes <= shared_cap_) {
    qu.shared += bytes;
    shared_used_ += bytes;
    if (qu.shared > qu.c.peak_shared_bytes) qu.c.peak_shared_bytes = qu.shared;
    r = BufferAdmit::kShared;
  } else if (lossless && qu.headroom + bytes <= cfg_.headroom_bytes) {
    qu.headroom += bytes;
    headroom_used_ += bytes;
    ++qu.c.headroom_packets;
    if (qu.headroom > qu.c.peak_headroom_bytes) qu.c.peak_headroom_bytes = qu.headroom;
    r = BufferAdmit::kHeadroom;
  } else if (lossless) {
    ++qu.c.drops_headroom_full;
    return BufferAdmit::kDropHeadroomFull;
  } else {
    ++qu.c.drops_lossy_full;
    return BufferAdmit::kDropLossyFull;
  }
  ++qu.c.rx_packets;
  qu.c.rx_bytes += bytes;
  if (used() > c_.peak_used_bytes) c_.peak_used_bytes = used();
  return r;
}

bool SharedBuffer::release(std::uint16_t port, std::uint8_t prio, std::uint32_t bytes) {
  if (port >= ports_.size() || prio >= pfc::kNumPriorities) {
    ++c_.bad_queue;
    return false;
  }
  Queue& qu = q(port, prio);
  std::uint64_t n = bytes;
  if (n > qu.shared + qu.headroom) {
    ++c_.release_underflow;
    n = qu.shared + qu.headroom;
  }
  qu.c.released_bytes += n;
  const std::uint64_t from_headroom = n < qu.headroom ? n : qu.headroom;
  qu.headroom -= from_headroom;
  headroom_used_ -= from_headroom;
  qu.shared -= n - from_headroom;
  shared_used_ -= n - from_headroom;
  return true;
}

TimeNs SharedBuffer::next_deadline() const {
  if (retry_) return 0;
  TimeNs d = pfc::kNoDeadline;
  for (std::size_t port = 0; port < ports_.size(); ++port) {
    for (std::uint8_t prio = 0; prio < pfc::kNumPriorities; ++prio) {
      const Queue& qu = queues_[port * pfc::kNumPriorities + prio];
      if (qu.asserted && qu.last_sent + port_times_[port].refresh_ns < d) {
        d = qu.last_sent + port_times_[port].refresh_ns;
      }
    }
  }
  return d;
}

TimeNs SharedBuffer::asserted_ns(std::uint16_t port, std::uint8_t prio, TimeNs now) const {
  const Queue& qu = q(port, prio);
  TimeNs t = qu.asserted_closed_ns;
  if (qu.asserted && now > qu.asserted_since) t += now - qu.asserted_since;
  return t;
}

bool SharedBuffer::plan(std::uint16_t port, TimeNs now, std::uint64_t t, Plan& p) const {
  for (std::uint8_t prio = 0; prio < pfc::kNumPriorities; ++prio) {
    const std::uint8_t bit = static_cast<std::uint8_t>(1u << prio);
    if ((cfg_.pfc_enable & bit) == 0) continue;
    const Queue& qu = q(port, prio);
    if (qu.asserted) {
      const bool xon =
          qu.headroom == 0 && (qu.shared == 0 || qu.shared + cfg_.xon_offset_bytes <= t);
      if (xon) {
        p.xon |= bit;
        p.quanta[prio] = 0;
      } else if (now >= qu.last_sent + port_times_[port].refresh_ns) {
        p.refresh |= bit;
        p.quanta[prio] = cfg_.xoff_quanta;
      } else {
        continue;
      }
    } else if (qu.headroom > 0 || (qu.shared > 0 && qu.shared >= t)) {
      p.xoff |= bit;
      p.quanta[prio] = cfg_.xoff_quanta;
    } else {
      continue;
    }
    p.mask |= bit;
  }
  return p.mask != 0;
}

void SharedBuffer::commit(std::uint16_t port, const Plan& p, TimeNs now) {
  ++c_.frames_sent;
  for (std::uint8_t prio = 0; prio < pfc::kNumPriorities; ++prio) {
    const std::uint8_t bit = static_cast<std::uint8_t>(1u << prio);
    Queue& qu = q(port, prio);
    if ((p.xoff & bit) != 0) {
      ++qu.c.xoff_sent;
      qu.asserted = true;
      qu.asserted_since = now;
      qu.last_sent = now;
    } else if ((p.refresh & bit) != 0) {
      ++qu.c.refresh_sent;
      if (now > qu.last_sent + port_times_[port].pause_ns) ++qu.c.refresh_late;
      qu.last_sent = now;
    } else if ((p.xon & bit) != 0) {
      ++qu.c.xon_sent;
      qu.asserted = false;
      qu.asserted_closed_ns += now - qu.asserted_since;
    }
  }
}

}  // namespace uroce::testbed
