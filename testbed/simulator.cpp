#include "testbed/simulator.h"

#include <algorithm>

#include "datapath/wire/byteorder.h"
#include "datapath/wire/eth.h"
#include "datapath/wire/opcodes.h"
#include "datapath/wire/pfc.h"
#include "testbed/dc_flow.h"
#include "testbed/engine_host.h"
#include "testbed/message_workload.h"
#include "testbed/pcap_tap.h"
#include "testbed/rc_flow.h"
#include "testbed/recorder.h"
#include "testbed/wait_for.h"
#include "testbed/workload_scenario.h"

namespace uroce::testbed {

namespace {

constexpr std::uint64_t kPurposeFlow = 1;
constexpr std::uint64_t kPurposeSwitch = 2;
constexpr std::uint32_t kMinWireFrame = 60;
constexpr std::uint64_t kPurposeRcFlow = 3;
constexpr std::uint64_t kPurposeWorkload = 4;
// 5 and 6 are simulator_dc.cpp's (DC flows, engine loss).
constexpr std::uint64_t kPurposeLinkLoss = 7;
// Frames an engine may commit past the room it was given (ACKs built in
// its RX phase, and the control frames of QPs connected at once: the
// Homa-like scheduler's discovery sends a probe and an answer per QP, 1,920
// at time 0 on a host of homa_slowdown.toml): the host's TX queues hold
// this many more, so none of them is lost to the model.
constexpr std::uint32_t kEngineTxSlack = 4096;
// BTH offsets in an untagged RoCEv2 frame (Ethernet 14, IPv4 20, UDP 8).
constexpr std::size_t kBthOffset = 42;

HostConfig host_config(const Scenario& sc, const Topology& topo, std::uint32_t h) {
  const HostSpec& hs = sc.hosts[h];
  HostConfig c;
  c.link_bps = sc.links[topo.ports[h][0].link].rate_bps;
  c.mac = topo.macs[h];
  c.pfc_enable = sc.pfc.enable;
  c.max_quanta = sc.pfc.max_quanta;
  c.rx_bps = hs.rx_bps;
  c.ingress.src_mac = topo.macs[h];
  c.ingress.pfc_enable = sc.pfc.enable;
  c.ingress.mode = pfc::ThresholdMode::kDynamic;
  c.ingress.buffer_bytes = hs.rx_buffer_bytes;
  c.ingress.headroom_bytes = hs.rx_headroom_bytes;
  c.ingress.alpha_num = hs.rx_alpha_num;
  c.ingress.alpha_den = hs.rx_alpha_den;
  c.ingress.xon_offset_bytes = hs.rx_xon_offset_bytes;
  c.ingress.xoff_quanta = sc.pfc.xoff_quanta;
  c.ingress.link_bps = c.link_bps;
  c.ingress.refresh_percent = sc.pfc.refresh_percent;
  c.tx_queue_packets = hs.tx_queue_packets + (hs.engine ? kEngineTxSlack : 0);
  c.tx_fifo = hs.tx_fifo;
  c.ttl.own_mac = topo.macs[h];
  c.ttl.own_ip = topo.ips[h];
  // One usual-TTL entry per source host; a loop shows as outliers.
  c.ttl.log_interval_ns = kNsPerMs;
  return c;
}

}  // namespace

std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t purpose, std::uint64_t index) {
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ull * (purpose * 0x10000 + index + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::string Simulator::check(const Scenario& sc, const Topology& topo) {
  for (std::uint32_t h = 0; h < topo.num_hosts; ++h) {
    const std::string e = Host::check(host_config(sc, topo, h));
    if (!e.empty()) return "host[" + std::to_string(h) + "] (" + sc.hosts[h].name + "): " + e;
  }
  return {};
}

Simulator::Simulator(const Scenario& sc, const Topology& topo, std::uint64_t seed)
    : sc_(sc), topo_(topo), seed_(seed), detector_(DeadlockConfig{sc.deadlock.stall_ns}) {
  hosts_.reserve(topo_.num_hosts);
  for (std::uint32_t h = 0; h < topo_.num_hosts; ++h) {
    hosts_.emplace_back(host_config(sc_, topo_, h));
  }
  host_extra_.resize(topo_.num_hosts);
  host_poll_at_.assign(topo_.num_hosts, kNever);
  switches_.reserve(topo_.num_switches);
  for (std::uint32_t s = 0; s < topo_.num_switches; ++s) {
    switches_.emplace_back(switch_config(sc_, topo_, s, derive_seed(seed_, kPurposeSwitch, s)));
  }
  apply_routes();
  switch_poll_at_.assign(topo_.num_switches, kNever);
  switch_pfc_sig_.assign(topo_.num_switches, 0);
  for (std::size_t l = 0; l < sc_.links.size(); ++l) {
    const LinkSpec& ls = sc_.links[l];
    for (std::uint64_t d = 0; d < 2; ++d) {
      dirs_.emplace_back(ls.rate_bps, ls.delay_ns, ls.overhead_bytes, ls.loss_rate,
                         derive_seed(seed_, kPurposeLinkLoss, 2 * l + d));
    }
  }
  wake_at_.assign(dirs_.size(), kNever);
  injected_.resize(dirs_.size());
  flows_.resize(sc_.flows.size());
  flow_stats_.resize(sc_.flows.size());
  for (std::size_t f = 0; f < flows_.size(); ++f) {
    flows_[f].rng = SeededRng(derive_seed(seed_, kPurposeFlow, f));
  }
  injects_.resize(sc_.pfc_injections.size());
  route_applied_.assign(topo_.route_changes.size(), kNever);
  link_applied_.assign(topo_.link_changes.size(), kNever);
  reconverged_.assign(topo_.link_changes.size(), kNever);
  setup_engines();
}

void Simulator::setup_engines() {
  engines_.resize(topo_.num_hosts);
  engine_poll_at_.assign(topo_.num_hosts, kNever);
  std::vector<std::uint32_t> endpoints(topo_.num_hosts, 0);
  for (std::size_t f = 0; f < topo_.rc_flows.size(); ++f) {
    if (!sc_.rc_flows[f].enabled) continue;
    ++endpoints[topo_.rc_flows[f].src];
    ++endpoints[topo_.rc_flows[f].dst];
  }
  for (std::uint32_t h = 0; h < topo_.num_hosts; ++h) {
    if (!sc_.hosts[h].engine) continue;
    EngineHostConfig c;
    c.name = sc_.hosts[h].name;
    c.mac = topo_.macs[h];
    c.ip = topo_.ips[h];
    c.eth_mtu = sc_.hosts[h].eth_mtu;
    if (sc_.workload.enabled) {
      endpoints[h] +=
          MessageWorkload::qps_per_host(static_cast<std::uint32_t>(topo_.workload_hosts.size()),
                                        sc_.workload.qps_per_pair);
    }
    c.max_qps = std::max<std::uint32_t>(endpoints[h], 1);
    c.pfc_enable = sc_.hosts[h].engine_pfc;
    c.link_bps = sc_.links[topo_.ports[h][0].link].rate_bps;
    c.pfc_rx_budget = sc_.hosts[h].engine_rx_budget;
    c.poll_ns = sc_.hosts[h].engine_poll_ns;
    c.dcqcn = sc_.hosts[h].engine_dcqcn;
    c.cnp_interval_ns = sc_.hosts[h].engine_cnp_interval_ns;
    c.sched = sc_.hosts[h].engine_sched;
    c.tx_limit_bytes = sc_.hosts[h].engine_tx_limit_bytes;
    c.link_overhead_bytes = sc_.links[topo_.ports[h][0].link].overhead_bytes;
    c.homa = sc_.hosts[h].engine_homa;
    c.lossy = sc_.hosts[h].engine_lossy;
    c.lossy_qps = sc_.hosts[h].engine_lossy_qps;
    c.spray_paths = sc_.hosts[h].engine_spray_paths;
    c.spray_ecn = sc_.hosts[h].engine_spray_ecn;
    c.lossy_cap = sc_.hosts[h].engine_lossy_cap;
    dc_host_limits(h, &c);
    engines_[h] = std::make_unique<EngineHost>(c, frames_);
  }
  rc_setup_.assign(sc_.rc_flows.size(), 0);
  for (std::size_t f = 0; f < sc_.rc_flows.size(); ++f) {
    const RcFlowSpec& fs = sc_.rc_flows[f];
    const ResolvedFlow& rf = topo_.rc_flows[f];
    RcFlowConfig c;
    c.op = fs.write ? RcOp::kWrite : RcOp::kSend;
    c.size_bytes = fs.size_bytes;
    c.count = fs.count;
    c.window = fs.window;
    c.start_ns = fs.start_ns;
    c.path.dmac = topo_.macs[rf.dst];
    c.path.dip = topo_.ips[rf.dst];
    c.path.dscp = prio_map_.tx_dscp_of_sl(fs.sl);
    c.path.ttl = fs.ttl;
    // resolve() accepted only a path MTU that fits both hosts' eth_mtu.
    c.path.mtu = *wire::path_mtu_from_bytes(fs.mtu);
    c.path.timeout = fs.timeout;
    c.src_mac = topo_.macs[rf.src];
    c.src_ip = topo_.ips[rf.src];
    // Both directions' first PSNs and the payload pattern from the seed.
    const std::uint64_t r = derive_seed(seed_, kPurposeRcFlow, f);
    c.src_psn = static_cast<std::uint32_t>(r) & 0xffffff;
    c.dst_psn = static_cast<std::uint32_t>(r >> 24) & 0xffffff;
    c.pattern_seed = r >> 48 ^ derive_seed(seed_, kPurposeRcFlow, f + 0x8000);
    rc_flows_.push_back(
        std::make_unique<RcFlow>(c, engines_[rf.src]->driver(), engines_[rf.dst]->driver()));
    if (!fs.enabled) {
      rc_setup_[f] = kRcFlowDisabled;
      continue;
    }
    rc_setup_[f] = rc_flows_.back()->setup();
    if (rc_setup_[f] != 0) continue;
    engines_[rf.src]->add_endpoint(rc_flows_.back().get(), true);
    engines_[rf.dst]->add_endpoint(rc_flows_.back().get(), false);
  }
  setup_dc_flows();
  setup_workload();
}

void Simulator::setup_workload() {
  const WorkloadScenario& ws = sc_.workload;
  if (!ws.enabled) return;
  const std::vector<std::uint32_t>& hs = topo_.workload_hosts;
  MessageWorkloadConfig c;
  std::vector<RcDriver*> drivers;
  for (const std::uint32_t h : hs) {
    c.macs.push_back(topo_.macs[h]);
    c.ips.push_back(topo_.ips[h]);
    drivers.push_back(&engines_[h]->driver());
  }
  c.paths.assign(hs.size(), std::vector<std::vector<PathLink>>(hs.size()));
  for (std::size_t s = 0; s < hs.size(); ++s) {
    for (std::size_t d = 0; d < hs.size(); ++d) {
      for (const std::uint32_t dir : topo_.workload_paths[s][d]) {
        const LinkSpec& l = sc_.links[dir / 2];
        c.paths[s][d].push_back({l.rate_bps, l.delay_ns, l.overhead_bytes});
      }
    }
  }
  c.link_bps = sc_.links[topo_.ports[hs[0]][0].link].rate_bps;
  c.load = ws.load;
  c.seed = derive_seed(seed_, kPurposeWorkload, 0);
  c.warmup_ns = ws.warmup_ns;
  c.measure_ns = ws.measure_ns;
  c.qps_per_pair = ws.qps_per_pair;
  c.incast = incast_spec(ws, static_cast<std::uint32_t>(hs.size()));
  c.op = ws.write ? MsgOp::kWriteImm : MsgOp::kSendImm;
  c.path.dscp = prio_map_.tx_dscp_of_sl(ws.sl);
  c.path.ttl = ws.ttl;
  // resolve() accepted only a path MTU that fits every engine host.
  c.path.mtu = *wire::path_mtu_from_bytes(ws.mtu);
  c.path.timeout = ws.timeout;
  workload_ = std::make_unique<MessageWorkload>(c, topo_.workload_dist, drivers);
  workload_setup_ = workload_->setup();
  if (workload_setup_ != 0) return;
  for (std::size_t w = 0; w < hs.size(); ++w) {
    engines_[hs[w]]->add_app(workload_->app(static_cast<std::uint32_t>(w)));
  }
}

void Simulator::message_arrival() {
  for (const std::uint32_t w : workload_->arrive(now_)) engine_service(topo_.workload_hosts[w]);
  const TimeNs next = workload_->next_arrival();
  if (next <= sc_.duration_ns) q_.push(next, EventKind::kMessageArrival);
}

Simulator::~Simulator() = default;

TimeNs Simulator::first_flow_start() const {
  TimeNs t = kNever;
  for (const FlowSpec& f : sc_.flows) t = std::min(t, f.start_ns);
  for (const RcFlowSpec& f : sc_.rc_flows) t = std::min(t, f.start_ns);
  for (const DcFlowSpec& f : sc_.dc_flows) t = std::min(t, f.start_ns);
  return t;
}

std::uint32_t Simulator::alloc_slot() {
  if (!free_slots_.empty()) {
    const std::uint32_t s = free_slots_.back();
    free_slots_.pop_back();
    return s;
  }
  flight_.emplace_back();
  return static_cast<std::uint32_t>(flight_.size() - 1);
}

void Simulator::run() {
  for (std::uint32_t f = 0; f < sc_.flows.size(); ++f) {
    const FlowSpec& fs = sc_.flows[f];
    TimeNs t = fs.start_ns;
    if (fs.start_jitter_ns > 0) t += flows_[f].rng.below(fs.start_jitter_ns);
    if (t < fs.stop_ns) q_.push(t, EventKind::kSourceTick, f);
  }
  // Each engine's first poll takes the receives its flows posted at setup,
  // as a running engine would have long before the first frame arrives.
  for (std::uint32_t h = 0; h < topo_.num_hosts; ++h) {
    if (engines_[h] != nullptr) schedule_engine_poll(h, 0);
  }
  for (std::uint32_t f = 0; f < sc_.rc_flows.size(); ++f) {
    if (rc_setup_[f] == 0) q_.push(sc_.rc_flows[f].start_ns, EventKind::kRcFlowStart, f);
  }
  for (std::uint32_t f = 0; f < sc_.dc_flows.size(); ++f) {
    if (dc_setup_[f] == 0) q_.push(sc_.dc_flows[f].start_ns, EventKind::kDcFlowStart, f);
  }
  for (std::uint32_t r = 0; r < topo_.route_changes.size(); ++r) {
    q_.push(topo_.route_changes[r].at_ns, EventKind::kRouteChange, r);
  }
  for (std::uint32_t r = 0; r < topo_.link_changes.size(); ++r) {
    q_.push(topo_.link_changes[r].at_ns, EventKind::kLinkChange, r);
  }
  for (std::uint32_t i = 0; i < sc_.pfc_injections.size(); ++i) {
    q_.push(sc_.pfc_injections[i].at_ns, EventKind::kPfcInject, i);
  }
  if (workload_ != nullptr && workload_setup_ == 0 &&
      workload_->next_arrival() <= sc_.duration_ns) {
    q_.push(workload_->next_arrival(), EventKind::kMessageArrival);
  }
  if (recorder_ != nullptr) q_.push(0, EventKind::kSample);
  if (sc_.deadlock.enabled) q_.push(sc_.deadlock.check_ns, EventKind::kDeadlockCheck);

  while (!q_.empty() && !stopping_) {
    if (q_.top().at > sc_.duration_ns) break;
    const Event ev = q_.pop();
    now_ = ev.at;
    ++events_;
    dispatch(ev);
    if (workload_ != nullptr && workload_setup_ == 0 && workload_->finished(now_)) {
      stopping_ = true;
      stop_ = StopReason::kWorkloadDone;
    }
  }
  end_ns_ = stopping_ ? now_ : sc_.duration_ns;
  now_ = end_ns_;
  for (const auto& f : rc_flows_) f->finish();
}

void Simulator::dispatch(const Event& ev) {
  switch (ev.kind) {
    case EventKind::kArrival: deliver(ev.a, ev.b); break;
    case EventKind::kTxDone: {
      const PortEnd s = sender(ev.a);
      try_send(s.node, s.port);
      if (!topo_.is_host(s.node)) {
        service_switch(s.node - topo_.num_hosts);
      } else if (engines_[s.node] != nullptr && engines_[s.node]->starved()) {
        engine_service(s.node);
      }
      break;
    }
    case EventKind::kWake: {
      if (wake_at_[ev.a] == ev.at) wake_at_[ev.a] = kNever;
      const PortEnd s = sender(ev.a);
      try_send(s.node, s.port);
      if (!topo_.is_host(s.node)) service_switch(s.node - topo_.num_hosts);
      break;
    }
    case EventKind::kEnginePoll:
      if (engine_poll_at_[ev.a] == ev.at) engine_poll_at_[ev.a] = kNever;
      engine_service(ev.a);
      break;
    case EventKind::kMessageArrival: message_arrival(); break;
    case EventKind::kRcFlowStart:
      rc_flows_[ev.a]->start(now_);
      engine_service(topo_.rc_flows[ev.a].src);
      break;
    case EventKind::kDcFlowStart: dc_flow_start(ev.a); break;
    case EventKind::kSwitchPoll: {
      if (switch_poll_at_[ev.a] == ev.at) switch_poll_at_[ev.a] = kNever;
      StormLog log{this, ev.a};
      switches_[ev.a].poll(now_, log);
      service_switch(ev.a);
      schedule_switch_poll(ev.a, true);
      break;
    }
    case EventKind::kHostPoll:
      if (host_poll_at_[ev.a] == ev.at) host_poll_at_[ev.a] = kNever;
      hosts_[ev.a].poll(now_);
      kick_host(ev.a);
      schedule_host_poll(ev.a);
      break;
    case EventKind::kHostRxDone: {
      Host& h = hosts_[ev.a];
      const SwitchPacket p = h.finish_rx(now_);
      consume(ev.a, p);
      const TimeNs done = h.start_rx(now_);
      if (done != pfc::kNoDeadline) q_.push(done, EventKind::kHostRxDone, ev.a);
      kick_host(ev.a);
      schedule_host_poll(ev.a);
      break;
    }
    case EventKind::kSourceTick: source_tick(ev.a); break;
    case EventKind::kRouteChange: {
      const ResolvedRouteChange& rc = topo_.route_changes[ev.a];
      if (rc.port < 0) {
        switches_[rc.sw].clear_route(rc.dst);
      } else {
        switches_[rc.sw].set_route(rc.dst, static_cast<std::uint16_t>(rc.port));
      }
      route_applied_[ev.a] = now_;
      break;
    }
    case EventKind::kLinkChange: link_change(ev.a); break;
    case EventKind::kReconverge: reconverge(ev.a); break;
    case EventKind::kPfcInject: inject(ev.a); break;
    case EventKind::kSample:
      if (recorder_ != nullptr) recorder_->sample(*this, now_);
      if (now_ + sc_.output.sample_ns <= sc_.duration_ns) {
        q_.push(now_ + sc_.output.sample_ns, EventKind::kSample);
      }
      break;
    case EventKind::kDeadlockCheck:
      deadlock_check();
      if (!stopping_ && now_ + sc_.deadlock.check_ns <= sc_.duration_ns) {
        q_.push(now_ + sc_.deadlock.check_ns, EventKind::kDeadlockCheck);
      }
      break;
  }
}

void Simulator::try_send(std::uint32_t node, std::uint16_t port) {
  const std::uint32_t d = out_dir(node, port);
  LinkDir& ld = dirs_[d];
  if (ld.busy(now_)) return;
  SwitchTx tx;
  std::int32_t inject_index = -1;
  if (!injected_[d].empty()) {
    const Injected in = injected_[d].pop();
    tx.kind = SwitchTx::Kind::kControl;
    tx.ctrl = in.frame;
    inject_index = in.index;
  } else if (topo_.is_host(node)) {
    tx = hosts_[node].dequeue(now_);
  } else {
    tx = switches_[node - topo_.num_hosts].dequeue(port, now_);
  }
  if (tx.kind == SwitchTx::Kind::kNone) {
    if (tx.wake_at != pfc::kNoDeadline && tx.wake_at > now_ &&
        (wake_at_[d] == kNever || tx.wake_at < wake_at_[d] || wake_at_[d] < now_)) {
      wake_at_[d] = tx.wake_at;
      q_.push(tx.wake_at, EventKind::kWake, d);
    }
    return;
  }
  const bool control = tx.kind == SwitchTx::Kind::kControl;
  const std::uint32_t bytes =
      control ? std::max<std::uint32_t>(tx.ctrl.len, kMinWireFrame) : tx.pkt.bytes;
  const TimeNs done = ld.start(bytes, control, now_);
  const std::uint32_t slot = alloc_slot();
  InFlight& f = flight_[slot];
  f.control = control;
  f.inject = inject_index;
  if (control) {
    f.ctrl = tx.ctrl;
  } else {
    f.pkt = tx.pkt;
  }
  if (inject_index >= 0) injects_[static_cast<std::size_t>(inject_index)].sent_at = now_;
  q_.push(done, EventKind::kTxDone, d);
  q_.push(done + ld.delay(), EventKind::kArrival, d, slot);
}

void Simulator::service_switch(std::uint32_t sw) {
  SwitchModel& m = switches_[sw];
  const std::uint32_t node = topo_.switch_node(sw);
  for (std::uint64_t k = m.take_kicks(); k != 0; k = m.take_kicks()) {
    for (std::uint16_t p = 0; k != 0; ++p, k >>= 1) {
      if ((k & 1) != 0) try_send(node, p);
    }
  }
  schedule_switch_poll(sw, false);
}

void Simulator::schedule_switch_poll(std::uint32_t sw, bool force) {
  const SwitchModel& m = switches_[sw];
  // Deadlines move only when PFC frames are sent or received (or a poll
  // ran): skip the scan otherwise.
  const std::uint64_t sig = m.counters().pfc_tx + m.counters().pfc_rx;
  if (!force && sig == switch_pfc_sig_[sw]) return;
  switch_pfc_sig_[sw] = sig;
  TimeNs d = m.next_deadline(now_);
  if (d == pfc::kNoDeadline) return;
  if (d < now_) d = now_;
  TimeNs& pending = switch_poll_at_[sw];
  if (pending != kNever && pending >= now_ && pending <= d) return;
  pending = d;
  q_.push(d, EventKind::kSwitchPoll, sw);
}

void Simulator::schedule_host_poll(std::uint32_t h) {
  TimeNs d = hosts_[h].next_deadline();
  if (d == pfc::kNoDeadline) return;
  if (d < now_) d = now_;
  TimeNs& pending = host_poll_at_[h];
  if (pending != kNever && pending >= now_ && pending <= d) return;
  pending = d;
  q_.push(d, EventKind::kHostPoll, h);
}

void Simulator::kick_host(std::uint32_t h) {
  if (hosts_[h].take_kick()) try_send(h, 0);
}

void Simulator::StormLog::event(std::uint16_t port, const pfc::PfcEvent& e) {
  if (e.type == pfc::PfcEventType::kStormDetected) {
    StormRecord r;
    r.sw = sw;
    r.port = port;
    r.prio = e.prio;
    r.paused_since = e.since;
    r.detected_at = e.at;
    sim->storms_.push_back(r);
    return;
  }
  if (e.type != pfc::PfcEventType::kStormRestored) return;
  for (auto it = sim->storms_.rbegin(); it != sim->storms_.rend(); ++it) {
    if (it->sw == sw && it->port == port && it->prio == e.prio && !it->restored) {
      it->restored = true;
      it->restored_at = e.at;
      break;
    }
  }
}

void Simulator::deliver(std::uint32_t dir, std::uint32_t slot) {
  const InFlight f = flight_[slot];
  free_slots_.push_back(slot);
  // Lost on the link (down, or its loss_rate): never reaches the
  // receiver's capture.
  if (dirs_[dir].lose_down() || (!f.control && dirs_[dir].lose())) {
    if (f.pkt.flow == kEngineFrameFlow) ++engine_ctr_.link_lost;
    drop_record(f.pkt);
    return;
  }
  const std::uint32_t link = dir / 2;
  if (pcap_ != nullptr && topo_.pcap_link[link]) {
    if (f.control) {
      pcap_->write_control(link, now_, f.ctrl);
    } else if (f.pkt.flow == kEngineFrameFlow) {
      // The engine's own bytes, with the TTL and ECN of this hop.
      const std::span<std::uint8_t> b = frames_.get(static_cast<std::uint32_t>(f.pkt.seq));
      pcap_scratch_.assign(b.begin(), b.end());
      patch_frame(pcap_scratch_, f.pkt.ttl, f.pkt.ecn);
      pcap_->write_frame(link, now_, pcap_scratch_);
    } else {
      pcap_->write_data(link, now_, sender(dir).node, receiver(dir).node, f.pkt);
    }
  }
  const PortEnd to = receiver(dir);
  if (!f.control) {
    deliver_data(to, f.pkt);
    return;
  }
  const std::span<const std::uint8_t> frame(f.ctrl.bytes.data(), f.ctrl.len);
  wire::PfcParseError verdict;
  if (topo_.is_host(to.node) && sc_.hosts[to.node].engine_pfc != 0) {
    // The engine's own PFC obeys it: the frame goes to the engine as bytes
    // (its PauseGate parses and counts it), not to the Host's gate.
    wire::PfcFrame parsed;
    verdict = wire::parse_pfc(frame, parsed);
    ++engine_ctr_.rx_pfc;
    engines_[to.node]->port().deliver(frames_.put(frame));
    schedule_engine_poll(to.node, now_);
  } else if (topo_.is_host(to.node)) {
    verdict = hosts_[to.node].on_control(frame, now_);
    kick_host(to.node);
  } else {
    const std::uint32_t sw = to.node - topo_.num_hosts;
    verdict = switches_[sw].on_control(to.port, frame, now_);
    service_switch(sw);
  }
  if (f.inject >= 0) {
    InjectRecord& r = injects_[static_cast<std::size_t>(f.inject)];
    r.delivered = true;
    r.arrived_at = now_;
    r.verdict = verdict;
  }
}

void Simulator::deliver_data(const PortEnd& to, const SwitchPacket& p) {
  if (!topo_.is_host(to.node)) {
    const std::uint32_t sw = to.node - topo_.num_hosts;
    if (switches_[sw].on_packet(to.port, p, now_) != SwitchRx::kForwarded &&
        p.flow == kEngineFrameFlow) {
      ++engine_ctr_.switch_dropped;
      drop_record(p);
    }
    service_switch(sw);
    return;
  }
  const std::uint32_t h = to.node;
  if (p.dst != h) {
    ++host_extra_[h].misdelivered;
    if (p.flow == kEngineFrameFlow) {
      ++engine_ctr_.misdelivered;
      drop_record(p);
    }
    return;
  }
  Host& host = hosts_[h];
  switch (host.on_packet(p, now_)) {
    case Host::Rx::kConsumed: consume(h, p); break;
    case Host::Rx::kQueued: {
      const TimeNs done = host.start_rx(now_);
      if (done != pfc::kNoDeadline) q_.push(done, EventKind::kHostRxDone, h);
      break;
    }
    case Host::Rx::kDropped: drop_record(p); break;
  }
  kick_host(h);
  schedule_host_poll(h);
}

void Simulator::consume(std::uint32_t h, const SwitchPacket& p) {
  if (p.flow == kEngineFrameFlow) {
    engine_consume(h, p);
    return;
  }
  FlowStats& s = flow_stats_[p.flow];
  ++s.rx_packets;
  s.rx_bytes += p.bytes;
  if (p.ecn == kEcnCe) ++s.ce_packets;
  const TimeNs lat = now_ - p.sent_at;
  s.latency_sum_ns += lat;
  s.latency_max_ns = std::max(s.latency_max_ns, lat);
  s.ttl_min = std::min(s.ttl_min, p.ttl);
  s.ttl_max = std::max(s.ttl_max, p.ttl);
  if (s.first_rx == kNever) s.first_rx = now_;
  s.last_rx = now_;
  pfc::RxTtlInfo info;
  info.src_mac = topo_.macs[p.src];
  info.src_ip = topo_.ips[p.src];
  info.qpn = p.flow;
  info.psn = static_cast<std::uint32_t>(p.seq & 0xffffff);
  info.ttl = p.ttl;
  hosts_[h].consumed(p, info, now_);
}

void Simulator::source_tick(std::uint32_t f) {
  const FlowSpec& fs = sc_.flows[f];
  FlowState& st = flows_[f];
  const ResolvedFlow& rf = topo_.flows[f];
  SwitchPacket p;
  p.id = next_packet_id_++;
  p.seq = st.seq++;
  p.sent_at = now_;
  p.bytes = fs.size_bytes;
  p.flow = f;
  p.src = rf.src;
  p.dst = rf.dst;
  p.prio = fs.prio;
  p.ttl = fs.ttl;
  p.ecn = fs.ecn_capable ? kEcnEct0 : kEcnNotEct;
  p.entropy = static_cast<std::uint32_t>(ecmp_mix(f + 1));
  ++flow_stats_[f].offered;
  if (!hosts_[rf.src].offer(p)) ++flow_stats_[f].refused;
  kick_host(rf.src);
  // Next packet: the exact constant-rate gap, fractions of a ns carried.
  const std::uint64_t num = std::uint64_t{fs.size_bytes} * 8 * kNsPerSec + st.carry;
  TimeNs gap = num / fs.rate_bps;
  st.carry = num % fs.rate_bps;
  if (fs.jitter > 0.0) {
    const double scale = 1.0 - fs.jitter + 2.0 * fs.jitter * st.rng.next_unit();
    gap = static_cast<TimeNs>(static_cast<double>(gap) * scale);
  }
  if (gap == 0) gap = 1;
  const TimeNs next = now_ + gap;
  if (next < fs.stop_ns && next <= sc_.duration_ns) q_.push(next, EventKind::kSourceTick, f);
}

void Simulator::drop_record(const SwitchPacket& p) {
  if (p.flow == kEngineFrameFlow) frames_.release(static_cast<std::uint32_t>(p.seq));
}

void Simulator::engine_consume(std::uint32_t h, const SwitchPacket& p) {
  const auto slot = static_cast<std::uint32_t>(p.seq);
  const std::span<std::uint8_t> f = frames_.get(slot);
  patch_frame(f, p.ttl, p.ecn);
  pfc::RxTtlInfo info;
  info.src_mac = topo_.macs[p.src];
  info.src_ip = topo_.ips[p.src];
  info.ttl = p.ttl;
  if (f.size() >= kBthOffset + 12) {
    info.qpn = wire::load_be32(f.data() + kBthOffset + 4) & 0xffffff;
    info.psn = wire::load_be32(f.data() + kBthOffset + 8) & 0xffffff;
  }
  hosts_[h].consumed(p, info, now_);
  if (engines_[h] == nullptr) {
    ++engine_ctr_.to_constant_host;
    frames_.release(slot);
    return;
  }
  ++engine_ctr_.rx_frames;
  engines_[h]->port().deliver(slot);
  schedule_engine_poll(h, now_);
}

void Simulator::engine_service(std::uint32_t h) {
  EngineHost& e = *engines_[h];
  if (now_ < e.busy_until()) {
    // The engine's CPU is still in its last poll (poll_cost_us).
    schedule_engine_poll(h, e.busy_until());
    return;
  }
  const std::uint32_t cap = sc_.hosts[h].tx_queue_packets;
  const std::size_t queued = hosts_[h].tx_queued();
  const bool more = e.service(now_, queued >= cap ? 0 : cap - static_cast<std::uint32_t>(queued));
  std::vector<std::uint32_t>& out = e.port().outbox();
  for (const std::uint32_t slot : out) {
    SwitchPacket p;
    p.id = next_packet_id_++;
    p.seq = slot;
    p.sent_at = now_;
    p.flow = kEngineFrameFlow;
    p.src = static_cast<std::uint16_t>(h);
    const std::span<const std::uint8_t> bytes = frames_.get(slot);
    if (bytes.size() >= wire::EthHdr::kSize &&
        wire::load_be16(bytes.data() + 12) == wire::kEtherTypeMacControl) {
      // The engine's PFC toward its switch: a control frame of the port
      // (ahead of data, never paused), as the switch model takes pauses.
      if (hosts_[h].offer_control(bytes)) {
        ++engine_ctr_.tx_pfc;
      } else {
        ++engine_ctr_.tx_pfc_refused;
      }
      frames_.release(slot);
      continue;
    }
    const FrameRecordError err = record_from_frame(frames_.get(slot), prio_map_, topo_.ips, &p);
    if (err != FrameRecordError::kOk) {
      ++engine_ctr_.tx_unroutable[static_cast<std::size_t>(err)];
      frames_.release(slot);
      continue;
    }
    if (!hosts_[h].offer(p)) {
      ++engine_ctr_.tx_refused;
      frames_.release(slot);
      continue;
    }
    ++engine_ctr_.tx_records;
  }
  out.clear();
  kick_host(h);
  const TimeNs next = more ? now_ : e.next_deadline();
  schedule_engine_poll(h, next == kNever ? next : std::max(next, e.busy_until()));
}

void Simulator::schedule_engine_poll(std::uint32_t h, TimeNs at) {
  if (at == kNever) return;
  if (at < now_) at = now_;
  TimeNs& pending = engine_poll_at_[h];
  if (pending != kNever && pending >= now_ && pending <= at) return;
  pending = at;
  q_.push(at, EventKind::kEnginePoll, h);
}

void Simulator::deadlock_check() {
  build_wait_for_graph(topo_, switches_, now_, graph_);
  formed_scratch_.clear();
  resolved_scratch_.clear();
  detector_.check(graph_, now_, formed_scratch_, resolved_scratch_);
  if (!formed_scratch_.empty() && sc_.deadlock.stop) {
    stopping_ = true;
    stop_ = StopReason::kDeadlock;
  }
}

void Simulator::inject(std::uint32_t index) {
  const PfcInjectSpec& in = sc_.pfc_injections[index];
  const ResolvedInject& r = topo_.injections[index];
  Injected x;
  x.index = static_cast<std::int32_t>(index);
  std::span<std::uint8_t> buf(x.frame.bytes.data(), x.frame.bytes.size());
  std::uint16_t quanta[8];
  for (std::size_t i = 0; i < 8; ++i) quanta[i] = in.quanta[i];
  const std::size_t n = wire::build_pfc(buf, topo_.macs[r.from.node], in.class_enable, quanta);
  // Then spoil what the scenario asks to spoil.
  if (in.dst_mac) std::copy(in.dst_mac->b.begin(), in.dst_mac->b.end(), x.frame.bytes.begin());
  x.frame.bytes[12] = static_cast<std::uint8_t>(in.ethertype >> 8);
  x.frame.bytes[13] = static_cast<std::uint8_t>(in.ethertype);
  x.frame.bytes[14] = static_cast<std::uint8_t>(in.opcode >> 8);
  x.frame.bytes[15] = static_cast<std::uint8_t>(in.opcode);
  x.frame.len = static_cast<std::uint8_t>(std::min<std::size_t>(n, in.length));
  const std::uint32_t d = out_dir(r.from.node, r.from.port);
  injected_[d].push(x);
  try_send(r.from.node, r.from.port);
}

}  // namespace uroce::testbed
