// Holding a TX burst of nothing but ACKs for a later iteration, on a port
// whose TX burst is a system call.
//
// On AF_XDP in copy mode (and AF_PACKET) every TX burst is a sendto. An RC
// responder receiving a stream sends one coalesced ACK per RX burst
// (rc_responder.h), so a receiver's iteration is an RX burst of a few
// frames and a sendto of one ACK: profiled on AF_XDP over a veth, one
// sendto per 4.9 frames received took 43 % of the receiver's core
// (docs/nic.md "Session 45"). An ACK may wait a little: it only releases
// the requester's window and completions, and the next one acknowledges
// everything this one does. So the end-of-iteration flush keeps a burst
// that holds only ACKs while a stream goes on: while this iteration and the
// one before it received frames, fewer than `max_frames` ACKs wait, and the
// oldest has waited less than `max_ns`. Anything else in the burst (a SEND,
// a READ response, a NAK) flushes it at once with the ACKs riding along,
// and so does an iteration that received nothing. A request that arrives
// after an iteration that received nothing (a ping-pong's, a lone
// request's) is acknowledged at once, as without the hold: held, a ping's
// ACK left in the next iteration, in daemon mode often just before the
// pong, and made ib_send_lat's p99 over AF_XDP 41 -> 56 us
// (docs/nic.md "Session 46").
//
// A state machine without I/O: the port adapter (eth_port_io.h) asks keep()
// at its end-of-iteration flush and says flushed() whenever the burst left.
#pragma once

#include <cassert>
#include <cstdint>

#include "datapath/base/time.h"

namespace uroce::engine {

struct AckHoldConfig {
  bool enabled = false;
  // The most ACK frames a held burst reaches before it leaves.
  std::uint16_t max_frames = 4;
  // The longest an ACK waits in a held burst.
  TimeNs max_ns = 20'000;
};

class AckHold {
 public:
  AckHold() = default;
  explicit AckHold(const AckHoldConfig& c) : cfg_(c) { assert(!c.enabled || c.max_frames >= 2); }

  bool enabled() const { return cfg_.enabled; }
  const AckHoldConfig& config() const { return cfg_; }

  // At the end-of-iteration flush: true to keep the `pending` frames for a
  // later iteration. `only_acks`: every pending frame is an ACK
  // (wire::peek_plain_ack); `rx_frames`, `rx_before`: what this iteration
  // and the one before it received.
  bool keep(std::uint16_t pending, bool only_acks, std::uint32_t rx_frames, std::uint32_t rx_before,
            TimeNs now) {
    if (!cfg_.enabled || pending == 0 || !only_acks || rx_frames == 0 || rx_before == 0 ||
        pending >= cfg_.max_frames) {
      return false;
    }
    if (!holding_) {
      holding_ = true;
      since_ = now;
      return true;
    }
    return now - since_ < cfg_.max_ns;
  }

  // The pending frames left (whichever flush sent them).
  void flushed() { holding_ = false; }

  bool holding() const { return holding_; }

 private:
  AckHoldConfig cfg_{};
  bool holding_ = false;
  TimeNs since_ = 0;
};

}  // namespace uroce::engine
