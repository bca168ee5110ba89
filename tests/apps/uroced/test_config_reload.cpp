// SIGHUP's plan (config_reload.h): the running and the re-read configuration
// compared key by key through the key tables.
#include "apps/uroced/config_reload.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "tests/apps/uroced/config_test_support.h"

namespace uroce::daemon {
namespace {

DaemonConfig loaded(const std::string& text) {
  DaemonConfig cfg;
  EXPECT_EQ(load_and_validate(text, &cfg), "");
  return cfg;
}

TEST(PlanReload, SameConfigurationChangesNothing) {
  const DaemonConfig a = loaded(kTwoDevices);
  const ReloadPlan p = plan_reload(a, loaded(kTwoDevices));
  EXPECT_TRUE(p.changes.empty());
  EXPECT_EQ(p.refused, "");
}

TEST(PlanReload, LiveKeysChange) {
  const DaemonConfig a = loaded(kTwoDevices);
  std::string text = kTwoDevices;
  text.replace(text.find("log_level = \"debug\""), 19, "log_level = \"warn\"");
  text += "\n[limits]\nclient_qps = 8\nuser_mrs = 100\n";
  const ReloadPlan p = plan_reload(a, loaded(text));
  EXPECT_EQ(p.refused, "");
  ASSERT_EQ(p.changes.size(), 3u);
  EXPECT_EQ(p.changes[0], "limits.user_mrs: 0 -> 100");
  EXPECT_EQ(p.changes[1], "limits.client_qps: 0 -> 8");
  EXPECT_EQ(p.changes[2], "daemon.log_level: debug -> warn");
}

// A device's TX class settings are live: the plan names the device that
// takes them; its isolation mode is not.
TEST(PlanReload, TxClassKeysAreLiveAndNameTheirDevice) {
  const DaemonConfig a = loaded(with("mtu = 9000", "mtu = 9000\nisolation = \"classes\""));
  const std::string text =
      with("mtu = 9000",
           "mtu = 9000\nisolation = \"classes\"\nstrict_classes = [7]\nclass_weights = [1, 2]\n"
           "class_rates_mbps = [500]\nclass_quantum_bytes = 16384");
  const DaemonConfig b = loaded(text);
  const ReloadPlan p = plan_reload(a, b);
  EXPECT_EQ(p.refused, "");
  ASSERT_EQ(p.changes.size(), 4u);
  EXPECT_EQ(p.changes[0], "device[0].strict_classes: none -> 7");
  EXPECT_EQ(p.changes[1], "device[0].class_weights: 1,1,1,1,1,1,1,1 -> 1,2,1,1,1,1,1,1");
  EXPECT_EQ(p.changes[2], "device[0].class_rates_mbps: 0,0,0,0,0,0,0,0 -> 500,0,0,0,0,0,0,0");
  EXPECT_EQ(p.changes[3], "device[0].class_quantum_bytes: 65536 -> 16384");
  EXPECT_EQ(p.tx_classes, (std::vector<std::size_t>{0}));

  const ReloadPlan iso =
      plan_reload(b, loaded(with("mtu = 9000", "mtu = 9000\nisolation = \"auto\"")));
  EXPECT_TRUE(iso.changes.empty());
  EXPECT_TRUE(iso.tx_classes.empty());
  EXPECT_NE(iso.refused.find("device[0].isolation (classes -> auto)"), std::string::npos)
      << iso.refused;
}

TEST(PlanReload, AnyOtherKeyRefusesEverything) {
  const DaemonConfig a = loaded(kTwoDevices);
  std::string text = kTwoDevices;
  text.replace(text.find("mtu = 9000"), 10, "mtu = 4200");
  text.replace(text.find("backoff_max_us = 50"), 19, "backoff_max_us = 60");
  text += "\n[limits]\nclient_qps = 8\nconnections = 10\n";
  const ReloadPlan p = plan_reload(a, loaded(text));
  EXPECT_TRUE(p.changes.empty());
  EXPECT_EQ(p.refused,
            "reload refused: device[0].mtu (9000 -> 4200), limits.connections (256 -> 10), "
            "daemon.backoff_max_us (50 -> 60) cannot change while uroced runs; restart it. "
            "Nothing was changed.");
}

// The metrics listener is not rebound on SIGHUP: a new address refuses the
// reload.
TEST(PlanReload, MetricsListenIsRefused) {
  const DaemonConfig a = loaded(kTwoDevices);
  std::string text = kTwoDevices;
  text.replace(text.find("poll = \"busy\""), 13,
               "poll = \"busy\"\nmetrics_listen = \"127.0.0.1:9464\"");
  const ReloadPlan p = plan_reload(a, loaded(text));
  EXPECT_TRUE(p.changes.empty());
  EXPECT_EQ(p.refused,
            "reload refused: daemon.metrics_listen ( -> 127.0.0.1:9464) cannot change while "
            "uroced runs; restart it. Nothing was changed.");
}

TEST(PlanReload, ADeviceMoreOrLessIsRefused) {
  const DaemonConfig a = loaded(kTwoDevices);
  std::string text = kTwoDevices;
  text.erase(text.find("[[device]]\nname = \"uroce1\""));
  text.replace(text.find("ring:p0"), 7, "net_null0");  // a ring needs its second device
  const ReloadPlan p = plan_reload(a, loaded(text));
  EXPECT_EQ(p.refused,
            "reload refused: the number of devices (2 -> 1) cannot change while uroced runs; "
            "restart it. Nothing was changed.");
}

}  // namespace
}  // namespace uroce::daemon
