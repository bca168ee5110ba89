// SIGHUP's plan (config_reload.h): the running and the re-read configuration
// compared key by key through the key tables.
#include "apps/uroced/config_reload.h"

#include <gtest/gtest.h>

#include <string>

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
