// uroced's command line, --device strings, validation and EAL arguments
// (config.cpp).
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
            "device[2].port: missing (a vdev devargs string, a PCI address, "
            "\"af_xdp:IFACE\" or \"ring:NAME\")");
  EXPECT_EQ(parse_device_spec("name=uroce0;mtu=big", 0, &d),
            "device[0].mtu: \"big\" is not an integer");
  EXPECT_EQ(parse_device_spec("name=uroce0;nonsense", 1, &d),
            "device[1]: \"nonsense\" is not key=value (--device takes key=value pairs "
            "separated by ';')");
  EXPECT_EQ(parse_device_spec("name=a;name=b", 0, &d), "device[0].name: given twice");
  // The list is the key table's (ConfigKeys.NamesAreTheTables pins it).
  EXPECT_EQ(parse_device_spec("name=a;color=red", 0, &d),
            "device[0].color: unknown key (expected " + device_key_names(kInArg) + ")");
  EXPECT_EQ(parse_device_spec("ipv4=10.0.0.256", 0, &d),
            "device[0].ipv4: \"10.0.0.256\" is not an IPv4 address (expected a.b.c.d)");
}

TEST(ParseDeviceSpec_Ipv6, GlobalAddressOnly) {
  DeviceConfig d;
  ASSERT_EQ(parse_device_spec("name=uroce0;mac=02:00:00:00:00:01;ipv4=10.0.0.1;ipv6=2001:db8::1;"
                              "port=ring:p0",
                              0, &d),
            "");
  EXPECT_EQ(d.ipv6.to_string(), "2001:db8::1");
  EXPECT_EQ(parse_device_spec("ipv6=fe80::1", 0, &d),
            "device[0].ipv6: fe80::1 is not a global unicast address (the link-local one is GID "
            "0, from the MAC)");
  EXPECT_EQ(parse_device_spec("ipv6=ff02::1", 1, &d),
            "device[1].ipv6: ff02::1 is not a global unicast address (the link-local one is GID "
            "0, from the MAC)");
  EXPECT_EQ(parse_device_spec("ipv6=10.0.0.1", 0, &d),
            "device[0].ipv6: \"10.0.0.1\" is not an IPv6 address");
}

TEST(ParseDeviceSpec_Impairment, ReadsEveryKey) {
  DeviceConfig d;
  ASSERT_EQ(parse_device_spec("name=uroce0;port=ring:p0;mac=02:00:00:00:00:01;ipv4=10.0.0.1;"
                              "drop_tx_every=7;drop_rx_every=9;drop_tx_rate=0.25;"
                              "drop_rx_rate=1;drop_seed=18446744073709551615;"
                              "drop_tx_max=6;drop_rx_max=4294967295",
                              0, &d),
            "");
  EXPECT_EQ(d.impair.drop_tx_max, 6u);
  EXPECT_EQ(d.impair.drop_rx_max, 4294967295u);
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

TEST(ParseDeviceSpec_RxBuf, ZeroOrAtLeastTheMinimum) {
  DeviceConfig d;
  const std::string base = "name=uroce0;port=ring:p0;mac=02:00:00:00:00:01;ipv4=10.0.0.1;";
  EXPECT_EQ(parse_device_spec(base + "rx_buf=2048", 0, &d), "");
  EXPECT_EQ(d.rx_buf, 2048u);
  EXPECT_EQ(parse_device_spec(base + "rx_buf=0", 0, &d), "");
  EXPECT_EQ(d.rx_buf, 0u);
  EXPECT_EQ(parse_device_spec("name=a;rx_buf=1023", 0, &d),
            "device[0].rx_buf: 1023 is below 1024 (0 = one buffer holds the largest frame)");
  EXPECT_EQ(parse_device_spec("name=a;rx_buf=65408", 1, &d),
            "device[1].rx_buf: 65408 is outside 0..65407 (0 = one buffer holds the largest "
            "frame)");
}

TEST(ParseDeviceSpec_AckHold, OffOrTwoToThirtyTwo) {
  DeviceConfig d;
  EXPECT_EQ(d.ack_hold, 4u);
  const std::string base = "name=uroce0;port=ring:p0;mac=02:00:00:00:00:01;ipv4=10.0.0.1;";
  EXPECT_EQ(parse_device_spec(base + "ack_hold=0", 0, &d), "");
  EXPECT_EQ(d.ack_hold, 0u);
  EXPECT_EQ(parse_device_spec(base + "ack_hold=32", 0, &d), "");
  EXPECT_EQ(d.ack_hold, 32u);
  EXPECT_EQ(parse_device_spec("name=a;ack_hold=1", 0, &d),
            "device[0].ack_hold: 1 holds nothing (0 = off, or 2 to 32)");
  EXPECT_EQ(parse_device_spec("name=a;ack_hold=33", 0, &d),
            "device[0].ack_hold: 33 is outside 0..32 (0 = off)");
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
  EXPECT_EQ(parse_device_spec("name=a;drop_tx_max=-1", 0, &d),
            "device[0].drop_tx_max: -1 is outside 0..4294967295 (0 = no cap)");
  EXPECT_EQ(parse_device_spec("name=a;drop_rx_max=many", 0, &d),
            "device[0].drop_rx_max: \"many\" is not an integer");
  EXPECT_EQ(parse_device_spec("name=a;drop_seed=-3", 0, &d),
            "device[0].drop_seed: \"-3\" is not an unsigned integer");
  EXPECT_EQ(parse_device_spec("name=a;drop_seed=1;drop_seed=2", 0, &d),
            "device[0].drop_seed: given twice");
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

TEST(ParseDeviceSpec_Sched, IsolationClassesAndPacer) {
  DeviceConfig d;
  ASSERT_EQ(parse_device_spec("name=uroce0;port=ring:p0;mac=02:00:00:00:00:01;ipv4=10.0.0.1;"
                              "isolation=classes;strict_classes=6,7;class_weights=1,2,4;"
                              "pace_granularity_ns=500",
                              0, &d),
            "");
  EXPECT_EQ(d.sched.isolation, sched::Isolation::kClasses);
  const auto& c = d.sched.classes.classes;
  EXPECT_EQ(c[6].mode, sched::ClassMode::kStrict);
  EXPECT_EQ(c[7].mode, sched::ClassMode::kStrict);
  EXPECT_EQ(c[5].mode, sched::ClassMode::kWeighted);
  EXPECT_EQ(c[0].weight, 1u);
  EXPECT_EQ(c[1].weight, 2u);
  EXPECT_EQ(c[2].weight, 4u);
  EXPECT_EQ(c[3].weight, 1u);  // not listed: the default
  EXPECT_EQ(d.pacer.granularity_ns, 500u);
  DeviceConfig n;
  EXPECT_EQ(n.sched.isolation, sched::Isolation::kOff);
  EXPECT_EQ(n.pacer.granularity_ns, 1000u);
  EXPECT_EQ(parse_device_spec(
                "name=a;port=ring:p;mac=02:00:00:00:00:01;ipv4=10.0.0.1;isolation=auto", 0, &n),
            "");
  EXPECT_EQ(n.sched.isolation, sched::Isolation::kAuto);
  EXPECT_EQ(parse_device_spec("name=a;isolation=wfq", 0, &n),
            "device[0].isolation: \"wfq\" is not an isolation mode (expected \"off\", "
            "\"classes\" or \"auto\")");
  EXPECT_EQ(parse_device_spec("name=a;strict_classes=8", 0, &n),
            "device[0].strict_classes: \"8\" is not a list of classes 0..7 (e.g. \"3\" or "
            "\"3,4\"; \"none\")");
  EXPECT_EQ(parse_device_spec("name=a;class_weights=1,x", 0, &n),
            "device[0].class_weights: \"1,x\" is not a list of at most 8 weights (classes 0.. "
            "in order, e.g. \"1,1,2,4\")");
  EXPECT_EQ(parse_device_spec("name=a;class_weights=1,1,1,1,1,1,1,1,1", 0, &n),
            "device[0].class_weights: \"1,1,1,1,1,1,1,1,1\" is not a list of at most 8 weights "
            "(classes 0.. in order, e.g. \"1,1,2,4\")");
  EXPECT_EQ(parse_device_spec("name=a;class_weights=1,0", 0, &n),
            "device[0].class_weights[1]: 0 is outside 1..65535");
  ASSERT_EQ(parse_device_spec("name=a;port=ring:p;mac=02:00:00:00:00:01;ipv4=10.0.0.1;"
                              "class_rates_mbps=0,0,0,1000",
                              0, &n),
            "");
  EXPECT_EQ(n.sched.classes.classes[3].rate_mbps, 1000u);
  EXPECT_EQ(n.sched.classes.classes[0].rate_mbps, 0u);
  EXPECT_EQ(n.sched.classes.classes[7].rate_mbps, 0u);  // not listed: none
  EXPECT_EQ(parse_device_spec("name=a;class_rates_mbps=1G", 0, &n),
            "device[0].class_rates_mbps: \"1G\" is not a list of at most 8 rates in Mb/s "
            "(classes 0.. in order, e.g. \"0,0,0,1000\")");
  EXPECT_EQ(parse_device_spec("name=a;class_rates_mbps=0,400001", 0, &n),
            "device[0].class_rates_mbps[1]: 400001 is outside 0..400000");
  EXPECT_EQ(parse_device_spec("name=a;pace_granularity_ns=50", 0, &n),
            "device[0].pace_granularity_ns: 50 is outside 100..1000000");
  EXPECT_EQ(parse_device_spec("name=a;pace_granularity_ns=1us", 0, &n),
            "device[0].pace_granularity_ns: \"1us\" is not an integer");
}

TEST(ParseDeviceSpec_Dcqcn, OnOffDscpAndInterval) {
  DeviceConfig d;
  ASSERT_EQ(parse_device_spec("name=uroce0;port=ring:p0;mac=02:00:00:00:00:01;ipv4=10.0.0.1;"
                              "dcqcn=on;cnp_dscp=46;cnp_interval_us=4",
                              0, &d),
            "");
  EXPECT_TRUE(d.dcqcn.enabled);
  EXPECT_EQ(d.dcqcn.cnp_dscp, 46);
  EXPECT_EQ(d.dcqcn.cnp_interval_ns, 4'000u);
  DeviceConfig n;
  EXPECT_FALSE(n.dcqcn.enabled);
  EXPECT_EQ(n.dcqcn.cnp_dscp, 48);
  EXPECT_EQ(n.dcqcn.cnp_interval_ns, 50'000u);
  EXPECT_EQ(parse_device_spec("name=a;dcqcn=yes", 0, &n),
            "device[0].dcqcn: \"yes\" is not on or off");
  EXPECT_EQ(parse_device_spec("name=a;cnp_dscp=64", 0, &n),
            "device[0].cnp_dscp: 64 is outside 0..63");
  EXPECT_EQ(parse_device_spec("name=a;cnp_interval_us=0", 0, &n),
            "device[0].cnp_interval_us: 0 is outside 1..1000000");
  EXPECT_EQ(parse_device_spec("name=a;cnp_interval_us=5ms", 0, &n),
            "device[0].cnp_interval_us: \"5ms\" is not an integer");
}

TEST(ParseDeviceSpec_TxLimit, BytesOrOffAndRange) {
  DeviceConfig d;
  EXPECT_EQ(d.tx_limit_bytes, 0u);
  ASSERT_EQ(parse_device_spec("name=uroce0;port=ring:p0;mac=02:00:00:00:00:01;ipv4=10.0.0.1;"
                              "tx_limit_bytes=4096",
                              0, &d),
            "");
  EXPECT_EQ(d.tx_limit_bytes, 4096u);
  EXPECT_EQ(parse_device_spec("name=a;tx_limit_bytes=16777217", 0, &d),
            "device[0].tx_limit_bytes: 16777217 is outside 0..16777216 (0 = no limit)");
  ASSERT_EQ(parse_device_spec("name=uroce0;port=ring:p0;mac=02:00:00:00:00:01;ipv4=10.0.0.1;"
                              "class_quantum_bytes=8192",
                              0, &d),
            "");
  EXPECT_EQ(d.sched.classes.class_quantum, 8192u);
  EXPECT_EQ(parse_device_spec("name=a;class_quantum_bytes=512", 0, &d),
            "device[0].class_quantum_bytes: 512 is outside 1024..1048576");
  EXPECT_EQ(parse_device_spec("name=a;tx_limit_bytes=4k", 0, &d),
            "device[0].tx_limit_bytes: \"4k\" is not an integer");
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

TEST(ApplyCommandLine_Lcores, KeptInOrderFirstIsMain) {
  DaemonConfig cfg;
  ASSERT_EQ(load_toml(kTwoDevices, "t.toml", &cfg), "");
  EXPECT_EQ(engine_lcores(cfg), (std::vector<std::uint32_t>{0}));
  CommandLine cl;
  cl.lcores = "2,1";
  ASSERT_EQ(apply_command_line(cl, &cfg), "");
  ASSERT_EQ(validate(cfg), "");
  EXPECT_EQ(engine_lcores(cfg), (std::vector<std::uint32_t>{2, 1}));
  port::EalConfig e;
  ASSERT_EQ(make_eal_config(cfg, 1, &e), "");
  EXPECT_EQ(e.lcores, "2,1");
  EXPECT_EQ(e.main_lcore, 2);
}

TEST(ApplyCommandLine_BadLcores, ExactErrors) {
  DaemonConfig cfg;
  ASSERT_EQ(load_toml(kTwoDevices, "t.toml", &cfg), "");
  CommandLine cl;
  cl.lcores = "1,128";
  EXPECT_EQ(apply_command_line(cl, &cfg), "--lcores[1]: 128 is outside 0..127");
  cl.lcores = "1,1";
  ASSERT_EQ(apply_command_line(cl, &cfg), "");
  EXPECT_EQ(validate(cfg), "eal.lcores: lcore 1 is given twice");
  cfg.lcores = {1, 2};
  cfg.devices[1].pfc.enable = 0x08;
  EXPECT_EQ(validate(cfg),
            "device[1].pfc: PFC on an engine of several lcores (eal.lcores) is not supported "
            "(its frames reach the first lcore alone)");
  cfg.lcores = {1};
  EXPECT_EQ(validate(cfg), "");
}

TEST(ApplyCommandLine_Poll, TakesYield) {
  DaemonConfig cfg;
  CommandLine cl;
  cl.poll = "yield";
  ASSERT_EQ(apply_command_line(cl, &cfg), "");
  EXPECT_EQ(cfg.poll, PollMode::kYield);
  EXPECT_STREQ(to_string(cfg.poll), "yield");
}

TEST(ApplyCommandLine_BadPoll, NamesTheOption) {
  DaemonConfig cfg;
  CommandLine cl;
  cl.poll = "spin";
  EXPECT_EQ(apply_command_line(cl, &cfg),
            "--poll: \"spin\" is not a poll mode (expected \"busy\", \"backoff\" or \"yield\")");
}

TEST(ParseCommandLine_Options, Collected) {
  const char* argv[] = {"uroced",    "--config", "/x.toml",     "--run-dir",
                        "/tmp/r",    "--lcore",  "2",           "--lcores",
                        "0,1",       "--poll",   "busy",        "--eal-arg=--in-memory",
                        "--eal-arg", "--no-pci", "--device",    "name=a",
                        "--device",  "name=b",   "--log-level", "debug"};
  CommandLine cl;
  ASSERT_EQ(parse_command_line(static_cast<int>(std::size(argv)), const_cast<char**>(argv), &cl),
            -1);
  EXPECT_EQ(cl.config_file, "/x.toml");
  EXPECT_EQ(cl.run_dir, "/tmp/r");
  EXPECT_EQ(cl.lcore, 2u);
  EXPECT_EQ(cl.lcores, "0,1");
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

TEST(DumpcapBlocker_EalArgs, SharedFilesAndHugepagesNeeded) {
  DaemonConfig c;
  c.eal_args = {"--no-huge", "--no-pci", "-m", "512"};
  EXPECT_EQ(dumpcap_blocker(c),
            "its EAL runs with --no-huge (a secondary process cannot map that memory)");
  c.eal_args = {"--in-memory", "--no-pci"};
  EXPECT_EQ(dumpcap_blocker(c),
            "its EAL runs without shared files (--in-memory or --no-shconf in eal.args)");
  c.eal_args = {"--no-shconf", "--no-huge"};
  EXPECT_EQ(dumpcap_blocker(c),
            "its EAL runs without shared files (--in-memory or --no-shconf in eal.args)");
  c.eal_args = {"--no-pci", "--no-telemetry", "-m", "512"};
  EXPECT_EQ(dumpcap_blocker(c), "");
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
