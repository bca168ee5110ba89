// The Homa-like scheduler's device keys (config_homa.cpp) through both of
// their readers, the TOML file and --device, and their validation by
// HomaSettings::first_bad_field().
#include <gtest/gtest.h>

#include <string>

#include "apps/uroced/config.h"
#include "apps/uroced/config_keys.h"
#include "apps/uroced/config_values.h"
#include "tests/apps/uroced/config_test_support.h"

namespace uroce::daemon {
namespace {

constexpr const char* kDev = "name=uroce0;port=ring:p0;mac=02:00:00:00:00:01;ipv4=10.0.0.1;";

// --device SPEC (kDev + `keys`) parsed into *d and validated as uroced
// does it.
std::string device_error(const std::string& keys, DeviceConfig* d) {
  std::string err = parse_device_spec(kDev + keys, 0, d);
  return err.empty() ? config_detail::check_device_values(*d, 0) : err;
}
// The same into a fresh device.
std::string device_error(const std::string& keys) {
  DeviceConfig d;
  return device_error(keys, &d);
}

std::string toml_error(const std::string& lines, DaemonConfig* cfg) {
  return load_and_validate(with("mtu = 9000", "mtu = 9000\n" + lines), cfg);
}

TEST(ConfigHoma, OffByDefaultWithTheSchedulersDefaults) {
  DeviceConfig d;
  ASSERT_EQ(device_error("", &d), "");
  EXPECT_FALSE(d.homa.enabled);
  const sched::homa::HomaSettings defaults;
  EXPECT_EQ(d.homa.rtt_bytes, defaults.rtt_bytes);
  EXPECT_EQ(d.homa.grant_timeout_ns, defaults.grant_timeout_ns);
}

TEST(ConfigHoma, DeviceSpec_EveryKey) {
  DeviceConfig d;
  ASSERT_EQ(device_error("homa=on;homa_priorities=4;homa_unsched_priorities=2;"
                         "homa_unsched_bytes=30000;homa_rtt_bytes=40000;homa_overcommit=2;"
                         "homa_max_incoming=200000;homa_fifo_permille=100;homa_resend_us=500;"
                         "homa_grant_timeout_us=2500",
                         &d),
            "");
  EXPECT_TRUE(d.homa.enabled);
  EXPECT_EQ(d.homa.priorities, 4);
  EXPECT_EQ(d.homa.unsched_priorities, 2);
  EXPECT_EQ(d.homa.unsched_bytes, 30'000u);
  EXPECT_EQ(d.homa.rtt_bytes, 40'000u);
  EXPECT_EQ(d.homa.overcommit, 2u);
  EXPECT_EQ(d.homa.max_incoming, 200'000u);
  EXPECT_EQ(d.homa.fifo_permille, 100u);
  EXPECT_EQ(d.homa.resend_ns, 500'000u);
  EXPECT_EQ(d.homa.grant_timeout_ns, 2'500'000u);
  DeviceConfig off;
  ASSERT_EQ(device_error("homa=off", &off), "");
  EXPECT_FALSE(off.homa.enabled);
}

TEST(ConfigHoma, Toml_EveryKey) {
  DaemonConfig cfg;
  ASSERT_EQ(toml_error("homa = true\nhoma_priorities = 2\nhoma_unsched_priorities = 1\n"
                       "homa_unsched_bytes = 9000\nhoma_rtt_bytes = 9000\nhoma_overcommit = 8\n"
                       "homa_max_incoming = 4096\nhoma_fifo_permille = 0\nhoma_resend_us = 3000\n"
                       "homa_grant_timeout_us = 3001",
                       &cfg),
            "");
  const sched::homa::HomaSettings& h = cfg.devices[0].homa;
  EXPECT_TRUE(h.enabled);
  EXPECT_EQ(h.priorities, 2);
  EXPECT_EQ(h.unsched_priorities, 1);
  EXPECT_EQ(h.unsched_bytes, 9'000u);
  EXPECT_EQ(h.rtt_bytes, 9'000u);
  EXPECT_EQ(h.overcommit, 8u);
  EXPECT_EQ(h.max_incoming, 4'096u);
  EXPECT_EQ(h.fifo_permille, 0u);
  EXPECT_EQ(h.resend_ns, 3'000'000u);
  EXPECT_EQ(h.grant_timeout_ns, 3'001'000u);
  // The second device keeps the defaults.
  EXPECT_FALSE(cfg.devices[1].homa.enabled);
}

TEST(ConfigHoma, DeviceSpec_ExactErrors) {
  EXPECT_EQ(device_error("homa=yes"), "device[0].homa: \"yes\" is not on or off");
  EXPECT_EQ(device_error("homa_priorities=9"), "device[0].homa_priorities: 9 is outside 1..8");
  EXPECT_EQ(device_error("homa_priorities=0"), "device[0].homa_priorities: 0 is outside 1..8");
  EXPECT_EQ(device_error("homa_priorities=300"), "device[0].homa_priorities: 300 is outside 1..8");
  EXPECT_EQ(device_error("homa_unsched_priorities=0"),
            "device[0].homa_unsched_priorities: 0 is outside 1..8");
  EXPECT_EQ(device_error("homa_unsched_bytes=0"),
            "device[0].homa_unsched_bytes: 0 is outside 1..4294967295");
  EXPECT_EQ(device_error("homa_unsched_bytes=4294967296"),
            "device[0].homa_unsched_bytes: 4294967296 is outside 1..4294967295");
  EXPECT_EQ(device_error("homa_rtt_bytes=4095"),
            "device[0].homa_rtt_bytes: 4095 is outside 4096..4294967295");
  EXPECT_EQ(device_error("homa_overcommit=65"), "device[0].homa_overcommit: 65 is outside 1..64");
  EXPECT_EQ(device_error("homa_max_incoming=-1"),
            "device[0].homa_max_incoming: -1 is outside 4096..9223372036854775807");
  EXPECT_EQ(device_error("homa_max_incoming=100"),
            "device[0].homa_max_incoming: 100 is outside 4096..9223372036854775807");
  EXPECT_EQ(device_error("homa_fifo_permille=1001"),
            "device[0].homa_fifo_permille: 1001 is outside 0..1000");
  EXPECT_EQ(device_error("homa_resend_us=0"), "device[0].homa_resend_us: 0 is outside 1..10000000");
  EXPECT_EQ(device_error("homa_resend_us=10000001"),
            "device[0].homa_resend_us: 10000001 is outside 1..10000000");
  EXPECT_EQ(device_error("homa_resend_us=1ms"),
            "device[0].homa_resend_us: \"1ms\" is not an integer");
  EXPECT_EQ(device_error("homa_grant_timeout_us=1000"),
            "device[0].homa_grant_timeout_us: 1000 must be more than homa_resend_us (1000)");
  // The default timeout (4 ms) against a longer resend.
  EXPECT_EQ(device_error("homa_resend_us=5000"),
            "device[0].homa_grant_timeout_us: 4000 must be more than homa_resend_us (5000)");
  EXPECT_EQ(device_error("homa_grant_timeout_us=10000001"),
            "device[0].homa_grant_timeout_us: 10000001 is outside 1..10000000");
  EXPECT_EQ(device_error("homa_priority=3").substr(0, 38),
            "device[0].homa_priority: unknown key (");
}

TEST(ConfigHoma, Toml_ExactErrors) {
  DaemonConfig cfg;
  EXPECT_EQ(toml_error("homa = \"on\"", &cfg), "device[0].homa: expected true or false");
  EXPECT_EQ(toml_error("homa_overcommit = 0", &cfg),
            "device[0].homa_overcommit: 0 is outside 1..64");
  EXPECT_EQ(toml_error("homa_fifo_permille = -5", &cfg),
            "device[0].homa_fifo_permille: -5 is outside 0..1000");
  EXPECT_EQ(toml_error("homa_rtt_bytes = \"60k\"", &cfg),
            "device[0].homa_rtt_bytes: expected an integer");
  EXPECT_EQ(toml_error("homa_resend_us = 2000\nhoma_grant_timeout_us = 1500", &cfg),
            "device[0].homa_grant_timeout_us: 1500 must be more than homa_resend_us (2000)");
  // Checked whether or not the scheduler is on: a bad value is a typo either way.
  EXPECT_EQ(toml_error("homa = false\nhoma_priorities = 0", &cfg),
            "device[0].homa_priorities: 0 is outside 1..8");
}

// The table's ranges are HomaSettings::first_bad_field()'s: lo is accepted
// and lo - 1 refused by it, hi accepted; where hi is the scheduler's own
// bound (not the field's or the daemon's), hi + 1 refused by it too.
TEST(ConfigHoma, KeyRangesAgreeWithFirstBadField) {
  auto set = [](const KeyDesc<DeviceConfig>& k, std::int64_t v, DeviceConfig* d) {
    ASSERT_EQ(k.set(KeyValue::of_int(v), "k", d), "");
  };
  const KeyDesc<DeviceConfig>& resend = *find_device_key("homa_resend_us");
  for (const KeyDesc<DeviceConfig>& k : homa_keys()) {
    if (k.type == KeyType::kSwitch) continue;  // homa itself
    SCOPED_TRACE(std::string(k.name));
    DeviceConfig d;
    if (k.name == "homa_grant_timeout_us") {
      // Its lower bound is the resend interval.
      set(k, resend.get(d).i + 1, &d);
      EXPECT_EQ(d.homa.first_bad_field(), "");
      set(k, resend.get(d).i, &d);
      EXPECT_EQ(d.homa.first_bad_field(), k.name);
      continue;
    }
    set(k, k.lo, &d);
    EXPECT_EQ(d.homa.first_bad_field(), "");
    EXPECT_EQ(k.get(d).i, k.lo);
    if (k.lo > 0) {
      set(k, k.lo - 1, &d);
      EXPECT_EQ(d.homa.first_bad_field(), k.name);
    }
    set(k, k.hi, &d);
    // The longest resend needs a longer timeout beside it.
    if (k.name == "homa_resend_us") set(*find_device_key("homa_grant_timeout_us"), k.hi + 1, &d);
    EXPECT_EQ(d.homa.first_bad_field(), "");
    EXPECT_EQ(k.get(d).i, k.hi);
    if (k.hi < 1000) {
      set(k, k.hi + 1, &d);
      EXPECT_EQ(d.homa.first_bad_field(), k.name);
    }
  }
}

}  // namespace
}  // namespace uroce::daemon
