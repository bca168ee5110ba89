#include "testbed/scenario_toml.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

namespace uroce::testbed {
namespace {

std::string parse(const std::string& text, Scenario& sc) {
  return scenario_from_toml(text, "t.toml", sc);
}
std::string parse(const std::string& text) {
  Scenario sc;
  return parse(text, sc);
}

const char* kMinimal = R"(
[scenario]
duration_ms = 5
[[host]]
name = "h1"
[[host]]
name = "h2"
[[switch]]
name = "s1"
[[link]]
a = "h1"
b = "s1"
[[link]]
a = "h2"
b = "s1"
)";

TEST(ScenarioToml_Parse, ShippedLoopScenario) {
  Scenario sc;
  const std::string path = std::string(UROCE_SOURCE_ROOT) + "/testbed/scenarios/loop2.toml";
  ASSERT_EQ(scenario_from_file(path, sc), "");
  EXPECT_EQ(sc.name, "loop2");
  EXPECT_EQ(sc.duration_ns, 20 * kNsPerMs);
  ASSERT_EQ(sc.switches.size(), 2u);
  EXPECT_EQ(sc.switches[1].buffer.buffer_bytes, 12'000'000u);
  EXPECT_EQ(sc.switches[1].buffer.alpha_num, 1u);
  EXPECT_EQ(sc.switches[1].buffer.alpha_den, 16u);
  ASSERT_EQ(sc.links.size(), 3u);
  EXPECT_EQ(sc.links[2].rate_bps, 40'000'000'000ull);
  EXPECT_EQ(sc.links[2].delay_ns, 1000u);
  ASSERT_EQ(sc.routes.size(), 2u);
  EXPECT_EQ(sc.routes[1].via, "s1");
  ASSERT_EQ(sc.flows.size(), 1u);
  EXPECT_EQ(sc.flows[0].rate_bps, 2'000'000'000ull);
  EXPECT_EQ(sc.flows[0].ttl, 64);
  EXPECT_EQ(sc.pfc.enable, 0x08);
  Topology t;
  EXPECT_EQ(resolve(sc, t), "");
}

TEST(ScenarioToml_Parse, DefaultsApplyAndEntriesOverride) {
  Scenario sc;
  ASSERT_EQ(parse(std::string(kMinimal) + R"(
[defaults.link]
rate_gbps = 25
delay_us = 0.5
[defaults.flow]
ttl = 16
size_bytes = 512
[[flow]]
src = "h1"
dst = "h2"
rate_gbps = 2.5
[[flow]]
name = "second"
src = "h2"
dst = "h1"
ttl = 200
stop_us = 1500.5
[deadlock]
stall_us = 250
stop = true
[watchdog]
enabled = true
detection_ms = 10
action = "ignore"
[output]
sample_us = 50
pcap_links = ["h1-s1"]
[pfc]
priorities = [3, 4]
max_quanta = 1000
)",
                  sc),
            "");
  EXPECT_EQ(sc.links[0].rate_bps, 25'000'000'000ull);
  EXPECT_EQ(sc.links[1].delay_ns, 500u);
  EXPECT_EQ(sc.flows[0].name, "f0");
  EXPECT_EQ(sc.flows[0].ttl, 16);
  EXPECT_EQ(sc.flows[0].size_bytes, 512u);
  EXPECT_EQ(sc.flows[0].rate_bps, 2'500'000'000ull);
  EXPECT_EQ(sc.flows[1].ttl, 200);
  EXPECT_EQ(sc.flows[1].stop_ns, 1'500'500u);
  EXPECT_EQ(sc.deadlock.stall_ns, 250'000u);
  EXPECT_TRUE(sc.deadlock.stop);
  EXPECT_EQ(sc.watchdog.detection_ns, 10 * kNsPerMs);
  EXPECT_EQ(sc.watchdog.action, pfc::StormAction::kIgnore);
  EXPECT_EQ(sc.output.sample_ns, 50'000u);
  EXPECT_EQ(sc.output.pcap_links, (std::vector<std::string>{"h1-s1"}));
  EXPECT_EQ(sc.pfc.enable, 0x18);
  EXPECT_EQ(sc.pfc.max_quanta, 1000);
}

TEST(ScenarioToml_Errors, UnknownKeysAreNamedWithASuggestion) {
  EXPECT_EQ(parse(std::string(kMinimal) + "[[flow]]\nsrc = \"h1\"\ndst = \"h2\"\nrate = 3\n"),
            "flow[0]: unknown key 'rate' (did you mean 'rate_gbps'?) at line 19");
  EXPECT_EQ(parse(std::string(kMinimal) + "[defaults.switch]\nbufer_bytes = 5\n"),
            "defaults.switch: unknown key 'bufer_bytes' (did you mean 'buffer_bytes'?) at line 17");
  EXPECT_EQ(parse(std::string(kMinimal) + "[extra]\nx = 1\n"),
            "scenario file: unknown key 'extra' at line 16");
  EXPECT_EQ(parse(std::string(kMinimal) + "[deadlock]\nenable = true\n"),
            "deadlock: unknown key 'enable' (did you mean 'enabled'?) at line 17");
}

TEST(ScenarioToml_Errors, TypesRangesAndMissingKeys) {
  EXPECT_EQ(parse(std::string(kMinimal) + "[[flow]]\nsrc = \"h1\"\ndst = \"h2\"\nttl = 0\n"),
            "flow[0].ttl: 0 is out of range 1..255 (line 19)");
  EXPECT_EQ(parse(std::string(kMinimal) + "[[flow]]\nsrc = \"h1\"\ndst = \"h2\"\nttl = \"64\"\n"),
            "flow[0].ttl: expected an integer, got a string (line 19)");
  EXPECT_EQ(parse(std::string(kMinimal) + "[[flow]]\nsrc = \"h1\"\ndst = \"h2\"\nrate_gbps = -1\n"),
            "flow[0].rate_gbps: -1 is out of range (0, 1e+06] (line 19)");
  EXPECT_EQ(parse(std::string(kMinimal) + "[[flow]]\nsrc = \"h1\"\n"),
            "flow[0]: missing key 'dst'");
  EXPECT_EQ(parse(std::string(kMinimal) + "[pfc]\npriorities = [3, 9]\n"),
            "pfc.priorities: priorities are integers 0..7 (line 17)");
  EXPECT_EQ(parse(std::string(kMinimal) + "[watchdog]\naction = \"shut\"\n"),
            "watchdog.action: 'shut' is not \"drop\" or \"ignore\"");
  EXPECT_EQ(parse(std::string(kMinimal) + "[[switch]]\nname = \"s2\"\nalpha = \"1/0\"\n"),
            "switch[1].alpha: '1/0' must be > 0 (line 18)");
  EXPECT_EQ(parse(std::string(kMinimal) +
                  "[[pfc_inject]]\nat_us = 1\nfrom = \"h1\"\nto = \"s1\"\nquanta = [1, 2]\n"),
            "pfc_inject[0].quanta: expected an integer or an array of 8 integers, got an array "
            "(line 20)");
  EXPECT_EQ(parse("[[host]]\nname = \"h\"\n"),
            "scenario file: missing table [scenario] (with at least duration_ms)");
  EXPECT_EQ(parse("[scenario]\nname = \"x\"\n"), "scenario: missing key 'duration_ms'");
  EXPECT_EQ(parse("[scenario]\nduration_ms = 0\n"),
            "scenario.duration_ms: 0 is out of range (0, 1e+07] (line 2)");
  EXPECT_EQ(parse("host = 3\n[scenario]\nduration_ms = 1\n"),
            "host: expected an array of tables ([[host]])");
}

// kMinimal with engine hosts and one [[rc_flow]] whose keys follow.
std::string with_rc_flow(const std::string& keys) {
  return std::string(kMinimal) + "[defaults.host]\nkind = \"engine\"\n[[rc_flow]]\n" +
         "src = \"h1\"\ndst = \"h2\"\n" + keys;
}

TEST(ScenarioToml_Parse, RcFlowKeysAndEngineHosts) {
  Scenario sc;
  ASSERT_EQ(parse(with_rc_flow("name = \"w\"\nop = \"write\"\nsize_bytes = 4096\ncount = 7\n"
                               "window = 2\nmtu = 2048\nsl = 5\nttl = 9\ntimeout = 10\n"
                               "start_us = 3\n"),
                  sc),
            "");
  ASSERT_EQ(sc.rc_flows.size(), 1u);
  const RcFlowSpec& r = sc.rc_flows[0];
  EXPECT_EQ(r.name, "w");
  EXPECT_TRUE(r.write);
  EXPECT_EQ(r.size_bytes, 4096u);
  EXPECT_EQ(r.count, 7u);
  EXPECT_EQ(r.window, 2u);
  EXPECT_EQ(r.mtu, 2048u);
  EXPECT_EQ(r.sl, 5);
  EXPECT_EQ(r.ttl, 9);
  EXPECT_EQ(r.timeout, 10);
  EXPECT_EQ(r.start_ns, 3000u);
  EXPECT_TRUE(sc.hosts[0].engine);
  EXPECT_EQ(sc.hosts[0].eth_mtu, 9000u);
  ASSERT_EQ(parse(with_rc_flow(""), sc), "");
  EXPECT_EQ(sc.rc_flows[0].name, "rc0");
  EXPECT_FALSE(sc.rc_flows[0].write);
}

// kMinimal with engine hosts and one [[dc_flow]] from h1 to h2 whose keys
// follow.
std::string with_dc_flow(const std::string& keys) {
  return std::string(kMinimal) + "[defaults.host]\nkind = \"engine\"\n[[dc_flow]]\n" +
         "src = \"h1\"\ntargets = [\"h2\"]\n" + keys;
}

TEST(ScenarioToml_Parse, DcFlowKeysAndDcHostKeys) {
  Scenario sc;
  ASSERT_EQ(parse(with_dc_flow("name = \"fan\"\nop = \"write\"\nsize_bytes = 300\ncount = 9\n"
                               "window = 3\nstreams = 8\nmtu = 2048\nsl = 5\nttl = 9\n"
                               "timeout = 10\nstart_us = 3\nenabled = false\n") +
                      "[[host]]\nname = \"h3\"\ndc_contexts = 2\ndc_records_log2 = 3\n"
                      "dc_stale_ms = 50\ndrop_rx_rate = 0.25\n",
                  sc),
            "");
  ASSERT_EQ(sc.dc_flows.size(), 1u);
  const DcFlowSpec& d = sc.dc_flows[0];
  EXPECT_EQ(d.name, "fan");
  EXPECT_EQ(d.src, "h1");
  EXPECT_EQ(d.targets, std::vector<std::string>{"h2"});
  EXPECT_TRUE(d.write);
  EXPECT_EQ(d.size_bytes, 300u);
  EXPECT_EQ(d.count, 9u);
  EXPECT_EQ(d.window, 3u);
  EXPECT_EQ(d.streams, 8u);
  EXPECT_EQ(d.mtu, 2048u);
  EXPECT_EQ(d.sl, 5);
  EXPECT_EQ(d.ttl, 9);
  EXPECT_EQ(d.timeout, 10);
  EXPECT_EQ(d.start_ns, 3000u);
  EXPECT_FALSE(d.enabled);
  const HostSpec& h3 = sc.hosts[2];
  EXPECT_EQ(h3.engine_dc_contexts, 2u);
  EXPECT_EQ(h3.engine_dc_records_log2, 3u);
  EXPECT_EQ(h3.engine_dc_stale_ms, 50u);
  EXPECT_EQ(h3.engine_drop_rx_rate, 0.25);
  EXPECT_EQ(sc.hosts[0].engine_dc_contexts, 4096u);
  EXPECT_EQ(sc.hosts[0].engine_drop_rx_rate, 0.0);
  ASSERT_EQ(parse(with_dc_flow(""), sc), "");
  EXPECT_EQ(sc.dc_flows[0].name, "dc0");
  EXPECT_FALSE(sc.dc_flows[0].write);
  EXPECT_EQ(sc.dc_flows[0].streams, 1u);
}

TEST(ScenarioToml_Errors, DcFlowKeysAndValues) {
  EXPECT_EQ(parse(with_dc_flow("stream = 2\n")),
            "dc_flow[0]: unknown key 'stream' (did you mean 'streams'?) at line 21");
  EXPECT_EQ(parse(with_dc_flow("streams = 3\n")),
            "dc_flow[0].streams: 3 is not 1, 2, 4, 8 or 16 (line 21)");
  EXPECT_EQ(parse(with_dc_flow("streams = 32\n")),
            "dc_flow[0].streams: 32 is out of range 1..16 (line 21)");
  EXPECT_EQ(parse(with_dc_flow("count = 2000000\n")),
            "dc_flow[0].count: 2000000 is out of range 1..1048576 (line 21)");
  EXPECT_EQ(parse(with_dc_flow("op = \"read\"\n")),
            "dc_flow[0].op: 'read' is not \"send\" or \"write\" (line 21)");
  EXPECT_EQ(parse(std::string(kMinimal) + "[[dc_flow]]\nsrc = \"h1\"\n"),
            "dc_flow[0]: missing key 'targets'");
  EXPECT_EQ(parse(std::string(kMinimal) + "[defaults.host]\ndc_contexts = 0\n"),
            "defaults.host.dc_contexts: 0 is out of range 1..1048576 (line 17)");
  EXPECT_EQ(parse(std::string(kMinimal) + "[defaults.host]\ndrop_rx_rate = 2\n"),
            "defaults.host.drop_rx_rate: 2 is out of range [0, 1] (line 17)");
}

TEST(ScenarioToml_Errors, RcFlowKeysAndValues) {
  EXPECT_EQ(parse(with_rc_flow("windw = 1\n")),
            "rc_flow[0]: unknown key 'windw' (did you mean 'window'?) at line 21");
  EXPECT_EQ(parse(with_rc_flow("op = \"read\"\n")),
            "rc_flow[0].op: 'read' is not \"send\" or \"write\" (line 21)");
  EXPECT_EQ(parse(with_rc_flow("mtu = 1000\n")),
            "rc_flow[0].mtu: 1000 is not 256, 512, 1024, 2048 or 4096 (line 21)");
  EXPECT_EQ(parse(with_rc_flow("mtu = 8192\n")),
            "rc_flow[0].mtu: 8192 is out of range 256..4096 (line 21)");
  EXPECT_EQ(parse(with_rc_flow("count = 0\n")),
            "rc_flow[0].count: 0 is out of range 1..1000000 (line 21)");
  EXPECT_EQ(parse(with_rc_flow("window = 2000\n")),
            "rc_flow[0].window: 2000 is out of range 1..1024 (line 21)");
  EXPECT_EQ(parse(with_rc_flow("size_bytes = 0\n")),
            "rc_flow[0].size_bytes: 0 is out of range 1..16777216 (line 21)");
  EXPECT_EQ(parse(with_rc_flow("sl = 16\n")), "rc_flow[0].sl: 16 is out of range 0..15 (line 21)");
  EXPECT_EQ(parse(with_rc_flow("timeout = 0\n")),
            "rc_flow[0].timeout: 0 is out of range 1..31 (line 21)");
  EXPECT_EQ(parse(std::string(kMinimal) + "[[rc_flow]]\nsrc = \"h1\"\n"),
            "rc_flow[0]: missing key 'dst'");
  EXPECT_EQ(parse(std::string(kMinimal) + "[defaults.host]\nkind = \"rdma\"\n"),
            "defaults.host.kind: 'rdma' is not \"constant\" or \"engine\" (line 17)");
  EXPECT_EQ(parse(std::string(kMinimal) + "[defaults.host]\neth_mtu = 100\n"),
            "defaults.host.eth_mtu: 100 is out of range 576..9216 (line 17)");
}

TEST(ScenarioToml_Errors, SyntaxErrorsCarryLineAndColumn) {
  const std::string e = parse("[scenario]\nduration_ms = = 3\n");
  EXPECT_EQ(e.rfind("t.toml:2:", 0), 0u) << e;
}

TEST(ScenarioToml_Parse, EnginePfcHostKeys) {
  Scenario sc;
  ASSERT_EQ(parse(std::string(kMinimal) + "[defaults.host]\nkind = \"engine\"\npfc = [3, 4]\n"
                                          "pfc_rx_budget = 2\npoll_cost_us = 1.5\n",
                  sc),
            "");
  EXPECT_EQ(sc.hosts[0].engine_pfc, 0x18);
  EXPECT_EQ(sc.hosts[1].engine_rx_budget, 2u);
  EXPECT_EQ(sc.hosts[1].engine_poll_ns, 1500u);
  ASSERT_EQ(parse(kMinimal, sc), "");
  EXPECT_EQ(sc.hosts[0].engine_pfc, 0);
  EXPECT_EQ(sc.hosts[0].engine_rx_budget, 64u);
  EXPECT_EQ(sc.hosts[0].engine_poll_ns, 0u);
  EXPECT_EQ(parse(std::string(kMinimal) + "[defaults.host]\npfc_rx_budget = 0\n"),
            "defaults.host.pfc_rx_budget: 0 is out of range 1..4096 (line 17)");
  EXPECT_EQ(parse(std::string(kMinimal) + "[defaults.host]\npfc = [8]\n"),
            "defaults.host.pfc: priorities are integers 0..7 (line 17)");
  EXPECT_EQ(parse(std::string(kMinimal) + "[defaults.host]\npoll_cost_us = -1\n"),
            "defaults.host.poll_cost_us: -1 is out of range [0, 1e+06] (line 17)");
}

// A link's loss_rate and the hosts' selective-repeat keys (uroced's device
// keys lossy, lossy_qps and spray_paths, with uroced's ranges).
TEST(ScenarioToml_Parse, LinkLossAndLossyHostKeys) {
  Scenario sc;
  ASSERT_EQ(parse(std::string(kMinimal) +
                      "loss_rate = 0.01\n[defaults.host]\nkind = \"engine\"\nlossy = true\n"
                      "lossy_qps = 3\nspray_paths = 4\nspray_ecn = true\n",
                  sc),
            "");
  EXPECT_EQ(sc.hosts[1].engine_spray_paths, 4u);
  EXPECT_TRUE(sc.hosts[1].engine_spray_ecn);
  EXPECT_TRUE(sc.hosts[0].engine_spray_ecn);
  EXPECT_EQ(sc.links[0].loss_rate, 0.0);
  EXPECT_EQ(sc.links[1].loss_rate, 0.01);
  EXPECT_TRUE(sc.hosts[0].engine_lossy);
  EXPECT_EQ(sc.hosts[1].engine_lossy_qps, 3u);
  ASSERT_EQ(parse(kMinimal, sc), "");
  EXPECT_FALSE(sc.hosts[0].engine_lossy);
  EXPECT_EQ(sc.hosts[0].engine_lossy_qps, 256u);
  EXPECT_EQ(sc.hosts[0].engine_spray_paths, 1u);
  EXPECT_EQ(parse(std::string(kMinimal) + "loss_rate = 1.5\n"),
            "link[1].loss_rate: 1.5 is out of range [0, 1] (line 16)");
  EXPECT_EQ(parse(std::string(kMinimal) + "[defaults.host]\nlossy_qps = 0\n"),
            "defaults.host.lossy_qps: 0 is out of range 1..131072 (line 17)");
  EXPECT_EQ(parse(std::string(kMinimal) + "[defaults.host]\nspray_paths = 17\n"),
            "defaults.host.spray_paths: 17 is out of range 1..16 (line 17)");
  EXPECT_EQ(parse(std::string(kMinimal) + "[defaults.host]\nlossy = 1\n"),
            "defaults.host.lossy: expected true or false, got an integer (line 17)");
}

// The fabric's keys: [routing] ecmp and reconverge_us, a switch's
// adaptive_routing, [[link_change]] entries.
TEST(ScenarioToml_Parse, EcmpAndLinkChangeKeys) {
  Scenario sc;
  ASSERT_EQ(parse(std::string(kMinimal) +
                      "[routing]\necmp = true\nreconverge_us = 250\n"
                      "[defaults.switch]\nadaptive_routing = true\n"
                      "[[link_change]]\nat_us = 100\nlink = \"s1-h1\"\nup = false\n"
                      "[[link_change]]\nat_us = 200\nlink = \"h1-s1\"\nup = true\n"
                      "enabled = false\n",
                  sc),
            "");
  EXPECT_TRUE(sc.ecmp);
  EXPECT_EQ(sc.reconverge_ns, 250'000u);
  ASSERT_EQ(sc.link_changes.size(), 2u);
  EXPECT_EQ(sc.link_changes[0].at_ns, 100'000u);
  EXPECT_EQ(sc.link_changes[0].link, "s1-h1");
  EXPECT_FALSE(sc.link_changes[0].up);
  EXPECT_TRUE(sc.link_changes[0].enabled);
  EXPECT_FALSE(sc.link_changes[1].enabled);
  ASSERT_EQ(parse(kMinimal, sc), "");
  EXPECT_FALSE(sc.ecmp);
  EXPECT_EQ(sc.reconverge_ns, kNever);
  EXPECT_FALSE(sc.switches[0].adaptive);
  EXPECT_EQ(parse(std::string(kMinimal) + "[[link_change]]\nat_us = 1\nlink = \"h1-s1\"\n"),
            "link_change[0]: missing key 'up'");
  EXPECT_EQ(parse(std::string(kMinimal) + "[routing]\necmp = 2\n"),
            "routing.ecmp: expected true or false, got an integer (line 17)");
}

// --set (scenario_from_file with overrides): a key in a table, a new table,
// an entry of an array of tables; the result goes through the same checks.
TEST(ScenarioToml_Overrides, SetChangesTheFileBeforeItIsRead) {
  const std::string path = std::string(UROCE_SOURCE_ROOT) + "/testbed/scenarios/dcqcn_incast.toml";
  Scenario sc;
  ASSERT_EQ(scenario_from_file(path,
                               {"scenario.duration_ms=5", "defaults.host.dcqcn=false",
                                "rc_flow.2.window=3", "deadlock.enabled=false"},
                               sc),
            "");
  EXPECT_EQ(sc.duration_ns, 5 * kNsPerMs);
  ASSERT_EQ(sc.hosts.size(), 9u);
  for (const HostSpec& h : sc.hosts) EXPECT_FALSE(h.engine_dcqcn) << h.name;
  ASSERT_EQ(sc.rc_flows.size(), 8u);
  EXPECT_EQ(sc.rc_flows[2].window, 3u);
  EXPECT_EQ(sc.rc_flows[1].window, 8u);
  EXPECT_FALSE(sc.deadlock.enabled);
  Scenario plain;
  ASSERT_EQ(scenario_from_file(path, plain), "");
  for (const HostSpec& h : plain.hosts) EXPECT_TRUE(h.engine_dcqcn) << h.name;
}

// isolation.toml holds every flow disabled; the engine host keys of the TX
// policy and queue read as uroced's device keys do.
TEST(ScenarioToml_Isolation, EngineTxKeysAndDisabledFlows) {
  const std::string path = std::string(UROCE_SOURCE_ROOT) + "/testbed/scenarios/isolation.toml";
  Scenario sc;
  ASSERT_EQ(scenario_from_file(path,
                               {"defaults.host.isolation=\"classes\"",
                                "defaults.host.class_weights=[1,1,1,4]",
                                "defaults.host.tx_limit_bytes=4096", "rc_flow.0.enabled=true",
                                "defaults.host.class_quantum_bytes=8192"},
                               sc),
            "");
  ASSERT_EQ(sc.hosts.size(), 2u);
  for (const HostSpec& h : sc.hosts) {
    EXPECT_EQ(h.engine_sched.isolation, sched::Isolation::kClasses);
    EXPECT_EQ(h.engine_sched.classes.classes[6].mode, sched::ClassMode::kStrict);
    EXPECT_EQ(h.engine_sched.classes.classes[3].mode, sched::ClassMode::kWeighted);
    EXPECT_EQ(h.engine_sched.classes.classes[3].weight, 4u);
    EXPECT_EQ(h.engine_sched.classes.classes[7].weight, 1u);
    EXPECT_TRUE(h.tx_fifo);
    EXPECT_EQ(h.engine_tx_limit_bytes, 4096u);
    EXPECT_EQ(h.engine_sched.classes.class_quantum, 8192u);
  }
  ASSERT_EQ(sc.rc_flows.size(), 18u);
  EXPECT_TRUE(sc.rc_flows[0].enabled);
  EXPECT_TRUE(sc.rc_flows[0].mct_samples);
  for (std::size_t f = 1; f < sc.rc_flows.size(); ++f) EXPECT_FALSE(sc.rc_flows[f].enabled) << f;
  EXPECT_EQ(scenario_from_file(path, {"defaults.host.isolation=\"wfq\""}, sc),
            "defaults.host.isolation: 'wfq' is not \"off\", \"classes\" or \"auto\"");
  ASSERT_EQ(scenario_from_file(path, {"defaults.host.isolation=\"auto\""}, sc), "");
  EXPECT_EQ(sc.hosts[0].engine_sched.isolation, sched::Isolation::kAuto);
  EXPECT_EQ(scenario_from_file(path, {"defaults.host.tx_queue=\"lifo\""}, sc),
            "defaults.host.tx_queue: 'lifo' is not \"priority\" or \"fifo\"");
  ASSERT_EQ(scenario_from_file(path, {"defaults.host.class_rates_mbps=[0,0,0,500]"}, sc), "");
  EXPECT_EQ(sc.hosts[0].engine_sched.classes.classes[3].rate_mbps, 500u);
  EXPECT_EQ(sc.hosts[0].engine_sched.classes.classes[0].rate_mbps, 0u);
  EXPECT_EQ(scenario_from_file(path, {"defaults.host.class_rates_mbps=[400001]"}, sc),
            "defaults.host.class_rates_mbps[0]: 400001 is out of range 0..400000");
  EXPECT_EQ(scenario_from_file(path, {"defaults.host.class_weights=[1,0]"}, sc),
            "defaults.host.class_weights[1]: 0 is out of range 1..65535");
}

TEST(ScenarioToml_Overrides, BadOverridesAreNamed) {
  const std::string path = std::string(UROCE_SOURCE_ROOT) + "/testbed/scenarios/dcqcn_incast.toml";
  Scenario sc;
  EXPECT_EQ(scenario_from_file(path, {"scenario.duration_ms"}, sc),
            "--set scenario.duration_ms: expected PATH=VALUE");
  EXPECT_EQ(scenario_from_file(path, {"scenario.duration_ms=5 ms"}, sc),
            "--set scenario.duration_ms: '5 ms' is not a TOML value");
  EXPECT_EQ(scenario_from_file(path, {"scenario.name.x=1"}, sc),
            "--set scenario.name.x: 'scenario.name' is not a table");
  EXPECT_EQ(scenario_from_file(path, {"rc_flow.8.window=1"}, sc),
            "--set rc_flow.8.window: 'rc_flow' has no entry '8'");
  EXPECT_EQ(scenario_from_file(path, {"rc_flow.0.windw=1"}, sc),
            "rc_flow[0]: unknown key 'windw' (did you mean 'window'?)");
  EXPECT_EQ(scenario_from_file(path, {"rc_flow.0.window=0"}, sc),
            "rc_flow[0].window: 0 is out of range 1..1024");
}

TEST(ScenarioToml_Homa, HostKeysFillTheSettings) {
  Scenario sc;
  ASSERT_EQ(parse(std::string(kMinimal) + R"(
[defaults.host]
kind = "engine"
homa = true
homa_priorities = 4
homa_unsched_priorities = 2
homa_unsched_bytes = 20000
homa_rtt_bytes = 15000
homa_grant_increment = 2048
homa_overcommit = 3
homa_max_incoming = 100000
homa_fifo_permille = 0
homa_resend_us = 200
homa_grant_timeout_us = 900
homa_max_timeouts = 2
homa_max_messages = 512
homa_cutoffs_every = 64
)",
                  sc),
            "");
  const sched::homa::HomaSettings& m = sc.hosts[1].engine_homa;
  EXPECT_TRUE(m.enabled);
  EXPECT_EQ(m.priorities, 4);
  EXPECT_EQ(m.unsched_priorities, 2);
  EXPECT_EQ(m.unsched_bytes, 20000u);
  EXPECT_EQ(m.rtt_bytes, 15000u);
  EXPECT_EQ(m.grant_increment, 2048u);
  EXPECT_EQ(m.overcommit, 3u);
  EXPECT_EQ(m.max_incoming, 100000u);
  EXPECT_EQ(m.fifo_permille, 0u);
  EXPECT_EQ(m.resend_ns, 200 * kNsPerUs);
  EXPECT_EQ(m.grant_timeout_ns, 900 * kNsPerUs);
  EXPECT_EQ(m.max_timeouts, 2u);
  EXPECT_EQ(m.max_messages, 512u);
  EXPECT_EQ(m.cutoffs_every, 64u);
  ASSERT_EQ(parse(kMinimal, sc), "");
  EXPECT_FALSE(sc.hosts[0].engine_homa.enabled);
}

TEST(ScenarioToml_Homa, RangesAreTheSchedulersOwn) {
  const std::string h = std::string(kMinimal) + "[defaults.host]\n";
  EXPECT_EQ(parse(h + "homa_priorities = 9\n"),
            "defaults.host.homa_priorities: 9 is out of range 1..8 (line 17)");
  // The resend must come before the sender's timeout: named even when
  // only the resend was set.
  EXPECT_EQ(parse(h + "homa_resend_us = 5000\n"),
            "defaults.host.homa_grant_timeout_us: out of range with the other homa keys "
            "(sched/homa_settings.h)");
}

TEST(ScenarioToml_Workload, KeysAndDefaults) {
  Scenario sc;
  ASSERT_EQ(parse(std::string(kMinimal) + R"(
[workload]
distribution = "/w/w3.csv"
)",
                  sc),
            "");
  EXPECT_TRUE(sc.workload.enabled);
  EXPECT_EQ(sc.workload.distribution, "/w/w3.csv");
  EXPECT_EQ(sc.workload.load, 0.5);
  EXPECT_EQ(sc.workload.qps_per_pair, 4u);
  EXPECT_FALSE(sc.workload.write);
  ASSERT_EQ(parse(std::string(kMinimal) + R"(
[workload]
distribution = "w.csv"
max_length_bytes = 1000000
load = 0.8
warmup_ms = 2
measure_ms = 0.5
qps_per_pair = 16
op = "write_imm"
mtu = 1024
sl = 5
ttl = 32
timeout = 10
buckets = 20
samples = true
incast_senders = 8
incast_bytes = 131072
incast_every_us = 500
)",
                  sc),
            "");
  EXPECT_EQ(sc.workload.max_length_bytes, 1'000'000u);
  EXPECT_EQ(sc.workload.load, 0.8);
  EXPECT_EQ(sc.workload.warmup_ns, 2 * kNsPerMs);
  EXPECT_EQ(sc.workload.measure_ns, 500 * kNsPerUs);
  EXPECT_EQ(sc.workload.qps_per_pair, 16u);
  EXPECT_TRUE(sc.workload.write);
  EXPECT_EQ(sc.workload.mtu, 1024u);
  EXPECT_EQ(sc.workload.sl, 5);
  EXPECT_EQ(sc.workload.ttl, 32);
  EXPECT_EQ(sc.workload.timeout, 10);
  EXPECT_EQ(sc.workload.buckets, 20u);
  EXPECT_TRUE(sc.workload.samples);
  EXPECT_EQ(sc.workload.incast_senders, 8u);
  EXPECT_EQ(sc.workload.incast_bytes, 131072u);
  EXPECT_EQ(sc.workload.incast_every_ns, 500 * kNsPerUs);
  // Without the table there is no workload.
  ASSERT_EQ(parse(kMinimal, sc), "");
  EXPECT_FALSE(sc.workload.enabled);
}

TEST(ScenarioToml_Workload, ErrorsNameTheKey) {
  const std::string w = std::string(kMinimal) + "[workload]\n";
  EXPECT_EQ(parse(w + "load = 0.5\n"), "workload: missing key 'distribution'");
  EXPECT_EQ(parse(w + "distribution = \"a\"\nload = 0\n"),
            "workload.load: 0 is out of range (0, 4] (line 18)");
  EXPECT_EQ(parse(w + "distribution = \"a\"\nop = \"read\"\n"),
            "workload.op: 'read' is not \"send\" or \"write_imm\" (line 18)");
  EXPECT_EQ(parse(w + "distribution = \"a\"\nmtu = 1000\n"),
            "workload.mtu: 1000 is not 256, 512, 1024, 2048 or 4096 (line 18)");
  EXPECT_EQ(parse(w + "distribution = \"a\"\nqps = 4\n"),
            "workload: unknown key 'qps' (did you mean 'qps_per_pair'?) at line 18");
  EXPECT_EQ(parse(w + "distribution = \"a\"\nmeasure_ms = 0\n"),
            "workload.measure_ms: 0 is out of range (0, 1e+07] (line 18)");
}

// The shipped slowdown scenario names its distribution relative to its own
// directory; scenario_from_file() makes that a path that works from
// anywhere, and --set overrides get the same treatment.
TEST(ScenarioToml_Workload, DistributionIsRelativeToTheScenarioFile) {
  const std::string dir = std::string(UROCE_SOURCE_ROOT) + "/testbed/scenarios";
  Scenario sc;
  ASSERT_EQ(scenario_from_file(dir + "/homa_slowdown.toml", sc), "");
  EXPECT_EQ(sc.workload.distribution, dir + "/../workloads/w3.csv");
  ASSERT_EQ(scenario_from_file(dir + "/homa_slowdown.toml",
                               {"workload.distribution=\"../workloads/w5.csv\""}, sc),
            "");
  EXPECT_EQ(sc.workload.distribution, dir + "/../workloads/w5.csv");
  ASSERT_EQ(scenario_from_file(dir + "/homa_slowdown.toml",
                               {"workload.distribution=\"/abs/w.csv\""}, sc),
            "");
  EXPECT_EQ(sc.workload.distribution, "/abs/w.csv");
  Topology t;
  ASSERT_EQ(scenario_from_file(dir + "/homa_slowdown.toml", sc), "");
  EXPECT_EQ(resolve(sc, t), "");
  EXPECT_EQ(t.workload_hosts.size(), 16u);
  // The two-tier variant: within a rack two hops, across the spine four.
  ASSERT_EQ(scenario_from_file(dir + "/homa_slowdown_2tier.toml", sc), "");
  ASSERT_EQ(resolve(sc, t), "");
  EXPECT_EQ(t.workload_hosts.size(), 16u);
  EXPECT_EQ(t.workload_paths[0][3].size(), 2u);
  EXPECT_EQ(t.workload_paths[0][4].size(), 4u);
}

// Every scenario shipped in testbed/scenarios loads and its topology
// resolves (the scripts run some that no other test opens).
TEST(ScenarioToml_Shipped, EveryScenarioLoadsAndResolves) {
  const std::filesystem::path dir = std::filesystem::path(UROCE_SOURCE_ROOT) / "testbed/scenarios";
  std::size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".toml") continue;
    SCOPED_TRACE(e.path().filename().string());
    Scenario sc;
    ASSERT_EQ(scenario_from_file(e.path().string(), sc), "");
    Topology t;
    EXPECT_EQ(resolve(sc, t), "");
    ++n;
  }
  EXPECT_GE(n, 19u);
}

// The 2:1 leaf-spine: four leaves of eight hosts, four uplinks each (one
// per spine), lossy_qps covering a host's 496 RC connections.
TEST(ScenarioToml_Shipped, OversubscribedLeafSpineHasFourUplinksPerLeaf) {
  Scenario sc;
  ASSERT_EQ(scenario_from_file(std::string(UROCE_SOURCE_ROOT) +
                                   "/testbed/scenarios/lossy_leaf_spine_2to1.toml",
                               sc),
            "");
  EXPECT_EQ(sc.hosts.size(), 32u);
  for (const std::string leaf : {"l1", "l2", "l3", "l4"}) {
    std::size_t hosts = 0, uplinks = 0;
    std::set<std::string> spines;
    for (const LinkSpec& l : sc.links) {
      if (l.a != leaf && l.b != leaf) continue;
      const std::string& other = l.a == leaf ? l.b : l.a;
      if (other.starts_with("sp")) {
        ++uplinks;
        spines.insert(other);
      }
      if (other.starts_with("h")) ++hosts;
    }
    EXPECT_EQ(hosts, 8u) << leaf;
    EXPECT_EQ(uplinks, 4u) << leaf;
    EXPECT_EQ(spines.size(), 4u) << leaf;
  }
  for (const HostSpec& h : sc.hosts) EXPECT_EQ(h.engine_lossy_qps, 512u) << h.name;
}

}  // namespace
}  // namespace uroce::testbed
