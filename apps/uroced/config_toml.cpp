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

void read_daemon(Fields& f, DaemonConfig* cfg) {
  std::string s;
  f.str("run_dir", cfg->run_dir);
  if (f.str("poll", s)) f.fail(parse_poll(s, f.key_path("poll"), &cfg->poll));
  f.integer("backoff_max_us", cfg->backoff_max_us, 0, kMaxBackoffUs);
  f.str("status_group", cfg->status_group);
  if (f.str("log_level", s)) f.fail(parse_log_level(s, f.key_path("log_level"), &cfg->log_level));
}

void read_eal(Fields& f, DaemonConfig* cfg) {
  f.integer("lcore", cfg->lcore, 0, kMaxLcore);
  f.str_list("args", cfg->eal_args);
  f.str("file_prefix", cfg->file_prefix);
}

// [limits]: every key of its table, as --limit.
void read_limits(Fields& f, Limits* out) {
  for (const KeyDesc<Limits>& k : limit_key_set().keys) read_key_toml(f, k, out);
}

// [device.pfc]
void read_pfc(Fields& f, DeviceConfig* d) {
  engine::PfcEndpointConfig& c = d->pfc;
  pfc::IngressConfig& in = c.ingress;
  std::string s;
  std::uint8_t mask = 0;
  if (f.int_array("priorities", "an array of priorities 0..7", SIZE_MAX, 0, 7,
                  [&](std::size_t, std::int64_t p) {
                    mask = static_cast<std::uint8_t>(mask | (1u << p));
                  })) {
    c.enable = mask;
  }
  if (f.str("mode", s)) {
    if (s == "static") {
      in.mode = pfc::ThresholdMode::kStatic;
    } else if (s == "dynamic") {
      in.mode = pfc::ThresholdMode::kDynamic;
    } else {
      f.reject("mode", in_quotes(s) + " is not a mode (expected \"static\" or \"dynamic\")");
    }
  }
  constexpr std::int64_t kTiB = std::int64_t{1} << 40;
  f.integer("buffer_bytes", in.buffer_bytes, 0, kTiB);
  f.integer("headroom_bytes", in.headroom_bytes, 0, kTiB);
  f.integer("xoff_bytes", in.xoff_bytes, 0, kTiB);
  f.integer("xon_bytes", in.xon_bytes, 0, kTiB);
  f.integer("xon_offset_bytes", in.xon_offset_bytes, 0, kTiB);
  if (f.scalar_text("alpha", s, "a fraction such as \"1/16\" or a number")) {
    // pfc/alpha.h's grammar: "N/D", an integer, or an exact decimal.
    if (std::string e = pfc::parse_alpha(s, in.alpha_num, in.alpha_den); !e.empty()) {
      f.reject("alpha", e);
    }
  }
  f.integer("xoff_quanta", in.xoff_quanta, 1, 65535);
  f.integer("max_quanta", c.max_quanta, 1, 65535);
  f.integer("refresh_percent", in.refresh_percent, 1, 99);
  f.boolean("storm_watchdog", c.storm_watchdog);
  std::int64_t ms = 0;
  if (f.integer("storm_detection_ms", ms, 1, 3'600'000)) {
    c.storm.detection_ns = static_cast<TimeNs>(ms) * kNsPerMs;
  }
  if (f.integer("storm_restoration_ms", ms, 1, 3'600'000)) {
    c.storm.restoration_ns = static_cast<TimeNs>(ms) * kNsPerMs;
  }
  if (f.str("storm_action", s)) {
    if (s == "drop") {
      c.storm.action = pfc::StormAction::kDrop;
    } else if (s == "ignore") {
      c.storm.action = pfc::StormAction::kIgnore;
    } else {
      f.reject("storm_action",
               in_quotes(s) + " is not an action (expected \"drop\" or \"ignore\")");
    }
  }
  f.integer("stage_slots", c.stage_slots, 1, 65536);
  f.integer("rx_budget", c.rx_budget, 1, 65536);
  f.integer("hold_slots", c.hold_slots, 1, 65536);
  // A table of at most `n` entries, each in 0..hi.
  auto table = [&](std::string_view key, std::size_t n, std::int64_t hi, auto set) {
    f.int_array(key, "an array of at most " + std::to_string(n) + " integers", n, 0, hi,
                [&](std::size_t i, std::int64_t v) {
                  set(static_cast<unsigned>(i), static_cast<unsigned>(v));
                });
  };
  table("sl_priority", pfc::kNumServiceLevels, 7,
        [&](unsigned a, unsigned b) { c.map.set_sl_priority(a, b); });
  table("priority_dscp", pfc::kNumPriorities, 63,
        [&](unsigned a, unsigned b) { c.map.set_priority_dscp(a, b); });
  table("dscp_priority", pfc::kNumDscp, 7,
        [&](unsigned a, unsigned b) { c.map.set_dscp_priority(a, b); });
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
    read_pfc(pf, d);
    f.fail(pf.finish());
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
    read_daemon(df, out);
    f.fail(df.finish());
  }
  if (const toml::table* t = f.table("eal", "a table ([eal])")) {
    Fields ef = fields(*t, "eal");
    read_eal(ef, out);
    f.fail(ef.finish());
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
