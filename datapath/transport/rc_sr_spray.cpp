#include "datapath/transport/rc_sr_spray.h"

#include <cassert>

// Out of line: only a spraying connection calls these, and keeping them
// out of the requester's send path keeps that path's code (and what the
// compiler inlines into it) as it is for every other QP.
namespace uroce::transport {

std::uint32_t SrSpray::pick() {
  for (std::uint32_t k = 0; k < n_; ++k) {
    std::uint32_t i = next_ + k;
    if (i >= n_) i -= n_;
    if (!avoided(i)) return i;
    if (end_if_over(i)) return i;
  }
  return next_;  // unreachable: never every path avoided
}

std::uint16_t SrSpray::pick_port() {
  picked_ = static_cast<std::uint8_t>(pick());
  return port_[picked_];
}

void SrSpray::sent(Psn p, std::uint32_t path) {
  const std::uint32_t s = p.value() & (kSrWindow - 1);
  std::uint8_t& b = path_of_[s / 2];
  b = static_cast<std::uint8_t>(s % 2 == 0 ? (b & 0xf0) | path : (b & 0x0f) | (path << 4));
  next_ = static_cast<std::uint8_t>(path + 1 == n_ ? 0 : path + 1);
  ++sent_;
  if (ctr_ != nullptr) ++ctr_->sr_spray_tx;
}

bool SrSpray::end_if_over(std::uint32_t path) {
  if (static_cast<std::int32_t>(until_[path] - sent_) > 0) return false;
  avoided_ = static_cast<std::uint16_t>(avoided_ & ~(1u << path));
  ce_only_ = static_cast<std::uint16_t>(ce_only_ & avoided_);
  return true;
}

void SrSpray::charge(Psn p) {
  if (!on()) return;
  const std::uint32_t i = path_of(p);
  if (ctr_ != nullptr) ++ctr_->sr_spray_losses;
  for (std::uint32_t k = 0; k < n_; ++k) {
    if (avoided(k)) (void)end_if_over(k);
  }
  ce_only_ = static_cast<std::uint16_t>(ce_only_ & ~(1u << i));
  if (!avoided(i)) {
    // Lost again soon after it was used again: a worse path than one
    // loss says, so it is avoided twice as long; else from the start.
    if (until_[i] != 0 && sent_ - until_[i] < kAvoidPackets) {
      if (level_[i] < kMaxAvoidLevel) ++level_[i];
    } else {
      level_[i] = 0;
    }
    // The last usable path: losses everywhere, so the others are tried
    // again and this one is set aside.
    if (avoided_now() + 1 >= n_) avoided_ = 0;
    ce_only_ = static_cast<std::uint16_t>(ce_only_ & avoided_);
    avoided_ = static_cast<std::uint16_t>(avoided_ | (1u << i));
    if (ctr_ != nullptr) ++ctr_->sr_spray_avoided;
  }
  until_[i] = sent_ + (kAvoidPackets << level_[i]);
  assert((ce_only_ & ~avoided_) == 0);
}

void SrSpray::congested(Psn p) {
  if (!on()) return;
  const std::uint32_t i = path_of(p);
  if (ctr_ != nullptr) ++ctr_->sr_spray_ce;
  if (avoided(i) && !end_if_over(i)) return;
  for (std::uint32_t k = 0; k < n_; ++k) {
    if (avoided(k)) (void)end_if_over(k);
  }
  if (avoided_now() + 1 >= n_) return;
  avoided_ = static_cast<std::uint16_t>(avoided_ | (1u << i));
  ce_only_ = static_cast<std::uint16_t>(ce_only_ | (1u << i));
  until_[i] = sent_ + kCeAvoidPackets;
  if (ctr_ != nullptr) ++ctr_->sr_spray_ce_avoided;
  assert((ce_only_ & ~avoided_) == 0);
}

std::uint16_t SrSpray::ack_port() {
  const std::uint16_t port = port_[ack_next_];
  ack_next_ = static_cast<std::uint8_t>(ack_next_ + 1 == n_ ? 0 : ack_next_ + 1);
  if (ctr_ != nullptr) ++ctr_->sr_spray_acks;
  return port;
}

}  // namespace uroce::transport
