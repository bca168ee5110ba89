#include "testbed/workload_scenario.h"

#include "datapath/wire/opcodes.h"

namespace uroce::testbed {

IncastSpec incast_spec(const WorkloadScenario& w, std::uint32_t hosts) {
  IncastSpec in;
  in.hosts = hosts;
  in.senders = w.incast_senders;
  in.bytes = w.incast_bytes;
  in.every_ns = w.incast_every_ns;
  return in;
}

namespace {

// The link directions from host s to host d along the routes at time 0 (the
// first port of an ECMP group: its members are equally short), or
// "" in `err` when there is none (no route, or more hops than nodes: a
// loop).
std::vector<std::uint32_t> path_of(const Topology& t, std::uint32_t s, std::uint32_t d,
                                   std::string& err) {
  std::vector<std::uint32_t> dirs;
  std::uint32_t node = s;
  std::uint16_t port = 0;
  const std::size_t max_hops = t.names.size();
  while (dirs.size() <= max_hops) {
    const Topology::PortInfo& pi = t.ports[node][port];
    dirs.push_back(2 * pi.link + pi.dir);
    node = pi.peer.node;
    if (node == d) return dirs;
    if (t.is_host(node)) break;
    const std::int32_t p = t.route(node - t.num_hosts, d);
    if (p < 0) break;
    port = static_cast<std::uint16_t>(p);
  }
  err = "no loop-free route from '" + t.names[s] + "' to '" + t.names[d] + "'";
  return {};
}

}  // namespace

std::string resolve_workload(const Scenario& sc, Topology& out) {
  const WorkloadScenario& w = sc.workload;
  if (!w.enabled) return {};
  for (std::uint32_t h = 0; h < out.num_hosts; ++h) {
    if (sc.hosts[h].engine) out.workload_hosts.push_back(h);
  }
  const auto n = static_cast<std::uint32_t>(out.workload_hosts.size());
  if (n < 2) return "workload: needs at least two hosts with kind = \"engine\"";
  const std::uint64_t rate = sc.links[out.ports[out.workload_hosts[0]][0].link].rate_bps;
  for (const std::uint32_t h : out.workload_hosts) {
    // The load is a share of one link rate: every host must have it.
    if (sc.links[out.ports[h][0].link].rate_bps != rate) {
      return "workload: the engine hosts' links differ in rate ('" + out.names[h] + "' vs '" +
             out.names[out.workload_hosts[0]] + "'); the load needs one";
    }
  }
  if (std::string m = path_mtu_error(sc, "workload.mtu", w.mtu, out.workload_hosts, false);
      !m.empty()) {
    return m;
  }
  if (w.qps_per_pair == 0) return "workload.qps_per_pair: must be >= 1";
  if (w.measure_ns == 0) return "workload.measure_ms: must be > 0";
  if (w.warmup_ns + w.measure_ns > sc.duration_ns) {
    return "workload: warmup_ms + measure_ms exceed the run (scenario.duration_ms)";
  }
  if (w.buckets == 0) return "workload.buckets: must be >= 1";
  if (w.distribution.empty()) return "workload.distribution: required (a CSV file)";
  SizeDistribution dist;
  if (std::string e = SizeDistribution::load(w.distribution, dist); !e.empty()) {
    return "workload.distribution: " + e;
  }
  out.workload_dist = w.max_length_bytes == 0 ? dist : dist.truncated(w.max_length_bytes);
  if (out.workload_dist.max_length() > std::uint64_t{1} << 31) {
    return "workload.distribution: lengths above 2 GiB (an RC message's limit) need "
           "max_length_bytes";
  }
  WorkloadSpec spec;
  spec.hosts = n;
  spec.link_bps = rate;
  spec.load = w.load;
  if (std::string e = PoissonArrivals::check(spec); !e.empty()) return "workload: " + e;
  if (w.incast_senders > 0) {
    if (std::string e = IncastArrivals::check(incast_spec(w, n)); !e.empty()) {
      return "workload." + e;
    }
  }
  out.workload_paths.assign(n, std::vector<std::vector<std::uint32_t>>(n));
  for (std::uint32_t s = 0; s < n; ++s) {
    for (std::uint32_t d = 0; d < n; ++d) {
      if (s == d) continue;
      std::string err;
      out.workload_paths[s][d] = path_of(out, out.workload_hosts[s], out.workload_hosts[d], err);
      if (!err.empty()) return "workload: " + err;
    }
  }
  return {};
}

}  // namespace uroce::testbed
