// The key tables (config_keys.h): every key reads the same from --device
// and from the file, the unknown-key lists are the tables', and
// docs/config-keys.md is what the tables generate.
#include "apps/uroced/config_keys.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "apps/uroced/config.h"
#include "datapath/engine/vnic_types.h"
#include "tests/apps/uroced/config_test_support.h"

namespace uroce::daemon {
namespace {

constexpr const char* kRequired = "name=uroce0;port=ring:p0;mac=02:00:00:00:00:01;ipv4=10.0.0.1";

// A value for key k other than its default where the type allows, as
// --device text.
std::string sample_text(const KeyDesc<DeviceConfig>& k) {
  const DeviceConfig defaults;
  switch (k.type) {
    case KeyType::kText:
      if (k.name == "isolation") return "auto";
      if (k.name == "ipv6") return "2001:db8::5";
      return key_value_text(k, defaults);
    case KeyType::kInteger: return std::to_string(k.hi);
    case KeyType::kU64: return "12";
    case KeyType::kNumber: return "0.5";
    case KeyType::kSwitch: return k.get(defaults).on ? "off" : "on";
    case KeyType::kMask: return "3,4";
    case KeyType::kIntList: return std::to_string(k.hi) + ",2";
    case KeyType::kTextList: return "-x";  // no device key is a text list
  }
  return {};
}

// The same value as a TOML value.
std::string toml_value(const KeyDesc<DeviceConfig>& k, const std::string& text) {
  switch (k.type) {
    case KeyType::kText: return "\"" + text + "\"";
    case KeyType::kSwitch: return text == "on" ? "true" : "false";
    case KeyType::kMask:
    case KeyType::kIntList: return "[" + text + "]";
    default: return text;
  }
}

TEST(ConfigKeys, EveryKeyReadsTheSameFromBothSources) {
  std::set<std::string_view> names;
  for (const KeySet<DeviceConfig>& set : device_key_sets()) {
    for (const KeyDesc<DeviceConfig>& k : set.keys) {
      SCOPED_TRACE(std::string(k.name));
      EXPECT_TRUE(names.insert(k.name).second) << "a key in two tables";
      EXPECT_FALSE(k.help.empty());
      if (k.sources != kInBoth || k.required) continue;
      const std::string text = sample_text(k);
      DeviceConfig from_arg;
      ASSERT_EQ(parse_device_spec(std::string(kRequired) + ";" + std::string(k.name) + "=" + text,
                                  0, &from_arg),
                "");
      DaemonConfig cfg;
      ASSERT_EQ(load_toml(with("mtu = 9000", std::string(k.name) + " = " + toml_value(k, text)),
                          "t.toml", &cfg),
                "");
      const std::string got = key_value_text(k, from_arg);
      EXPECT_EQ(got, key_value_text(k, cfg.devices[0]));
      // A list shorter than the classes keeps the rest at their defaults.
      if (k.type != KeyType::kIntList) {
        EXPECT_EQ(got, text);
      }
    }
  }
}

TEST(ConfigKeys, RequiredKeysInTableOrder) {
  DeviceConfig d;
  EXPECT_EQ(parse_device_spec("mac=02:00:00:00:00:01", 3, &d), "device[3].name: missing");
  EXPECT_EQ(parse_device_spec("name=a;mac=02:00:00:00:00:01", 0, &d),
            "device[0].port: missing (a vdev devargs string, a PCI address, \"af_xdp:IFACE\" or "
            "\"ring:NAME\")");
  EXPECT_EQ(parse_device_spec("name=a;port=ring:p0", 0, &d), "device[0].mac: missing");
  EXPECT_EQ(parse_device_spec("name=a;port=ring:p0;mac=02:00:00:00:00:01", 0, &d),
            "device[0].ipv4: missing");
}

TEST(ConfigKeys, NamesAreTheTables) {
  const std::string homa_dc =
      "homa, homa_priorities, homa_unsched_priorities, homa_unsched_bytes, homa_rtt_bytes, "
      "homa_overcommit, homa_max_incoming, homa_fifo_permille, homa_resend_us, "
      "homa_grant_timeout_us, dc_contexts, dc_records_log2, dc_stale_ms";
  EXPECT_EQ(device_key_names(kInArg),
            "name, port, mac, ipv4, ipv6, mtu, rx_buf, max_qps, link_mbps, min_ack_timeout, "
            "steer_src_port, lossy, lossy_qps, spray_paths, spray_ecn, lossy_cap, stage_stamps, "
            "cut_on_completion, ack_hold, "
            "drop_tx_every, "
            "drop_rx_every, "
            "drop_tx_rate, drop_rx_rate, drop_seed, drop_tx_max, drop_rx_max, pfc, tx_ttl, "
            "ttl_monitor, isolation, strict_classes, class_weights, class_rates_mbps, "
            "class_quantum_bytes, pace_granularity_ns, tx_limit_bytes, dcqcn, cnp_dscp, "
            "cnp_interval_us, " +
                homa_dc + " or dc_idle_disconnect_us");
  // The file has no `pfc` list: its PFC settings are the [device.pfc] table.
  EXPECT_EQ(device_key_names(kInFile),
            "name, port, mac, ipv4, ipv6, mtu, rx_buf, max_qps, link_mbps, min_ack_timeout, "
            "steer_src_port, lossy, lossy_qps, spray_paths, spray_ecn, lossy_cap, stage_stamps, "
            "cut_on_completion, ack_hold, "
            "drop_tx_every, "
            "drop_rx_every, "
            "drop_tx_rate, drop_rx_rate, drop_seed, drop_tx_max, drop_rx_max, tx_ttl, "
            "ttl_monitor, isolation, strict_classes, class_weights, class_rates_mbps, "
            "class_quantum_bytes, pace_granularity_ns, tx_limit_bytes, dcqcn, cnp_dscp, "
            "cnp_interval_us, " +
                homa_dc + ", dc_idle_disconnect_us or [device.pfc]");
  DeviceConfig d;
  EXPECT_EQ(parse_device_spec("name=a;pfc.mode=static", 0, &d),
            "device[0].pfc.mode: unknown key (expected " + device_key_names(kInArg) + ")");
}

// Every [device.pfc] key, given a value other than its default in the
// file's table, reads back as that value.
TEST(ConfigKeys, PfcTableKeysReadFromTheFile) {
  const DeviceConfig defaults;
  for (const KeyDesc<DeviceConfig>& k : pfc_table_key_set().keys) {
    SCOPED_TRACE(std::string(k.name));
    EXPECT_FALSE(k.help.empty());
    EXPECT_EQ(k.sources, kInFile);
    std::string text, value;
    if (k.name == "mode") {
      text = "static";
    } else if (k.name == "storm_action") {
      text = "ignore";
    } else if (k.name == "alpha") {
      text = "1/16";
    } else if (k.type == KeyType::kInteger) {
      text = std::to_string(k.hi - 1);  // the quanta's defaults are their maximum
    } else {
      text = sample_text(k);
    }
    value = k.type == KeyType::kText ? "\"" + text + "\"" : toml_value(k, text);
    EXPECT_NE(text, key_value_text(k, defaults));
    DaemonConfig cfg;
    ASSERT_EQ(load_toml(with("mtu = 9000",
                             "mtu = 9000\n[device.pfc]\n" + std::string(k.name) + " = " + value),
                        "t.toml", &cfg),
              "");
    const std::string got = key_value_text(k, cfg.devices[0]);
    if (k.type == KeyType::kIntList) {
      EXPECT_EQ(got.substr(0, text.size()), text);  // the rest keep their defaults
    } else {
      EXPECT_EQ(got, text);
    }
  }
}

// The [daemon] and [eal] keys that an option overrides: the option reads a
// value as the file does (one descriptor), messages name the option.
TEST(ConfigKeys, DaemonKeysFromTheFileAndTheirOptions) {
  DaemonConfig from_file;
  ASSERT_EQ(load_toml("[daemon]\nrun_dir = \"/tmp/r\"\npoll = \"yield\"\nlog_level = \"debug\"\n"
                      "[eal]\nlcore = 5\nlcores = [3, 4]\nargs = [\"--in-memory\"]\n",
                      "t.toml", &from_file),
            "");
  DaemonConfig from_options;
  CommandLine cl;
  cl.run_dir = "/tmp/r";
  cl.poll = "yield";
  cl.log_level = "debug";
  cl.lcore = 5;
  cl.lcores = "3,4";
  from_options.eal_args.clear();
  cl.eal_args = {"--in-memory"};
  ASSERT_EQ(apply_command_line(cl, &from_options), "");
  for (const KeySet<DaemonConfig>* set : {&daemon_key_set(), &eal_key_set()}) {
    for (const KeyDesc<DaemonConfig>& k : set->keys) {
      SCOPED_TRACE(std::string(k.name));
      EXPECT_FALSE(k.help.empty());
      if (k.flag.empty()) continue;
      EXPECT_EQ(key_value_text(k, from_options), key_value_text(k, from_file));
    }
  }
  EXPECT_EQ(from_file.lcore, 5u);
  EXPECT_EQ(from_file.lcores, (std::vector<std::uint32_t>{3, 4}));
  cl = CommandLine{};
  cl.lcore = 128;
  EXPECT_EQ(apply_command_line(cl, &from_options), "--lcore: 128 is outside 0..127");
  EXPECT_EQ(error_of("[daemon]\ncolour = 1\n"),
            "daemon.colour: unknown key (expected run_dir, poll, backoff_max_us, status_group, "
            "metrics_listen or log_level)");
  EXPECT_EQ(error_of("[eal]\nlcore = 128\n"), "eal.lcore: 128 is outside 0..127");
  EXPECT_EQ(error_of("[eal]\nlcores = [1, 200]\n"), "eal.lcores[1]: 200 is outside 0..127");
}

// docs/config-keys.md is generated from the tables; when a key changes,
// regenerate it: build/apps/uroce-ctl/uroce-ctl keys --markdown > docs/config-keys.md
TEST(ConfigKeys, DocIsCurrent) {
  std::ifstream in(std::string(UROCE_SOURCE_ROOT) + "/docs/config-keys.md");
  ASSERT_TRUE(in) << "docs/config-keys.md is missing";
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), keys_markdown())
      << "docs/config-keys.md is not current: run "
         "`build/apps/uroce-ctl/uroce-ctl keys --markdown > docs/config-keys.md`";
}

TEST(ConfigKeys, TextListsEveryKeyWithItsDefault) {
  const std::string t = keys_text();
  EXPECT_NE(t.find("  mtu                      integer  1500       576..9216\n"), std::string::npos)
      << t;
  EXPECT_NE(t.find("  connections              integer  256        1..65536\n"), std::string::npos);
}

// max_qps: the engine's default, its range from both sources, and into the
// engine's QP table.
TEST(ConfigKeys, MaxQps) {
  EXPECT_EQ(DeviceConfig{}.max_qps, engine::VnicConfig{}.max_qps);
  DeviceConfig d;
  ASSERT_EQ(parse_device_spec(std::string(kRequired) + ";max_qps=4096", 0, &d), "");
  EXPECT_EQ(d.max_qps, 4096u);
  EXPECT_EQ(parse_device_spec(std::string(kRequired) + ";max_qps=0", 0, &d),
            "device[0].max_qps: 0 is outside 1..131072");
  EXPECT_EQ(error_of(with("mtu = 9000", "max_qps = 131073")),
            "device[0].max_qps: 131073 is outside 1..131072");
}

// spray_paths: one path by default, as the engine's; 1..16 from both
// sources, into the engine's config.
TEST(ConfigKeys, SprayPaths) {
  EXPECT_EQ(DeviceConfig{}.spray_paths, 1u);
  EXPECT_EQ(engine::VnicConfig{}.spray_paths, 1u);
  DeviceConfig d;
  ASSERT_EQ(parse_device_spec(std::string(kRequired) + ";lossy=on;spray_paths=4", 0, &d), "");
  EXPECT_EQ(d.spray_paths, 4u);
  ASSERT_EQ(parse_device_spec(std::string(kRequired) + ";spray_paths=16", 0, &d), "");
  EXPECT_EQ(d.spray_paths, 16u);
  EXPECT_EQ(parse_device_spec(std::string(kRequired) + ";spray_paths=0", 0, &d),
            "device[0].spray_paths: 0 is outside 1..16 (1 = no spraying)");
  EXPECT_EQ(parse_device_spec(std::string(kRequired) + ";spray_paths=17", 1, &d),
            "device[1].spray_paths: 17 is outside 1..16 (1 = no spraying)");
  EXPECT_EQ(parse_device_spec(std::string(kRequired) + ";spray_paths=four", 0, &d),
            "device[0].spray_paths: \"four\" is not an integer");
  EXPECT_EQ(error_of(with("mtu = 9000", "spray_paths = 32")),
            "device[0].spray_paths: 32 is outside 1..16 (1 = no spraying)");
}

}  // namespace
}  // namespace uroce::daemon
