// A testbed host that runs the real engine: one engine::Vnic (real RC
// transport, real rings and CQs) on an EnginePortIo (engine_port.h), the
// in-process driver of its objects (rc_driver.h) and the [[rc_flow]]
// endpoints it serves (rc_flow.h). The host's port toward its switch (TX
// queues per priority, the PauseGate honouring the switch's PFC, the
// optional slow receiver) is the ordinary testbed Host next to it; the
// simulator moves frames between the two (frame_record.h).
//
// The engine runs on the virtual clock, as events: service(now) polls the
// Vnic, lets every flow endpoint reap completions and post (ring writes),
// and polls again while either did something, up to kMaxPolls times (then
// it asks to be called again at the same instant). The simulator calls it
// when a frame arrives, when a flow starts, when TX room opens after the
// engine ran out of it, and at next_deadline() (the Vnic's RC timers). It
// never steps through virtual time without an event. With a poll cost
// (poll_ns) each service is one poll, and the host is busy until
// busy_until(): the simulator defers a service asked for earlier to then.
//
// Single-threaded (the simulation's thread).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "datapath/base/time.h"
#include "datapath/engine/vnic_types.h"
#include "testbed/engine_port.h"
#include "testbed/frame_store.h"
#include "testbed/rc_driver.h"
#include "testbed/rc_flow.h"

namespace uroce::testbed {

// Something besides [[rc_flow]] endpoints that uses a host's driver: it
// reaps its completions and posts in service(), which EngineHost calls
// after every poll of the Vnic (the message workload's per-host agent,
// message_workload.h).
class EngineApp {
 public:
  virtual ~EngineApp() = default;
  // True if it posted anything (the engine polls again).
  virtual bool service(TimeNs now) = 0;
};

struct EngineHostConfig {
  std::string name;
  wire::MacAddr mac{};
  wire::Ipv4Addr ip{};
  std::uint32_t eth_mtu = 9000;
  std::uint32_t max_qps = 64;
  // DC flows (dc_flow.h): an AH per target at the source, an SRQ per DCT.
  std::uint32_t max_ahs = 1;
  std::uint32_t max_srqs = 1;
  // The DC target's context pool (VnicConfig::dc_*).
  std::uint32_t dc_contexts = 4096;
  std::uint32_t dc_records_log2 = 16;
  std::uint32_t dc_stale_ms = 10'000;
  // Loss on receive (impairment.h): this fraction of RoCEv2 frames, drawn
  // from a stream seeded with drop_seed (0: none).
  double drop_rx_rate = 0;
  std::uint64_t drop_seed = 0;
  // The engine's own endpoint PFC (datapath/engine/pfc_endpoint.h): the
  // lossless priorities (0: off), the port's speed (quanta <-> ns) and the
  // staged frames processed per poll.
  std::uint8_t pfc_enable = 0;
  std::uint64_t link_bps = 0;
  std::uint32_t pfc_rx_budget = 64;
  // Virtual CPU time one poll takes: after a poll at t the engine cannot
  // poll again before t + poll_ns (0: an infinitely fast CPU).
  TimeNs poll_ns = 0;
  // DCQCN (sched/dcqcn.h) at link_bps, with this CNP interval.
  bool dcqcn = false;
  TimeNs cnp_interval_ns = 50'000;
  // The device's TX policy (isolation off: round robin).
  sched::TxPolicyConfig sched{};
  // The port limit (sched/port_limit.h) at link_bps; 0: off. Its model
  // counts the host link's per-frame overhead.
  std::uint32_t tx_limit_bytes = 0;
  std::uint32_t link_overhead_bytes = 0;
  // The Homa-like scheduler (off by default).
  sched::homa::HomaSettings homa{};
  // Selective repeat with peers that turn it on too (VnicConfig::lossy,
  // lossy_qps; datapath/policy/lossy.h): off by default. spray_paths:
  // the UDP source ports its connections spray over (VnicConfig's).
  bool lossy = false;
  std::uint32_t lossy_qps = 256;
  std::uint32_t spray_paths = 1;
  bool spray_ecn = false;
  std::uint32_t lossy_cap = 256;
};

class EngineHost {
 public:
  static constexpr std::uint32_t kMaxPolls = 8;

  // `store` must outlive the host.
  EngineHost(const EngineHostConfig& cfg, FrameStore& store);
  ~EngineHost();
  EngineHost(const EngineHost&) = delete;
  EngineHost& operator=(const EngineHost&) = delete;

  RcDriver& driver() { return *driver_; }
  EnginePortIo& port() { return port_; }
  const EnginePortIo& port() const { return port_; }
  EngineVnic& vnic() { return *vnic_; }
  const EngineVnic& vnic() const { return *vnic_; }
  // A flow endpoint this host serves (the source or the receiving side).
  void add_endpoint(RcFlow* f, bool source) { eps_.push_back({f, source}); }
  // `a` must outlive the host's services.
  void add_app(EngineApp* a) { apps_.push_back(a); }

  // Runs the engine at `now` with room for `room` frames in the host's TX
  // queues. True when it stopped at kMaxPolls (one poll with a poll cost)
  // with work left. Precondition: now >= busy_until().
  bool service(TimeNs now, std::uint32_t room);
  // The Vnic's next deadline, its RC timers and its PFC (kNever-like
  // maximum: none).
  TimeNs next_deadline() const;
  // The end of the last poll's CPU time (0 without a poll cost).
  TimeNs busy_until() const { return busy_until_; }
  // The engine used all its TX room in the last service (a poll is due when
  // room opens).
  bool starved() const { return port_.out_of_room(); }

  std::uint64_t services() const { return services_; }
  std::uint64_t polls() const { return polls_; }
  const EngineHostConfig& config() const { return cfg_; }

 private:
  struct Endpoint {
    RcFlow* flow;
    bool source;
  };

  EngineHostConfig cfg_;
  EnginePortIo port_;
  std::unique_ptr<EngineVnic> vnic_;
  std::unique_ptr<RcDriver> driver_;
  std::vector<Endpoint> eps_;
  std::vector<EngineApp*> apps_;
  std::uint64_t services_ = 0;
  std::uint64_t polls_ = 0;
  TimeNs busy_until_ = 0;
};

}  // namespace uroce::testbed
