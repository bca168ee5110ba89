#include "testbed/scenario.h"

#include <gtest/gtest.h>

namespace uroce::testbed {
namespace {

HostSpec host(const std::string& n) {
  HostSpec h;
  h.name = n;
  return h;
}
SwitchSpec sw(const std::string& n) {
  SwitchSpec s;
  s.name = n;
  return s;
}
LinkSpec link(const std::string& a, const std::string& b) {
  LinkSpec l;
  l.a = a;
  l.b = b;
  return l;
}

// h1 - s1 - s2 - h2, and s1 - s3 - s2 (two paths s1 -> s2: direct and via s3).
Scenario base() {
  Scenario sc;
  sc.hosts = {host("h1"), host("h2")};
  sc.switches = {sw("s1"), sw("s2"), sw("s3")};
  sc.links = {link("h1", "s1"), link("s1", "s2"), link("s2", "h2"), link("s1", "s3"),
              link("s3", "s2")};
  FlowSpec f;
  f.src = "h1";
  f.dst = "h2";
  sc.flows = {f};
  return sc;
}

std::string err(const Scenario& sc) {
  Topology t;
  return resolve(sc, t);
}

TEST(Scenario_Resolve, PortsPeersAndShortestPathRoutes) {
  Topology t;
  ASSERT_EQ(resolve(base(), t), "");
  EXPECT_EQ(t.num_hosts, 2u);
  EXPECT_EQ(t.num_switches, 3u);
  EXPECT_EQ(t.names, (std::vector<std::string>{"h1", "h2", "s1", "s2", "s3"}));
  // s1 (node 2): ports in link order: h1, s2, s3.
  ASSERT_EQ(t.ports[2].size(), 3u);
  EXPECT_EQ(t.ports[2][0].peer.node, 0u);
  EXPECT_EQ(t.ports[2][1].peer.node, 3u);
  EXPECT_EQ(t.ports[2][1].peer.port, 0u);  // s2's first port
  EXPECT_EQ(t.ports[2][2].peer.node, 4u);
  EXPECT_EQ(t.ports[2][1].dir, 0);  // s1 is link 1's "a" end
  EXPECT_EQ(t.ports[3][0].dir, 1);
  // Routes [switch][host]: s1 -> h2 direct via s2 (port 1), s3 -> h1 via s1.
  EXPECT_EQ(t.route(0, 1), 1);
  EXPECT_EQ(t.route(0, 0), 0);
  EXPECT_EQ(t.route(1, 1), 1);  // s2: ports s1, h2, s3
  EXPECT_EQ(t.route(2, 0), 0);
  EXPECT_EQ(t.link_name(1), "s1-s2");
  EXPECT_EQ(t.ips[1].to_string(), "10.0.0.2");
  EXPECT_EQ(t.macs[4].to_string(), "02:00:00:00:00:04");
}

TEST(Scenario_Resolve, ExplicitRoutesReplaceAndRouteChangesResolve) {
  Scenario sc = base();
  sc.routes = {RouteSpec{"s1", "h2", "s3"}};
  sc.route_changes = {RouteChangeSpec{5 * kNsPerMs, "s1", "h2", "s2"},
                      RouteChangeSpec{6 * kNsPerMs, "s3", "h2", ""}};
  Topology t;
  ASSERT_EQ(resolve(sc, t), "");
  EXPECT_EQ(t.route(0, 1), 2);
  ASSERT_EQ(t.route_changes.size(), 2u);
  EXPECT_EQ(t.route_changes[0].port, 1);
  EXPECT_EQ(t.route_changes[1].sw, 2u);
  EXPECT_EQ(t.route_changes[1].port, -1);
  sc.auto_routes = false;
  ASSERT_EQ(resolve(sc, t), "");
  EXPECT_EQ(t.route(1, 1), -1);
}

// h1 - l1 = {sp1, sp2} = l2 - h2: two equal paths between the leaves.
Scenario two_spines() {
  Scenario sc;
  sc.hosts = {host("h1"), host("h2")};
  sc.switches = {sw("l1"), sw("l2"), sw("sp1"), sw("sp2")};
  sc.links = {link("h1", "l1"),  link("l1", "sp1"), link("l1", "sp2"),
              link("sp1", "l2"), link("sp2", "l2"), link("l2", "h2")};
  return sc;
}

TEST(Scenario_Resolve, EcmpGroupsEveryShortestNextHop) {
  Scenario sc = two_spines();
  Topology t;
  ASSERT_EQ(resolve(sc, t), "");
  // l1's ports: h1, sp1, sp2. Without ECMP the lowest port only.
  EXPECT_EQ(t.routes[0][1], (std::vector<std::uint16_t>{1}));
  sc.ecmp = true;
  ASSERT_EQ(resolve(sc, t), "");
  EXPECT_EQ(t.routes[0][1], (std::vector<std::uint16_t>{1, 2}));
  EXPECT_EQ(t.routes[1][0], (std::vector<std::uint16_t>{0, 1}));  // l2: sp1, sp2, h2
  EXPECT_EQ(t.routes[0][0], (std::vector<std::uint16_t>{0}));     // a host is one hop
  EXPECT_EQ(t.routes[2][1], (std::vector<std::uint16_t>{1}));     // sp1: l1, l2
  // An explicit route is one port still.
  sc.routes = {RouteSpec{"l1", "h2", "sp2"}};
  ASSERT_EQ(resolve(sc, t), "");
  EXPECT_EQ(t.routes[0][1], (std::vector<std::uint16_t>{2}));
}

TEST(Scenario_FillRoutes, DownLinksAreLeftOut) {
  Scenario sc = two_spines();
  sc.ecmp = true;
  Topology t;
  ASSERT_EQ(resolve(sc, t), "");
  std::vector<bool> down(t.links.size(), false);
  down[3] = true;  // sp1-l2
  fill_routes(sc, t, down);
  EXPECT_EQ(t.routes[0][1], (std::vector<std::uint16_t>{2}));  // l1 -> h2 via sp2 only
  EXPECT_EQ(t.routes[2][1], (std::vector<std::uint16_t>{0}));  // sp1 -> h2 back via l1
  EXPECT_EQ(t.routes[1][0], (std::vector<std::uint16_t>{1}));  // l2 -> h1 via sp2 only
  down[5] = true;                                              // l2-h2 as well
  fill_routes(sc, t, down);
  EXPECT_TRUE(t.routes[0][1].empty());
}

TEST(Scenario_Resolve, LinkChangesByNameEitherWay) {
  Scenario sc = two_spines();
  sc.duration_ns = 10 * kNsPerMs;
  sc.link_changes = {LinkChangeSpec{kNsPerMs, "sp1-l1", false, true},
                     LinkChangeSpec{2 * kNsPerMs, "l1-sp1", true, false},
                     LinkChangeSpec{3 * kNsPerMs, "l1-sp1", true, true}};
  Topology t;
  ASSERT_EQ(resolve(sc, t), "");
  ASSERT_EQ(t.link_changes.size(), 2u);  // the disabled one is left out
  EXPECT_EQ(t.link_changes[0].link, 1u);
  EXPECT_FALSE(t.link_changes[0].up);
  EXPECT_EQ(t.link_changes[1].index, 2u);
  EXPECT_TRUE(t.link_changes[1].up);
  sc.link_changes = {LinkChangeSpec{kNsPerMs, "l1-l2", false, true}};
  EXPECT_EQ(err(sc), "link_change[0].link: no link 'l1-l2' (write it \"a-b\")");
  sc.link_changes = {LinkChangeSpec{10 * kNsPerMs, "l1-sp1", false, true}};
  EXPECT_EQ(err(sc),
            "link_change[0].at_us: 10000 us is not before the end of the run (duration_ms)");
}

TEST(Scenario_Resolve, NamesAndLinksErrors) {
  Scenario sc = base();
  sc.switches[1].name = "h1";
  EXPECT_EQ(err(sc), "switch[1].name: duplicate name 'h1' (also host[0])");
  sc = base();
  sc.hosts[0].name = "a-b";
  EXPECT_EQ(err(sc), "host[0].name: 'a-b' may not contain '-' or ':'");
  sc = base();
  sc.links[2].b = "h9";
  EXPECT_EQ(err(sc), "link[2].b: unknown node 'h9'");
  sc = base();
  sc.links.push_back(link("s3", "s3"));
  EXPECT_EQ(err(sc), "link[5]: links 's3' to itself");
  sc = base();
  sc.links.push_back(link("s2", "s1"));
  EXPECT_EQ(err(sc),
            "link[5]: a second link between 's2' and 's1' (also link[1]; parallel links are not "
            "supported)");
  sc = base();
  sc.links.push_back(link("h1", "s3"));
  EXPECT_EQ(err(sc), "link[5]: host 'h1' already has a link (a host has exactly one)");
  sc = base();
  sc.hosts.push_back(host("h3"));
  EXPECT_EQ(err(sc), "host 'h3' has no link");
  sc = base();
  sc.switches.push_back(sw("s4"));
  sc.switches.push_back(sw("s5"));
  sc.links.push_back(link("s4", "s5"));
  EXPECT_EQ(err(sc), "topology is disconnected: 's4' cannot be reached from 'h1'");
  sc = base();
  sc.links[1].rate_bps = 0;
  EXPECT_EQ(err(sc), "link[1].rate_gbps: must be > 0");
  sc = base();
  sc.hosts.clear();
  EXPECT_EQ(err(sc), "host: a scenario needs at least one [[host]]");
  sc = base();
  sc.duration_ns = 0;
  EXPECT_EQ(err(sc), "scenario.duration_ms: must be > 0");
}

TEST(Scenario_Resolve, RouteErrors) {
  Scenario sc = base();
  sc.routes = {RouteSpec{"h1", "h2", "s1"}};
  EXPECT_EQ(err(sc), "route[0].switch: 'h1' is a host, not a switch");
  sc.routes = {RouteSpec{"s1", "s2", "s2"}};
  EXPECT_EQ(err(sc), "route[0].dst: 's2' is a switch, not a host");
  sc.routes = {RouteSpec{"s1", "h2", "h2"}};
  EXPECT_EQ(err(sc), "route[0].via: 'h2' is not a neighbour of 's1'");
  sc.routes = {RouteSpec{"s1", "h2", "s2"}, RouteSpec{"s1", "h2", "s3"}};
  EXPECT_EQ(err(sc), "route[1]: a second route to 'h2' at 's1' (also route[0])");
  sc.routes = {RouteSpec{"s9", "h2", "s2"}};
  EXPECT_EQ(err(sc), "route[0].switch: unknown node 's9'");
  sc = base();
  sc.route_changes = {RouteChangeSpec{sc.duration_ns, "s1", "h2", "s2"}};
  EXPECT_EQ(err(sc),
            "route_change[0].at_us: 10000 us is not before the end of the run (duration_ms)");
}

TEST(Scenario_Resolve, FlowErrors) {
  Scenario sc = base();
  sc.flows[0].rate_bps = 50'000'000'000ull;
  EXPECT_EQ(err(sc), "flow[0].rate_gbps: 50 Gb/s exceeds the 40 Gb/s link of 'h1'");
  sc = base();
  sc.flows[0].name = "big";
  sc.flows[0].size_bytes = 9000;
  EXPECT_EQ(err(sc), "flow[0] (big).size_bytes: 9000 is outside 66..4162");
  sc = base();
  sc.flows[0].dst = "h1";
  EXPECT_EQ(err(sc), "flow[0].dst: same host as src");
  sc = base();
  sc.flows[0].src = "s1";
  EXPECT_EQ(err(sc), "flow[0].src: 's1' is a switch, not a host");
  sc = base();
  sc.flows[0].start_ns = 100;
  sc.flows[0].stop_ns = 100;
  EXPECT_EQ(err(sc), "flow[0].stop_us: not after start_us");
  sc = base();
  sc.flows[0].prio = 8;
  EXPECT_EQ(err(sc), "flow[0].prio: must be 0..7");
}

TEST(Scenario_Resolve, SwitchOutputAndInjectionErrors) {
  Scenario sc = base();
  sc.switches[0].buffer.buffer_bytes = 150000;
  sc.switches[0].buffer.headroom_bytes = 50000;
  EXPECT_EQ(err(sc),
            "switch[0] (s1): headroom_bytes 50000 x 3 ports x 1 lossless priorities leaves no "
            "shared space in buffer_bytes 150000");
  sc = base();
  sc.switches[2].buffer.alpha_num = 0;
  EXPECT_EQ(err(sc), "switch[2] (s3): buffer: BadAlpha");
  sc = base();
  sc.switches[1].ecn.kmin_bytes = 10;
  sc.switches[1].ecn.kmax_bytes = 5;
  EXPECT_EQ(err(sc), "switch[1] (s2).ecn_kmin_bytes: greater than ecn_kmax_bytes");
  sc = base();
  sc.output.pcap_links = {"s2-s1", "s1-h2"};
  EXPECT_EQ(err(sc), "output.pcap_links[1]: no link 's1-h2'");
  sc = base();
  PfcInjectSpec in;
  in.from = "h1";
  in.to = "s2";
  sc.pfc_injections = {in};
  EXPECT_EQ(err(sc), "pfc_inject[0].to: 's2' is not a neighbour of 'h1'");
  sc = base();
  sc.output.pcap_links = {"s2-s1"};  // either direction names the link
  Topology t;
  ASSERT_EQ(resolve(sc, t), "");
  EXPECT_EQ(t.pcap_link, (std::vector<bool>{false, true, false, false, false}));
}

TEST(Scenario_SwitchConfig, TakesNetworkWidePfcSettings) {
  Scenario sc = base();
  sc.pfc.enable = 0x18;
  sc.pfc.xoff_quanta = 500;
  sc.watchdog.enabled = true;
  Topology t;
  ASSERT_EQ(resolve(sc, t), "");
  const SwitchConfig c = switch_config(sc, t, 0, 9);
  EXPECT_EQ(c.buffer.pfc_enable, 0x18);
  EXPECT_EQ(c.buffer.xoff_quanta, 500);
  EXPECT_EQ(c.ports.size(), 3u);
  EXPECT_EQ(c.ports[0].mac, t.macs[2]);
  EXPECT_TRUE(c.watchdog);
  EXPECT_EQ(c.num_destinations, 2);
  EXPECT_EQ(c.seed, 9u);
}

}  // namespace
}  // namespace uroce::testbed

namespace uroce::testbed {
namespace {

// base() with both hosts running the engine and one rc flow h1 -> h2.
Scenario engine_base() {
  Scenario sc = base();
  sc.hosts[0].engine = true;
  sc.hosts[1].engine = true;
  RcFlowSpec r;
  r.name = "r";
  r.src = "h1";
  r.dst = "h2";
  sc.rc_flows = {r};
  return sc;
}

TEST(Scenario_Resolve, RcFlowsResolveBetweenEngineHosts) {
  const Scenario sc = engine_base();
  Topology t;
  ASSERT_EQ(resolve(sc, t), "");
  ASSERT_EQ(t.rc_flows.size(), 1u);
  EXPECT_EQ(t.rc_flows[0].src, 0);
  EXPECT_EQ(t.rc_flows[0].dst, 1);
}

TEST(Scenario_Resolve, RcFlowErrors) {
  Scenario sc = engine_base();
  sc.hosts[1].engine = false;
  EXPECT_EQ(err(sc), "rc_flow[0] (r).dst: host 'h2' does not run the engine (kind = \"engine\")");
  sc = engine_base();
  sc.rc_flows[0].dst = "h1";
  EXPECT_EQ(err(sc), "rc_flow[0] (r).dst: same host as src");
  sc = engine_base();
  sc.rc_flows[0].src = "s1";
  EXPECT_EQ(err(sc), "rc_flow[0] (r).src: 's1' is a switch, not a host");
  sc = engine_base();
  sc.rc_flows[0].src = "h7";
  EXPECT_EQ(err(sc), "rc_flow[0] (r).src: unknown node 'h7'");
  sc = engine_base();
  sc.hosts[1].eth_mtu = 1500;
  sc.rc_flows[0].mtu = 2048;
  EXPECT_EQ(err(sc), "rc_flow[0] (r).mtu: 2048 does not fit the eth_mtu 1500 of 'h2'");
  sc.rc_flows[0].mtu = 1024;
  EXPECT_EQ(err(sc), "");
  sc = engine_base();
  sc.duration_ns = 5 * kNsPerMs;
  sc.rc_flows[0].start_ns = 5 * kNsPerMs;
  EXPECT_EQ(err(sc),
            "rc_flow[0] (r).start_us: 5000 us is not before the end of the run (duration_ms)");
}

// base() with three engine hosts and one dc flow h1 -> {h2, h3}.
Scenario dc_base() {
  Scenario sc = base();
  for (HostSpec& h : sc.hosts) h.engine = true;
  HostSpec h3 = sc.hosts[1];
  h3.name = "h3";
  sc.hosts.push_back(h3);
  sc.links.push_back(link("s1", "h3"));
  DcFlowSpec d;
  d.name = "d";
  d.src = "h1";
  d.targets = {"h2", "h3"};
  sc.dc_flows = {d};
  return sc;
}

TEST(Scenario_Resolve, DcFlowsResolveToEngineHosts) {
  const Scenario sc = dc_base();
  Topology t;
  ASSERT_EQ(resolve(sc, t), "");
  ASSERT_EQ(t.dc_flows.size(), 1u);
  EXPECT_EQ(t.dc_flows[0].src, 0);
  EXPECT_EQ(t.dc_flows[0].targets, (std::vector<std::uint16_t>{1, 2}));
}

TEST(Scenario_Resolve, DcFlowErrors) {
  Scenario sc = dc_base();
  sc.hosts[2].engine = false;
  EXPECT_EQ(err(sc),
            "dc_flow[0] (d).targets: host 'h3' does not run the engine (kind = \"engine\")");
  sc = dc_base();
  sc.dc_flows[0].targets = {};
  EXPECT_EQ(err(sc), "dc_flow[0] (d).targets: empty (at least one target host)");
  sc.dc_flows[0].targets = {"h2", "h1"};
  EXPECT_EQ(err(sc), "dc_flow[0] (d).targets: 'h1' is the source");
  sc.dc_flows[0].targets = {"h2", "h2"};
  EXPECT_EQ(err(sc), "dc_flow[0] (d).targets: 'h2' is listed twice");
  sc.dc_flows[0].targets = {"s1"};
  EXPECT_EQ(err(sc), "dc_flow[0] (d).targets: 's1' is a switch, not a host");
  sc = dc_base();
  sc.dc_flows[0].src = "h9";
  EXPECT_EQ(err(sc), "dc_flow[0] (d).src: unknown node 'h9'");
  // DC headers take 28 bytes more than RC's: 1024 fits 1500, 2048 does not
  // fit 2100 (RC's 2048 would).
  sc = dc_base();
  sc.hosts[2].eth_mtu = 2100;
  sc.dc_flows[0].mtu = 2048;
  EXPECT_EQ(err(sc),
            "dc_flow[0] (d).mtu: 2048 does not fit the eth_mtu 2100 of 'h3' with DC headers");
  sc.dc_flows[0].mtu = 1024;
  EXPECT_EQ(err(sc), "");
  sc.dc_flows[0].start_ns = sc.duration_ns;
  EXPECT_NE(err(sc).find("start_us"), std::string::npos);
}

// The one Ethernet-MTU to path-MTU mapping (wire::path_mtu_for_eth_mtu):
// a 4096-byte path MTU needs 4096 + 64 = 4160 bytes of Ethernet MTU; a
// Scenario built in code may carry any number, which resolve() refuses.
TEST(Scenario_Resolve, RcFlowMtuIsAPathMtuThatFitsBothHosts) {
  Scenario sc = engine_base();
  sc.rc_flows[0].mtu = 4096;
  sc.hosts[1].eth_mtu = 4159;
  EXPECT_EQ(err(sc), "rc_flow[0] (r).mtu: 4096 does not fit the eth_mtu 4159 of 'h2'");
  sc.hosts[1].eth_mtu = 4160;
  EXPECT_EQ(err(sc), "");
  sc.rc_flows[0].mtu = 1000;
  EXPECT_EQ(err(sc), "rc_flow[0] (r).mtu: 1000 is not 256, 512, 1024, 2048 or 4096");
  sc.rc_flows[0].mtu = 256;
  sc.hosts[0].eth_mtu = 319;
  EXPECT_EQ(err(sc),
            "rc_flow[0] (r).mtu: the eth_mtu 319 of 'h1' fits no path MTU (it needs at least 320)");
  sc.hosts[0].eth_mtu = 320;
  EXPECT_EQ(err(sc), "");
}

TEST(Scenario_Resolve, EnginePfcKeysNeedAnEngineHost) {
  Scenario sc = engine_base();
  sc.hosts[0].engine_pfc = 0x08;
  sc.hosts[1].engine_poll_ns = 1000;
  EXPECT_EQ(err(sc), "");
  sc.hosts[0].engine = false;
  EXPECT_EQ(err(sc), "host[0] (h1).pfc: host 'h1' does not run the engine (kind = \"engine\")");
  sc = engine_base();
  sc.hosts[1].engine = false;
  sc.hosts[1].engine_poll_ns = 1000;
  EXPECT_EQ(err(sc),
            "host[1] (h2).poll_cost_us: host 'h2' does not run the engine (kind = \"engine\")");
}

TEST(Scenario_Resolve, LossyNeedsAnEngineHost) {
  Scenario sc = engine_base();
  sc.hosts[0].engine_lossy = true;
  EXPECT_EQ(err(sc), "");
  sc.hosts[0].engine = false;
  EXPECT_EQ(err(sc), "host[0] (h1).lossy: host 'h1' does not run the engine (kind = \"engine\")");
}

}  // namespace
}  // namespace uroce::testbed
