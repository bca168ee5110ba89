// The testbed's discrete-event simulation: hosts and switch models joined
// by links, driven by one EventQueue on a virtual clock.
//
// What happens to a frame: its sender's port is free -> the sender
// (SwitchModel / Host) picks it -> LinkDir serialises it (kTxDone when the
// last bit has left, which frees the port) -> kArrival after the
// propagation delay -> the receiver's on_packet / on_control. Sources tick
// at their exact constant rate (fractions of a ns carried over) and offer
// packets to their host. Switch and host timers (PFC refreshes, the
// watchdog, pause expiry) are events at the instant the model asks for.
// Route changes, raw PFC injections, time-series samples and deadlock
// checks are events too.
//
// Determinism: the only inputs are the scenario and the seed; every
// random draw comes from a SeededRng derived from the seed per flow and per
// switch; events at the same ns run in scheduling order; nothing iterates
// a hash container. So a run is reproducible byte for byte.
//
// Single-threaded; one Simulator per run (sweeps run many in parallel,
// each with its own).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "datapath/base/rng.h"
#include "datapath/base/time.h"
#include "pfc/priority_map.h"
#include "testbed/event_queue.h"
#include "testbed/frame_record.h"
#include "testbed/frame_store.h"
#include "testbed/host.h"
#include "testbed/link.h"
#include "testbed/scenario.h"
#include "testbed/switch/deadlock_detector.h"
#include "testbed/switch/switch_model.h"

namespace uroce::testbed {

class Recorder;
class PcapTap;
class EngineHost;
struct EngineHostConfig;
class RcFlow;
class DcFlow;
class MessageWorkload;

// What happened to the frames real-engine hosts sent (frame_record.h).
struct EngineFrameCounters {
  std::uint64_t tx_records = 0;  // frames that became records
  std::array<std::uint64_t, static_cast<std::size_t>(FrameRecordError::kCount)> tx_unroutable{};
  std::uint64_t tx_refused = 0;        // the host's TX queue was full: lost
  std::uint64_t rx_frames = 0;         // handed to the destination's engine
  std::uint64_t switch_dropped = 0;    // refused by a switch on arrival
  std::uint64_t link_lost = 0;         // lost on a link (its loss_rate)
  std::uint64_t misdelivered = 0;      // reached another host (a bad route)
  std::uint64_t to_constant_host = 0;  // reached a host without an engine
  // With the engine's own PFC (a host's `pfc` key): PFC frames the engines
  // sent to their switches, and switch PFC frames handed to engines.
  std::uint64_t tx_pfc = 0;
  std::uint64_t tx_pfc_refused = 0;  // longer than a ControlFrame: lost
  std::uint64_t rx_pfc = 0;
};

struct FlowStats {
  std::uint64_t offered = 0;  // packets the source generated
  std::uint64_t refused = 0;  // of those, the host's FIFO was full
  std::uint64_t rx_packets = 0;
  std::uint64_t rx_bytes = 0;
  std::uint64_t ce_packets = 0;
  TimeNs latency_sum_ns = 0;
  TimeNs latency_max_ns = 0;
  std::uint8_t ttl_min = 255;
  std::uint8_t ttl_max = 0;
  TimeNs first_rx = kNever;
  TimeNs last_rx = 0;
};

struct StormRecord {
  std::uint32_t sw = 0;
  std::uint16_t port = 0;
  std::uint8_t prio = 0;
  TimeNs paused_since = 0;  // start of the pause that was detected
  TimeNs detected_at = 0;
  TimeNs restored_at = 0;
  bool restored = false;
};

struct InjectRecord {
  TimeNs sent_at = kNever;
  TimeNs arrived_at = kNever;
  bool delivered = false;
  wire::PfcParseError verdict = wire::PfcParseError::kOk;
};

// kWorkloadDone: the [workload]'s measured messages were all received.
enum class StopReason : std::uint8_t { kDuration = 0, kDeadlock, kWorkloadDone };

// Per-host receive-side anomalies the Host model does not count itself.
struct HostRxExtra {
  std::uint64_t misdelivered = 0;  // data for another host (a bad route)
};

class Simulator {
 public:
  // "" or the first host/switch configuration problem. Precondition:
  // resolve(sc, topo) returned "".
  static std::string check(const Scenario& sc, const Topology& topo);

  // Preconditions: resolve() and check() returned "". `seed` replaces
  // sc.seed (the CLI's --seed).
  Simulator(const Scenario& sc, const Topology& topo, std::uint64_t seed);
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // Optional outputs; must outlive run().
  void attach_recorder(Recorder* r) { recorder_ = r; }
  void attach_pcap(PcapTap* t) { pcap_ = t; }

  // Runs to the end of the scenario (or the first deadlock with
  // deadlock.stop).
  void run();

  TimeNs now() const { return now_; }
  TimeNs end_ns() const { return end_ns_; }
  StopReason stop_reason() const { return stop_; }
  std::uint64_t events_processed() const { return events_; }
  std::uint64_t seed() const { return seed_; }
  const Scenario& scenario() const { return sc_; }
  const Topology& topology() const { return topo_; }
  const std::vector<SwitchModel>& switches() const { return switches_; }
  const std::vector<Host>& hosts() const { return hosts_; }
  const std::vector<HostRxExtra>& host_extra() const { return host_extra_; }
  // Direction d = 2 x link + (0: a -> b, 1: b -> a).
  const std::vector<LinkDir>& link_dirs() const { return dirs_; }
  const std::vector<FlowStats>& flow_stats() const { return flow_stats_; }
  const std::vector<StormRecord>& storms() const { return storms_; }
  const std::vector<InjectRecord>& injections() const { return injects_; }
  const std::vector<TimeNs>& route_changes_applied() const { return route_applied_; }
  // Per [[link_change]]: when it was applied, and when the routes followed
  // it (kNever: not (yet), or [routing] reconverge_us unset).
  const std::vector<TimeNs>& link_changes_applied() const { return link_applied_; }
  const std::vector<TimeNs>& reconverged() const { return reconverged_; }
  const DeadlockDetector& deadlocks() const { return detector_; }
  // Earliest instant any flow may start (the time-to-deadlock origin).
  TimeNs first_flow_start() const;
  // Real-engine hosts by host index (null for constant-rate hosts), the
  // RC flows, and the bytes of engine frames in flight.
  const std::vector<std::unique_ptr<EngineHost>>& engines() const { return engines_; }
  const std::vector<std::unique_ptr<RcFlow>>& rc_flows() const { return rc_flows_; }
  // 0 or the errno the flow's QP setup failed with.
  // Per [[rc_flow]]: 0 (set up), an errno of its setup, or
  // kRcFlowDisabled (`enabled = false`: no QPs, never started).
  static constexpr int kRcFlowDisabled = -1;
  const std::vector<int>& rc_flow_setup() const { return rc_setup_; }
  // The [[dc_flow]]s (null when disabled) and, per flow, 0, an errno of
  // its setup or kRcFlowDisabled.
  const std::vector<std::unique_ptr<DcFlow>>& dc_flows() const { return dc_flows_; }
  const std::vector<int>& dc_flow_setup() const { return dc_setup_; }
  // The [workload] (null without one) and 0 or the errno its setup failed
  // with (then no message is sent).
  const MessageWorkload* workload() const { return workload_.get(); }
  int workload_setup() const { return workload_setup_; }
  const FrameStore& frame_store() const { return frames_; }
  const EngineFrameCounters& engine_frames() const { return engine_ctr_; }

 private:
  struct InFlight {
    bool control = false;
    std::int32_t inject = -1;  // index of the injection it carries, or -1
    SwitchPacket pkt;
    ControlFrame ctrl;
  };
  struct FlowState {
    SeededRng rng{1};
    std::uint64_t carry = 0;
    std::uint64_t seq = 0;
  };
  struct StormLog {
    Simulator* sim;
    std::uint32_t sw;
    void event(std::uint16_t port, const pfc::PfcEvent& e);
  };
  struct Injected {
    ControlFrame frame;
    std::int32_t index = -1;
  };

  std::uint32_t out_dir(std::uint32_t node, std::uint16_t port) const {
    const auto& pi = topo_.ports[node][port];
    return 2 * pi.link + pi.dir;
  }
  PortEnd receiver(std::uint32_t dir) const { return topo_.links[dir / 2][1 - dir % 2]; }
  PortEnd sender(std::uint32_t dir) const { return topo_.links[dir / 2][dir % 2]; }

  void dispatch(const Event& ev);
  void try_send(std::uint32_t node, std::uint16_t port);
  void service_switch(std::uint32_t sw);
  void schedule_switch_poll(std::uint32_t sw, bool force);
  void schedule_host_poll(std::uint32_t h);
  void kick_host(std::uint32_t h);
  void deliver(std::uint32_t dir, std::uint32_t slot);
  void deliver_data(const PortEnd& to, const SwitchPacket& p);
  void consume(std::uint32_t h, const SwitchPacket& p);
  void source_tick(std::uint32_t flow);
  void deadlock_check();
  void inject(std::uint32_t index);
  std::uint32_t alloc_slot();
  void setup_engines();
  void setup_workload();
  // simulator_dc.cpp: what [[dc_flow]]s add to each engine host's limits,
  // and the flows themselves.
  void dc_host_limits(std::uint32_t h, EngineHostConfig* c) const;
  void setup_dc_flows();
  void dc_flow_start(std::uint32_t f);
  // simulator_fabric.cpp: the switches' route tables from topo_.routes,
  // link changes and the reconvergence after them.
  void apply_routes();
  void link_change(std::uint32_t i);
  void reconverge(std::uint32_t i);
  void message_arrival();
  void engine_service(std::uint32_t h);
  void schedule_engine_poll(std::uint32_t h, TimeNs at);
  void engine_consume(std::uint32_t h, const SwitchPacket& p);
  void drop_record(const SwitchPacket& p);

  Scenario sc_;
  Topology topo_;
  std::uint64_t seed_;
  EventQueue q_;
  TimeNs now_ = 0;
  TimeNs end_ns_ = 0;
  StopReason stop_ = StopReason::kDuration;
  bool stopping_ = false;
  std::uint64_t events_ = 0;
  std::uint64_t next_packet_id_ = 0;

  std::vector<Host> hosts_;
  std::vector<HostRxExtra> host_extra_;
  std::vector<TimeNs> host_poll_at_;
  std::vector<SwitchModel> switches_;
  std::vector<TimeNs> switch_poll_at_;
  std::vector<std::uint64_t> switch_pfc_sig_;
  std::vector<LinkDir> dirs_;
  std::vector<TimeNs> wake_at_;                 // per direction: pending pause-expiry wake
  std::vector<PacketFifo<Injected>> injected_;  // per direction
  std::vector<InFlight> flight_;
  std::vector<std::uint32_t> free_slots_;
  std::vector<FlowState> flows_;
  std::vector<FlowStats> flow_stats_;
  std::vector<StormRecord> storms_;
  std::vector<InjectRecord> injects_;
  std::vector<TimeNs> route_applied_;
  std::vector<TimeNs> link_applied_;
  std::vector<TimeNs> reconverged_;
  DeadlockDetector detector_;
  WaitForGraph graph_;
  std::vector<std::size_t> formed_scratch_;
  std::vector<std::size_t> resolved_scratch_;
  Recorder* recorder_ = nullptr;
  PcapTap* pcap_ = nullptr;
  // Real-engine hosts (the frame store outlives them: declared first).
  FrameStore frames_;
  pfc::PriorityMap prio_map_;
  std::vector<std::unique_ptr<RcFlow>> rc_flows_;
  std::vector<int> rc_setup_;
  std::vector<std::unique_ptr<DcFlow>> dc_flows_;
  std::vector<int> dc_setup_;
  std::vector<std::unique_ptr<EngineHost>> engines_;
  std::unique_ptr<MessageWorkload> workload_;
  int workload_setup_ = 0;
  std::vector<TimeNs> engine_poll_at_;
  std::vector<std::uint8_t> pcap_scratch_;
  EngineFrameCounters engine_ctr_;
};

// A per-purpose seed derived from the run's seed (splitmix64), so adding a
// flow does not shift the draws of the others.
std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t purpose, std::uint64_t index);

}  // namespace uroce::testbed
