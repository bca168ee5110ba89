#include "testbed/report.h"

#include <cmath>

#include <nlohmann/json.hpp>

#include "apps/counters_json.h"
#include "testbed/dc_report.h"
#include "testbed/engine_report.h"
#include "testbed/simulator.h"
#include "testbed/wait_for.h"
#include "testbed/workload_report.h"

namespace uroce::testbed {

namespace {

using Json = nlohmann::ordered_json;

// What the summary shows of a host's PFC gate, receive buffer and TTL
// monitor.
constexpr auto kGatePrio =
    counters::pick(pfc::kPauseGatePrioCounterFields,
                   {"pause_rx", "resume_rx", "disabled_rx", "quanta_clamped"});
constexpr auto kIngressPrio =
    counters::pick(pfc::kIngressPrioCounterFields,
                   {"xoff_sent", "refresh_sent", "xon_sent", "peak_bytes", "drops_headroom_full"});
constexpr auto kTtl = counters::pick(pfc::kTtlCounterFields, {"own_packets", "replay_lower_ttl",
                                                              "outliers_low", "outliers_high"});

double round3(double v) { return std::round(v * 1000.0) / 1000.0; }

double gbps(std::uint64_t bytes, TimeNs dt) {
  return dt == 0 ? 0.0 : round3(static_cast<double>(bytes) * 8.0 / static_cast<double>(dt));
}

Json time_or_null(TimeNs t) { return t == kNever ? Json(nullptr) : Json(t); }

std::string prio_key(std::uint8_t p) { return std::to_string(p); }

Json gate_json(const pfc::PauseGate& g, std::uint8_t enable, TimeNs now) {
  const pfc::PauseGateCounters& c = g.counters();
  Json j;
  j["frames_rx"] = c.frames_rx;
  Json parse;
  for (std::size_t i = 0; i < pfc::kNumPfcParseErrors; ++i) {
    const auto e = static_cast<wire::PfcParseError>(i);
    parse[std::string(wire::pfc_parse_error_name(e))] = c.parse[i];
  }
  j["parse"] = parse;
  j["empty_class_vector"] = c.empty_class_vector;
  Json prios = Json::object();
  for (std::uint8_t p = 0; p < pfc::kNumPriorities; ++p) {
    const pfc::PauseGatePrioCounters& pc = c.prio[p];
    bool any = false;
    for (const auto& f : kGatePrio) any = any || pc.*f.member != 0;
    if (((enable >> p) & 1) == 0 && !any) continue;
    Json q;
    counters::put(q, pc, kGatePrio);
    q["paused_ns"] = g.paused_ns(p, now);
    prios[prio_key(p)] = q;
  }
  j["prio"] = prios;
  return j;
}

Json flows_json(const Simulator& sim) {
  const Scenario& sc = sim.scenario();
  const Topology& t = sim.topology();
  Json arr = Json::array();
  for (std::size_t f = 0; f < sc.flows.size(); ++f) {
    const FlowSpec& fs = sc.flows[f];
    const FlowStats& s = sim.flow_stats()[f];
    Json j;
    j["name"] = fs.name;
    j["src"] = t.names[t.flows[f].src];
    j["dst"] = t.names[t.flows[f].dst];
    j["rate_gbps"] = round3(static_cast<double>(fs.rate_bps) / 1e9);
    j["size_bytes"] = fs.size_bytes;
    j["ttl"] = fs.ttl;
    j["prio"] = fs.prio;
    j["offered_packets"] = s.offered;
    j["refused_packets"] = s.refused;
    j["rx_packets"] = s.rx_packets;
    j["rx_bytes"] = s.rx_bytes;
    const TimeNs start = fs.start_ns;
    const TimeNs end = std::min(sim.end_ns(), fs.stop_ns);
    j["rx_gbps"] = end > start ? gbps(s.rx_bytes, end - start) : 0.0;
    j["ce_packets"] = s.ce_packets;
    j["latency_avg_ns"] = s.rx_packets == 0 ? 0 : s.latency_sum_ns / s.rx_packets;
    j["latency_max_ns"] = s.latency_max_ns;
    j["rx_ttl_min"] = s.rx_packets == 0 ? Json(nullptr) : Json(s.ttl_min);
    j["rx_ttl_max"] = s.rx_packets == 0 ? Json(nullptr) : Json(s.ttl_max);
    arr.push_back(j);
  }
  return arr;
}

Json hosts_json(const Simulator& sim) {
  const Scenario& sc = sim.scenario();
  const Topology& t = sim.topology();
  Json arr = Json::array();
  for (std::uint32_t h = 0; h < t.num_hosts; ++h) {
    const Host& host = sim.hosts()[h];
    const HostCounters& c = host.counters();
    Json j;
    j["name"] = t.names[h];
    j["ip"] = t.ips[h].to_string();
    j["mac"] = t.macs[h].to_string();
    j["tx_packets"] = c.tx_packets;
    j["tx_bytes"] = c.tx_bytes;
    j["tx_refused"] = c.tx_refused;
    j["tx_queued_end"] = host.tx_queued();
    j["rx_packets"] = c.rx_packets;
    j["rx_bytes"] = c.rx_bytes;
    j["rx_dropped"] = c.rx_dropped;
    j["rx_misdelivered"] = sim.host_extra()[h].misdelivered;
    j["pfc_tx_frames"] = c.tx_pfc_frames;
    j["pfc_rx"] = gate_json(host.gate(), sc.pfc.enable, sim.end_ns());
    if (const pfc::IngressAccounting* in = host.ingress()) {
      Json r;
      r["queued_end"] = host.rx_queued();
      Json prios = Json::object();
      for (std::uint8_t p = 0; p < pfc::kNumPriorities; ++p) {
        if (((sc.pfc.enable >> p) & 1) == 0) continue;
        const pfc::IngressPrioCounters& pc = in->counters().prio[p];
        Json q;
        counters::put(q, pc, kIngressPrio);
        q["asserted_ns"] = in->asserted_ns(p, sim.end_ns());
        prios[prio_key(p)] = q;
      }
      r["prio"] = prios;
      j["rx_buffer"] = r;
    }
    const pfc::TtlCounters& tc = host.ttl().counters();
    Json ttl;
    ttl["checked"] = tc.rx_checked;
    counters::put(ttl, tc, kTtl);
    Json ev = Json::array();
    for (const pfc::PfcEvent& e : host.events()) {
      char line[160];
      pfc::format_pfc_event(e, line);
      ev.push_back(std::string(line));
    }
    ttl["events"] = ev;
    ttl["events_not_kept"] = host.events_dropped();
    j["ttl_monitor"] = ttl;
    arr.push_back(j);
  }
  return arr;
}

Json switches_json(const Simulator& sim) {
  const Scenario& sc = sim.scenario();
  const Topology& t = sim.topology();
  const TimeNs end = sim.end_ns();
  Json arr = Json::array();
  for (std::uint32_t s = 0; s < t.num_switches; ++s) {
    const SwitchModel& m = sim.switches()[s];
    const std::uint32_t node = t.switch_node(s);
    const SwitchCounters& c = m.counters();
    Json j;
    j["name"] = t.names[node];
    j["rx_packets"] = c.rx_packets;
    j["rx_bytes"] = c.rx_bytes;
    j["forwarded_packets"] = c.rx_packets_by[0];
    Json drops;
    Json drop_bytes;
    for (std::size_t r = 1; r < kNumSwitchRx; ++r) {
      const std::string name(switch_rx_name(static_cast<SwitchRx>(r)));
      drops[name] = c.rx_packets_by[r];
      drop_bytes[name] = c.rx_bytes_by[r];
    }
    j["drops_packets"] = drops;
    j["drops_bytes"] = drop_bytes;
    Json buf;
    buf["buffer_bytes"] = m.buffer().config().buffer_bytes;
    buf["shared_capacity_bytes"] = m.buffer().shared_capacity();
    buf["alpha"] = std::to_string(m.buffer().config().alpha_num) + "/" +
                   std::to_string(m.buffer().config().alpha_den);
    buf["peak_used_bytes"] = m.buffer().counters().peak_used_bytes;
    buf["used_end_bytes"] = m.buffer().used();
    j["buffer"] = buf;
    j["pfc_frames_sent"] = c.pfc_tx;
    j["pfc_frames_received"] = c.pfc_rx;
    Json ports = Json::array();
    for (std::uint16_t p = 0; p < m.num_ports(); ++p) {
      Json pj;
      pj["port"] = p;
      pj["peer"] = t.names[t.ports[node][p].peer.node];
      Json ingress = Json::object();
      Json egress = Json::object();
      for (std::uint8_t pr = 0; pr < pfc::kNumPriorities; ++pr) {
        const BufferQueueCounters& bq = m.buffer().counters(p, pr);
        const SwitchQueueCounters& eq = m.counters(p, pr);
        const bool lossless = ((sc.pfc.enable >> pr) & 1) != 0;
        if (lossless || bq.rx_packets != 0) {
          Json q;
          q["rx_packets"] = bq.rx_packets;
          q["headroom_packets"] = bq.headroom_packets;
          q["peak_shared_bytes"] = bq.peak_shared_bytes;
          q["peak_headroom_bytes"] = bq.peak_headroom_bytes;
          q["drops_lossy_full"] = bq.drops_lossy_full;
          q["drops_headroom_full"] = bq.drops_headroom_full;
          q["xoff_sent"] = bq.xoff_sent;
          q["refresh_sent"] = bq.refresh_sent;
          q["xon_sent"] = bq.xon_sent;
          q["asserted_ns"] = m.buffer().asserted_ns(p, pr, end);
          q["bytes_end"] = m.buffer().queue_bytes(p, pr);
          ingress[prio_key(pr)] = q;
        }
        if (lossless || eq.enqueued != 0) {
          Json q;
          q["enqueued"] = eq.enqueued;
          q["sent_packets"] = eq.sent_packets;
          q["sent_bytes"] = eq.sent_bytes;
          q["ecn_marked"] = eq.ecn_marked;
          q["peak_bytes"] = eq.peak_bytes;
          q["queued_end_packets"] = m.egress_packets(p, pr);
          q["queued_end_bytes"] = m.egress_bytes(p, pr);
          q["wd_flushed_packets"] = eq.wd_flushed_packets;
          q["wd_refused_packets"] = eq.wd_refused_packets;
          egress[prio_key(pr)] = q;
        }
      }
      pj["ingress"] = ingress;
      pj["egress"] = egress;
      pj["pfc_rx"] = gate_json(m.gate(p), sc.pfc.enable, end);
      ports.push_back(pj);
    }
    j["ports"] = ports;
    arr.push_back(j);
  }
  return arr;
}

Json links_json(const Simulator& sim) {
  const Topology& t = sim.topology();
  Json arr = Json::array();
  for (std::uint32_t l = 0; l < t.links.size(); ++l) {
    for (std::uint32_t d = 0; d < 2; ++d) {
      const LinkDir& ld = sim.link_dirs()[2 * l + d];
      Json j;
      j["from"] = t.names[t.links[l][d].node];
      j["to"] = t.names[t.links[l][1 - d].node];
      j["frames"] = ld.counters().frames;
      j["bytes"] = ld.counters().bytes;
      j["data_frames"] = ld.counters().data_frames;
      j["pfc_frames"] = ld.counters().control_frames;
      // Only on a link with a loss_rate: other summaries stay as they were.
      if (ld.loss_rate() > 0) j["lost"] = ld.counters().lost;
      if (!t.link_changes.empty()) j["lost_down"] = ld.counters().lost_down;
      j["utilization"] =
          sim.end_ns() == 0
              ? 0.0
              : round3(static_cast<double>(std::min(ld.counters().busy_ns, sim.end_ns())) /
                       static_cast<double>(sim.end_ns()));
      arr.push_back(j);
    }
  }
  return arr;
}

Json deadlocks_json(const Simulator& sim) {
  const Topology& t = sim.topology();
  const TimeNs origin = sim.first_flow_start();
  Json arr = Json::array();
  for (const Deadlock& d : sim.deadlocks().all()) {
    Json j;
    j["formed_ns"] = d.formed_at;
    j["detected_ns"] = d.detected_at;
    j["resolved_ns"] = d.resolved ? Json(d.resolved_at) : Json(nullptr);
    j["time_to_deadlock_ns"] =
        origin == kNever || d.formed_at < origin ? Json(nullptr) : Json(d.formed_at - origin);
    Json cycle = Json::array();
    for (const std::uint64_t k : d.cycle) {
      const QueueId q = queue_of_key(k);
      Json qj;
      qj["queue"] = queue_name(t, q);
      qj["switch"] = t.names[t.switch_node(q.sw)];
      qj["port"] = q.port;
      qj["toward"] = t.names[t.ports[t.switch_node(q.sw)][q.port].peer.node];
      qj["prio"] = q.prio;
      cycle.push_back(qj);
    }
    j["cycle"] = cycle;
    arr.push_back(j);
  }
  return arr;
}

Json watchdog_json(const Simulator& sim) {
  const Scenario& sc = sim.scenario();
  const Topology& t = sim.topology();
  Json j;
  j["enabled"] = sc.watchdog.enabled;
  j["detection_ns"] = sc.watchdog.detection_ns;
  j["restoration_ns"] = sc.watchdog.restoration_ns;
  j["action"] = sc.watchdog.action == pfc::StormAction::kDrop ? "drop" : "ignore";
  Json storms = Json::array();
  for (const StormRecord& r : sim.storms()) {
    Json s;
    s["queue"] = queue_name(t, QueueId{r.sw, r.port, r.prio});
    s["paused_since_ns"] = r.paused_since;
    s["detected_ns"] = r.detected_at;
    s["restored_ns"] = r.restored ? Json(r.restored_at) : Json(nullptr);
    storms.push_back(s);
  }
  j["storms"] = storms;
  // What the action dropped, per queue that dropped anything.
  Json dropped = Json::array();
  std::uint64_t total_packets = 0;
  std::uint64_t total_bytes = 0;
  for (std::uint32_t s = 0; s < t.num_switches; ++s) {
    const SwitchModel& m = sim.switches()[s];
    for (std::uint16_t p = 0; p < m.num_ports(); ++p) {
      for (std::uint8_t pr = 0; pr < pfc::kNumPriorities; ++pr) {
        const SwitchQueueCounters& c = m.counters(p, pr);
        if (c.wd_flushed_packets + c.wd_refused_packets == 0) continue;
        Json d;
        d["queue"] = queue_name(t, QueueId{s, p, pr});
        d["flushed_packets"] = c.wd_flushed_packets;
        d["flushed_bytes"] = c.wd_flushed_bytes;
        d["refused_packets"] = c.wd_refused_packets;
        d["refused_bytes"] = c.wd_refused_bytes;
        total_packets += c.wd_flushed_packets + c.wd_refused_packets;
        total_bytes += c.wd_flushed_bytes + c.wd_refused_bytes;
        dropped.push_back(d);
      }
    }
  }
  j["dropped"] = dropped;
  j["dropped_packets_total"] = total_packets;
  j["dropped_bytes_total"] = total_bytes;
  return j;
}

}  // namespace

std::string summary_json(const Simulator& sim) {
  const Scenario& sc = sim.scenario();
  const Topology& t = sim.topology();
  Json j;
  j["scenario"] = sc.name;
  j["seed"] = sim.seed();
  j["duration_ns"] = sc.duration_ns;
  j["end_ns"] = sim.end_ns();
  j["stop_reason"] = sim.stop_reason() == StopReason::kDeadlock       ? "deadlock"
                     : sim.stop_reason() == StopReason::kWorkloadDone ? "workload_done"
                                                                      : "duration";
  j["events"] = sim.events_processed();
  j["flows"] = flows_json(sim);
  // Only runs with engine hosts have these (older summaries are unchanged).
  bool engines = false;
  for (const HostSpec& h : sc.hosts) engines = engines || h.engine;
  if (engines) {
    j["rc_flows"] = rc_flows_json(sim);
    // Only with DC flows (older summaries are unchanged).
    if (!sc.dc_flows.empty()) j["dc_flows"] = dc_flows_json(sim);
    j["engine"] = engine_json(sim);
  }
  if (sc.workload.enabled) j["workload"] = workload_json(sim);
  j["hosts"] = hosts_json(sim);
  j["switches"] = switches_json(sim);
  j["links"] = links_json(sim);
  Json dl;
  dl["enabled"] = sc.deadlock.enabled;
  dl["stall_ns"] = sc.deadlock.stall_ns;
  dl["check_ns"] = sc.deadlock.check_ns;
  dl["list"] = deadlocks_json(sim);
  j["deadlocks"] = dl;
  j["watchdog"] = watchdog_json(sim);
  Json rc = Json::array();
  for (std::size_t i = 0; i < t.route_changes.size(); ++i) {
    const RouteChangeSpec& r = sc.route_changes[i];
    Json x;
    x["at_ns"] = r.at_ns;
    x["switch"] = r.sw;
    x["dst"] = r.dst;
    x["via"] = r.via.empty() ? Json(nullptr) : Json(r.via);
    x["applied_ns"] = time_or_null(sim.route_changes_applied()[i]);
    rc.push_back(x);
  }
  j["route_changes"] = rc;
  Json lc = Json::array();
  for (std::size_t i = 0; i < t.link_changes.size(); ++i) {
    const LinkChangeSpec& c = sc.link_changes[t.link_changes[i].index];
    Json x;
    x["at_ns"] = c.at_ns;
    x["link"] = t.link_name(t.link_changes[i].link);
    x["up"] = c.up;
    x["applied_ns"] = time_or_null(sim.link_changes_applied()[i]);
    x["reconverged_ns"] = time_or_null(sim.reconverged()[i]);
    lc.push_back(x);
  }
  j["link_changes"] = lc;
  Json inj = Json::array();
  for (std::size_t i = 0; i < sc.pfc_injections.size(); ++i) {
    const PfcInjectSpec& p = sc.pfc_injections[i];
    const InjectRecord& r = sim.injections()[i];
    Json x;
    x["from"] = p.from;
    x["to"] = p.to;
    x["at_ns"] = p.at_ns;
    x["sent_ns"] = time_or_null(r.sent_at);
    x["arrived_ns"] = time_or_null(r.arrived_at);
    x["verdict"] =
        r.delivered ? Json(std::string(wire::pfc_parse_error_name(r.verdict))) : Json(nullptr);
    inj.push_back(x);
  }
  j["pfc_injections"] = inj;
  return j.dump(2) + "\n";
}

}  // namespace uroce::testbed
