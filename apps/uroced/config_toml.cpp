// uroced's configuration file (TOML): the [daemon], [eal], [limits],
// [[device]] and [device.pfc] tables; [limits] and [[device]] read through
// their key tables (config_keys.h), the others key by key.
#include <cstdint>
#include <set>
#include <string>

#include "apps/uroced/config.h"
#include "apps/uroced/config_keys.h"
#include "apps/uroced/config_values.h"
#include "datapath/base/toml_fields.h"
#include "pfc/alpha.h"

namespace uroce::daemon {
namespace {

using namespace config_detail;

using toml_fields::Fields;

Fields fields(const toml::table& t, std::string path) {
  return Fields(t, std::move(path), toml_fields::Style::kTerse);
}

// [daemon] or [eal]: every key of its table.
void read_daemon_set(Fields& f, const KeySet<DaemonConfig>& set, DaemonConfig* cfg) {
  for (const KeyDesc<DaemonConfig>& k : set.keys) read_key_toml(f, k, cfg);
}

// [limits]: every key of its table, as --limit.
void read_limits(Fields& f, Limits* out) {
  for (const KeyDesc<Limits>& k : limit_key_set().keys) read_key_toml(f, k, out);
}

std::string read_device(const toml::table& t, std::size_t index, DeviceConfig* d) {
  Fields f = fields(t, "device[" + std::to_string(index) + "]");
  for (const KeySet<DeviceConfig>& set : device_key_sets()) {
    for (const KeyDesc<DeviceConfig>& k : set.keys) {
      if ((k.sources & kInFile) != 0) read_key_toml(f, k, d);
    }
  }
  if (const toml::table* pt = f.table("pfc", "a table ([device.pfc])")) {
    Fields pf = fields(*pt, f.key_path("pfc"));
    for (const KeyDesc<DeviceConfig>& k : pfc_table_key_set().keys) read_key_toml(pf, k, d);
    f.fail(pf.finish(pfc_table_key_names()));
  }
  if (std::string err = f.finish(device_key_names(kInFile)); !err.empty()) return err;
  std::set<std::string, std::less<>> seen;
  for (const auto& [k, v] : t) seen.emplace(k.str());
  return check_required(seen, index);
}

std::string read_devices(const toml::node& n, DaemonConfig* cfg) {
  const toml::array* a = n.as_array();
  if (a == nullptr || !a->is_array_of_tables()) {
    return "device: expected [[device]] tables";
  }
  cfg->devices.clear();
  for (std::size_t i = 0; i < a->size(); ++i) {
    DeviceConfig d;
    if (std::string err = read_device(*a->get(i)->as_table(), i, &d); !err.empty()) {
      return err;
    }
    cfg->devices.push_back(std::move(d));
  }
  return {};
}

}  // namespace

std::string load_toml(std::string_view text, std::string_view source, DaemonConfig* out) {
  toml::table root;
  if (std::string err = toml_fields::parse(text, source, &root); !err.empty()) return err;
  Fields f = fields(root, "");
  if (const toml::table* t = f.table("daemon", "a table ([daemon])")) {
    Fields df = fields(*t, "daemon");
    read_daemon_set(df, daemon_key_set(), out);
    f.fail(df.finish(daemon_key_names(daemon_key_set())));
  }
  if (const toml::table* t = f.table("eal", "a table ([eal])")) {
    Fields ef = fields(*t, "eal");
    read_daemon_set(ef, eal_key_set(), out);
    f.fail(ef.finish(daemon_key_names(eal_key_set())));
  }
  if (const toml::table* t = f.table("limits", "a table ([limits])")) {
    Fields lf = fields(*t, "limits");
    read_limits(lf, &out->limits);
    f.fail(lf.finish(limit_key_names()));
  }
  if (const toml::node* n = f.get("device")) f.fail(read_devices(*n, out));
  return f.finish("[daemon], [eal], [limits] or [[device]]");
}

}  // namespace uroce::daemon
