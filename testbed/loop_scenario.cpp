#include "testbed/loop_scenario.h"

#include <string>

namespace uroce::testbed {

Scenario make_loop_scenario(const LoopParams& p) {
  Scenario sc;
  sc.name = "loop-n" + std::to_string(p.switches) + "-ttl" + std::to_string(p.ttl);
  sc.description = "routing loop through " + std::to_string(p.switches) + " switches";
  sc.duration_ns = p.duration_ns;
  sc.seed = p.seed;
  sc.hosts = {HostSpec{}, HostSpec{}};
  sc.hosts[0].name = "h1";
  sc.hosts[1].name = "hd";
  const unsigned n = p.switches < 2 ? 2 : p.switches;
  auto sname = [](unsigned i) { return "s" + std::to_string(i + 1); };
  for (unsigned i = 0; i < n; ++i) {
    SwitchSpec s;
    s.name = sname(i);
    s.buffer.buffer_bytes = p.buffer_bytes;
    s.buffer.headroom_bytes = p.headroom_bytes;
    s.buffer.xon_offset_bytes = p.xon_offset_bytes;
    s.buffer.alpha_num = p.alpha_num;
    s.buffer.alpha_den = p.alpha_den;
    sc.switches.push_back(s);
  }
  auto link = [&](const std::string& a, const std::string& b) {
    LinkSpec l;
    l.a = a;
    l.b = b;
    l.rate_bps = p.link_bps;
    l.delay_ns = p.delay_ns;
    sc.links.push_back(l);
  };
  link("h1", "s1");
  link("hd", "s2");
  // n = 2: one link carries the loop both ways; n >= 3: a ring.
  const unsigned ring_links = n == 2 ? 1 : n;
  for (unsigned i = 0; i < ring_links; ++i) link(sname(i), sname((i + 1) % n));
  for (unsigned i = 0; i < n; ++i) {
    sc.routes.push_back(RouteSpec{sname(i), "hd", sname((i + 1) % n)});
  }
  if (p.fix_at_ns != kNever) {
    sc.route_changes.push_back(RouteChangeSpec{p.fix_at_ns, "s2", "hd", "hd"});
  }
  FlowSpec f;
  f.name = "inject";
  f.src = "h1";
  f.dst = "hd";
  f.rate_bps = p.rate_bps;
  f.size_bytes = p.size_bytes;
  f.ttl = p.ttl;
  f.prio = 3;
  f.start_jitter_ns = p.start_jitter_ns;
  sc.flows.push_back(f);
  sc.pfc.enable = 0x08;
  sc.deadlock.enabled = true;
  sc.deadlock.stall_ns = p.stall_ns;
  sc.deadlock.check_ns = p.check_ns;
  sc.deadlock.stop = p.stop_on_deadlock;
  sc.watchdog.enabled = p.watchdog;
  sc.watchdog.detection_ns = p.watchdog_detection_ns;
  sc.watchdog.restoration_ns = p.watchdog_restoration_ns;
  sc.output.csv = false;
  return sc;
}

double loop_bound_bps(unsigned switches, std::uint64_t link_bps, unsigned ttl) {
  return static_cast<double>(switches) * static_cast<double>(link_bps) / static_cast<double>(ttl);
}

double loop_exact_bound_bps(unsigned switches, std::uint64_t link_bps, unsigned ttl) {
  const unsigned hops = ttl > 1 ? ttl - 1 : 1;
  const unsigned per_link = (hops + switches - 1) / switches;
  return static_cast<double>(link_bps) / static_cast<double>(per_link);
}

}  // namespace uroce::testbed
