#include "testbed/switch/shared_buffer.h"

#include <algorithm>
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

SharedBufferConfigError SharedBuffer::check(const SharedBufferConfig& cfg,
                                            std::span<const SharedBufferPort> ports) {
  if (ports.empty()) return SharedBufferConfigError::kNoPorts;
  if (ports.size() > kMaxSwitchPorts) return SharedBufferConfigError::kTooManyPorts;
  if (cfg.xoff_quanta == 0) return SharedBufferConfigError::kZeroQuanta;
  if (!pfc::refresh_percent_ok(cfg.refresh_percent)) {
    return SharedBufferConfigError::kBadRefreshPercent;
  }
  for (const SharedBufferPort& p : ports) {
    if (p.link_bps == 0) return SharedBufferConfigError::kZeroLinkSpeed;
    if (pfc::refresh_interval(cfg.xoff_quanta, p.link_bps, cfg.refresh_percent) == 0) {
      return SharedBufferConfigError::kPauseTooShort;
    }
  }
  if (!pfc::buffer_size_ok(cfg.buffer_bytes)) return SharedBufferConfigError::kBadBufferSize;
  // headroom <= buffer first, so ports x 8 x headroom (<= 2^9 x 2^40)
  // cannot overflow.
  const std::uint64_t lossless = static_cast<std::uint64_t>(std::popcount(cfg.pfc_enable));
  if (cfg.headroom_bytes > cfg.buffer_bytes ||
      ports.size() * lossless * cfg.headroom_bytes >= cfg.buffer_bytes) {
    return SharedBufferConfigError::kHeadroomExceedsBuffer;
  }
  if (!pfc::alpha_ok(cfg.alpha_num, cfg.alpha_den)) return SharedBufferConfigError::kBadAlpha;
  return SharedBufferConfigError::kOk;
}

SharedBuffer::SharedBuffer(const SharedBufferConfig& cfg, std::span<const SharedBufferPort> ports)
    : cfg_(cfg), ports_(ports.begin(), ports.end()), queues_(ports.size() * pfc::kNumPriorities) {
  pause_.reserve(ports.size());
  for (const SharedBufferPort& p : ports) {
    pause_.emplace_back(cfg.pfc_enable, cfg.xoff_quanta,
                        pfc::pause_time(cfg.xoff_quanta, p.link_bps),
                        pfc::refresh_interval(cfg.xoff_quanta, p.link_bps, cfg.refresh_percent));
  }
  const std::uint64_t lossless = static_cast<std::uint64_t>(std::popcount(cfg.pfc_enable));
  shared_cap_ = cfg.buffer_bytes - ports.size() * lossless * cfg.headroom_bytes;
}

std::uint64_t SharedBuffer::threshold() const {
  return pfc::dynamic_threshold(shared_cap_, shared_used_, cfg_.alpha_num, cfg_.alpha_den);
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
  for (const pfc::PauseAssertion& p : pause_) d = std::min(d, p.next_refresh());
  return d;
}

}  // namespace uroce::testbed
