// A software model of an output-queued Ethernet/IP switch with PFC, for
// the testbed. I/O-free in the house style: the caller hands it packets,
// PFC frames and `now`, asks it what a free port should send next, and
// polls it at next_deadline(); it never reads a clock.
//
// Pipeline of a data packet arriving on in_port (each drop counted by
// reason, packets and bytes):
//   route   static table destination -> a group of egress ports
//           (kDropNoRoute); a group of several is ECMP: the packet's
//           entropy, salted per switch, picks the member (ecmp.h), or with
//           adaptive routing the member whose queue for the packet's
//           priority holds the fewest bytes (ties: from the hashed member
//           on); the egress may be the ingress port (a two-switch loop);
//   TTL     received TTL <= 1 is dropped (kDropTtlExpired), else
//           decremented, as an IPv4 router does;
//   watchdog  an egress queue the PFC watchdog has stormed with action
//           drop takes nothing (kDropWatchdog);
//   buffer  SharedBuffer admission charged to (in_port, prio)
//           (kDropLossyFull, kDropHeadroomFull); may emit PFC frames;
//   ECN     optional RED marking on the egress queue's bytes (ECT only);
//   enqueue the egress FIFO (out_port, prio).
// A port's transmit order: PFC frames first (they pre-empt queued data,
// not the frame on the wire), then priorities 7..0 strictly, skipping
// those the neighbour has paused. Leaving releases the buffer charge.
//
// Received PFC frames go through a PauseGate per port (datapath/wire codec:
// malformed frames, pauses for lossy priorities and quanta above
// max_quanta are counted there and never stop anything else). With the
// watchdog on, a StormWatchdog per port polices those gates: a priority
// paused continuously for the detection time is stormed; action drop
// flushes its egress queue and drops what arrives for it until
// restoration (all counted per queue).
//
// Every state change that may let a port send sets its bit in the kick
// mask; the caller drains it (take_kicks) and offers the idle ports a
// transmit opportunity.
//
// Single-threaded. Queues grow on demand (bounded by the buffer); nothing
// else allocates after construction.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "datapath/base/rng.h"
#include "datapath/base/time.h"
#include "pfc/pause_gate.h"
#include "pfc/sinks.h"
#include "pfc/storm_watchdog.h"
#include "testbed/switch/ecmp.h"
#include "testbed/switch/packet_fifo.h"
#include "testbed/switch/shared_buffer.h"
#include "testbed/switch/switch_packet.h"

namespace uroce::testbed {

// RED-style ECN marking on an egress queue's bytes q (before the packet):
// q <= kmin: never; q >= kmax: always; between: probability rising
// linearly from 0 to pmax_ppm / 1e6.
struct EcnConfig {
  std::uint8_t enable = 0;  // bit p: mark ECN-capable packets of priority p
  std::uint64_t kmin_bytes = 40'000;
  std::uint64_t kmax_bytes = 160'000;
  std::uint32_t pmax_ppm = 200'000;
};

struct SwitchConfig {
  SharedBufferConfig buffer;
  std::vector<SharedBufferPort> ports;
  std::uint16_t max_quanta = 0xffff;  // PauseGate clamp for received pauses
  bool watchdog = false;
  pfc::StormWatchdogConfig watchdog_cfg;
  EcnConfig ecn;
  std::uint16_t num_destinations = 0;  // size of the route table
  std::uint64_t seed = 1;              // ECN marking draws and the ECMP salt
  // Per-packet adaptive routing in ECMP groups (least-queued member)
  // instead of hashing each flow to one member.
  bool adaptive = false;
};

enum class SwitchConfigError : std::uint8_t {
  kOk = 0,
  kBadBuffer,  // SharedBuffer::check failed: ask it for the detail
  kZeroMaxQuanta,
  kBadWatchdog,        // StormWatchdog::check failed
  kBadEcnThresholds,   // kmin > kmax
  kBadEcnProbability,  // pmax_ppm > 1e6
};
std::string_view switch_config_error_name(SwitchConfigError e);

enum class SwitchRx : std::uint8_t {
  kForwarded = 0,
  kDropBadInput,  // ingress port or priority out of range (caller bug)
  kDropNoRoute,
  kDropTtlExpired,
  kDropWatchdog,
  kDropLossyFull,
  kDropHeadroomFull,
};
inline constexpr std::size_t kNumSwitchRx = 7;
std::string_view switch_rx_name(SwitchRx r);

struct SwitchQueueCounters {
  std::uint64_t enqueued = 0;
  std::uint64_t sent_packets = 0;
  std::uint64_t sent_bytes = 0;
  std::uint64_t ecn_marked = 0;
  std::uint64_t peak_bytes = 0;  // the most bytes queued at once
  // PFC watchdog with action drop: queued packets flushed at detection
  // (or found at a dequeue while stormed), and arrivals refused.
  std::uint64_t wd_flushed_packets = 0;
  std::uint64_t wd_flushed_bytes = 0;
  std::uint64_t wd_refused_packets = 0;
  std::uint64_t wd_refused_bytes = 0;
};

struct SwitchCounters {
  std::uint64_t rx_packets = 0;
  std::uint64_t rx_bytes = 0;
  std::uint64_t pfc_rx = 0;           // control frames handed to on_control()
  std::uint64_t pfc_rx_bad_port = 0;  // of those, on a port out of range
  std::uint64_t pfc_tx = 0;           // PFC frames queued by the buffer
  // Indexed by SwitchRx: [kForwarded] counts forwarded packets.
  std::array<std::uint64_t, kNumSwitchRx> rx_packets_by{};
  std::array<std::uint64_t, kNumSwitchRx> rx_bytes_by{};
};

// A PFC frame waiting for a port, or being handed to it.
struct ControlFrame {
  std::array<std::uint8_t, wire::kPfcFrameSize> bytes{};
  std::uint8_t len = 0;
};

struct SwitchTx {
  enum class Kind : std::uint8_t { kNone = 0, kControl, kData };
  Kind kind = Kind::kNone;
  SwitchPacket pkt;
  ControlFrame ctrl;
  // kNone: the earliest instant a paused, non-empty queue may go
  // (kNoDeadline when there is nothing waiting).
  TimeNs wake_at = pfc::kNoDeadline;
};

// Where storm transitions go: the event plus the port it happened on.
template <class T>
concept SwitchEventSink = requires(T t, std::uint16_t port, const pfc::PfcEvent& e) {
  { t.event(port, e) } -> std::same_as<void>;
};

class SwitchModel {
 public:
  static SwitchConfigError check(const SwitchConfig& cfg);

  // Precondition: check(cfg) == kOk.
  explicit SwitchModel(const SwitchConfig& cfg);

  // Routes: destination -> egress port. False if either is out of range.
  bool set_route(std::uint16_t dst, std::uint16_t port);
  // Destination -> an ECMP group of egress ports (in order; the order is
  // part of the hash's result). False if `dst` or a port is out of range,
  // or the group is empty or has more than kMaxRoutePorts ports.
  bool set_route_group(std::uint16_t dst, std::span<const std::uint16_t> ports);
  void clear_route(std::uint16_t dst);
  // The first egress port of `dst`'s group, or -1.
  int route(std::uint16_t dst) const;
  // `dst`'s group (empty: no route).
  std::span<const std::uint16_t> route_group(std::uint16_t dst) const;
  // The port a packet for p.dst leaves by, as on_packet() would pick it
  // now, or -1 without a route.
  int egress_for(const SwitchPacket& p) const;

  // A data packet received on `in_port`.
  SwitchRx on_packet(std::uint16_t in_port, SwitchPacket p, TimeNs now);
  // A MAC Control frame received on `port`; returns the codec's verdict.
  // A port out of range is counted (pfc_rx_bad_port) and reported as
  // kTruncated: nothing of the frame was read.
  wire::PfcParseError on_control(std::uint16_t port, std::span<const std::uint8_t> frame,
                                 TimeNs now);

  // `port`'s wire is free: what to send now.
  SwitchTx dequeue(std::uint16_t port, TimeNs now);

  // Buffer refreshes and the watchdog; call at next_deadline().
  template <SwitchEventSink E>
  void poll(TimeNs now, E& events) {
    CtrlSink sink{this};
    buffer_.poll(now, sink);
    if (!cfg_.watchdog) return;
    for (std::uint16_t port = 0; port < ports_.size(); ++port) {
      Port& pt = ports_[port];
      const std::uint8_t before = stormed_mask(pt);
      PortEvents<E> pe{events, port};
      pt.watchdog.poll(now, pt.gate, pe);
      const std::uint8_t after = stormed_mask(pt);
      if (before != after) {
        on_storm_change(port, static_cast<std::uint8_t>(after & ~before), now);
      }
    }
  }
  TimeNs next_deadline(TimeNs now) const;

  // Ports that may have something to send since the last call.
  std::uint64_t take_kicks() {
    const std::uint64_t k = kicks_;
    kicks_ = 0;
    return k;
  }

  // Introspection for the deadlock detector, reports and time series.
  std::size_t num_ports() const { return ports_.size(); }
  bool paused(std::uint16_t port, std::uint8_t prio, TimeNs now) const;
  bool stormed(std::uint16_t port, std::uint8_t prio) const {
    return ports_[port].watchdog.stormed(prio);
  }
  std::size_t egress_packets(std::uint16_t port, std::uint8_t prio) const {
    return ports_[port].egress[prio & 7].size();
  }
  std::uint64_t egress_bytes(std::uint16_t port, std::uint8_t prio) const {
    return ports_[port].egress_bytes[prio & 7];
  }
  // Last instant the queue moved: a dequeue, or becoming non-empty.
  TimeNs progress_at(std::uint16_t port, std::uint8_t prio) const {
    return ports_[port].progress_at[prio & 7];
  }
  // Packets that arrived on `in_port` and now wait in (out_port, prio).
  std::uint32_t held(std::uint16_t in_port, std::uint16_t out_port, std::uint8_t prio) const {
    return held_[held_index(in_port, out_port, prio)];
  }
  const SharedBuffer& buffer() const { return buffer_; }
  const pfc::PauseGate& gate(std::uint16_t port) const { return ports_[port].gate; }
  const pfc::StormWatchdog& watchdog(std::uint16_t port) const { return ports_[port].watchdog; }
  const SwitchQueueCounters& counters(std::uint16_t port, std::uint8_t prio) const {
    return ports_[port].c[prio & 7];
  }
  const SwitchCounters& counters() const { return c_; }
  const SwitchConfig& config() const { return cfg_; }

 private:
  struct Port {
    Port(const pfc::PauseGateConfig& g, const pfc::StormWatchdogConfig& w) : gate(g), watchdog(w) {}
    pfc::PauseGate gate;
    pfc::StormWatchdog watchdog;
    PacketFifo<ControlFrame> ctrl;
    std::array<PacketFifo<SwitchPacket>, pfc::kNumPriorities> egress;
    std::array<std::uint64_t, pfc::kNumPriorities> egress_bytes{};
    std::array<TimeNs, pfc::kNumPriorities> progress_at{};
    std::array<SwitchQueueCounters, pfc::kNumPriorities> c{};
  };
  // The buffer's PFC frames go to the port's control queue. Made on the
  // stack where needed, so the model stays movable.
  struct CtrlSink {
    SwitchModel* sw;
    std::span<std::uint8_t> tx_alloc(std::uint16_t, std::size_t n) {
      if (n > sw->scratch_.bytes.size()) return {};
      return {sw->scratch_.bytes.data(), n};
    }
    void tx_commit(std::uint16_t port, std::size_t n) {
      sw->scratch_.len = static_cast<std::uint8_t>(n);
      sw->ports_[port].ctrl.push(sw->scratch_);
      ++sw->c_.pfc_tx;
      sw->kicks_ |= std::uint64_t{1} << port;
    }
  };
  template <class E>
  struct PortEvents {
    E& sink;
    std::uint16_t port;
    void event(const pfc::PfcEvent& e) { sink.event(port, e); }
  };

  static std::uint8_t stormed_mask(const Port& pt);
  std::size_t held_index(std::uint16_t in, std::uint16_t out, std::uint8_t prio) const {
    return (std::size_t{in} * ports_.size() + out) * pfc::kNumPriorities + (prio & 7);
  }
  SwitchRx count_rx(SwitchRx r, std::uint32_t bytes);
  bool ecn_mark(std::uint16_t port, std::uint8_t prio);
  // Drops every packet queued on (port, prio), releasing their buffer.
  void flush(std::uint16_t port, std::uint8_t prio, TimeNs now);
  void on_storm_change(std::uint16_t port, std::uint8_t newly_stormed, TimeNs now);
  // Removes the head of (port, prio) and releases its buffer charge.
  SwitchPacket take(std::uint16_t port, std::uint8_t prio, TimeNs now);

  struct RouteGroup {
    std::array<std::uint16_t, kMaxRoutePorts> ports{};
    std::uint8_t n = 0;
  };

  SwitchConfig cfg_;
  SharedBuffer buffer_;
  std::vector<Port> ports_;
  std::vector<RouteGroup> routes_;
  std::uint64_t salt_ = 0;
  std::vector<std::uint32_t> held_;  // [in][out][prio]
  SeededRng rng_;
  ControlFrame scratch_;
  std::uint64_t kicks_ = 0;
  SwitchCounters c_;
};

}  // namespace uroce::testbed
