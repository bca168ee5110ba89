// Keep the queue in the scheduler (docs/isolation.md, "Isolation in the
// testbed"): a bound on the bytes the engine's pump has handed to the port
// and the link has not yet sent.
//
// Below the scheduler sits a FIFO (a memif or af_packet ring, a NIC's TX
// ring, the testbed host's TX queue) that takes every frame in the order
// the pump made it. A frame of a strict class, however early the scheduler
// picks it, waits behind whatever the FIFO already holds: with 16 elephants
// that is the whole ring. The port tells the engine only when the ring is
// full, so the engine models it: a queue of `backlog` bytes drained at the
// link rate since the last look (as Linux's BQL bounds a NIC ring's bytes,
// but from the rate instead of TX completions, which DPDK ports do not
// report). The pump stops while the backlog is at or above `limit_bytes`,
// so the FIFO holds at most the limit plus one frame and the rest waits in
// the QPs, where the classes order it.
//
// Each frame costs its bytes plus overhead_bytes (an Ethernet link's
// preamble, FCS and gap, wire::kEthWireOverheadBytes; the testbed's link
// overhead): without them the model would drain faster than the link, and
// under a steady load the real FIFO would grow by that share of the rate
// (0.6 % with 4 KiB frames, a fifth with 64-byte ones) until the strict
// class waited behind it again.
// The model is exact when the port drains at line rate (the testbed's host
// link, a NIC that is never paused); when the port drains slower (a PFC
// pause, a peer that does not keep up) the real FIFO grows past the limit
// until the port refuses frames, as it would without the limit.
//
// Per pump: one subtraction and a few compares; no allocation. Owned by one
// engine lcore; not thread-safe.
#pragma once

#include <cstdint>

#include "datapath/base/time.h"

namespace uroce::sched {

// The range of the config key `tx_limit_bytes` (0: off).
inline constexpr std::uint32_t kMaxPortLimitBytes = 16u << 20;

struct PortLimitConfig {
  // 0: no limit (the pump fills the port as far as it takes frames).
  std::uint32_t limit_bytes = 0;
  // The port's link rate; the model needs it (a limit with 0 is off).
  std::uint64_t link_bps = 0;
  // Bytes the link carries per frame beyond the frame (see above).
  std::uint32_t overhead_bytes = 0;
};

class PortLimit {
 public:
  explicit PortLimit(const PortLimitConfig& c = {})
      : limit_(c.link_bps == 0 ? 0 : c.limit_bytes),
        bps_(c.link_bps),
        overhead_(c.overhead_bytes) {}

  bool enabled() const { return limit_ != 0; }
  std::uint32_t limit_bytes() const { return limit_; }

  // Drains the model to `now` (a clock that never goes back).
  void advance(TimeNs now) {
    if (now <= last_) return;
    const TimeNs dt = now - last_;
    last_ = now;
    if (backlog_ == 0) {
      rem_ = 0;
      return;
    }
    // dt bits-times-1e9 would overflow only past the time the backlog needs
    // to drain, which empties it anyway.
    if (dt >= drain_ns(backlog_)) {
      backlog_ = 0;
      rem_ = 0;
      return;
    }
    const std::uint64_t bits_e9 = dt * bps_ + rem_;
    const std::uint64_t drained = bits_e9 / kBitsE9PerByte;
    rem_ = bits_e9 % kBitsE9PerByte;
    backlog_ = drained >= backlog_ ? 0 : backlog_ - drained;
  }

  // The pump may hand the port more (always, without a limit).
  bool open() const { return limit_ == 0 || backlog_ < limit_; }
  // Frames of at most `frame_bytes` the port may still take: enough to reach
  // the limit, the last one overshooting it by less than a frame.
  // Precondition: enabled().
  std::uint32_t frames_left(std::uint32_t frame_bytes) const {
    if (!open()) return 0;
    return static_cast<std::uint32_t>((limit_ - backlog_ + frame_bytes - 1) / frame_bytes);
  }
  // `frames` frames of `bytes` in all were handed to the port.
  void sent(std::uint64_t bytes, std::uint32_t frames) {
    backlog_ += bytes + std::uint64_t{frames} * overhead_;
  }
  // When the backlog drains below the limit again (now when open).
  TimeNs open_at() const { return open() ? last_ : last_ + drain_ns(backlog_ - limit_ + 1); }

  std::uint64_t backlog() const { return backlog_; }

 private:
  static constexpr std::uint64_t kBitsE9PerByte = 8 * kNsPerSec;
  // Time to send `bytes` at the link rate, rounded up.
  TimeNs drain_ns(std::uint64_t bytes) const {
    return (bytes * kBitsE9PerByte - rem_ + bps_ - 1) / bps_;
  }

  std::uint32_t limit_;
  std::uint64_t bps_;
  std::uint32_t overhead_;
  std::uint64_t backlog_ = 0;  // bytes the link has not yet sent, modelled
  std::uint64_t rem_ = 0;      // drained fraction of a byte, in bits x 1e9
  TimeNs last_ = 0;
};

}  // namespace uroce::sched
