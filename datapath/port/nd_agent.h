// IPv6 neighbour discovery (RFC 4861), the part RoCEv2 over IPv6 needs on
// one link: ARP's counterpart (arp_agent.h), for our link-local address and
// an optional global one.
//
// An I/O-free state machine like ArpAgent: received frames and `now` in, the
// frames it wants sent out through a FrameSink, called inline. Every frame
// it emits is Ethernet + IPv6 (hop limit 255) + NS or NA + one link-layer
// address option: kNdFrameSize = 86 bytes.
//
// Receive rules (a frame not used is counted by its NdDrop reason):
// - a solicitation for one of our addresses, sent to that address or to its
//   solicited-node multicast address (ff02::1:ffXX:XXXX), is answered with a
//   solicited advertisement (S and O set, our MAC in a target link-layer
//   address option) unicast to the asker, whose source link-layer option
//   teaches us its MAC; a duplicate address detection probe (source ::) is
//   answered to all-nodes ff02::1 without S and teaches nothing;
// - an advertisement for an address we have an entry for (an outstanding
//   solicitation included) confirms it with the target link-layer option's
//   MAC, or the frame's source MAC without one; advertisements for unknown
//   addresses are ignored (RFC 4861 7.2.5);
// - hop limit other than 255, a bad ICMPv6 checksum, code other than 0, a
//   zero-length option: invalid (RFC 4861 7.1), dropped.
//
// Resolver: as ArpAgent's (retransmit_time, retries, failed_hold_time, stale
// entries re-probed by unicast), with multicast solicitations to the
// target's solicited-node address. Router discovery, redirects, DAD of our
// own addresses and prefixes are out of scope: peers are on-link.
//
// Not thread-safe: the port's lcore owns the agent.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "datapath/base/counter_fields.h"
#include "datapath/base/time.h"
#include "datapath/port/arp_agent.h"  // FrameSink
#include "datapath/port/neighbor_resolver.h"
#include "datapath/port/neighbor_table.h"
#include "datapath/wire/addr.h"

namespace uroce::port {

// Ethernet 14 + IPv6 40 + NS/NA 24 + link-layer address option 8.
inline constexpr std::size_t kNdFrameSize = 86;

enum class NdDrop : std::uint8_t {
  kNone = 0,     // frame used
  kNotNd,        // not Ethernet/IPv6/ICMPv6 NS or NA
  kTruncated,    // shorter than the headers or the IPv6 payload length says
  kBadHopLimit,  // hop limit != 255
  kBadChecksum,  // ICMPv6 checksum wrong
  kBadCode,      // ICMPv6 code != 0
  kBadOption,    // an option of length 0 or past the message
  kBadSender,    // source MAC multicast or zero
  kOwnFrame,     // our own MAC (our frame looped back)
  kConflict,     // another MAC advertises one of our addresses
  kNotForUs,     // target not ours (NS), not a neighbour we track (NA)
  kTableFull,    // could not learn (the solicitation is still answered)
  kCount
};
const char* to_string(NdDrop d);

struct NdCounters {
  std::uint64_t rx_frames = 0;       // frames given to on_frame
  std::uint64_t rx_solicits = 0;     // solicitations for us (answered)
  std::uint64_t rx_dad = 0;          // of which duplicate address probes
  std::uint64_t rx_adverts = 0;      // advertisements used
  std::uint64_t learned = 0;         // neighbours newly resolved
  std::uint64_t refreshed = 0;       // known neighbours re-confirmed
  std::uint64_t tx_requests = 0;     // multicast solicitations (incl. retries)
  std::uint64_t tx_retransmits = 0;  // of which retransmissions
  std::uint64_t tx_probes = 0;       // unicast re-probes of stale entries
  std::uint64_t tx_adverts = 0;
  std::uint64_t resolve_resolved = 0;  // resolve() answers, by status
  std::uint64_t resolve_pending = 0;
  std::uint64_t resolve_failed = 0;
  std::uint64_t entries_failed = 0;
  std::array<std::uint64_t, static_cast<std::size_t>(NdDrop::kCount)> drops{};
  std::uint64_t drop(NdDrop d) const { return drops[static_cast<std::size_t>(d)]; }
};

inline constexpr counters::FieldList<NdCounters, 14> kNdCounterFields{{
    {"rx_frames", &NdCounters::rx_frames, "frames given to on_frame"},
    {"rx_solicits", &NdCounters::rx_solicits, "solicitations for us (answered)"},
    {"rx_dad", &NdCounters::rx_dad, "of which duplicate address probes"},
    {"rx_adverts", &NdCounters::rx_adverts, "advertisements used"},
    {"learned", &NdCounters::learned, "neighbours newly resolved"},
    {"refreshed", &NdCounters::refreshed, "known neighbours re-confirmed"},
    {"tx_requests", &NdCounters::tx_requests, "multicast solicitations (incl. retries)"},
    {"tx_retransmits", &NdCounters::tx_retransmits, "of which retransmissions"},
    {"tx_probes", &NdCounters::tx_probes, "unicast re-probes of stale entries"},
    {"tx_adverts", &NdCounters::tx_adverts, "neighbour advertisements sent"},
    {"resolve_resolved", &NdCounters::resolve_resolved, "resolve() answers, by status"},
    {"resolve_pending", &NdCounters::resolve_pending,
     "resolve() answers: pending (a solicitation is out)"},
    {"resolve_failed", &NdCounters::resolve_failed,
     "resolve() answers: failed (no answer after every retry)"},
    {"entries_failed", &NdCounters::entries_failed, "entries that ran out of retries"},
}};
static_assert(counters::covers(kNdCounterFields, &NdCounters::drops));
constexpr const auto& counter_fields(const NdCounters&) { return kNdCounterFields; }

struct NdConfig {
  wire::MacAddr mac{};
  // Our addresses: the link-local one (fe80:: + EUI-64 of the MAC, GID 0)
  // and a global one (all zero: none).
  wire::Ipv6Addr link_local{};
  wire::Ipv6Addr global{};
  TimeNs retransmit_time = 1 * kNsPerSec;
  std::uint8_t retries = 2;
  TimeNs failed_hold_time = 3 * kNsPerSec;
  NeighborConfig neighbors{};
};

// Writes one NS or NA frame into `out`: Ethernet, IPv6 (hop limit 255, next
// header 58), the message with `flags`, one link-layer address option of
// `opt_type` carrying `eth_src`, and the ICMPv6 checksum.
void build_nd_frame(std::span<std::uint8_t, kNdFrameSize> out, const wire::MacAddr& eth_dst,
                    const wire::MacAddr& eth_src, const wire::Ipv6Addr& ip_src,
                    const wire::Ipv6Addr& ip_dst, std::uint8_t type, std::uint32_t flags,
                    const wire::Ipv6Addr& target, std::uint8_t opt_type);

class NdAgent {
 public:
  explicit NdAgent(const NdConfig& cfg);

  // Handles one received frame; emits at most one advertisement.
  template <FrameSink Sink>
  NdDrop on_frame(std::span<const std::uint8_t> frame, TimeNs now, Sink& sink) {
    const NdDrop d = process(frame, now);
    if (tx_ready_) emit(sink);
    return d;
  }
  // The MAC for `ip`, or Pending (a solicitation is out) or Failed. A miss
  // emits a multicast solicitation; a stale hit may emit a unicast probe.
  template <FrameSink Sink>
  Resolution resolve(const wire::Ipv6Addr& ip, TimeNs now, Sink& sink) {
    const Resolution r = resolve_step(ip, now);
    if (tx_ready_) emit(sink);
    return r;
  }
  // Retransmits due solicitations, fails exhausted ones, ages the table.
  // Cheap when nothing is due: call it every loop iteration.
  template <FrameSink Sink>
  void on_timer(TimeNs now, Sink& sink) {
    if (now < next_scan_) return;  // the per-iteration case, kept inline
    neighbor_scan(neighbors_, now, scan_interval(), next_scan_, [&](Neighbor6Entry& n) {
      timer_step(n, now);
      if (tx_ready_) emit(sink);
    });
  }

  // True for our link-local or global address.
  bool is_ours(const wire::Ipv6Addr& a) const {
    return a == cfg_.link_local || (!cfg_.global.is_zero() && a == cfg_.global);
  }
  const NdConfig& config() const { return cfg_; }
  const NdCounters& counters() const { return counters_; }
  Neighbor6Table& neighbors() { return neighbors_; }
  const Neighbor6Table& neighbors() const { return neighbors_; }

 private:
  NdDrop process(std::span<const std::uint8_t> frame, TimeNs now);
  NdDrop drop(NdDrop d) {
    ++counters_.drops[static_cast<std::size_t>(d)];
    return d;
  }
  bool learn(const wire::Ipv6Addr& ip, const wire::MacAddr& mac, TimeNs now, bool create) {
    return neighbor_learn(neighbors_, ip, mac, now, create, counters_);
  }
  Resolution resolve_step(const wire::Ipv6Addr& ip, TimeNs now);
  void timer_step(Neighbor6Entry& n, TimeNs now);
  // A solicitation for `target`: multicast to its solicited-node address
  // when `eth_dst` is null, else unicast (a re-probe).
  void build_solicit(const wire::Ipv6Addr& target, const wire::MacAddr* eth_dst);
  // The source address for talking to `peer`: the global one for a global
  // peer when we have one, else the link-local one.
  const wire::Ipv6Addr& source_for(const wire::Ipv6Addr& peer) const;
  TimeNs scan_interval() const;

  template <FrameSink Sink>
  void emit(Sink& sink) {
    tx_ready_ = false;
    sink.emit(std::span<const std::uint8_t>(tx_.data(), tx_.size()));
  }

  NdConfig cfg_;
  Neighbor6Table neighbors_;
  NdCounters counters_;
  std::array<std::uint8_t, kNdFrameSize> tx_{};
  bool tx_ready_ = false;
  TimeNs next_scan_ = 0;
};

}  // namespace uroce::port
