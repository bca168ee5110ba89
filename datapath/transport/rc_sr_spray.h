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
// Answers to duplicates: a duplicate request (a tail-loss probe, or a
// resend whose first copy had arrived) tells the responder that an answer
// of its may have been lost on the way back, on a reverse path it cannot
// see die. Its answer (a SACK with DUP) goes on kDupAnswerPaths paths of
// the rotation, not one: in the testbed a spine link failing killed 5 of
// 16 reverse paths, 4 of them next to each other in the rotation, and
// three probes in a row were answered on dead ones (a 0.7 ms stall).
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
// ECN steering (only with set_ecn, the device key spray_ecn): the
// connection's requests go ECT(0), so a switch whose queue builds marks
// them rather than drops them, and a request packet that arrived marked CE
// (the responder echoes it in a SACK with ECE: sr_sack_eth.h) charges its
// path with congestion (congested()). The path is skipped for the next
// kCeAvoidPackets packets, without a level (congestion comes and goes with
// the load), and never when it is the last usable path or avoided already
// (marks everywhere: steering cannot help, the congestion is past the
// paths' split). A tail-loss probe ends every avoidance for a mark
// (silent()): only live paths mark, so marks steer traffic onto a dead
// path that has not yet been charged (its losses show only once later
// packets arrive); in the testbed a connection whose marked paths were all
// avoided was left on dead ones and its probes went there too. Off by
// default: on the four-path testbed fabric it gained nothing over
// loss-only avoidance (docs/lossy-figures.md).
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
  // Paths an answer to a duplicate goes on.
  static constexpr std::uint32_t kDupAnswerPaths = 3;
  // Packets for which a path that marked CE is skipped: about two rounds
  // over the most paths, a few round trips of a fast connection, enough
  // for the queue that marked to drain.
  static constexpr std::uint32_t kCeAvoidPackets = 32;

  // Where it counts sr_spray_* (RcSr's).
  void bind(RcSrCounters* ctr) { ctr_ = ctr; }
  // Back to one path (the connection's own port).
  void reset() {
    n_ = 0;
    next_ = 0;
    ack_next_ = 0;
    avoided_ = 0;
    ce_only_ = 0;
    ecn_ = false;
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
  // ECN steering (above) on or off; configure() turns it off.
  void set_ecn(bool on) { ecn_ = on; }
  bool ecn() const { return ecn_; }
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
  // PSN p arrived marked CE: its path is skipped a while (ECN steering
  // above).
  void congested(Psn p);
  // A tail-loss probe is due (nothing heard for a while): the avoidances
  // for a mark end.
  void silent() {
    avoided_ = static_cast<std::uint16_t>(avoided_ & ~ce_only_);
    ce_only_ = 0;
  }
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
  // Bit i: path i avoided now; of them, avoided for a CE mark alone
  // (ce_only_ is a subset of avoided_).
  std::uint16_t avoided_ = 0;
  std::uint16_t ce_only_ = 0;
  bool ecn_ = false;
  std::uint8_t n_ = 0;
  std::uint8_t next_ = 0;
  std::uint8_t picked_ = 0;
  std::uint8_t ack_next_ = 0;
  RcSrCounters* ctr_ = nullptr;
};

}  // namespace uroce::transport
