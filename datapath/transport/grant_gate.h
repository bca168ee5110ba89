// The sender half of the Homa-like scheduler (issue 15; docs/homa.md): what
// one outgoing message may send, and at which priority. It belongs to the RC
// transport (rc_homa.h asks it before each data packet); the receiver half
// is a policy's (sched/grant_scheduler.h, datapath/policy/homa.h).
//
// A message's first unsched_bytes may leave at once, at the priority the
// receiver's cutoffs give its length (unsched_priority()); the rest as
// GRANTs arrive (on_grant(): cumulative offsets, so a duplicate or a late
// one changes nothing), at the priority the latest grant names.
//
// A receiver that restarted, or lost track of the message, would leave the
// sender waiting for ever. So a message blocked on grants (everything
// allowed was sent) for grant_timeout_ns counts a timeout. A live receiver
// re-sends its grant (the same offset) every resend_ns, shorter, while it
// waits for the data: that starts the timeouts over. After max_timeouts in
// a row with neither the gate opens for the whole message at the lowest
// priority (fallen_back(): RC still delivers it, unscheduled), counted by
// the caller.
//
// A pure state machine: no clock, no I/O; the caller reports what it sent
// and when it is blocked. One per message in flight.
#pragma once

#include <cstdint>

#include "datapath/wire/homa_cutoffs.h"

namespace uroce::transport {

struct GrantGateConfig {
  std::uint32_t unsched_bytes = 60'000;
  std::uint64_t grant_timeout_ns = 4'000'000;
  std::uint32_t max_timeouts = 3;
};

// A peer's published unscheduled levels (the CUTOFFS it sent), as the
// sender applies them: level j of Cutoffs at priority top - j.
struct PeerCutoffs {
  wire::HomaCutoffs cutoffs{};
  std::uint8_t top_priority = 7;
  std::uint32_t generation = 0;

  std::uint8_t priority_of(std::uint64_t length) const {
    const std::uint32_t level = cutoffs.level_of(length);
    return static_cast<std::uint8_t>(level > top_priority ? 0 : top_priority - level);
  }
};

class GrantGate {
 public:
  GrantGate() = default;
  // A new message of `length` bytes whose first packet has PSN `psn`.
  GrantGate(const GrantGateConfig& cfg, std::uint32_t psn, std::uint64_t length,
            const PeerCutoffs& peer)
      : cfg_(cfg),
        psn_(psn),
        length_(length),
        allowed_(length < cfg.unsched_bytes ? length : cfg.unsched_bytes),
        unsched_priority_(peer.priority_of(length)) {}

  std::uint32_t psn() const { return psn_; }
  std::uint64_t length() const { return length_; }
  // Bytes of the message that may have been sent by now.
  std::uint64_t allowed() const { return allowed_; }
  std::uint64_t sent() const { return sent_; }
  // The priority of the byte at `offset`.
  std::uint8_t priority(std::uint64_t offset) const {
    if (fallen_back_) return 0;
    return offset < cfg_.unsched_bytes ? unsched_priority_ : grant_priority_;
  }
  std::uint8_t unsched_priority() const { return unsched_priority_; }
  bool fallen_back() const { return fallen_back_; }
  bool done() const { return sent_ >= length_; }
  // Blocked: everything allowed was sent and more remains.
  bool blocked() const { return sent_ >= allowed_ && sent_ < length_; }

  // The caller sent the message's bytes up to `offset` (<= allowed()).
  void on_sent(std::uint64_t offset, std::uint64_t now) {
    if (offset > sent_) sent_ = offset;
    if (blocked() && blocked_since_ == kNever) blocked_since_ = now;
  }
  // A GRANT for this message (psn matches): true if it allowed more. One
  // that repeats the offset allowed (the receiver's RESEND while the data
  // is being recovered, or its answer to a repeated MLEN while it grants
  // shorter messages first) allows nothing but shows the receiver alive:
  // the timeouts start over.
  bool on_grant(std::uint32_t psn, std::uint64_t offset, std::uint8_t priority, std::uint64_t now) {
    if (psn != psn_ || fallen_back_) return false;
    const std::uint64_t o = offset < length_ ? offset : length_;
    if (o == allowed_) {
      timeouts_ = 0;
      if (blocked_since_ != kNever) blocked_since_ = now;
    }
    if (o <= allowed_) return false;
    allowed_ = o;
    grant_priority_ = priority;
    timeouts_ = 0;
    blocked_since_ = kNever;
    return true;
  }
  // When the gate should be looked at again (blocked: its timeout), or
  // UINT64_MAX.
  std::uint64_t deadline() const {
    return blocked() && blocked_since_ != kNever ? blocked_since_ + cfg_.grant_timeout_ns : kNever;
  }
  // At or after deadline(): one more timeout; at max_timeouts the gate
  // opens for the whole message. True if it fell back now.
  bool on_timer(std::uint64_t now) {
    if (!blocked() || blocked_since_ == kNever || now < deadline()) return false;
    ++timeouts_;
    blocked_since_ = now;
    if (timeouts_ < cfg_.max_timeouts) return false;
    fallen_back_ = true;
    allowed_ = length_;
    blocked_since_ = kNever;
    return true;
  }
  std::uint32_t timeouts() const { return timeouts_; }

 private:
  static constexpr std::uint64_t kNever = UINT64_MAX;
  GrantGateConfig cfg_{};
  std::uint32_t psn_ = 0;
  std::uint64_t length_ = 0;
  std::uint64_t allowed_ = 0;
  std::uint64_t sent_ = 0;
  std::uint64_t blocked_since_ = kNever;
  std::uint32_t timeouts_ = 0;
  std::uint8_t unsched_priority_ = 0;
  std::uint8_t grant_priority_ = 0;
  bool fallen_back_ = false;
};

}  // namespace uroce::transport
