#include "apps/uroced/config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>

namespace uroce::daemon {
namespace {

constexpr const char* kTwoDevices = R"(
[daemon]
run_dir = "/tmp/uroce-test"
poll = "busy"
backoff_max_us = 50
log_level = "debug"

[eal]
lcore = 0
args = ["--no-huge", "--no-pci", "-m", "256"]
file_prefix = "t1"

[[device]]
name = "uroce0"
port = "ring:p0"
mac = "02:00:00:00:00:01"
ipv4 = "10.0.0.1"
mtu = 9000

[[device]]
name = "uroce1"
port = "ring:p0"
mac = "02:00:00:00:00:02"
ipv4 = "10.0.0.2"
)";

// Loads `text` over the defaults and validates; "" or the first error.
std::string load_and_validate(const std::string& text, DaemonConfig* cfg) {
  std::string err = load_toml(text, "t.toml", cfg);
  return err.empty() ? validate(*cfg) : err;
}

// kTwoDevices with the first occurrence of `from` replaced by `to`.
std::string with(const std::string& from, const std::string& to) {
  std::string s = kTwoDevices;
  const auto pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  s.replace(pos, from.size(), to);
  return s;
}

std::string error_of(const std::string& text) {
  DaemonConfig cfg;
  return load_and_validate(text, &cfg);
}

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
  const std::regex key("^# ([a-z_]+ = .*|\\[device\\.pfc\\])$");
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
  EXPECT_EQ(error_of(with("\"busy\"", "\"spin\"")),
            "daemon.poll: \"spin\" is not a poll mode (expected \"busy\" or \"backoff\")");
}

TEST(LoadToml_MissingPort, Rejected) {
  EXPECT_EQ(error_of(with("port = \"ring:p0\"\n", "")),
            "device[0].port: missing (a vdev devargs string, a PCI address or "
            "\"ring:NAME\")");
}

TEST(LoadToml_MissingMacAndIp, Rejected) {
  EXPECT_EQ(error_of(with("mac = \"02:00:00:00:00:01\"\n", "")), "device[0].mac: missing");
  EXPECT_EQ(error_of(with("ipv4 = \"10.0.0.1\"\n", "")), "device[0].ipv4: missing");
  EXPECT_EQ(error_of(with("name = \"uroce0\"\n", "")), "device[0].name: missing");
}

TEST(LoadToml_BadPort, Rejected) {
  EXPECT_EQ(error_of(with("ring:p0", "eth0")),
            "device[0].port: \"eth0\" is not a vdev devargs string "
            "(net_<pmd><n>,key=value,...), a PCI address or \"ring:NAME\"");
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
  EXPECT_EQ(error_of(with("poll = \"busy\"", "pol = \"busy\"")), "daemon.pol: unknown key");
  EXPECT_EQ(error_of(with("mtu = 9000", "mut = 9000")), "device[0].mut: unknown key");
  EXPECT_EQ(error_of(std::string(kTwoDevices) + "[other]\n"),
            "other: unknown key (expected [daemon], [eal] or [[device]])");
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

TEST(Validate_RunDir, AbsoluteAndShortEnough) {
  EXPECT_EQ(error_of(with("/tmp/uroce-test", "tmp/x")),
            "daemon.run_dir: \"tmp/x\" must be an absolute path");
  const std::string longdir = "/" + std::string(100, 'd');
  EXPECT_EQ(error_of(with("/tmp/uroce-test", longdir)),
            "daemon.run_dir: \"" + longdir + "\" is too long (the socket path " + longdir +
                "/uroced.sock must have at most 107 characters)");
}

TEST(ParseDeviceSpec_Valid, AllKeys) {
  DeviceConfig d;
  ASSERT_EQ(parse_device_spec(
                "name=uroce0;mac=02:00:00:00:00:01;ipv4=10.0.0.1;mtu=9000;port=ring:p0", 0, &d),
            "");
  EXPECT_EQ(d.name, "uroce0");
  EXPECT_EQ(d.mtu, 9000u);
  EXPECT_EQ(d.port_spec.kind, PortKind::kRing);
  EXPECT_EQ(d.ipv4.to_string(), "10.0.0.1");
}

TEST(ParseDeviceSpec_Errors, NameTheKey) {
  DeviceConfig d;
  EXPECT_EQ(parse_device_spec("name=uroce0;mac=02:00:00:00:00:01;ipv4=10.0.0.1", 2, &d),
            "device[2].port: missing (a vdev devargs string, a PCI address or "
            "\"ring:NAME\")");
  EXPECT_EQ(parse_device_spec("name=uroce0;mtu=big", 0, &d),
            "device[0].mtu: \"big\" is not an integer");
  EXPECT_EQ(parse_device_spec("name=uroce0;nonsense", 1, &d),
            "device[1]: \"nonsense\" is not key=value (--device takes key=value pairs "
            "separated by ';')");
  EXPECT_EQ(parse_device_spec("name=a;name=b", 0, &d), "device[0].name: given twice");
  EXPECT_EQ(parse_device_spec("name=a;color=red", 0, &d),
            "device[0].color: unknown key (expected name, port, mac, ipv4, mtu, "
            "drop_tx_every, drop_rx_every, drop_tx_rate, drop_rx_rate, drop_seed, pfc, "
            "tx_ttl or link_mbps)");
  EXPECT_EQ(parse_device_spec("ipv4=10.0.0.256", 0, &d),
            "device[0].ipv4: \"10.0.0.256\" is not an IPv4 address (expected a.b.c.d)");
}

TEST(ParseDeviceSpec_Impairment, ReadsEveryKey) {
  DeviceConfig d;
  ASSERT_EQ(parse_device_spec("name=uroce0;port=ring:p0;mac=02:00:00:00:00:01;ipv4=10.0.0.1;"
                              "drop_tx_every=7;drop_rx_every=9;drop_tx_rate=0.25;"
                              "drop_rx_rate=1;drop_seed=18446744073709551615",
                              0, &d),
            "");
  EXPECT_EQ(d.impair.drop_tx_every, 7u);
  EXPECT_EQ(d.impair.drop_rx_every, 9u);
  EXPECT_EQ(d.impair.drop_tx_rate, 0.25);
  EXPECT_EQ(d.impair.drop_rx_rate, 1.0);
  EXPECT_EQ(d.impair.drop_seed, 18446744073709551615ull);
  EXPECT_TRUE(d.impair.active());
  DeviceConfig off;
  ASSERT_EQ(parse_device_spec("name=uroce0;port=ring:p0;mac=02:00:00:00:00:01;ipv4=10.0.0.1", 0,
                              &off),
            "");
  EXPECT_FALSE(off.impair.active());
}

TEST(ParseDeviceSpec_Impairment, ErrorsNameTheKey) {
  DeviceConfig d;
  EXPECT_EQ(parse_device_spec("name=a;drop_tx_rate=1.5", 0, &d),
            "device[0].drop_tx_rate: 1.5 is outside 0..1 (a fraction of RoCEv2 frames)");
  EXPECT_EQ(parse_device_spec("name=a;drop_rx_rate=-0.5", 1, &d),
            "device[1].drop_rx_rate: -0.5 is outside 0..1 (a fraction of RoCEv2 frames)");
  EXPECT_EQ(parse_device_spec("name=a;drop_rx_rate=2", 0, &d),
            "device[0].drop_rx_rate: 2 is outside 0..1 (a fraction of RoCEv2 frames)");
  EXPECT_EQ(parse_device_spec("name=a;drop_tx_rate=lots", 0, &d),
            "device[0].drop_tx_rate: \"lots\" is not a number");
  EXPECT_EQ(parse_device_spec("name=a;drop_tx_rate=", 0, &d),
            "device[0].drop_tx_rate: \"\" is not a number");
  EXPECT_EQ(parse_device_spec("name=a;drop_tx_every=7x", 0, &d),
            "device[0].drop_tx_every: \"7x\" is not an integer");
  EXPECT_EQ(parse_device_spec("name=a;drop_rx_every=0.5", 0, &d),
            "device[0].drop_rx_every: \"0.5\" is not an integer");
  EXPECT_EQ(parse_device_spec("name=a;drop_tx_every=-1", 0, &d),
            "device[0].drop_tx_every: -1 is outside 0..4294967295 (0 = off)");
  EXPECT_EQ(parse_device_spec("name=a;drop_rx_every=4294967296", 0, &d),
            "device[0].drop_rx_every: 4294967296 is outside 0..4294967295 (0 = off)");
  EXPECT_EQ(parse_device_spec("name=a;drop_seed=-3", 0, &d),
            "device[0].drop_seed: \"-3\" is not an unsigned integer");
  EXPECT_EQ(parse_device_spec("name=a;drop_seed=1;drop_seed=2", 0, &d),
            "device[0].drop_seed: given twice");
}

TEST(LoadToml_Impairment, ReadsEveryKeyAndNamesErrors) {
  DaemonConfig cfg;
  ASSERT_EQ(load_and_validate(with("mtu = 9000",
                                   "mtu = 9000\ndrop_tx_every = 7\n"
                                   "drop_rx_every = 3\ndrop_tx_rate = 0.5\n"
                                   "drop_rx_rate = 0\ndrop_seed = 12"),
                              &cfg),
            "");
  const engine::ImpairConfig& c = cfg.devices[0].impair;
  EXPECT_EQ(c.drop_tx_every, 7u);
  EXPECT_EQ(c.drop_rx_every, 3u);
  EXPECT_EQ(c.drop_tx_rate, 0.5);
  EXPECT_EQ(c.drop_rx_rate, 0.0);
  EXPECT_EQ(c.drop_seed, 12u);
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
  EXPECT_EQ(error_of(with("mtu = 9000", "drop_seed = true")),
            "device[0].drop_seed: expected a number");
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
  EXPECT_EQ(err("colour = 1"), "device[0].pfc.colour: unknown key");
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

TEST(ParseDeviceSpec_Pfc, PrioritiesTtlAndSpeed) {
  DeviceConfig d;
  ASSERT_EQ(parse_device_spec("name=uroce0;port=ring:p0;mac=02:00:00:00:00:01;ipv4=10.0.0.1;"
                              "pfc=3,5;tx_ttl=17;link_mbps=40000",
                              0, &d),
            "");
  EXPECT_EQ(d.pfc.enable, 0x28);
  EXPECT_EQ(d.pfc.ttl.tx_ttl, 17);
  EXPECT_EQ(d.link_mbps, 40000u);
  DeviceConfig n;
  EXPECT_EQ(parse_device_spec("name=a;port=ring:p0;mac=02:00:00:00:00:01;ipv4=10.0.0.1;pfc=none", 0,
                              &n),
            "");
  EXPECT_EQ(n.pfc.enable, 0);
  EXPECT_EQ(parse_device_spec("name=a;pfc=8", 0, &n),
            "device[0].pfc: \"8\" is not a list of priorities 0..7 (e.g. \"3\" or \"3,4\"; "
            "\"none\")");
  EXPECT_EQ(parse_device_spec("name=a;pfc=3,,4", 0, &n),
            "device[0].pfc: \"3,,4\" is not a list of priorities 0..7 (e.g. \"3\" or "
            "\"3,4\"; \"none\")");
  EXPECT_EQ(parse_device_spec("name=a;tx_ttl=x", 0, &n),
            "device[0].tx_ttl: \"x\" is not an integer");
  EXPECT_EQ(parse_device_spec("name=a;tx_ttl=0", 0, &n), "device[0].tx_ttl: 0 is outside 1..255");
}

TEST(Validate_Impairment, RateOutOfRangeNamesTheKey) {
  DaemonConfig cfg;
  ASSERT_EQ(load_toml(kTwoDevices, "t.toml", &cfg), "");
  cfg.devices[1].impair.drop_rx_rate = 3;
  EXPECT_EQ(validate(cfg),
            "device[1].drop_rx_rate: 3 is outside 0..1 (a fraction of RoCEv2 frames)");
}

TEST(ApplyCommandLine_Overrides, ReplaceDevicesAppendEalArgs) {
  DaemonConfig cfg;
  ASSERT_EQ(load_toml(kTwoDevices, "t.toml", &cfg), "");
  CommandLine cl;
  cl.run_dir = "/tmp/other";
  cl.lcore = 3;
  cl.poll = "backoff";
  cl.log_level = "warn";
  cl.eal_args = {"--in-memory"};
  cl.devices = {"name=a0;mac=02:00:00:00:01:01;ipv4=10.1.0.1;port=ring:q",
                "name=a1;mac=02:00:00:00:01:02;ipv4=10.1.0.2;port=ring:q"};
  ASSERT_EQ(apply_command_line(cl, &cfg), "");
  ASSERT_EQ(validate(cfg), "");
  EXPECT_EQ(cfg.run_dir, "/tmp/other");
  EXPECT_EQ(cfg.lcore, 3u);
  EXPECT_EQ(cfg.poll, PollMode::kBackoff);
  EXPECT_EQ(cfg.log_level, "warn");
  EXPECT_EQ(cfg.eal_args.back(), "--in-memory");
  ASSERT_EQ(cfg.devices.size(), 2u);
  EXPECT_EQ(cfg.devices[0].name, "a0");
}

TEST(ApplyCommandLine_BadPoll, NamesTheOption) {
  DaemonConfig cfg;
  CommandLine cl;
  cl.poll = "spin";
  EXPECT_EQ(apply_command_line(cl, &cfg),
            "--poll: \"spin\" is not a poll mode (expected \"busy\" or \"backoff\")");
}

TEST(ParseCommandLine_Options, Collected) {
  const char* argv[] =
      {"uroced",    "--config",    "/x.toml",  "--run-dir", "/tmp/r",
       "--lcore",   "2",           "--poll",   "busy",      "--eal-arg=--in-memory",
       "--eal-arg", "--no-pci",    "--device", "name=a",    "--device",
       "name=b",    "--log-level", "debug"};
  CommandLine cl;
  ASSERT_EQ(parse_command_line(static_cast<int>(std::size(argv)), const_cast<char**>(argv), &cl),
            -1);
  EXPECT_EQ(cl.config_file, "/x.toml");
  EXPECT_EQ(cl.run_dir, "/tmp/r");
  EXPECT_EQ(cl.lcore, 2u);
  EXPECT_EQ(cl.poll, "busy");
  EXPECT_EQ(cl.log_level, "debug");
  EXPECT_EQ(cl.eal_args, (std::vector<std::string>{"--in-memory", "--no-pci"}));
  EXPECT_EQ(cl.devices, (std::vector<std::string>{"name=a", "name=b"}));
}

TEST(ParseCommandLine_Unknown, ExitCodeOne) {
  const char* argv[] = {"uroced", "--bogus"};
  CommandLine cl;
  testing::internal::CaptureStderr();
  EXPECT_EQ(parse_command_line(2, const_cast<char**>(argv), &cl), 1);
  testing::internal::GetCapturedStderr();
}

TEST(MakeEalConfig_Defaults, TranslatesArgs) {
  DaemonConfig cfg;
  ASSERT_EQ(load_toml(kTwoDevices, "t.toml", &cfg), "");
  port::EalConfig e;
  ASSERT_EQ(make_eal_config(cfg, 42, &e), "");
  EXPECT_EQ(e.lcores, "0");
  EXPECT_EQ(e.file_prefix, "t1");
  EXPECT_FALSE(e.hugepages);
  EXPECT_FALSE(e.pci);
  EXPECT_TRUE(e.telemetry);  // not switched off in this file's args
  EXPECT_EQ(e.memory_mb, 256u);
  EXPECT_TRUE(e.extra_args.empty());
  cfg.file_prefix.clear();
  ASSERT_EQ(make_eal_config(cfg, 42, &e), "");
  EXPECT_EQ(e.file_prefix, "uroced-42");
}

TEST(MakeEalConfig_PciAndBareVdev, AllowedAndListed) {
  DaemonConfig cfg;
  std::string text = kTwoDevices;
  text.replace(text.find("ring:p0"), 7, "net_null0");
  text.replace(text.find("ring:p0"), 7, "0000:03:00.0");
  ASSERT_EQ(load_and_validate(text, &cfg), "");
  port::EalConfig e;
  ASSERT_EQ(make_eal_config(cfg, 1, &e), "");
  EXPECT_TRUE(e.pci);
  EXPECT_EQ(e.allow, (std::vector<std::string>{"0000:03:00.0"}));
  EXPECT_EQ(e.vdevs, (std::vector<std::string>{"net_null0"}));
}

TEST(MakeEalConfig_ReservedArgs, Rejected) {
  DaemonConfig cfg;
  cfg.eal_args = {"-l", "0"};
  port::EalConfig e;
  EXPECT_EQ(make_eal_config(cfg, 1, &e),
            "eal.args: \"-l\" is set by uroced (use eal.lcore or --lcore)");
  cfg.eal_args = {"--file-prefix=x"};
  EXPECT_EQ(make_eal_config(cfg, 1, &e),
            "eal.args: \"--file-prefix=x\" is set by uroced (use eal.file_prefix)");
  cfg.eal_args = {"-m"};
  EXPECT_EQ(make_eal_config(cfg, 1, &e), "eal.args: \"-m\" needs a size in MB (at least 16)");
}

}  // namespace
}  // namespace uroce::daemon
