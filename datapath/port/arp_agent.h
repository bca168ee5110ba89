// ARP (RFC 826) responder and resolver for one interface: our MAC + IPv4.
//
// An I/O-free state machine: it takes received frames and `now`, and emits
// the frames it wants sent into a sink (any type with
// `emit(std::span<const std::uint8_t>)`, called inline: no virtual call per
// packet). Every frame it emits is a 42-byte Ethernet/ARP frame zero-padded
// to the 60-byte Ethernet minimum (FCS excluded).
//
// Receive rules (each frame not used is counted by its ArpDrop reason):
// - requests for our IP are answered with a unicast reply to the sender's
//   hardware address, and the sender is learned (created or refreshed);
// - replies addressed to our IP are learned (created or refreshed);
// - gratuitous ARP (sender IP == target IP) refreshes an existing entry only;
// - a frame claiming our IP from another MAC is an address conflict;
// - everything else is ignored: we never learn from traffic between others.
//
// Resolver: resolve() on a miss broadcasts a request and creates an
// incomplete entry; on_timer() retransmits every `retransmit_time` until
// `retries` retransmissions went unanswered, then marks the entry failed for
// `failed_hold_time`; resolve() of a failed entry answers Failed until the
// hold-down ends, then starts over. A stale entry still resolves, and
// triggers one unicast re-probe per `retransmit_time` (as Linux's PROBE).
//
// Defaults follow Linux's neighbour defaults (retrans_time 1 s,
// mcast_solicit 3 = first request + 2 retries) except the failed hold-down,
// which Linux does not have: 3 s keeps a dead peer from being flooded with
// broadcasts by every send attempt while still recovering within seconds.
//
// Not thread-safe: the port's lcore owns the agent.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "datapath/base/counter_fields.h"
#include "datapath/base/time.h"
#include "datapath/port/neighbor_resolver.h"
#include "datapath/port/neighbor_table.h"
#include "datapath/wire/addr.h"
#include "datapath/wire/arp.h"

namespace uroce::port {

inline constexpr std::size_t kArpFrameLen = 42;   // Ethernet 14 + ARP 28
inline constexpr std::size_t kArpFrameSize = 60;  // padded Ethernet minimum

template <class S>
concept FrameSink = requires(S& s, std::span<const std::uint8_t> f) {
  s.emit(f);
};

enum class ArpDrop : std::uint8_t {
  kNone = 0,      // frame used
  kNotArp,        // EtherType is not ARP
  kTruncated,     // shorter than Ethernet + ARP
  kBadHwType,     // hardware type is not Ethernet (1)
  kBadProtoType,  // protocol type is not IPv4 (0x0800)
  kBadAddrLen,    // hardware/protocol lengths are not 6/4
  kBadOp,         // operation is neither request nor reply
  kBadSender,     // sender MAC multicast/zero
  kOwnFrame,      // sender MAC is ours (our own frame looped back)
  kConflict,      // another MAC claims our IPv4 address
  kNotForUs,      // target IP not ours, or unicast to another MAC
  kTableFull,     // could not learn: table full of requests (a request
                  // is still answered, and counted here)
  kCount
};

const char* to_string(ArpDrop d);

struct ArpCounters {
  std::uint64_t rx_frames = 0;       // frames given to on_frame
  std::uint64_t rx_requests = 0;     // valid requests for us (answered)
  std::uint64_t rx_replies = 0;      // valid replies for us
  std::uint64_t rx_gratuitous = 0;   // gratuitous frames that refreshed
  std::uint64_t learned = 0;         // neighbours newly resolved
  std::uint64_t refreshed = 0;       // known neighbours re-confirmed
  std::uint64_t tx_requests = 0;     // broadcast requests (incl. retries)
  std::uint64_t tx_retransmits = 0;  // of which retransmissions
  std::uint64_t tx_probes = 0;       // unicast re-probes of stale entries
  std::uint64_t tx_replies = 0;
  std::uint64_t tx_announcements = 0;
  std::uint64_t resolve_resolved = 0;  // resolve() answers, by status
  std::uint64_t resolve_pending = 0;
  std::uint64_t resolve_failed = 0;
  std::uint64_t entries_failed = 0;  // entries that ran out of retries
  std::array<std::uint64_t, static_cast<std::size_t>(ArpDrop::kCount)> drops{};

  std::uint64_t drop(ArpDrop d) const { return drops[static_cast<std::size_t>(d)]; }
};

inline constexpr counters::FieldList<ArpCounters, 15> kArpCounterFields{{
    {"rx_frames", &ArpCounters::rx_frames, "frames given to on_frame"},
    {"rx_requests", &ArpCounters::rx_requests, "valid requests for us (answered)"},
    {"rx_replies", &ArpCounters::rx_replies, "valid replies for us"},
    {"rx_gratuitous", &ArpCounters::rx_gratuitous, "gratuitous frames that refreshed"},
    {"learned", &ArpCounters::learned, "neighbours newly resolved"},
    {"refreshed", &ArpCounters::refreshed, "known neighbours re-confirmed"},
    {"tx_requests", &ArpCounters::tx_requests, "broadcast requests (incl. retries)"},
    {"tx_retransmits", &ArpCounters::tx_retransmits, "of which retransmissions"},
    {"tx_probes", &ArpCounters::tx_probes, "unicast re-probes of stale entries"},
    {"tx_replies", &ArpCounters::tx_replies, "ARP replies sent"},
    {"tx_announcements", &ArpCounters::tx_announcements, "gratuitous ARP announcements sent"},
    {"resolve_resolved", &ArpCounters::resolve_resolved, "resolve() answers, by status"},
    {"resolve_pending", &ArpCounters::resolve_pending,
     "resolve() answers: pending (a request is out)"},
    {"resolve_failed", &ArpCounters::resolve_failed,
     "resolve() answers: failed (no answer after every retry)"},
    {"entries_failed", &ArpCounters::entries_failed, "entries that ran out of retries"},
}};
static_assert(counters::covers(kArpCounterFields, &ArpCounters::drops));
constexpr const auto& counter_fields(const ArpCounters&) { return kArpCounterFields; }

struct ArpConfig {
  wire::MacAddr mac{};
  wire::Ipv4Addr ip{};
  TimeNs retransmit_time = 1 * kNsPerSec;
  std::uint8_t retries = 2;
  TimeNs failed_hold_time = 3 * kNsPerSec;
  NeighborConfig neighbors{};
};

// Writes a padded ARP frame (Ethernet + ARP + zeros) into `out`.
void build_arp_frame(std::span<std::uint8_t, kArpFrameSize> out, const wire::MacAddr& eth_dst,
                     const wire::MacAddr& eth_src, std::uint16_t op,
                     const wire::MacAddr& sender_mac, wire::Ipv4Addr sender_ip,
                     const wire::MacAddr& target_mac, wire::Ipv4Addr target_ip);

class ArpAgent {
 public:
  explicit ArpAgent(const ArpConfig& cfg);

  // Handles one received frame; emits at most one reply. Returns kNone when
  // the frame was used, else the reason it was ignored (also counted).
  template <FrameSink Sink>
  ArpDrop on_frame(std::span<const std::uint8_t> frame, TimeNs now, Sink& sink) {
    const ArpDrop d = process(frame, now);
    if (tx_ready_) emit(sink);
    return d;
  }

  // The MAC for `ip`, or Pending (a request is out) or Failed. A miss emits
  // a broadcast request; a stale hit may emit a unicast re-probe.
  template <FrameSink Sink>
  Resolution resolve(wire::Ipv4Addr ip, TimeNs now, Sink& sink) {
    const Resolution r = resolve_step(ip, now);
    if (tx_ready_) emit(sink);
    return r;
  }

  // Retransmits due requests, fails exhausted ones, ages the table. Cheap
  // when nothing is due: call it every loop iteration.
  template <FrameSink Sink>
  void on_timer(TimeNs now, Sink& sink) {
    if (now < next_scan_) return;  // the per-iteration case, kept inline
    neighbor_scan(neighbors_, now, scan_interval(), next_scan_, [&](NeighborEntry& n) {
      timer_step(n, now);
      if (tx_ready_) emit(sink);
    });
  }

  // Emits a gratuitous ARP (RFC 5227 announcement: a broadcast request with
  // sender and target IP both ours, target MAC zero).
  template <FrameSink Sink>
  void announce(TimeNs now, Sink& sink) {
    (void)now;
    build_request(wire::MacAddr::broadcast(), cfg_.ip);
    ++counters_.tx_announcements;
    emit(sink);
  }

  // Changes our IPv4 address (0.0.0.0: answer nothing, resolve nothing).
  void set_ip(wire::Ipv4Addr ip) { cfg_.ip = ip; }

  const ArpConfig& config() const { return cfg_; }
  const ArpCounters& counters() const { return counters_; }
  NeighborTable& neighbors() { return neighbors_; }
  const NeighborTable& neighbors() const { return neighbors_; }

 private:
  ArpDrop process(std::span<const std::uint8_t> frame, TimeNs now);
  ArpDrop drop(ArpDrop d) {
    ++counters_.drops[static_cast<std::size_t>(d)];
    return d;
  }
  // Confirms ip -> mac in the table and counts it; false if not stored.
  bool learn(wire::Ipv4Addr ip, const wire::MacAddr& mac, TimeNs now, bool create) {
    return neighbor_learn(neighbors_, ip, mac, now, create, counters_);
  }
  Resolution resolve_step(wire::Ipv4Addr ip, TimeNs now);
  void timer_step(NeighborEntry& n, TimeNs now);
  void build_request(const wire::MacAddr& eth_dst, wire::Ipv4Addr target);
  // neighbor_resolver.h's request: broadcast, or unicast to *mac.
  void request(wire::Ipv4Addr target, const wire::MacAddr* mac) {
    build_request(mac != nullptr ? *mac : wire::MacAddr::broadcast(), target);
  }
  TimeNs scan_interval() const;

  template <FrameSink Sink>
  void emit(Sink& sink) {
    tx_ready_ = false;
    sink.emit(std::span<const std::uint8_t>(tx_.data(), tx_.size()));
  }

  ArpConfig cfg_;
  NeighborTable neighbors_;
  ArpCounters counters_;
  // The frame being built; emitted before the next one is built.
  std::array<std::uint8_t, kArpFrameSize> tx_{};
  bool tx_ready_ = false;
  TimeNs next_scan_ = 0;
};

}  // namespace uroce::port
