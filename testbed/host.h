// A testbed host: one port, sources that queue packets on it, and a sink.
// Built from the endpoint pieces of pfc/:
//   TX   per-priority FIFOs (bounded: a source that finds its FIFO full
//        skips the packet, counted as refused), PFC frames first, then
//        priorities 7..0, each gated by a PauseGate that honours the PFC
//        frames the switch sends (malformed ones counted by the codec).
//        With tx_fifo, one FIFO (bounded likewise) in arrival order: its
//        head waits while its priority is paused, and all behind it.
//   RX   with rx_bps = 0 every packet is consumed on arrival. With a finite
//        rx_bps the host is a slow receiver: packets wait in a receive
//        queue served at rx_bps, charged to an IngressAccounting that
//        pauses the switch when the queue passes its dynamic threshold.
//   TTL  every consumed packet goes through a TtlMonitor (flow index as
//        QPN, sequence as PSN): own packets, replays with a lower TTL and
//        TTL outliers, the endpoint's view of a loop.
// Events (loop signals) are kept, the first kMaxEvents of them.
//
// A constant-rate host is only this; a host that runs the real engine has
// this port plus an EngineHost (engine_host.h) whose frames the simulator
// offers to it as records.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "datapath/base/time.h"
#include "pfc/ingress_accounting.h"
#include "pfc/pause_gate.h"
#include "pfc/ttl_monitor.h"
#include "testbed/link.h"
#include "testbed/switch/packet_fifo.h"
#include "testbed/switch/switch_model.h"
#include "testbed/switch/switch_packet.h"

namespace uroce::testbed {

struct HostConfig {
  std::uint64_t link_bps = 40'000'000'000ull;
  wire::MacAddr mac{};
  std::uint8_t pfc_enable = 0x08;
  std::uint16_t max_quanta = 0xffff;
  std::uint64_t rx_bps = 0;    // 0: consume on arrival
  pfc::IngressConfig ingress;  // used with a finite rx_bps
  std::uint32_t tx_queue_packets = 64;
  // One FIFO for every data frame instead of one per priority (the
  // scenario's `tx_queue = "fifo"`): the queue of a memif or af_packet ring.
  bool tx_fifo = false;
  pfc::TtlMonitorConfig ttl;
};

struct HostCounters {
  std::uint64_t tx_packets = 0;
  std::uint64_t tx_bytes = 0;
  std::uint64_t tx_pfc_frames = 0;
  std::uint64_t tx_refused = 0;  // a source found its priority's FIFO full
  std::uint64_t rx_packets = 0;  // consumed
  std::uint64_t rx_bytes = 0;
  std::uint64_t rx_pfc_frames = 0;
  std::uint64_t rx_dropped = 0;  // refused by the receive buffer
};

class Host {
 public:
  static constexpr std::size_t kMaxEvents = 64;

  // "" or the first problem with `cfg` (the ingress configuration's error
  // name when rx_bps is finite).
  static std::string check(const HostConfig& cfg);

  // Precondition: check(cfg) is "".
  explicit Host(const HostConfig& cfg);

  // A source's packet for the TX FIFO of its priority; false if full.
  bool offer(const SwitchPacket& p);
  // The port is free: what to send now (same shape as the switch's).
  SwitchTx dequeue(TimeNs now);
  // A MAC Control frame from the switch.
  wire::PfcParseError on_control(std::span<const std::uint8_t> frame, TimeNs now);
  // A MAC Control frame someone else built (a real-engine host's PFC): sent
  // ahead of data, never paused. False (not queued) if it is longer than a
  // ControlFrame holds.
  bool offer_control(std::span<const std::uint8_t> frame);

  enum class Rx : std::uint8_t { kConsumed, kQueued, kDropped };
  // A data packet arrived. kConsumed: done (unlimited receiver). kQueued:
  // call start_rx(). kDropped: the receive buffer refused it.
  Rx on_packet(const SwitchPacket& p, TimeNs now);
  // If the receiver is idle and has a packet, starts it and returns when
  // it will be done (then call finish_rx()); else kNoDeadline.
  TimeNs start_rx(TimeNs now);
  // Completes the packet started by start_rx(); returns it.
  SwitchPacket finish_rx(TimeNs now);
  // Counts a consumed packet and checks its TTL.
  void consumed(const SwitchPacket& p, const pfc::RxTtlInfo& ttl, TimeNs now);

  // Ingress-accounting refreshes (finite rx_bps only).
  void poll(TimeNs now);
  TimeNs next_deadline() const;

  // True once after something that may let the port send.
  bool take_kick() {
    const bool k = kick_;
    kick_ = false;
    return k;
  }

  const pfc::PauseGate& gate() const { return gate_; }
  const pfc::IngressAccounting* ingress() const { return rx_limited() ? &ingress_ : nullptr; }
  const pfc::TtlMonitor& ttl() const { return ttl_; }
  const std::vector<pfc::PfcEvent>& events() const { return events_; }
  std::uint64_t events_dropped() const { return events_dropped_; }
  std::size_t tx_queued() const;
  std::size_t rx_queued() const { return rxq_.size(); }
  const HostCounters& counters() const { return c_; }
  const HostConfig& config() const { return cfg_; }

 private:
  struct CtrlSink {
    Host* h;
    std::span<std::uint8_t> tx_alloc(std::size_t n) {
      if (n > h->scratch_.bytes.size()) return {};
      return {h->scratch_.bytes.data(), n};
    }
    void tx_commit(std::size_t n) {
      h->scratch_.len = static_cast<std::uint8_t>(n);
      h->ctrl_.push(h->scratch_);
      h->kick_ = true;
    }
  };
  struct EventLog {
    Host* h;
    void event(const pfc::PfcEvent& e) {
      if (h->events_.size() < kMaxEvents) {
        h->events_.push_back(e);
      } else {
        ++h->events_dropped_;
      }
    }
  };
  bool rx_limited() const { return cfg_.rx_bps != 0; }

  HostConfig cfg_;
  pfc::PauseGate gate_;
  pfc::IngressAccounting ingress_;
  pfc::TtlMonitor ttl_;
  LinkDir rx_server_;  // the receive processor, as a zero-delay "link"
  std::array<PacketFifo<SwitchPacket>, pfc::kNumPriorities> txq_;
  PacketFifo<ControlFrame> ctrl_;
  PacketFifo<SwitchPacket> rxq_;
  bool rx_busy_ = false;
  ControlFrame scratch_;
  bool kick_ = false;
  std::vector<pfc::PfcEvent> events_;
  std::uint64_t events_dropped_ = 0;
  HostCounters c_;
};

}  // namespace uroce::testbed
