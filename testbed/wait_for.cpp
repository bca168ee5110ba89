#include "testbed/wait_for.h"

namespace uroce::testbed {

std::string queue_name(const Topology& topo, const QueueId& q) {
  const std::uint32_t node = topo.switch_node(q.sw);
  const PortEnd peer = topo.ports[node][q.port].peer;
  return topo.names[node] + ">" + topo.names[peer.node] + "/" + std::to_string(q.prio);
}

void build_wait_for_graph(const Topology& topo, const std::vector<SwitchModel>& switches,
                          TimeNs now, WaitForGraph& g) {
  g.clear();
  // index[sw][port * 8 + prio] = node index or -1.
  std::vector<std::vector<std::int64_t>> index(switches.size());
  for (std::uint32_t s = 0; s < switches.size(); ++s) {
    const SwitchModel& sw = switches[s];
    index[s].assign(sw.num_ports() * pfc::kNumPriorities, -1);
    for (std::uint16_t p = 0; p < sw.num_ports(); ++p) {
      for (std::uint8_t c = 0; c < pfc::kNumPriorities; ++c) {
        if (sw.egress_packets(p, c) == 0 || !sw.paused(p, c, now)) continue;
        index[s][std::size_t{p} * pfc::kNumPriorities + c] =
            g.add_node(queue_key(QueueId{s, p, c}), sw.progress_at(p, c));
      }
    }
  }
  for (std::uint32_t s = 0; s < switches.size(); ++s) {
    const std::uint32_t node = topo.switch_node(s);
    for (std::uint16_t p = 0; p < switches[s].num_ports(); ++p) {
      const PortEnd peer = topo.ports[node][p].peer;
      if (topo.is_host(peer.node)) continue;
      const std::uint32_t t = peer.node - topo.num_hosts;
      const SwitchModel& down = switches[t];
      for (std::uint8_t c = 0; c < pfc::kNumPriorities; ++c) {
        const std::int64_t from = index[s][std::size_t{p} * pfc::kNumPriorities + c];
        if (from < 0) continue;
        for (std::uint16_t e = 0; e < down.num_ports(); ++e) {
          const std::int64_t to = index[t][std::size_t{e} * pfc::kNumPriorities + c];
          if (to < 0 || down.held(peer.port, e, c) == 0) continue;
          g.add_edge(static_cast<std::uint32_t>(from), static_cast<std::uint32_t>(to));
        }
      }
    }
  }
  g.finalize();
}

}  // namespace uroce::testbed
