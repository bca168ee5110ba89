// What SIGHUP may change in a running uroced (docs/install.md, "Reloading"):
// the configuration is read again from the same file and options, and
// compared with the running one key by key, through the key tables
// (config_keys.h). Keys marked live (KeyDesc::live: the [limits] quotas,
// daemon.log_level and a device's TX class settings: strict_classes,
// class_weights, class_rates_mbps, class_quantum_bytes) take their new
// values; a change to any other key, or to
// the number of devices, refuses the whole reload, so that what runs is
// always one configuration that was read as a whole.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "apps/uroced/config.h"

namespace uroce::daemon {

struct ReloadPlan {
  // "limits.client_qps: 0 -> 8", one per live key whose value changed.
  std::vector<std::string> changes;
  // The devices (indexes) whose TX class settings changed: each takes
  // its new ones (Device::set_tx_classes).
  std::vector<std::size_t> tx_classes;
  // Empty, or why nothing may change: "reload refused: device[0].mtu (1500
  // -> 9000) cannot change while uroced runs; restart it. Nothing was
  // changed."
  std::string refused;
};

ReloadPlan plan_reload(const DaemonConfig& running, const DaemonConfig& fresh);

}  // namespace uroce::daemon
