// uroced's configuration file: the TOML tables and every key's checks
// (config_toml.cpp, with config_values.cpp and validate()).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

#include "apps/uroced/config.h"
#include "apps/uroced/config_keys.h"
#include "tests/apps/uroced/config_test_support.h"

namespace uroce::daemon {
namespace {

TEST(LoadToml_Valid, FillsEveryField) {
  DaemonConfig cfg;
  ASSERT_EQ(load_and_validate(kTwoDevices, &cfg), "");
  EXPECT_EQ(cfg.run_dir, "/tmp/uroce-test");
  EXPECT_EQ(cfg.poll, PollMode::kBusy);
  EXPECT_EQ(cfg.backoff_max_us, 50u);
  EXPECT_EQ(cfg.log_level, "debug");
  EXPECT_EQ(cfg.lcore, 0u);
  EXPECT_EQ(cfg.eal_args, (std::vector<std::string>{"--no-huge", "--no-pci", "-m", "256"}));
  EXPECT_EQ(cfg.file_prefix, "t1");
  ASSERT_EQ(cfg.devices.size(), 2u);
  EXPECT_EQ(cfg.devices[0].name, "uroce0");
  EXPECT_EQ(cfg.devices[0].port_spec.kind, PortKind::kRing);
  EXPECT_EQ(cfg.devices[0].port_spec.name, "p0");
  EXPECT_EQ(cfg.devices[0].mac.to_string(), "02:00:00:00:00:01");
  EXPECT_EQ(cfg.devices[0].ipv4.to_string(), "10.0.0.1");
  EXPECT_EQ(cfg.devices[0].mtu, 9000u);
  EXPECT_EQ(cfg.devices[1].mtu, 1500u);  // default
  EXPECT_EQ(cfg.socket_path(), "/tmp/uroce-test/uroced.sock");
  EXPECT_EQ(cfg.sysfs_root(), "/tmp/uroce-test/sysfs");
}

TEST(LoadToml_Defaults, EmptyFileKeepsDefaults) {
  DaemonConfig cfg;
  ASSERT_EQ(load_toml("", "t.toml", &cfg), "");
  EXPECT_EQ(cfg.run_dir, "/run/uroce");
  EXPECT_EQ(cfg.poll, PollMode::kBackoff);
  EXPECT_EQ(cfg.backoff_max_us, 200u);
  EXPECT_EQ(cfg.log_level, "info");
  EXPECT_EQ(cfg.lcore, 1u);
  EXPECT_EQ(validate(cfg), "device: no devices (add a [[device]] table or --device)");
}

TEST(LoadToml_Example, ShippedExampleIsValid) {
  std::ifstream in(std::string(UROCE_SOURCE_ROOT) + "/apps/uroced/uroced.example.toml");
  ASSERT_TRUE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  DaemonConfig cfg;
  ASSERT_EQ(load_and_validate(ss.str(), &cfg), "");
  EXPECT_EQ(cfg.devices.size(), 2u);
  EXPECT_EQ(cfg.run_dir, "/run/uroce");
}

// Every commented-out device key of the example, uncommented, is valid and
// gives the defaults it documents (with PFC on priority 3).
TEST(LoadToml_Example, CommentedDeviceKeysAreValid) {
  std::ifstream in(std::string(UROCE_SOURCE_ROOT) + "/apps/uroced/uroced.example.toml");
  ASSERT_TRUE(in);
  std::string text, line;
  const std::regex key("^# ([a-z0-9_]+ = .*|\\[device\\.pfc\\])$");
  int uncommented = 0;
  while (std::getline(in, line)) {
    if (std::regex_match(line, key)) {
      line = line.substr(2);
      ++uncommented;
    }
    text += line + "\n";
  }
  EXPECT_GT(uncommented, 25);
  DaemonConfig cfg;
  ASSERT_EQ(load_and_validate(text, &cfg), "");
  const engine::PfcEndpointConfig& c = cfg.devices[0].pfc;
  const engine::PfcEndpointConfig d;
  EXPECT_EQ(cfg.devices[0].ipv6.to_string(), "2001:db8::1");
  EXPECT_EQ(c.enable, 0x08);
  EXPECT_EQ(c.ttl.tx_ttl, 64);
  EXPECT_EQ(c.ingress.buffer_bytes, d.ingress.buffer_bytes);
  EXPECT_EQ(c.ingress.headroom_bytes, d.ingress.headroom_bytes);
  EXPECT_EQ(c.ingress.xoff_bytes, d.ingress.xoff_bytes);
  EXPECT_EQ(c.ingress.xon_offset_bytes, d.ingress.xon_offset_bytes);
  EXPECT_EQ(c.storm.detection_ns, d.storm.detection_ns);
  EXPECT_EQ(c.stage_slots, d.stage_slots);
  EXPECT_EQ(c.rx_budget, d.rx_budget);
  EXPECT_EQ(c.hold_slots, d.hold_slots);
  EXPECT_FALSE(cfg.devices[0].impair.active());
  EXPECT_EQ(cfg.devices[0].sched.isolation, sched::Isolation::kOff);
  EXPECT_EQ(cfg.devices[0].pacer.granularity_ns, sched::PacerConfig{}.granularity_ns);
  // The Homa keys' documented values are the scheduler's defaults.
  const sched::homa::HomaSettings& h = cfg.devices[0].homa;
  const sched::homa::HomaSettings hd;
  EXPECT_FALSE(h.enabled);
  EXPECT_EQ(h.priorities, hd.priorities);
  EXPECT_EQ(h.unsched_priorities, hd.unsched_priorities);
  EXPECT_EQ(h.unsched_bytes, hd.unsched_bytes);
  EXPECT_EQ(h.rtt_bytes, hd.rtt_bytes);
  EXPECT_EQ(h.overcommit, hd.overcommit);
  EXPECT_EQ(h.max_incoming, hd.max_incoming);
  EXPECT_EQ(h.fifo_permille, hd.fifo_permille);
  EXPECT_EQ(h.resend_ns, hd.resend_ns);
  EXPECT_EQ(h.grant_timeout_ns, hd.grant_timeout_ns);
}

TEST(LoadToml_Sched, ReadsEveryKey) {
  DaemonConfig cfg;
  ASSERT_EQ(load_and_validate(with("mtu = 9000",
                                   "mtu = 9000\nisolation = \"classes\"\n"
                                   "strict_classes = [7]\nclass_weights = [3, 1, 2]\n"
                                   "class_rates_mbps = [0, 250]\n"
                                   "pace_granularity_ns = 2000"),
                              &cfg),
            "");
  const DeviceConfig& d = cfg.devices[0];
  EXPECT_EQ(d.sched.isolation, sched::Isolation::kClasses);
  EXPECT_EQ(d.sched.classes.classes[7].mode, sched::ClassMode::kStrict);
  EXPECT_EQ(d.sched.classes.classes[6].mode, sched::ClassMode::kWeighted);
  EXPECT_EQ(d.sched.classes.classes[0].weight, 3u);
  EXPECT_EQ(d.sched.classes.classes[2].weight, 2u);
  EXPECT_EQ(d.sched.classes.classes[3].weight, 1u);
  EXPECT_EQ(d.sched.classes.classes[1].rate_mbps, 250u);
  EXPECT_EQ(d.sched.classes.classes[0].rate_mbps, 0u);
  EXPECT_EQ(d.pacer.granularity_ns, 2000u);
  EXPECT_EQ(cfg.devices[1].sched.isolation, sched::Isolation::kOff);
}

TEST(LoadToml_Sched, ErrorsNameTheKey) {
  auto err = [](const std::string& line) { return error_of(with("mtu = 9000", line)); };
  EXPECT_EQ(err("isolation = \"strict\""),
            "device[0].isolation: \"strict\" is not an isolation mode (expected \"off\", "
            "\"classes\" or \"auto\")");
  EXPECT_EQ(err("isolation = 1"), "device[0].isolation: expected a string");
  EXPECT_EQ(err("strict_classes = [8]"), "device[0].strict_classes[0]: 8 is outside 0..7");
  EXPECT_EQ(err("strict_classes = 6"),
            "device[0].strict_classes: expected an array of classes 0..7");
  EXPECT_EQ(err("class_weights = [1, 0]"), "device[0].class_weights[1]: 0 is outside 1..65535");
  EXPECT_EQ(err("class_weights = [1, 1, 1, 1, 1, 1, 1, 1, 1]"),
            "device[0].class_weights: expected an array of at most 8 weights");
  EXPECT_EQ(err("class_rates_mbps = [-1]"),
            "device[0].class_rates_mbps[0]: -1 is outside 0..400000");
  EXPECT_EQ(err("class_rates_mbps = \"fast\""),
            "device[0].class_rates_mbps: expected an array of at most 8 rates in Mb/s");
  EXPECT_EQ(err("pace_granularity_ns = 0"),
            "device[0].pace_granularity_ns: 0 is outside 100..1000000");
  EXPECT_EQ(err("pace_granularity_ns = 1000001"),
            "device[0].pace_granularity_ns: 1000001 is outside 100..1000000");
}

TEST(LoadToml_Dcqcn, ReadsEveryKeyAndNamesBadOnes) {
  DaemonConfig cfg;
  ASSERT_EQ(load_and_validate(with("mtu = 9000",
                                   "mtu = 9000\ndcqcn = true\ncnp_dscp = 40\n"
                                   "cnp_interval_us = 10"),
                              &cfg),
            "");
  const DeviceConfig& d = cfg.devices[0];
  EXPECT_TRUE(d.dcqcn.enabled);
  EXPECT_EQ(d.dcqcn.cnp_dscp, 40);
  EXPECT_EQ(d.dcqcn.cnp_interval_ns, 10'000u);
  auto err = [](const std::string& line) { return error_of(with("mtu = 9000", line)); };
  EXPECT_EQ(err("dcqcn = \"on\""), "device[0].dcqcn: expected true or false");
  EXPECT_EQ(err("cnp_dscp = -1"), "device[0].cnp_dscp: -1 is outside 0..63");
  EXPECT_EQ(err("cnp_interval_us = 1000001"),
            "device[0].cnp_interval_us: 1000001 is outside 1..1000000");
}

TEST(LoadToml_TxLimit, ReadsTheKeyAndNamesABadOne) {
  DaemonConfig cfg;
  ASSERT_EQ(load_and_validate(with("mtu = 9000", "mtu = 9000\ntx_limit_bytes = 8192"), &cfg), "");
  EXPECT_EQ(cfg.devices[0].tx_limit_bytes, 8192u);
  EXPECT_EQ(error_of(with("mtu = 9000", "class_quantum_bytes = 2000000")),
            "device[0].class_quantum_bytes: 2000000 is outside 1024..1048576");
  EXPECT_EQ(error_of(with("mtu = 9000", "tx_limit_bytes = -1")),
            "device[0].tx_limit_bytes: -1 is outside 0..16777216 (0 = no limit)");
}

TEST(LoadToml_SyntaxError, ReportsLineAndColumn) {
  const std::string err = error_of("[daemon]\nrun_dir = \n");
  EXPECT_TRUE(err.starts_with("t.toml:2:")) << err;
}

TEST(LoadToml_BadMac, NamesTheKey) {
  EXPECT_EQ(error_of(with("02:00:00:00:00:02", "02:00:00:00:00:zz")),
            "device[1].mac: \"02:00:00:00:00:zz\" is not a MAC address (expected six "
            "hex bytes like 02:00:00:00:00:01)");
}

TEST(LoadToml_MulticastMac, Rejected) {
  EXPECT_EQ(error_of(with("02:00:00:00:00:02", "01:00:5e:00:00:02")),
            "device[1].mac: 01:00:5e:00:00:02 is not a unicast address");
}

TEST(LoadToml_DuplicateName, NamesBothDevices) {
  EXPECT_EQ(error_of(with("\"uroce1\"", "\"uroce0\"")),
            "device[1].name: \"uroce0\" is already the name of device[0]");
}

TEST(LoadToml_DuplicateMac, NamesBothDevices) {
  EXPECT_EQ(error_of(with("02:00:00:00:00:02", "02:00:00:00:00:01")),
            "device[1].mac: 02:00:00:00:00:01 is already the MAC of device[0]");
}

TEST(LoadToml_DuplicateIp, NamesBothDevices) {
  EXPECT_EQ(error_of(with("10.0.0.2", "10.0.0.1")),
            "device[1].ipv4: 10.0.0.1 is already the address of device[0]");
}

TEST(LoadToml_MtuRange, BothEnds) {
  EXPECT_EQ(error_of(with("mtu = 9000", "mtu = 575")), "device[0].mtu: 575 is outside 576..9216");
  EXPECT_EQ(error_of(with("mtu = 9000", "mtu = 9217")), "device[0].mtu: 9217 is outside 576..9216");
  EXPECT_EQ(error_of(with("mtu = 9000", "mtu = 576")), "");
  EXPECT_EQ(error_of(with("mtu = 9000", "mtu = 9216")), "");
  EXPECT_EQ(error_of(with("mtu = 9000", "mtu = \"9000\"")), "device[0].mtu: expected an integer");
}

TEST(LoadToml_UnknownPollMode, Rejected) {
  EXPECT_EQ(
      error_of(with("\"busy\"", "\"spin\"")),
      "daemon.poll: \"spin\" is not a poll mode (expected \"busy\", \"backoff\" or \"yield\")");
}

TEST(LoadToml_MissingPort, Rejected) {
  EXPECT_EQ(error_of(with("port = \"ring:p0\"\n", "")),
            "device[0].port: missing (a vdev devargs string, a PCI address, "
            "\"af_xdp:IFACE\" or \"ring:NAME\")");
}

TEST(LoadToml_MissingMacAndIp, Rejected) {
  EXPECT_EQ(error_of(with("mac = \"02:00:00:00:00:01\"\n", "")), "device[0].mac: missing");
  EXPECT_EQ(error_of(with("ipv4 = \"10.0.0.1\"\n", "")), "device[0].ipv4: missing");
  EXPECT_EQ(error_of(with("name = \"uroce0\"\n", "")), "device[0].name: missing");
}

TEST(LoadToml_BadPort, Rejected) {
  EXPECT_EQ(error_of(with("ring:p0", "eth0")),
            "device[0].port: \"eth0\" is not a vdev devargs string "
            "(net_<pmd><n>,key=value,...), a PCI address, \"af_xdp:IFACE\" or \"ring:NAME\"");
  EXPECT_EQ(error_of(with("ring:p0", "ring:")),
            "device[0].port: \"ring:\": the ring name must be 1..24 letters, digits "
            "or '_'");
}

TEST(LoadToml_LoneRing, NeedsTwoDevices) {
  EXPECT_EQ(error_of(with("ring:p0", "ring:p9")),
            "device[0].port: ring \"p9\" needs a second device naming it (a ring "
            "joins two devices)");
}

TEST(LoadToml_PortForms, VdevAndPci) {
  DaemonConfig cfg;
  const std::string memif =
      "net_memif0,role=server,socket=/tmp/x.sock,socket-abstract=no,id=0,bsize=8192";
  // Device 0 memif, device 1 PCI.
  std::string text = kTwoDevices;
  text.replace(text.find("ring:p0"), 7, memif);
  text.replace(text.find("ring:p0"), 7, "0000:03:00.0");
  ASSERT_EQ(load_and_validate(text, &cfg), "");
  EXPECT_EQ(cfg.devices[0].port_spec.kind, PortKind::kVdev);
  EXPECT_EQ(cfg.devices[0].port_spec.name, "net_memif0");
  EXPECT_EQ(cfg.devices[0].port_spec.args,
            "role=server,socket=/tmp/x.sock,socket-abstract=no,id=0,bsize=8192");
  EXPECT_EQ(cfg.devices[1].port_spec.kind, PortKind::kPci);
  EXPECT_EQ(cfg.devices[1].port_spec.name, "0000:03:00.0");
}

TEST(LoadToml_UnknownKeys, Rejected) {
  EXPECT_EQ(error_of(with("poll = \"busy\"", "pol = \"busy\"")),
            "daemon.pol: unknown key (expected run_dir, poll, backoff_max_us, status_group, "
            "metrics_listen or log_level)");
  EXPECT_EQ(error_of(with("mtu = 9000", "mut = 9000")),
            "device[0].mut: unknown key (expected " + device_key_names(kInFile) + ")");
  EXPECT_EQ(error_of(std::string(kTwoDevices) + "[other]\n"),
            "other: unknown key (expected [daemon], [eal], [limits] or [[device]])");
}

TEST(LoadToml_MetricsListen, ReadAndRefusedOffLoopback) {
  DaemonConfig cfg;
  ASSERT_EQ(load_and_validate(with("poll = \"busy\"",
                                   "poll = \"busy\"\nmetrics_listen = \"127.0.0.1:9464\""),
                              &cfg),
            "");
  EXPECT_EQ(cfg.metrics_listen.kind, MetricsListen::Kind::kTcp4);
  EXPECT_EQ(cfg.metrics_listen.port, 9464);
  EXPECT_EQ(error_of(
                with("poll = \"busy\"", "poll = \"busy\"\nmetrics_listen = \"192.168.1.5:9464\"")),
            "daemon.metrics_listen: \"192.168.1.5:9464\" is not a loopback address (the metrics "
            "name clients: expected unix:PATH, 127.0.0.1:PORT or [::1]:PORT)");
}

TEST(LoadToml_BadLogLevel, Rejected) {
  EXPECT_EQ(error_of(with("\"debug\"", "\"loud\"")),
            "daemon.log_level: \"loud\" is not a log level (expected trace, debug, info, "
            "warn, error, critical or off)");
}

TEST(LoadToml_BadDeviceName, Rejected) {
  EXPECT_EQ(error_of(with("\"uroce0\"", "\"0uroce\"")),
            "device[0].name: \"0uroce\" must start with a letter and have at most 63 "
            "letters, digits or '_'");
}

TEST(LoadToml_Impairment, ReadsEveryKeyAndNamesErrors) {
  DaemonConfig cfg;
  ASSERT_EQ(load_and_validate(with("mtu = 9000",
                                   "mtu = 9000\ndrop_tx_every = 7\n"
                                   "drop_rx_every = 3\ndrop_tx_rate = 0.5\n"
                                   "drop_rx_rate = 0\ndrop_seed = 12\n"
                                   "drop_tx_max = 6\ndrop_rx_max = 0"),
                              &cfg),
            "");
  const engine::ImpairConfig& c = cfg.devices[0].impair;
  EXPECT_EQ(c.drop_tx_every, 7u);
  EXPECT_EQ(c.drop_rx_every, 3u);
  EXPECT_EQ(c.drop_tx_rate, 0.5);
  EXPECT_EQ(c.drop_rx_rate, 0.0);
  EXPECT_EQ(c.drop_seed, 12u);
  EXPECT_EQ(c.drop_tx_max, 6u);
  EXPECT_EQ(c.drop_rx_max, 0u);
  EXPECT_FALSE(cfg.devices[1].impair.active());
  EXPECT_EQ(error_of(with("mtu = 9000", "drop_tx_rate = 1.25")),
            "device[0].drop_tx_rate: 1.25 is outside 0..1 (a fraction of RoCEv2 frames)");
  EXPECT_EQ(error_of(with("mtu = 9000", "drop_rx_rate = \"half\"")),
            "device[0].drop_rx_rate: expected a number");
  EXPECT_EQ(error_of(with("mtu = 9000", "drop_tx_every = 2.5")),
            "device[0].drop_tx_every: expected an integer");
  EXPECT_EQ(error_of(with("mtu = 9000", "drop_rx_every = -2")),
            "device[0].drop_rx_every: -2 is outside 0..4294967295 (0 = off)");
  EXPECT_EQ(error_of(with("mtu = 9000", "drop_seed = -1")), "device[0].drop_seed: -1 is negative");
  EXPECT_EQ(error_of(with("mtu = 9000", "drop_rx_max = 1.5")),
            "device[0].drop_rx_max: expected an integer");
  EXPECT_EQ(error_of(with("mtu = 9000", "drop_seed = true")),
            "device[0].drop_seed: expected an integer");
}

TEST(LoadToml_Pfc, ReadsEveryKey) {
  DaemonConfig cfg;
  const std::string pfc = R"(mtu = 9000
tx_ttl = 32
ttl_monitor = false
link_mbps = 25000

[device.pfc]
priorities = [3, 4]
mode = "static"
buffer_bytes = 1048576
headroom_bytes = 131072
xoff_bytes = 200000
xon_bytes = 100000
xon_offset_bytes = 4096
alpha = "1/16"
xoff_quanta = 30000
refresh_percent = 40
max_quanta = 40000
storm_watchdog = true
storm_detection_ms = 50
storm_restoration_ms = 70
storm_action = "ignore"
stage_slots = 100
rx_budget = 8
hold_slots = 16
sl_priority = [0, 1, 2, 4]
priority_dscp = [0, 8, 16, 26]
dscp_priority = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3]
)";
  ASSERT_EQ(load_and_validate(with("mtu = 9000", pfc), &cfg), "");
  const DeviceConfig& d = cfg.devices[0];
  const engine::PfcEndpointConfig& c = d.pfc;
  EXPECT_EQ(c.enable, 0x18);
  EXPECT_EQ(c.ttl.tx_ttl, 32);
  EXPECT_FALSE(c.ttl_monitor);
  EXPECT_EQ(d.link_mbps, 25000u);
  EXPECT_EQ(c.ingress.mode, pfc::ThresholdMode::kStatic);
  EXPECT_EQ(c.ingress.buffer_bytes, 1048576u);
  EXPECT_EQ(c.ingress.headroom_bytes, 131072u);
  EXPECT_EQ(c.ingress.xoff_bytes, 200000u);
  EXPECT_EQ(c.ingress.xon_bytes, 100000u);
  EXPECT_EQ(c.ingress.xon_offset_bytes, 4096u);
  EXPECT_EQ(c.ingress.alpha_num, 1u);
  EXPECT_EQ(c.ingress.alpha_den, 16u);
  EXPECT_EQ(c.ingress.xoff_quanta, 30000);
  EXPECT_EQ(c.ingress.refresh_percent, 40u);
  EXPECT_EQ(c.max_quanta, 40000);
  EXPECT_EQ(c.storm.detection_ns, 50 * kNsPerMs);
  EXPECT_EQ(c.storm.restoration_ns, 70 * kNsPerMs);
  EXPECT_EQ(c.storm.action, pfc::StormAction::kIgnore);
  EXPECT_EQ(c.stage_slots, 100u);
  EXPECT_EQ(c.rx_budget, 8u);
  EXPECT_EQ(c.hold_slots, 16u);
  EXPECT_EQ(c.map.priority_of_sl(3), 4);
  EXPECT_EQ(c.map.dscp_of_priority(3), 26);
  EXPECT_EQ(c.map.priority_of_dscp(26), 3);
  // Defaults of the other device: PFC off, TTL 64, monitor on.
  EXPECT_EQ(cfg.devices[1].pfc.enable, 0);
  EXPECT_EQ(cfg.devices[1].pfc.ttl.tx_ttl, 64);
  EXPECT_TRUE(cfg.devices[1].pfc.ttl_monitor);
}

TEST(LoadToml_Pfc, ErrorsNameTheKey) {
  auto err = [](const std::string& table) {
    return error_of(with("mtu = 9000", "mtu = 9000\n[device.pfc]\n" + table));
  };
  EXPECT_EQ(err("priorities = [8]"), "device[0].pfc.priorities[0]: 8 is outside 0..7");
  EXPECT_EQ(err("priorities = 3"),
            "device[0].pfc.priorities: expected an array of priorities 0..7");
  EXPECT_EQ(err("mode = \"adaptive\""),
            "device[0].pfc.mode: \"adaptive\" is not a mode (expected \"static\" or \"dynamic\")");
  EXPECT_EQ(err("alpha = \"1/0\""), "device[0].pfc.alpha: '1/0' must be > 0");
  EXPECT_EQ(err("alpha = \"1/x\""),
            "device[0].pfc.alpha: '1/x' is not a fraction of whole numbers such as \"1/16\"");
  EXPECT_EQ(err("alpha = 0"), "device[0].pfc.alpha: '0' must be > 0");
  EXPECT_EQ(err("xoff_quanta = 0"), "device[0].pfc.xoff_quanta: 0 is outside 1..65535");
  EXPECT_EQ(err("refresh_percent = 100"), "device[0].pfc.refresh_percent: 100 is outside 1..99");
  EXPECT_EQ(err("storm_action = \"panic\""),
            "device[0].pfc.storm_action: \"panic\" is not an action (expected \"drop\" or "
            "\"ignore\")");
  EXPECT_EQ(err("storm_detection_ms = 0"),
            "device[0].pfc.storm_detection_ms: 0 is outside 1..3600000");
  EXPECT_EQ(err("storm_watchdog = 1"), "device[0].pfc.storm_watchdog: expected true or false");
  EXPECT_EQ(err("priority_dscp = [0, 8, 64]"),
            "device[0].pfc.priority_dscp[2]: 64 is outside 0..63");
  EXPECT_EQ(err("sl_priority = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]"),
            "device[0].pfc.sl_priority: expected an array of at most 16 integers");
  EXPECT_EQ(err("colour = 1"),
            "device[0].pfc.colour: unknown key (expected priorities, mode, buffer_bytes, "
            "headroom_bytes, xoff_bytes, xon_bytes, xon_offset_bytes, alpha, xoff_quanta, "
            "max_quanta, refresh_percent, storm_watchdog, storm_detection_ms, "
            "storm_restoration_ms, storm_action, stage_slots, rx_budget, hold_slots, sl_priority, "
            "priority_dscp or dscp_priority)");
  // Whole-configuration checks of the pfc/ state machines.
  EXPECT_EQ(err("priorities = [3]\nmode = \"static\"\nxoff_bytes = 1000\nxon_bytes = 2000"),
            "device[0].pfc.xoff_bytes: static thresholds need xon_bytes (2000) < xoff_bytes "
            "(1000) <= the shared buffer");
  EXPECT_EQ(err("priorities = [0, 1, 2, 3, 4, 5, 6, 7]\nbuffer_bytes = 65536\n"
                "headroom_bytes = 8192"),
            "device[0].pfc.headroom_bytes: 8192 x the lossless priorities leaves no shared "
            "space in buffer_bytes 65536");
  EXPECT_EQ(err("priority_dscp = [0, 8, 16, 40]"),
            "device[0].pfc.priority_dscp: priority 3 is sent with DSCP 40, which "
            "dscp_priority maps to priority 5");
  EXPECT_EQ(error_of(with("mtu = 9000", "tx_ttl = 0")), "device[0].tx_ttl: 0 is outside 1..255");
  EXPECT_EQ(error_of(with("mtu = 9000", "tx_ttl = 256")),
            "device[0].tx_ttl: 256 is outside 1..255");
  EXPECT_EQ(error_of(with("mtu = 9000", "link_mbps = -1")),
            "device[0].link_mbps: -1 is outside 0..1000000 (0 = ask the port)");
  EXPECT_EQ(error_of(with("mtu = 9000", "pfc = 3")),
            "device[0].pfc: expected a table ([device.pfc])");
}

}  // namespace
}  // namespace uroce::daemon
