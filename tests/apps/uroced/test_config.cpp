#include "apps/uroced/config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
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
  EXPECT_EQ(error_of(with("mtu = 9000", "mtu = 575")),
            "device[0].mtu: 575 is outside 576..9216");
  EXPECT_EQ(error_of(with("mtu = 9000", "mtu = 9217")),
            "device[0].mtu: 9217 is outside 576..9216");
  EXPECT_EQ(error_of(with("mtu = 9000", "mtu = 576")), "");
  EXPECT_EQ(error_of(with("mtu = 9000", "mtu = 9216")), "");
  EXPECT_EQ(error_of(with("mtu = 9000", "mtu = \"9000\"")),
            "device[0].mtu: expected an integer");
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
                "name=uroce0;mac=02:00:00:00:00:01;ipv4=10.0.0.1;mtu=9000;port=ring:p0", 0,
                &d),
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
            "device[0].color: unknown key (expected name, port, mac, ipv4 or mtu)");
  EXPECT_EQ(parse_device_spec("ipv4=10.0.0.256", 0, &d),
            "device[0].ipv4: \"10.0.0.256\" is not an IPv4 address (expected a.b.c.d)");
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
  const char* argv[] = {"uroced", "--config", "/x.toml", "--run-dir", "/tmp/r",
                        "--lcore", "2", "--poll", "busy", "--eal-arg=--in-memory",
                        "--eal-arg", "--no-pci",
                        "--device", "name=a", "--device", "name=b", "--log-level", "debug"};
  CommandLine cl;
  ASSERT_EQ(parse_command_line(static_cast<int>(std::size(argv)), const_cast<char**>(argv),
                               &cl),
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
