#include "apps/uroced/config_reload.h"

#include <string>

#include "apps/uroced/config_keys.h"

namespace uroce::daemon {
namespace {

// Compares every key of `set` between two objects of its type, naming
// each as `prefix` + key, into the plan (live keys) or `fixed`.
template <class T>
void compare(const KeySet<T>& set, const T& running, const T& fresh, const std::string& prefix,
             ReloadPlan* plan, std::string* fixed) {
  for (const KeyDesc<T>& k : set.keys) {
    const std::string was = key_value_text(k, running);
    const std::string now = key_value_text(k, fresh);
    if (was == now) continue;
    const std::string name = prefix + std::string(k.name);
    if (k.live) {
      plan->changes.push_back(name + ": " + was + " -> " + now);
    } else {
      *fixed += (fixed->empty() ? "" : ", ") + name + " (" + was + " -> " + now + ")";
    }
  }
}

}  // namespace

ReloadPlan plan_reload(const DaemonConfig& running, const DaemonConfig& fresh) {
  ReloadPlan plan;
  std::string fixed;
  if (running.devices.size() != fresh.devices.size()) {
    fixed = "the number of devices (" + std::to_string(running.devices.size()) + " -> " +
            std::to_string(fresh.devices.size()) + ")";
  } else {
    for (std::size_t i = 0; i < running.devices.size(); ++i) {
      const std::string prefix = "device[" + std::to_string(i) + "].";
      for (const KeySet<DeviceConfig>& s : device_key_sets()) {
        compare(s, running.devices[i], fresh.devices[i], prefix, &plan, &fixed);
      }
      compare(pfc_table_key_set(), running.devices[i], fresh.devices[i], prefix + "pfc.", &plan,
              &fixed);
      if (running.devices[i].sched.classes != fresh.devices[i].sched.classes) {
        plan.tx_classes.push_back(i);
      }
    }
  }
  compare(limit_key_set(), running.limits, fresh.limits, "limits.", &plan, &fixed);
  compare(daemon_key_set(), running, fresh, "daemon.", &plan, &fixed);
  compare(eal_key_set(), running, fresh, "eal.", &plan, &fixed);
  if (!fixed.empty()) {
    plan.changes.clear();
    plan.tx_classes.clear();
    plan.refused = "reload refused: " + fixed +
                   " cannot change while uroced runs; restart it. Nothing was changed.";
  }
  return plan;
}

}  // namespace uroce::daemon
