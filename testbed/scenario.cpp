#include "testbed/scenario.h"

#include <algorithm>
#include <bit>
#include <deque>
#include <map>

#include "datapath/wire/builder.h"
#include "datapath/wire/deth.h"
#include "datapath/wire/opcodes.h"
#include "testbed/switch/ecmp.h"
#include "testbed/workload_scenario.h"

namespace uroce::testbed {

namespace {

constexpr std::uint32_t kMaxNodes = 4096;

std::string idx(const char* what, std::size_t i) {
  return std::string(what) + "[" + std::to_string(i) + "]";
}

std::string gbps(std::uint64_t bps) {
  // Whole or fractional Gb/s without trailing zeros, for messages.
  std::string s = std::to_string(static_cast<double>(bps) / 1e9);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

// Frame sizes a flow may send: a RoCEv2 UD SEND with no payload up to one
// with a full 4096-byte path MTU, as the pcap tap writes them.
constexpr std::uint32_t kMinFlowFrame =
    static_cast<std::uint32_t>(wire::kRoceFrameOverhead + wire::DethHdr::kSize);
constexpr std::uint32_t kMaxFlowFrame = kMinFlowFrame + wire::kMaxPathMtuBytes;

}  // namespace

std::string Topology::link_name(std::uint32_t link) const {
  return names[links[link][0].node] + "-" + names[links[link][1].node];
}

void fill_routes(const Scenario& sc, Topology& t, const std::vector<bool>& link_down) {
  const std::size_t num_nodes = t.names.size();
  t.routes.assign(t.num_switches, std::vector<std::vector<std::uint16_t>>(t.num_hosts));
  if (sc.auto_routes) {
    // Shortest paths: BFS from each destination host over the links up;
    // hosts other than the destination do not forward.
    for (std::uint32_t h = 0; h < t.num_hosts; ++h) {
      std::vector<std::uint32_t> dist(num_nodes, ~0u);
      std::deque<std::uint32_t> todo{h};
      dist[h] = 0;
      while (!todo.empty()) {
        const std::uint32_t n = todo.front();
        todo.pop_front();
        if (n != h && t.is_host(n)) continue;
        for (const auto& p : t.ports[n]) {
          if (link_down[p.link] || dist[p.peer.node] != ~0u) continue;
          dist[p.peer.node] = dist[n] + 1;
          todo.push_back(p.peer.node);
        }
      }
      for (std::uint32_t s = 0; s < t.num_switches; ++s) {
        const std::uint32_t n = t.switch_node(s);
        std::uint32_t best = ~0u;
        for (std::size_t p = 0; p < t.ports[n].size(); ++p) {
          const Topology::PortInfo& pi = t.ports[n][p];
          if (link_down[pi.link] || (t.is_host(pi.peer.node) && pi.peer.node != h)) continue;
          best = std::min(best, dist[pi.peer.node]);
        }
        if (best == ~0u) continue;
        // Without ECMP the lowest such port; with it every one, up to the
        // switch model's group size, in port order.
        std::vector<std::uint16_t>& g = t.routes[s][h];
        for (std::size_t p = 0; p < t.ports[n].size(); ++p) {
          const Topology::PortInfo& pi = t.ports[n][p];
          if (link_down[pi.link] || (t.is_host(pi.peer.node) && pi.peer.node != h)) continue;
          if (dist[pi.peer.node] != best) continue;
          g.push_back(static_cast<std::uint16_t>(p));
          if (!sc.ecmp || g.size() == kMaxRoutePorts) break;
        }
      }
    }
  }
  for (const StaticRoute& r : t.static_routes) t.routes[r.sw][r.dst] = {r.port};
}

std::string path_mtu_error(const Scenario& sc, const std::string& key, std::uint32_t mtu,
                           std::span<const std::uint32_t> ends, bool dc) {
  const std::optional<wire::PathMtu> m = wire::path_mtu_from_bytes(mtu);
  if (!m) return key + ": " + std::to_string(mtu) + " is not 256, 512, 1024, 2048 or 4096";
  // The path MTU must not exceed what each host's engine reports active
  // (wire::path_mtu_for_eth_mtu: mtu + 64 header bytes <= eth_mtu; a DC
  // packet carries more headers, wire::dc_path_mtu_for_eth_mtu).
  for (const std::uint32_t h : ends) {
    const std::uint32_t emtu = sc.hosts[h].eth_mtu;
    const std::string& name = sc.hosts[h].name;
    const std::optional<wire::PathMtu> active =
        dc ? wire::dc_path_mtu_for_eth_mtu(emtu) : wire::path_mtu_for_eth_mtu(emtu);
    if (!active && !dc) {
      return key + ": the eth_mtu " + std::to_string(emtu) + " of '" + name +
             "' fits no path MTU (it needs at least " + std::to_string(wire::kMinRoceEthMtu) + ")";
    }
    if (!active || *m > *active) {
      return key + ": " + std::to_string(mtu) + " does not fit the eth_mtu " +
             std::to_string(emtu) + " of '" + name + "'" + (dc ? " with DC headers" : "");
    }
  }
  return {};
}

std::string resolve(const Scenario& sc, Topology& out) {
  out = Topology{};
  if (sc.duration_ns == 0) return "scenario.duration_ms: must be > 0";
  if (sc.hosts.empty()) return "host: a scenario needs at least one [[host]]";
  if (sc.hosts.size() + sc.switches.size() > kMaxNodes) {
    return "scenario: more than " + std::to_string(kMaxNodes) + " nodes";
  }
  out.num_hosts = static_cast<std::uint32_t>(sc.hosts.size());
  out.num_switches = static_cast<std::uint32_t>(sc.switches.size());
  std::map<std::string, std::uint32_t> by_name;
  std::map<std::string, std::string> where;  // name -> "host[i]" for messages
  auto add_name = [&](const std::string& name, const std::string& entry) -> std::string {
    if (name.empty()) return entry + ".name: must not be empty";
    if (name.find('-') != std::string::npos || name.find(':') != std::string::npos) {
      return entry + ".name: '" + name + "' may not contain '-' or ':'";
    }
    const auto it = where.find(name);
    if (it != where.end()) {
      return entry + ".name: duplicate name '" + name + "' (also " + it->second + ")";
    }
    where[name] = entry;
    by_name[name] = static_cast<std::uint32_t>(out.names.size());
    out.names.push_back(name);
    return {};
  };
  for (std::size_t i = 0; i < sc.hosts.size(); ++i) {
    if (auto e = add_name(sc.hosts[i].name, idx("host", i)); !e.empty()) return e;
    // The engine's own PFC and its CPU cost exist only where the engine runs.
    const HostSpec& hs = sc.hosts[i];
    const char* key = hs.engine_pfc != 0                                    ? ".pfc"
                      : hs.engine_poll_ns != 0                              ? ".poll_cost_us"
                      : hs.engine_dcqcn                                     ? ".dcqcn"
                      : hs.engine_sched.isolation != sched::Isolation::kOff ? ".isolation"
                      : hs.engine_tx_limit_bytes != 0                       ? ".tx_limit_bytes"
                      : hs.engine_lossy                                     ? ".lossy"
                                                                            : nullptr;
    if (!hs.engine && key != nullptr) {
      return idx("host", i) + " (" + hs.name + ")" + key + ": host '" + hs.name +
             "' does not run the engine (kind = \"engine\")";
    }
  }
  for (std::size_t i = 0; i < sc.switches.size(); ++i) {
    if (auto e = add_name(sc.switches[i].name, idx("switch", i)); !e.empty()) return e;
  }
  const auto num_nodes = static_cast<std::uint32_t>(out.names.size());
  out.ports.assign(num_nodes, {});

  // Links.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::size_t> pairs;
  for (std::size_t l = 0; l < sc.links.size(); ++l) {
    const LinkSpec& ls = sc.links[l];
    const std::string e = idx("link", l);
    const auto a = by_name.find(ls.a);
    if (a == by_name.end()) return e + ".a: unknown node '" + ls.a + "'";
    const auto b = by_name.find(ls.b);
    if (b == by_name.end()) return e + ".b: unknown node '" + ls.b + "'";
    if (a->second == b->second) return e + ": links '" + ls.a + "' to itself";
    if (ls.rate_bps == 0) return e + ".rate_gbps: must be > 0";
    const auto key = std::minmax(a->second, b->second);
    const auto dup = pairs.find(key);
    if (dup != pairs.end()) {
      return e + ": a second link between '" + ls.a + "' and '" + ls.b + "' (also " +
             idx("link", dup->second) + "; parallel links are not supported)";
    }
    pairs[key] = l;
    for (const std::uint32_t n : {a->second, b->second}) {
      if (out.is_host(n) && !out.ports[n].empty()) {
        return e + ": host '" + out.names[n] + "' already has a link (a host has exactly one)";
      }
    }
    if (out.ports[a->second].size() >= kMaxSwitchPorts ||
        out.ports[b->second].size() >= kMaxSwitchPorts) {
      return e + ": more than " + std::to_string(kMaxSwitchPorts) + " ports on a node";
    }
    const auto pa = static_cast<std::uint16_t>(out.ports[a->second].size());
    const auto pb = static_cast<std::uint16_t>(out.ports[b->second].size());
    out.links.push_back({PortEnd{a->second, pa}, PortEnd{b->second, pb}});
    out.ports[a->second].push_back({static_cast<std::uint32_t>(l), 0, PortEnd{b->second, pb}});
    out.ports[b->second].push_back({static_cast<std::uint32_t>(l), 1, PortEnd{a->second, pa}});
  }
  for (std::uint32_t n = 0; n < num_nodes; ++n) {
    if (out.ports[n].empty()) {
      return std::string(out.is_host(n) ? "host" : "switch") + " '" + out.names[n] +
             "' has no link";
    }
  }
  // Connectivity: every node reachable from the first host.
  {
    std::vector<bool> seen(num_nodes, false);
    std::deque<std::uint32_t> todo{0};
    seen[0] = true;
    while (!todo.empty()) {
      const std::uint32_t n = todo.front();
      todo.pop_front();
      for (const auto& p : out.ports[n]) {
        if (!seen[p.peer.node]) {
          seen[p.peer.node] = true;
          todo.push_back(p.peer.node);
        }
      }
    }
    for (std::uint32_t n = 0; n < num_nodes; ++n) {
      if (!seen[n]) {
        return "topology is disconnected: '" + out.names[n] + "' cannot be reached from '" +
               out.names[0] + "'";
      }
    }
  }

  // Switch buffers, with the network-wide PFC settings.
  for (std::uint32_t s = 0; s < out.num_switches; ++s) {
    const SwitchConfig cfg = switch_config(sc, out, s, 1);
    const SharedBufferConfigError be = SharedBuffer::check(cfg.buffer, cfg.ports);
    const std::string e = idx("switch", s) + " (" + sc.switches[s].name + ")";
    if (be == SharedBufferConfigError::kHeadroomExceedsBuffer) {
      return e + ": headroom_bytes " + std::to_string(cfg.buffer.headroom_bytes) + " x " +
             std::to_string(cfg.ports.size()) + " ports x " +
             std::to_string(std::popcount(cfg.buffer.pfc_enable)) +
             " lossless priorities leaves no shared space in buffer_bytes " +
             std::to_string(cfg.buffer.buffer_bytes);
    }
    if (be != SharedBufferConfigError::kOk) {
      return e + ": buffer: " + std::string(shared_buffer_config_error_name(be));
    }
    const SwitchConfigError se = SwitchModel::check(cfg);
    if (se == SwitchConfigError::kBadEcnThresholds) {
      return e + ".ecn_kmin_bytes: greater than ecn_kmax_bytes";
    }
    if (se != SwitchConfigError::kOk) {
      return e + ": " + std::string(switch_config_error_name(se));
    }
  }

  auto port_to = [&](std::uint32_t node, std::uint32_t peer) -> std::int32_t {
    for (std::size_t p = 0; p < out.ports[node].size(); ++p) {
      if (out.ports[node][p].peer.node == peer) return static_cast<std::int32_t>(p);
    }
    return -1;
  };
  // Shared by [[route]] and [[route_change]]: resolves (switch, dst, via).
  auto resolve_route = [&](const std::string& e, const std::string& sw, const std::string& dst,
                           const std::string& via, bool allow_remove, std::uint32_t& s_out,
                           std::uint16_t& h_out, std::int32_t& p_out) -> std::string {
    const auto s = by_name.find(sw);
    if (s == by_name.end()) return e + ".switch: unknown node '" + sw + "'";
    if (out.is_host(s->second)) return e + ".switch: '" + sw + "' is a host, not a switch";
    const auto d = by_name.find(dst);
    if (d == by_name.end()) return e + ".dst: unknown node '" + dst + "'";
    if (!out.is_host(d->second)) return e + ".dst: '" + dst + "' is a switch, not a host";
    s_out = s->second - out.num_hosts;
    h_out = static_cast<std::uint16_t>(d->second);
    if (via.empty() && allow_remove) {
      p_out = -1;
      return {};
    }
    const auto v = by_name.find(via);
    if (v == by_name.end()) return e + ".via: unknown node '" + via + "'";
    p_out = port_to(s->second, v->second);
    if (p_out < 0) return e + ".via: '" + via + "' is not a neighbour of '" + sw + "'";
    return {};
  };
  {
    std::map<std::pair<std::uint32_t, std::uint16_t>, std::size_t> seen;
    for (std::size_t r = 0; r < sc.routes.size(); ++r) {
      const RouteSpec& rs = sc.routes[r];
      const std::string e = idx("route", r);
      std::uint32_t s = 0;
      std::uint16_t h = 0;
      std::int32_t p = -1;
      if (auto err = resolve_route(e, rs.sw, rs.dst, rs.via, false, s, h, p); !err.empty()) {
        return err;
      }
      const auto it = seen.find({s, h});
      if (it != seen.end()) {
        return e + ": a second route to '" + rs.dst + "' at '" + rs.sw + "' (also " +
               idx("route", it->second) + ")";
      }
      seen[{s, h}] = r;
      out.static_routes.push_back(StaticRoute{s, h, static_cast<std::uint16_t>(p)});
    }
  }
  fill_routes(sc, out, std::vector<bool>(out.links.size(), false));
  for (std::size_t r = 0; r < sc.route_changes.size(); ++r) {
    const RouteChangeSpec& rc = sc.route_changes[r];
    const std::string e = idx("route_change", r);
    ResolvedRouteChange c;
    c.at_ns = rc.at_ns;
    if (auto err = resolve_route(e, rc.sw, rc.dst, rc.via, true, c.sw, c.dst, c.port);
        !err.empty()) {
      return err;
    }
    if (rc.at_ns >= sc.duration_ns) {
      return e + ".at_us: " + std::to_string(rc.at_ns / kNsPerUs) +
             " us is not before the end of the run (duration_ms)";
    }
    out.route_changes.push_back(c);
  }
  for (std::size_t r = 0; r < sc.link_changes.size(); ++r) {
    const LinkChangeSpec& lc = sc.link_changes[r];
    const std::string e = idx("link_change", r);
    ResolvedLinkChange c;
    c.index = static_cast<std::uint32_t>(r);
    c.at_ns = lc.at_ns;
    c.up = lc.up;
    std::size_t l = 0;
    while (l < out.links.size() && lc.link != out.link_name(static_cast<std::uint32_t>(l)) &&
           lc.link != out.names[out.links[l][1].node] + "-" + out.names[out.links[l][0].node]) {
      ++l;
    }
    if (l == out.links.size()) return e + ".link: no link '" + lc.link + "' (write it \"a-b\")";
    c.link = static_cast<std::uint32_t>(l);
    // A disabled change is left out of the run: its time may lie beyond.
    if (!lc.enabled) continue;
    if (lc.at_ns >= sc.duration_ns) {
      return e + ".at_us: " + std::to_string(lc.at_ns / kNsPerUs) +
             " us is not before the end of the run (duration_ms)";
    }
    out.link_changes.push_back(c);
  }

  // Flows.
  for (std::size_t f = 0; f < sc.flows.size(); ++f) {
    const FlowSpec& fs = sc.flows[f];
    const std::string e = idx("flow", f) + (fs.name.empty() ? "" : " (" + fs.name + ")");
    const auto s = by_name.find(fs.src);
    if (s == by_name.end()) return e + ".src: unknown node '" + fs.src + "'";
    if (!out.is_host(s->second)) return e + ".src: '" + fs.src + "' is a switch, not a host";
    const auto d = by_name.find(fs.dst);
    if (d == by_name.end()) return e + ".dst: unknown node '" + fs.dst + "'";
    if (!out.is_host(d->second)) return e + ".dst: '" + fs.dst + "' is a switch, not a host";
    if (s->second == d->second) return e + ".dst: same host as src";
    if (fs.rate_bps == 0) return e + ".rate_gbps: must be > 0";
    const LinkSpec& hl = sc.links[out.ports[s->second][0].link];
    if (fs.rate_bps > hl.rate_bps) {
      return e + ".rate_gbps: " + gbps(fs.rate_bps) + " Gb/s exceeds the " + gbps(hl.rate_bps) +
             " Gb/s link of '" + fs.src + "'";
    }
    if (fs.size_bytes < kMinFlowFrame || fs.size_bytes > kMaxFlowFrame) {
      return e + ".size_bytes: " + std::to_string(fs.size_bytes) + " is outside " +
             std::to_string(kMinFlowFrame) + ".." + std::to_string(kMaxFlowFrame);
    }
    if (fs.ttl == 0) return e + ".ttl: must be 1..255";
    if (fs.prio >= 8) return e + ".prio: must be 0..7";
    if (fs.stop_ns != kNever && fs.stop_ns <= fs.start_ns) {
      return e + ".stop_us: not after start_us";
    }
    if (fs.jitter < 0.0 || fs.jitter >= 1.0) return e + ".jitter: must be in [0, 1)";
    out.flows.push_back(
        {static_cast<std::uint16_t>(s->second), static_cast<std::uint16_t>(d->second)});
  }

  // RC flows between engine hosts.
  for (std::size_t f = 0; f < sc.rc_flows.size(); ++f) {
    const RcFlowSpec& fs = sc.rc_flows[f];
    const std::string e = idx("rc_flow", f) + (fs.name.empty() ? "" : " (" + fs.name + ")");
    std::uint32_t ends[2] = {0, 0};
    const std::string* names[2] = {&fs.src, &fs.dst};
    const char* keys[2] = {".src", ".dst"};
    for (int k = 0; k < 2; ++k) {
      const auto n = by_name.find(*names[k]);
      if (n == by_name.end()) return e + keys[k] + ": unknown node '" + *names[k] + "'";
      if (!out.is_host(n->second)) {
        return e + keys[k] + ": '" + *names[k] + "' is a switch, not a host";
      }
      if (!sc.hosts[n->second].engine) {
        return e + keys[k] + ": host '" + *names[k] +
               "' does not run the engine (kind = \"engine\")";
      }
      ends[k] = n->second;
    }
    if (ends[0] == ends[1]) return e + ".dst: same host as src";
    if (std::string m = path_mtu_error(sc, e + ".mtu", fs.mtu, ends, false); !m.empty()) {
      return m;
    }
    if (fs.start_ns >= sc.duration_ns) {
      return e + ".start_us: " + std::to_string(fs.start_ns / kNsPerUs) +
             " us is not before the end of the run (duration_ms)";
    }
    out.rc_flows.push_back(
        {static_cast<std::uint16_t>(ends[0]), static_cast<std::uint16_t>(ends[1])});
  }

  // DC fan-outs between engine hosts.
  for (std::size_t f = 0; f < sc.dc_flows.size(); ++f) {
    const DcFlowSpec& ds = sc.dc_flows[f];
    const std::string e = idx("dc_flow", f) + (ds.name.empty() ? "" : " (" + ds.name + ")");
    // An engine host by name, or the problem with it.
    auto engine_host = [&](const std::string& name, const std::string& key,
                           std::uint32_t* h) -> std::string {
      const auto n = by_name.find(name);
      if (n == by_name.end()) return e + key + ": unknown node '" + name + "'";
      if (!out.is_host(n->second)) return e + key + ": '" + name + "' is a switch, not a host";
      if (!sc.hosts[n->second].engine) {
        return e + key + ": host '" + name + "' does not run the engine (kind = \"engine\")";
      }
      *h = n->second;
      return {};
    };
    ResolvedDcFlow r;
    std::uint32_t src = 0;
    if (std::string m = engine_host(ds.src, ".src", &src); !m.empty()) return m;
    r.src = static_cast<std::uint16_t>(src);
    if (ds.targets.empty()) return e + ".targets: empty (at least one target host)";
    std::vector<bool> seen(out.num_hosts, false);
    for (const std::string& name : ds.targets) {
      std::uint32_t h = 0;
      if (std::string m = engine_host(name, ".targets", &h); !m.empty()) return m;
      if (h == src) return e + ".targets: '" + name + "' is the source";
      if (seen[h]) return e + ".targets: '" + name + "' is listed twice";
      seen[h] = true;
      r.targets.push_back(static_cast<std::uint16_t>(h));
    }
    std::vector<std::uint32_t> ends = {src};
    for (const std::uint16_t t : r.targets) ends.push_back(t);
    if (std::string m = path_mtu_error(sc, e + ".mtu", ds.mtu, ends, true); !m.empty()) return m;
    if (ds.start_ns >= sc.duration_ns) {
      return e + ".start_us: " + std::to_string(ds.start_ns / kNsPerUs) +
             " us is not before the end of the run (duration_ms)";
    }
    out.dc_flows.push_back(std::move(r));
  }

  // PFC injections.
  for (std::size_t i = 0; i < sc.pfc_injections.size(); ++i) {
    const PfcInjectSpec& in = sc.pfc_injections[i];
    const std::string e = idx("pfc_inject", i);
    const auto f = by_name.find(in.from);
    if (f == by_name.end()) return e + ".from: unknown node '" + in.from + "'";
    const auto t = by_name.find(in.to);
    if (t == by_name.end()) return e + ".to: unknown node '" + in.to + "'";
    const std::int32_t p = port_to(f->second, t->second);
    if (p < 0) return e + ".to: '" + in.to + "' is not a neighbour of '" + in.from + "'";
    if (in.at_ns >= sc.duration_ns) return e + ".at_us: not before the end of the run";
    if (in.length > 60) return e + ".length: at most 60 bytes";
    ResolvedInject r;
    r.from = PortEnd{f->second, static_cast<std::uint16_t>(p)};
    r.link = out.ports[f->second][static_cast<std::size_t>(p)].link;
    out.injections.push_back(r);
  }

  // The rest of the settings.
  if (sc.pfc.xoff_quanta == 0) return "pfc.xoff_quanta: must be 1..65535";
  if (sc.pfc.max_quanta == 0) return "pfc.max_quanta: must be 1..65535";
  if (sc.pfc.refresh_percent == 0 || sc.pfc.refresh_percent >= 100) {
    return "pfc.refresh_percent: must be 1..99";
  }
  if (sc.deadlock.enabled && (sc.deadlock.stall_ns == 0 || sc.deadlock.check_ns == 0)) {
    return "deadlock: stall_us and check_us must be > 0";
  }
  if (sc.watchdog.enabled && (sc.watchdog.detection_ns == 0 || sc.watchdog.restoration_ns == 0)) {
    return "watchdog: detection_ms and restoration_ms must be > 0";
  }
  if (sc.output.sample_ns == 0) return "output.sample_us: must be > 0";
  out.pcap_link.assign(out.links.size(), sc.output.pcap);
  for (std::size_t i = 0; i < sc.output.pcap_links.size(); ++i) {
    const std::string& want = sc.output.pcap_links[i];
    bool found = false;
    for (std::uint32_t l = 0; l < out.links.size(); ++l) {
      const std::string fwd = out.link_name(l);
      const std::string rev =
          out.names[out.links[l][1].node] + "-" + out.names[out.links[l][0].node];
      if (want == fwd || want == rev) {
        out.pcap_link[l] = true;
        found = true;
      }
    }
    if (!found) return idx("output.pcap_links", i) + ": no link '" + want + "'";
  }

  // Addresses: locally administered MACs and 10.0.x.y host IPs by node id.
  out.macs.resize(num_nodes);
  for (std::uint32_t n = 0; n < num_nodes; ++n) {
    out.macs[n] = wire::MacAddr{{0x02, 0x00, 0x00, static_cast<std::uint8_t>(n >> 16),
                                 static_cast<std::uint8_t>(n >> 8), static_cast<std::uint8_t>(n)}};
  }
  out.ips.resize(out.num_hosts);
  for (std::uint32_t h = 0; h < out.num_hosts; ++h) {
    out.ips[h] = wire::Ipv4Addr{(10u << 24) | ((h + 1) & 0xffff)};
  }
  return resolve_workload(sc, out);
}

SwitchConfig switch_config(const Scenario& sc, const Topology& topo, std::uint32_t sw,
                           std::uint64_t seed) {
  SwitchConfig cfg;
  const SwitchSpec& ss = sc.switches[sw];
  cfg.buffer = ss.buffer;
  cfg.buffer.pfc_enable = sc.pfc.enable;
  cfg.buffer.xoff_quanta = sc.pfc.xoff_quanta;
  cfg.buffer.refresh_percent = sc.pfc.refresh_percent;
  const std::uint32_t node = topo.switch_node(sw);
  for (const auto& p : topo.ports[node]) {
    SharedBufferPort sp;
    sp.link_bps = sc.links[p.link].rate_bps;
    sp.mac = topo.macs.empty() ? wire::MacAddr{} : topo.macs[node];
    cfg.ports.push_back(sp);
  }
  cfg.max_quanta = sc.pfc.max_quanta;
  cfg.watchdog = sc.watchdog.enabled;
  cfg.watchdog_cfg.detection_ns = sc.watchdog.detection_ns;
  cfg.watchdog_cfg.restoration_ns = sc.watchdog.restoration_ns;
  cfg.watchdog_cfg.action = sc.watchdog.action;
  cfg.watchdog_cfg.enable = 0xff;
  cfg.ecn = ss.ecn;
  cfg.num_destinations = static_cast<std::uint16_t>(topo.num_hosts);
  cfg.seed = seed;
  cfg.adaptive = ss.adaptive;
  return cfg;
}

}  // namespace uroce::testbed
