// Multipath packet spraying for an RC connection in selective-repeat mode
// (docs/lossy.md, "Spraying"): its SEND and WRITE packets leave from up to
// kMaxPaths UDP source ports ("paths": the ECMP entropy of the fabric), in
// round robin over the paths not avoided now. Only selective repeat sprays:
// it tolerates the reordering that paths of different delay cause, where
// go-back-N would send everything again. READ and atomic requests keep path
// 0 (the connection's own port), as do READ responses and atomic ACKs.
//
// Acknowledgements (ACK, SACK, NAK) rotate over every path, in plain round
// robin (ack_port()): the reverse direction hashes other 5-tuples, so the
// data paths' avoidance says nothing about them, and an ACK is cumulative
// (a SACK repeats the holes), so a dead reverse path costs one answer in
// `paths` instead of every answer, which would leave the requester waiting
// for its retransmission timeout.
//
// Avoidance rule: every PSN in flight remembers its path; a PSN the loss
// signal deems lost (a SACK hole, or the retransmission timeout, not a
// tail-loss probe) charges a loss to its path, which is then skipped for
// the next kAvoidPackets x 2^level packets the connection sprays (a loss
// on a path already avoided restarts its count). A path that loses again
// within kAvoidPackets packets of being used again goes up a level (at
// most kMaxAvoidLevel), one that stayed clean longer starts again at 0:
// a dead path is soon skipped for 1,024 packets at a time, a path that
// lost one packet to congestion for 64. Never all paths at once: a loss on
// the one path left usable means losses everywhere, congestion rather than
// a bad path, so it ends every other avoidance and avoids this path alone
// (a connection left on one path that turned out dead would otherwise
// stall until its retransmission timeout).
//
// State: fixed-size arrays (bounded whatever the traffic), part of the
// connection's RcSr (the device pool). The ports are set once, when the
// peer accepts selective repeat (policy/lossy.h); with fewer than 2 paths
// the connection sends from its own port only and the requester pays one
// test per packet. Engine thread only.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <span>

#include "datapath/transport/rc_counters.h"
#include "datapath/transport/rc_sr_rx.h"
#include "datapath/transport/seq24.h"

namespace uroce::transport {

class SrSpray {
 public:
  static constexpr std::uint32_t kMaxPaths = 16;
  // Packets of the connection for which a path charged with a loss is
  // skipped: 4 rounds over the most paths, long enough that a path losing
  // one packet in a few dozen carries a small share, short enough that a
  // one-off loss costs the path little.
  static constexpr std::uint32_t kAvoidPackets = 64;
  static constexpr std::uint32_t kMaxAvoidLevel = 4;

  // Where it counts sr_spray_* (RcSr's).
  void bind(RcSrCounters* ctr) { ctr_ = ctr; }
  // Back to one path (the connection's own port).
  void reset() {
    n_ = 0;
    next_ = 0;
    ack_next_ = 0;
    avoided_ = 0;
    until_ = {};
    level_ = {};
  }
  // The connection's paths: ports[0] its own port; more than kMaxPaths are
  // not used. Fewer than 2: no spraying.
  void configure(std::span<const std::uint16_t> ports) {
    reset();
    const std::size_t n = ports.size() < kMaxPaths ? ports.size() : kMaxPaths;
    for (std::size_t i = 0; i < n; ++i) port_[i] = ports[i];
    n_ = n >= 2 ? static_cast<std::uint8_t>(n) : 0;
  }
  bool on() const { return n_ != 0; }
  std::uint32_t paths() const { return n_; }
  std::uint16_t port(std::uint32_t path) const { return port_[path]; }
  bool avoided(std::uint32_t path) const { return ((avoided_ >> path) & 1u) != 0; }
  // The path's avoidance level (0..kMaxAvoidLevel): its next avoidance
  // lasts kAvoidPackets << level packets.
  std::uint32_t level(std::uint32_t path) const { return level_[path]; }
  std::uint32_t avoided_now() const { return static_cast<std::uint32_t>(std::popcount(avoided_)); }

  // The path of the next packet: the first not avoided from the round-robin
  // cursor. A path whose avoidance ran out is used again (and cleared here:
  // the scan passes every path at least once per round, so none stays
  // marked long past its end). Needs on().
  std::uint32_t pick();
  // pick() for the packet being built: its port; sent(p) records it once
  // the packet has left.
  std::uint16_t pick_port();
  void sent(Psn p) { sent(p, picked_); }
  // PSN p left on `path` (from pick()).
  void sent(Psn p, std::uint32_t path);
  // The path PSN p (in flight, sent while on()) last took.
  std::uint32_t path_of(Psn p) const {
    const std::uint32_t s = p.value() & (kSrWindow - 1);
    const std::uint8_t b = path_of_[s / 2];
    return s % 2 == 0 ? b & 0x0f : b >> 4;
  }
  // PSN p was deemed lost: a loss charged to its path (the rule above).
  void charge(Psn p);
  // The port of the next acknowledgement (round robin over every path,
  // counted in sr_spray_acks). Needs on().
  std::uint16_t ack_port();

 private:
  // An avoided path whose kAvoidPackets have gone by is used again: true
  // (and no longer avoided) if so.
  bool end_if_over(std::uint32_t path);

  std::array<std::uint16_t, kMaxPaths> port_{};
  // The packet count (sent_) at which an avoided path is used again (or,
  // for a path not avoided, was last).
  std::array<std::uint32_t, kMaxPaths> until_{};
  std::array<std::uint8_t, kMaxPaths> level_{};
  // Each PSN slot's path, two to a byte.
  std::array<std::uint8_t, kSrWindow / 2> path_of_{};
  std::uint32_t sent_ = 0;
  // Bit i: path i avoided now.
  std::uint16_t avoided_ = 0;
  std::uint8_t n_ = 0;
  std::uint8_t next_ = 0;
  std::uint8_t picked_ = 0;
  std::uint8_t ack_next_ = 0;
  RcSrCounters* ctr_ = nullptr;
};

}  // namespace uroce::transport
