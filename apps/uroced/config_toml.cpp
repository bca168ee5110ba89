// uroced's configuration file (TOML): the [daemon], [eal], [[device]] and
// [device.pfc] tables, each key read and checked through config_values.h.
#include <toml++/toml.h>

#include <charconv>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "apps/uroced/config.h"
#include "apps/uroced/config_values.h"
#include "pfc/alpha.h"

namespace uroce::daemon {
namespace {

using namespace config_detail;

// ---- TOML readers -----------------------------------------------------------

std::string want_string(const toml::node& n, const std::string& key, std::string* out) {
  if (!n.is_string()) return key + ": expected a string";
  *out = *n.value<std::string>();
  return {};
}

std::string want_int(const toml::node& n, const std::string& key, std::int64_t* out) {
  if (!n.is_integer()) return key + ": expected an integer";
  *out = *n.value<std::int64_t>();
  return {};
}

std::string read_daemon(const toml::table& t, DaemonConfig* cfg) {
  for (const auto& [k, v] : t) {
    const std::string key = "daemon." + std::string(k.str());
    std::string err;
    std::string s;
    std::int64_t i = 0;
    if (k == "run_dir") {
      err = want_string(v, key, &cfg->run_dir);
    } else if (k == "poll") {
      if ((err = want_string(v, key, &s)).empty()) err = parse_poll(s, key, &cfg->poll);
    } else if (k == "backoff_max_us") {
      if ((err = want_int(v, key, &i)).empty()) {
        if (i < 0 || i > kMaxBackoffUs) {
          err = key + ": " + std::to_string(i) + " is outside 0.." + std::to_string(kMaxBackoffUs);
        } else {
          cfg->backoff_max_us = static_cast<std::uint32_t>(i);
        }
      }
    } else if (k == "log_level") {
      if ((err = want_string(v, key, &s)).empty()) {
        err = parse_log_level(s, key, &cfg->log_level);
      }
    } else {
      err = key + ": unknown key";
    }
    if (!err.empty()) return err;
  }
  return {};
}

std::string read_eal(const toml::table& t, DaemonConfig* cfg) {
  for (const auto& [k, v] : t) {
    const std::string key = "eal." + std::string(k.str());
    std::string err;
    std::int64_t i = 0;
    if (k == "lcore") {
      if ((err = want_int(v, key, &i)).empty()) {
        if (i < 0 || i > kMaxLcore) {
          err = key + ": " + std::to_string(i) + " is outside 0.." + std::to_string(kMaxLcore);
        } else {
          cfg->lcore = static_cast<std::uint32_t>(i);
        }
      }
    } else if (k == "args") {
      const toml::array* a = v.as_array();
      if (a == nullptr) {
        err = key + ": expected an array of strings";
      } else {
        cfg->eal_args.clear();
        for (const auto& e : *a) {
          if (!e.is_string()) {
            err = key + ": expected an array of strings";
            break;
          }
          cfg->eal_args.push_back(*e.value<std::string>());
        }
      }
    } else if (k == "file_prefix") {
      err = want_string(v, key, &cfg->file_prefix);
    } else {
      err = key + ": unknown key";
    }
    if (!err.empty()) return err;
  }
  return {};
}

// An integer in [lo, hi].
std::string want_range(const toml::node& n, const std::string& key, std::int64_t lo,
                       std::int64_t hi, std::int64_t* out) {
  if (std::string err = want_int(n, key, out); !err.empty()) return err;
  if (*out < lo || *out > hi) {
    return key + ": " + std::to_string(*out) + " is outside " + std::to_string(lo) + ".." +
           std::to_string(hi);
  }
  return {};
}

// An array of integers in [0, hi], at most `max_len` of them, applied by
// set(index, value).
template <class Set>
std::string want_table(const toml::node& n, const std::string& key, std::size_t max_len,
                       std::int64_t hi, Set set) {
  const toml::array* a = n.as_array();
  if (a == nullptr || a->size() > max_len) {
    return key + ": expected an array of at most " + std::to_string(max_len) + " integers";
  }
  for (std::size_t i = 0; i < a->size(); ++i) {
    const std::string ek = key + "[" + std::to_string(i) + "]";
    std::int64_t v = 0;
    if (std::string err = want_range(*a->get(i), ek, 0, hi, &v); !err.empty()) return err;
    set(static_cast<unsigned>(i), static_cast<unsigned>(v));
  }
  return {};
}

// [device.pfc]
std::string read_pfc(const toml::table& t, std::size_t index, DeviceConfig* d) {
  engine::PfcEndpointConfig& c = d->pfc;
  pfc::IngressConfig& in = c.ingress;
  for (const auto& [k, v] : t) {
    const std::string name(k.str());
    const std::string key = "device[" + std::to_string(index) + "].pfc." + name;
    std::string err;
    std::string s;
    std::int64_t i = 0;
    constexpr std::int64_t kTiB = std::int64_t{1} << 40;
    if (name == "priorities") {
      const toml::array* a = v.as_array();
      std::uint8_t m = 0;
      if (a == nullptr) {
        err = key + ": expected an array of priorities 0..7";
      } else {
        for (std::size_t j = 0; j < a->size() && err.empty(); ++j) {
          if ((err = want_range(*a->get(j), key + "[" + std::to_string(j) + "]", 0, 7, &i))
                  .empty()) {
            m = static_cast<std::uint8_t>(m | (1u << i));
          }
        }
      }
      if (err.empty()) c.enable = m;
    } else if (name == "mode") {
      if ((err = want_string(v, key, &s)).empty()) {
        if (s == "static") {
          in.mode = pfc::ThresholdMode::kStatic;
        } else if (s == "dynamic") {
          in.mode = pfc::ThresholdMode::kDynamic;
        } else {
          err = key + ": " + in_quotes(s) + " is not a mode (expected \"static\" or \"dynamic\")";
        }
      }
    } else if (name == "buffer_bytes" || name == "headroom_bytes" || name == "xoff_bytes" ||
               name == "xon_bytes" || name == "xon_offset_bytes") {
      if ((err = want_range(v, key, 0, kTiB, &i)).empty()) {
        const auto u = static_cast<std::uint64_t>(i);
        if (name == "buffer_bytes") in.buffer_bytes = u;
        if (name == "headroom_bytes") in.headroom_bytes = u;
        if (name == "xoff_bytes") in.xoff_bytes = u;
        if (name == "xon_bytes") in.xon_bytes = u;
        if (name == "xon_offset_bytes") in.xon_offset_bytes = u;
      }
    } else if (name == "alpha") {
      // pfc/alpha.h's grammar: "N/D", an integer, or an exact decimal.
      std::string text;
      if (v.is_string()) {
        text = v.as_string()->get();
      } else if (v.is_integer()) {
        text = std::to_string(v.as_integer()->get());
      } else if (v.is_floating_point()) {
        std::ostringstream os;
        os.precision(17);
        os << v.as_floating_point()->get();
        text = os.str();
      } else {
        err = key + ": expected a fraction such as \"1/16\" or a number";
      }
      if (err.empty()) {
        const std::string e = pfc::parse_alpha(text, in.alpha_num, in.alpha_den);
        if (!e.empty()) err = key + ": " + e;
      }
    } else if (name == "xoff_quanta" || name == "max_quanta") {
      if ((err = want_range(v, key, 1, 65535, &i)).empty()) {
        (name == "xoff_quanta" ? in.xoff_quanta : c.max_quanta) = static_cast<std::uint16_t>(i);
      }
    } else if (name == "refresh_percent") {
      if ((err = want_range(v, key, 1, 99, &i)).empty()) {
        in.refresh_percent = static_cast<std::uint32_t>(i);
      }
    } else if (name == "storm_watchdog") {
      if (!v.is_boolean()) {
        err = key + ": expected true or false";
      } else {
        c.storm_watchdog = *v.value<bool>();
      }
    } else if (name == "storm_detection_ms" || name == "storm_restoration_ms") {
      if ((err = want_range(v, key, 1, 3'600'000, &i)).empty()) {
        const TimeNs ns = static_cast<TimeNs>(i) * kNsPerMs;
        (name == "storm_detection_ms" ? c.storm.detection_ns : c.storm.restoration_ns) = ns;
      }
    } else if (name == "storm_action") {
      if ((err = want_string(v, key, &s)).empty()) {
        if (s == "drop") {
          c.storm.action = pfc::StormAction::kDrop;
        } else if (s == "ignore") {
          c.storm.action = pfc::StormAction::kIgnore;
        } else {
          err = key + ": " + in_quotes(s) + " is not an action (expected \"drop\" or \"ignore\")";
        }
      }
    } else if (name == "stage_slots" || name == "rx_budget" || name == "hold_slots") {
      if ((err = want_range(v, key, 1, 65536, &i)).empty()) {
        const auto u = static_cast<std::uint32_t>(i);
        if (name == "stage_slots") c.stage_slots = u;
        if (name == "rx_budget") c.rx_budget = u;
        if (name == "hold_slots") c.hold_slots = u;
      }
    } else if (name == "sl_priority") {
      err = want_table(v, key, pfc::kNumServiceLevels, 7,
                       [&](unsigned a, unsigned b) { c.map.set_sl_priority(a, b); });
    } else if (name == "priority_dscp") {
      err = want_table(v, key, pfc::kNumPriorities, 63,
                       [&](unsigned a, unsigned b) { c.map.set_priority_dscp(a, b); });
    } else if (name == "dscp_priority") {
      err = want_table(v, key, pfc::kNumDscp, 7,
                       [&](unsigned a, unsigned b) { c.map.set_dscp_priority(a, b); });
    } else {
      err = key + ": unknown key";
    }
    if (!err.empty()) return err;
  }
  return {};
}

std::string read_device(const toml::table& t, std::size_t index, DeviceConfig* d) {
  std::set<std::string, std::less<>> seen;
  for (const auto& [k, v] : t) {
    const std::string name(k.str());
    const std::string key = dev_key(index, name.c_str());
    std::string err;
    std::string s;
    std::int64_t i = 0;
    if (name == "name") {
      if ((err = want_string(v, key, &d->name)).empty() && !valid_ibdev_name(d->name)) {
        err = key + ": " + in_quotes(d->name) +
              " must start with a letter and have at most 63 letters, digits or '_'";
      }
    } else if (name == "port") {
      if ((err = want_string(v, key, &s)).empty()) err = set_port(s, index, d);
    } else if (name == "mac") {
      if ((err = want_string(v, key, &s)).empty()) err = set_mac(s, index, d);
    } else if (name == "ipv4") {
      if ((err = want_string(v, key, &s)).empty()) err = set_ipv4(s, index, d);
    } else if (name == "mtu") {
      if ((err = want_int(v, key, &i)).empty()) err = set_mtu(i, index, d);
    } else if (name == "tx_ttl") {
      if ((err = want_int(v, key, &i)).empty()) err = set_tx_ttl(i, key, d);
    } else if (name == "link_mbps") {
      if ((err = want_int(v, key, &i)).empty()) err = set_link_mbps(i, key, d);
    } else if (name == "ttl_monitor") {
      if (!v.is_boolean()) {
        err = key + ": expected true or false";
      } else {
        d->pfc.ttl_monitor = *v.value<bool>();
      }
    } else if (name == "pfc") {
      const toml::table* pt = v.as_table();
      err = pt == nullptr ? key + ": expected a table ([device.pfc])" : read_pfc(*pt, index, d);
    } else if (is_impair_key(name)) {
      if (v.is_integer()) {
        err = set_impair(name, true, *v.value<std::int64_t>(), 0, index, d);
      } else if (v.is_floating_point()) {
        err = set_impair(name, false, 0, *v.value<double>(), index, d);
      } else {
        err = key + ": expected a number";
      }
    } else {
      err = key + ": unknown key";
    }
    if (!err.empty()) return err;
    seen.insert(name);
  }
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
  // toml++ reports syntax errors by exception; turned into the message here.
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    return std::string(source) + ":" + std::to_string(b.line) + ":" + std::to_string(b.column) +
           ": " + std::string(e.description());
  }
  for (const auto& [k, v] : root) {
    std::string err;
    if (k == "daemon" || k == "eal") {
      const toml::table* t = v.as_table();
      if (t == nullptr) {
        err = std::string(k.str()) + ": expected a table ([" + std::string(k.str()) + "])";
      } else {
        err = k == "daemon" ? read_daemon(*t, out) : read_eal(*t, out);
      }
    } else if (k == "device") {
      err = read_devices(v, out);
    } else {
      err = std::string(k.str()) + ": unknown key (expected [daemon], [eal] or [[device]])";
    }
    if (!err.empty()) return err;
  }
  return {};
}

}  // namespace uroce::daemon
