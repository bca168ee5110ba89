// The DC target's device keys (config_dc.cpp) through both of their
// readers, the TOML file and --device, and into the engine's VnicConfig.
#include "apps/uroced/config_dc.h"

#include <gtest/gtest.h>

#include <string>

#include "apps/uroced/config.h"
#include "apps/uroced/config_keys.h"
#include "apps/uroced/config_values.h"
#include "tests/apps/uroced/config_test_support.h"

namespace uroce::daemon {
namespace {

constexpr const char* kDev = "name=uroce0;port=ring:p0;mac=02:00:00:00:00:01;ipv4=10.0.0.1;";

std::string device_error(const std::string& keys, DeviceConfig* d) {
  std::string err = parse_device_spec(kDev + keys, 0, d);
  return err.empty() ? config_detail::check_device_values(*d, 0) : err;
}
std::string device_error(const std::string& keys) {
  DeviceConfig d;
  return device_error(keys, &d);
}

// The daemon's defaults are the engine's.
TEST(ConfigDc, DefaultsAreTheEngines) {
  const DeviceConfig d;
  const engine::VnicConfig v;
  ASSERT_EQ(dc_keys().size(), kDcKeys.size());
  for (std::size_t j = 0; j < kDcKeys.size(); ++j) {
    SCOPED_TRACE(std::string(kDcKeys[j].name));
    EXPECT_EQ(dc_keys()[j].name, kDcKeys[j].name);
    EXPECT_EQ(dc_keys()[j].get(d).i, v.*kDcKeys[j].vnic);
  }
}

TEST(ConfigDc, DeviceSpec_EveryKeyReachesTheEngine) {
  DeviceConfig d;
  ASSERT_EQ(device_error("dc_contexts=64;dc_records_log2=8;dc_stale_ms=2500;"
                         "dc_idle_disconnect_us=250",
                         &d),
            "");
  EXPECT_EQ(d.dc_contexts, 64u);
  EXPECT_EQ(d.dc_records_log2, 8u);
  EXPECT_EQ(d.dc_stale_ms, 2500u);
  EXPECT_EQ(d.dc_idle_disconnect_us, 250u);
  engine::VnicConfig v;
  apply_dc_keys(d, &v);
  EXPECT_EQ(v.dc_contexts, 64u);
  EXPECT_EQ(v.dc_records_log2, 8u);
  EXPECT_EQ(v.dc_stale_ms, 2500u);
  EXPECT_EQ(v.dc_idle_disconnect_us, 250u);
  EXPECT_EQ(engine::dc_target_limits(v).stale_ns, 2500 * kNsPerMs);
}

TEST(ConfigDc, Toml_EveryKey) {
  DaemonConfig cfg;
  ASSERT_EQ(load_and_validate(with("mtu = 9000",
                                   "mtu = 9000\ndc_contexts = 100\n"
                                   "dc_records_log2 = 0\ndc_stale_ms = 1\n"
                                   "dc_idle_disconnect_us = 3600000000"),
                              &cfg),
            "");
  EXPECT_EQ(cfg.devices[0].dc_contexts, 100u);
  EXPECT_EQ(cfg.devices[0].dc_records_log2, 0u);
  EXPECT_EQ(cfg.devices[0].dc_stale_ms, 1u);
  EXPECT_EQ(cfg.devices[0].dc_idle_disconnect_us, 3'600'000'000u);
  EXPECT_EQ(cfg.devices[1].dc_contexts, 4096u);  // the second keeps the defaults
}

TEST(ConfigDc, ExactErrors) {
  EXPECT_EQ(device_error("dc_contexts=0"), "device[0].dc_contexts: 0 is outside 1..1048576");
  EXPECT_EQ(device_error("dc_contexts=1048577"),
            "device[0].dc_contexts: 1048577 is outside 1..1048576");
  EXPECT_EQ(device_error("dc_records_log2=25"), "device[0].dc_records_log2: 25 is outside 0..24");
  EXPECT_EQ(device_error("dc_stale_ms=-1"), "device[0].dc_stale_ms: -1 is outside 1..3600000");
  EXPECT_EQ(device_error("dc_stale_ms=1s"), "device[0].dc_stale_ms: \"1s\" is not an integer");
  EXPECT_EQ(device_error("dc_idle_disconnect_us=0"),
            "device[0].dc_idle_disconnect_us: 0 is outside 1..3600000000");
  EXPECT_EQ(device_error("dc_idle_disconnect_us=3600000001"),
            "device[0].dc_idle_disconnect_us: 3600000001 is outside 1..3600000000");
  DaemonConfig cfg;
  EXPECT_EQ(load_and_validate(with("mtu = 9000", "mtu = 9000\ndc_stale_ms = 0"), &cfg),
            "device[0].dc_stale_ms: 0 is outside 1..3600000");
  EXPECT_EQ(load_and_validate(with("mtu = 9000", "mtu = 9000\ndc_contexts = \"4k\""), &cfg),
            "device[0].dc_contexts: expected an integer");
}

}  // namespace
}  // namespace uroce::daemon
