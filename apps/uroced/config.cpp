#include "apps/uroced/config.h"

#include <CLI/CLI.hpp>
#include <toml++/toml.h>

#include <cctype>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

namespace uroce::daemon {
namespace {

const std::set<std::string, std::less<>> kLogLevels = {
    "trace", "debug", "info", "warn", "error", "critical", "off"};

// Longest socket path a sockaddr_un holds (108 bytes with the NUL).
constexpr std::size_t kMaxSocketPath = 107;
// Ring names become rte_ring names "<NAME>_ab" (29 characters at most).
constexpr std::size_t kMaxRingName = 24;

std::string in_quotes(std::string_view s) { return "\"" + std::string(s) + "\""; }

// A real number as a user wrote it (shortest round-trip form).
std::string fmt_real(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

std::string dev_key(std::size_t i, const char* key) {
  return "device[" + std::to_string(i) + "]." + key;
}

bool all_of(std::string_view s, bool (*pred)(char)) {
  for (char c : s) {
    if (!pred(c)) return false;
  }
  return true;
}
bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}
bool is_hex_char(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

// An ibdev name as sysfs and the protocol (kNameBytes) allow.
bool valid_ibdev_name(std::string_view s) {
  return !s.empty() && s.size() <= 63 &&
         std::isalpha(static_cast<unsigned char>(s[0])) != 0 &&
         all_of(s, is_name_char);
}

// "DDDD:BB:DD.F" or "BB:DD.F", hex digits.
bool is_pci_address(std::string_view s) {
  auto hex_run = [&](std::size_t pos, std::size_t n) {
    return pos + n <= s.size() && all_of(s.substr(pos, n), is_hex_char);
  };
  std::size_t p = 0;
  if (s.size() == 12) {
    if (!hex_run(0, 4) || s[4] != ':') return false;
    p = 5;
  } else if (s.size() != 7) {
    return false;
  }
  return hex_run(p, 2) && s[p + 2] == ':' && hex_run(p + 3, 2) &&
         s[p + 5] == '.' && s[p + 6] >= '0' && s[p + 6] <= '7';
}

std::string parse_port(std::string_view s, std::size_t index, PortSpec* out) {
  const std::string key = dev_key(index, "port");
  if (s.starts_with("ring:")) {
    const std::string_view name = s.substr(5);
    if (name.empty() || name.size() > kMaxRingName || !all_of(name, is_name_char)) {
      return key + ": " + in_quotes(s) + ": the ring name must be 1.." +
             std::to_string(kMaxRingName) + " letters, digits or '_'";
    }
    *out = PortSpec{PortKind::kRing, std::string(name), {}};
    return {};
  }
  if (is_pci_address(s)) {
    *out = PortSpec{PortKind::kPci, std::string(s), {}};
    return {};
  }
  const std::size_t comma = s.find(',');
  const std::string_view name = s.substr(0, comma);
  if (name.starts_with("net_") && name.size() > 4 && all_of(name, is_name_char)) {
    out->kind = PortKind::kVdev;
    out->name = std::string(name);
    out->args = comma == std::string_view::npos ? std::string()
                                                : std::string(s.substr(comma + 1));
    return {};
  }
  return key + ": " + in_quotes(s) +
         " is not a vdev devargs string (net_<pmd><n>,key=value,...), a PCI "
         "address or \"ring:NAME\"";
}

std::string set_mac(std::string_view s, std::size_t index, DeviceConfig* d) {
  const auto m = wire::MacAddr::parse(s);
  if (!m) {
    return dev_key(index, "mac") + ": " + in_quotes(s) +
           " is not a MAC address (expected six hex bytes like 02:00:00:00:00:01)";
  }
  d->mac = *m;
  return {};
}

std::string set_ipv4(std::string_view s, std::size_t index, DeviceConfig* d) {
  const auto a = wire::Ipv4Addr::parse(s);
  if (!a) {
    return dev_key(index, "ipv4") + ": " + in_quotes(s) +
           " is not an IPv4 address (expected a.b.c.d)";
  }
  d->ipv4 = *a;
  return {};
}

std::string set_mtu(std::int64_t v, std::size_t index, DeviceConfig* d) {
  if (v < kMinMtu || v > kMaxMtu) {
    return dev_key(index, "mtu") + ": " + std::to_string(v) + " is outside " +
           std::to_string(kMinMtu) + ".." + std::to_string(kMaxMtu);
  }
  d->mtu = static_cast<std::uint32_t>(v);
  return {};
}

std::string set_port(std::string_view s, std::size_t index, DeviceConfig* d) {
  d->port = std::string(s);
  return parse_port(s, index, &d->port_spec);
}

// ---- Loss injection keys (shared by [[device]] and --device) -----------------

bool is_impair_key(std::string_view k) {
  return k == "drop_tx_every" || k == "drop_rx_every" || k == "drop_tx_rate" ||
         k == "drop_rx_rate" || k == "drop_seed";
}

// One loss injection key from an integer (`is_int`) or a real value.
std::string set_impair(std::string_view name, bool is_int, std::int64_t i, double r,
                       std::size_t index, DeviceConfig* d) {
  const std::string key = dev_key(index, std::string(name).c_str());
  engine::ImpairConfig& c = d->impair;
  if (name == "drop_tx_rate" || name == "drop_rx_rate") {
    const double v = is_int ? static_cast<double>(i) : r;
    if (!(v >= 0 && v <= 1)) {
      return key + ": " + (is_int ? std::to_string(i) : fmt_real(v)) +
             " is outside 0..1 (a fraction of RoCEv2 frames)";
    }
    (name == "drop_tx_rate" ? c.drop_tx_rate : c.drop_rx_rate) = v;
    return {};
  }
  if (!is_int) return key + ": expected an integer";
  if (name == "drop_seed") {
    if (i < 0) return key + ": " + std::to_string(i) + " is negative";
    c.drop_seed = static_cast<std::uint64_t>(i);
    return {};
  }
  if (i < 0 || i > std::numeric_limits<std::uint32_t>::max()) {
    return key + ": " + std::to_string(i) + " is outside 0..4294967295 (0 = off)";
  }
  (name == "drop_tx_every" ? c.drop_tx_every : c.drop_rx_every) =
      static_cast<std::uint32_t>(i);
  return {};
}

// The same from --device text: an integer, or (rates only) a real number.
std::string set_impair_text(std::string_view name, std::string_view val, std::size_t index,
                            DeviceConfig* d) {
  const std::string key = dev_key(index, std::string(name).c_str());
  const char* b = val.data();
  const char* e = val.data() + val.size();
  if (name == "drop_seed") {
    // The whole unsigned 64-bit range.
    std::uint64_t u = 0;
    const auto r = std::from_chars(b, e, u);
    if (val.empty() || r.ec != std::errc() || r.ptr != e) {
      return key + ": " + in_quotes(val) + " is not an unsigned integer";
    }
    d->impair.drop_seed = u;
    return {};
  }
  std::int64_t i = 0;
  const auto ri = std::from_chars(b, e, i);
  if (!val.empty() && ri.ec == std::errc() && ri.ptr == e) {
    return set_impair(name, true, i, 0, index, d);
  }
  if (name == "drop_tx_rate" || name == "drop_rx_rate") {
    double v = 0;
    const auto rr = std::from_chars(b, e, v);
    if (val.empty() || rr.ec != std::errc() || rr.ptr != e) {
      return key + ": " + in_quotes(val) + " is not a number";
    }
    return set_impair(name, false, 0, v, index, d);
  }
  return key + ": " + in_quotes(val) + " is not an integer";
}

// ---- PFC and TTL keys ----------------------------------------------------------

// "3" or "3,4,6" (priorities 0..7) or "none" into a mask.
std::string parse_priorities(std::string_view s, const std::string& key, std::uint8_t* mask) {
  std::uint8_t m = 0;
  if (s != "none") {
    std::size_t pos = 0;
    while (pos <= s.size()) {
      const std::size_t end = std::min(s.find(',', pos), s.size());
      const std::string_view item = s.substr(pos, end - pos);
      pos = end + 1;
      if (item.size() != 1 || item[0] < '0' || item[0] > '7') {
        return key + ": " + in_quotes(s) +
               " is not a list of priorities 0..7 (e.g. \"3\" or \"3,4\"; \"none\")";
      }
      m = static_cast<std::uint8_t>(m | (1u << (item[0] - '0')));
    }
  }
  *mask = m;
  return {};
}

std::string set_tx_ttl(std::int64_t v, const std::string& key, DeviceConfig* d) {
  if (v < 1 || v > 255) return key + ": " + std::to_string(v) + " is outside 1..255";
  d->pfc.ttl.tx_ttl = static_cast<std::uint8_t>(v);
  return {};
}

std::string set_link_mbps(std::int64_t v, const std::string& key, DeviceConfig* d) {
  if (v < 0 || v > 1'000'000) {
    return key + ": " + std::to_string(v) + " is outside 0..1000000 (0 = ask the port)";
  }
  d->link_mbps = static_cast<std::uint32_t>(v);
  return {};
}

// The link speed the PFC checks assume before the port tells it.
std::uint64_t check_bps(const DeviceConfig& d) {
  return (d.link_mbps != 0 ? d.link_mbps : 10'000ull) * 1'000'000ull;
}

// The pfc/ state machines' own checks, named by the keys that feed them.
std::string check_pfc(const DeviceConfig& d, std::size_t i) {
  const engine::PfcEndpointConfig& c = d.pfc;
  const std::string k = "device[" + std::to_string(i) + "].pfc.";
  pfc::IngressConfig ic = c.ingress;
  ic.pfc_enable = c.enable;
  ic.link_bps = check_bps(d);
  switch (pfc::IngressAccounting::check(ic)) {
    case pfc::IngressConfigError::kOk: break;
    case pfc::IngressConfigError::kZeroLinkSpeed: return dev_key(i, "link_mbps") + ": 0";
    case pfc::IngressConfigError::kZeroQuanta: return k + "xoff_quanta: must be 1..65535";
    case pfc::IngressConfigError::kBadRefreshPercent:
      return k + "refresh_percent: " + std::to_string(c.ingress.refresh_percent) +
             " is outside 1..99";
    case pfc::IngressConfigError::kPauseTooShort:
      return k + "xoff_quanta: " + std::to_string(c.ingress.xoff_quanta) +
             " quanta are too short to refresh at this link speed";
    case pfc::IngressConfigError::kBadBufferSize:
      return k + "buffer_bytes: " + std::to_string(c.ingress.buffer_bytes) +
             " is outside 1..1099511627776";
    case pfc::IngressConfigError::kHeadroomExceedsBuffer:
      return k + "headroom_bytes: " + std::to_string(c.ingress.headroom_bytes) +
             " x the lossless priorities leaves no shared space in buffer_bytes " +
             std::to_string(c.ingress.buffer_bytes);
    case pfc::IngressConfigError::kBadStaticThresholds:
      return k + "xoff_bytes: static thresholds need xon_bytes (" +
             std::to_string(c.ingress.xon_bytes) + ") < xoff_bytes (" +
             std::to_string(c.ingress.xoff_bytes) + ") <= the shared buffer";
    case pfc::IngressConfigError::kBadAlpha:
      return k + "alpha: " + std::to_string(c.ingress.alpha_num) + "/" +
             std::to_string(c.ingress.alpha_den) + " needs both parts in 1..65536";
  }
  pfc::PauseGateConfig gc;
  gc.pfc_enable = c.enable;
  gc.link_bps = check_bps(d);
  gc.max_quanta = c.max_quanta;
  if (pfc::PauseGate::check(gc) == pfc::PauseGateConfigError::kZeroMaxQuanta) {
    return k + "max_quanta: must be 1..65535";
  }
  switch (pfc::StormWatchdog::check(c.storm)) {
    case pfc::StormWatchdogConfigError::kOk: break;
    case pfc::StormWatchdogConfigError::kZeroDetection: return k + "storm_detection_ms: 0";
    case pfc::StormWatchdogConfigError::kZeroRestoration: return k + "storm_restoration_ms: 0";
  }
  if (pfc::TtlMonitor::check(c.ttl) == pfc::TtlMonitorConfigError::kZeroTxTtl) {
    return dev_key(i, "tx_ttl") + ": 0 is outside 1..255";
  }
  if (const int p = c.map.first_inconsistent_priority(); p >= 0) {
    return k + "priority_dscp: priority " + std::to_string(p) + " is sent with DSCP " +
           std::to_string(c.map.dscp_of_priority(static_cast<std::uint8_t>(p))) +
           ", which dscp_priority maps to priority " +
           std::to_string(c.map.priority_of_dscp(c.map.dscp_of_priority(static_cast<std::uint8_t>(p))));
  }
  if (c.enable != 0 && (c.stage_slots == 0 || c.rx_budget == 0 || c.hold_slots == 0)) {
    return k + "stage_slots, rx_budget and hold_slots must be at least 1";
  }
  return {};
}

std::string missing_port(std::size_t index) {
  return dev_key(index, "port") +
         ": missing (a vdev devargs string, a PCI address or \"ring:NAME\")";
}

// The keys every device must have, checked after all its keys were read.
std::string check_required(const std::set<std::string, std::less<>>& seen,
                           std::size_t index) {
  if (!seen.contains("name")) return dev_key(index, "name") + ": missing";
  if (!seen.contains("port")) return missing_port(index);
  if (!seen.contains("mac")) return dev_key(index, "mac") + ": missing";
  if (!seen.contains("ipv4")) return dev_key(index, "ipv4") + ": missing";
  return {};
}

std::string parse_poll(std::string_view s, const std::string& key, PollMode* out) {
  if (s == "busy") {
    *out = PollMode::kBusy;
  } else if (s == "backoff") {
    *out = PollMode::kBackoff;
  } else {
    return key + ": " + in_quotes(s) +
           " is not a poll mode (expected \"busy\" or \"backoff\")";
  }
  return {};
}

std::string parse_log_level(std::string_view s, const std::string& key,
                            std::string* out) {
  if (!kLogLevels.contains(s)) {
    return key + ": " + in_quotes(s) +
           " is not a log level (expected trace, debug, info, warn, error, "
           "critical or off)";
  }
  *out = std::string(s);
  return {};
}

// ---- TOML readers -----------------------------------------------------------

std::string want_string(const toml::node& n, const std::string& key,
                        std::string* out) {
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
          err = key + ": " + std::to_string(i) + " is outside 0.." +
                std::to_string(kMaxBackoffUs);
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
          err = key + ": " + std::to_string(i) + " is outside 0.." +
                std::to_string(kMaxLcore);
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
      // "N/D" or an integer N.
      if (v.is_integer()) {
        if ((err = want_range(v, key, 1, 65536, &i)).empty()) {
          in.alpha_num = static_cast<std::uint32_t>(i);
          in.alpha_den = 1;
        }
      } else if ((err = want_string(v, key, &s)).empty()) {
        const std::size_t slash = s.find('/');
        std::uint32_t num = 0, den = 0;
        const char* b = s.data();
        const char* e = s.data() + s.size();
        bool ok = slash != std::string::npos;
        if (ok) {
          const auto r1 = std::from_chars(b, b + slash, num);
          const auto r2 = std::from_chars(b + slash + 1, e, den);
          ok = r1.ec == std::errc() && r1.ptr == b + slash && r2.ec == std::errc() &&
               r2.ptr == e && num >= 1 && num <= 65536 && den >= 1 && den <= 65536;
        }
        if (!ok) {
          err = key + ": " + in_quotes(s) +
                " is not a ratio N/D with N and D in 1..65536 (e.g. \"1/16\")";
        } else {
          in.alpha_num = num;
          in.alpha_den = den;
        }
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

std::string check_unique(const DaemonConfig& cfg) {
  const auto& ds = cfg.devices;
  for (std::size_t i = 0; i < ds.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      const std::string other = "device[" + std::to_string(j) + "]";
      if (ds[i].name == ds[j].name) {
        return dev_key(i, "name") + ": " + in_quotes(ds[i].name) +
               " is already the name of " + other;
      }
      if (ds[i].mac == ds[j].mac) {
        return dev_key(i, "mac") + ": " + ds[i].mac.to_string() +
               " is already the MAC of " + other;
      }
      if (ds[i].ipv4 == ds[j].ipv4) {
        return dev_key(i, "ipv4") + ": " + ds[i].ipv4.to_string() +
               " is already the address of " + other;
      }
      if (ds[i].port_spec.kind != PortKind::kRing && ds[i].port == ds[j].port) {
        return dev_key(i, "port") + ": " + in_quotes(ds[i].port) +
               " is already the port of " + other;
      }
    }
  }
  return {};
}

std::string check_rings(const DaemonConfig& cfg) {
  std::map<std::string, std::vector<std::size_t>> users;
  for (std::size_t i = 0; i < cfg.devices.size(); ++i) {
    if (cfg.devices[i].port_spec.kind == PortKind::kRing) {
      users[cfg.devices[i].port_spec.name].push_back(i);
    }
  }
  // In device order, so the first offending device is the one named.
  for (const auto& d : cfg.devices) {
    if (d.port_spec.kind != PortKind::kRing) continue;
    const std::string& name = d.port_spec.name;
    const std::vector<std::size_t>& idx = users[name];
    if (idx.size() == 1) {
      return dev_key(idx[0], "port") + ": ring " + in_quotes(name) +
             " needs a second device naming it (a ring joins two devices)";
    }
    if (idx.size() > 2) {
      return dev_key(idx[2], "port") + ": ring " + in_quotes(name) +
             " already joins device[" + std::to_string(idx[0]) + "] and device[" +
             std::to_string(idx[1]) + "]";
    }
  }
  return {};
}

std::string check_device_values(const DeviceConfig& d, std::size_t i) {
  if (d.mac.is_zero() || d.mac.is_multicast()) {
    return dev_key(i, "mac") + ": " + d.mac.to_string() +
           " is not a unicast address";
  }
  const std::uint32_t top = d.ipv4.v >> 24;
  if (d.ipv4.v == 0 || top == 127 || top >= 224) {
    return dev_key(i, "ipv4") + ": " + d.ipv4.to_string() +
           " is not a unicast host address";
  }
  if (d.mtu < kMinMtu || d.mtu > kMaxMtu) {
    return dev_key(i, "mtu") + ": " + std::to_string(d.mtu) + " is outside " +
           std::to_string(kMinMtu) + ".." + std::to_string(kMaxMtu);
  }
  if (d.port.empty()) return missing_port(i);
  if (const char* f = d.impair.first_bad_field(); f != nullptr) {
    const double v = std::string_view(f) == "drop_tx_rate" ? d.impair.drop_tx_rate
                                                           : d.impair.drop_rx_rate;
    return dev_key(i, f) + ": " + fmt_real(v) + " is outside 0..1 (a fraction of RoCEv2 frames)";
  }
  return check_pfc(d, i);
}

}  // namespace

const char* to_string(PollMode m) {
  return m == PollMode::kBusy ? "busy" : "backoff";
}

int parse_command_line(int argc, char** argv, CommandLine* out) {
  CLI::App app{"uroced: the uroce daemon (RoCEv2 virtual NICs over DPDK ports)"};
  std::string config_file, run_dir, poll, log_level;
  std::uint32_t lcore = 0;
  auto* o_config = app.add_option("--config", config_file, "TOML configuration file");
  auto* o_run = app.add_option("--run-dir", run_dir,
                               "run directory (socket, sysfs tree); overrides daemon.run_dir");
  auto* o_lcore = app.add_option("--lcore", lcore, "EAL lcore of the engine; overrides eal.lcore");
  auto* o_poll = app.add_option("--poll", poll, "busy or backoff; overrides daemon.poll");
  app.add_option("--eal-arg", out->eal_args,
                 "extra EAL argument, appended to eal.args (repeatable)")
      ->allow_extra_args(false);
  app.add_option("--device", out->devices,
                 "a device: \"name=uroce0;mac=02:00:00:00:00:01;ipv4=10.0.0.1;"
                 "mtu=9000;port=ring:p0\" (repeatable; replaces the file's devices)")
      ->allow_extra_args(false);
  auto* o_log = app.add_option("--log-level", log_level,
                               "trace|debug|info|warn|error|critical|off");
  // "--eal-arg -x" would make CLI11 read "-x" as an option of ours: glue
  // every --eal-arg to its value first ("--eal-arg=-x").
  std::vector<std::string> args;
  for (int i = argc - 1; i >= 1; --i) args.emplace_back(argv[i]);  // CLI11 wants them reversed
  for (std::size_t i = args.size(); i-- > 1;) {
    if (args[i] == "--eal-arg") {
      args[i] += "=" + args[i - 1];
      args.erase(args.begin() + static_cast<long>(i) - 1);
    }
  }
  // CLI11 reports parse errors by exception; they end here, as exit codes.
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 1;
  }
  if (*o_config) out->config_file = config_file;
  if (*o_run) out->run_dir = run_dir;
  if (*o_lcore) out->lcore = lcore;
  if (*o_poll) out->poll = poll;
  if (*o_log) out->log_level = log_level;
  return -1;
}

std::string load_toml(std::string_view text, std::string_view source,
                      DaemonConfig* out) {
  toml::table root;
  // toml++ reports syntax errors by exception; turned into the message here.
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    return std::string(source) + ":" + std::to_string(b.line) + ":" +
           std::to_string(b.column) + ": " + std::string(e.description());
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

std::string parse_device_spec(std::string_view spec, std::size_t index,
                              DeviceConfig* out) {
  std::set<std::string, std::less<>> seen;
  std::size_t pos = 0;
  while (pos <= spec.size()) {
    const std::size_t end = std::min(spec.find(';', pos), spec.size());
    const std::string_view item = spec.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return "device[" + std::to_string(index) + "]: " + in_quotes(item) +
             " is not key=value (--device takes key=value pairs separated by ';')";
    }
    const std::string name(item.substr(0, eq));
    const std::string_view val = item.substr(eq + 1);
    const std::string key = dev_key(index, name.c_str());
    if (seen.contains(name)) return key + ": given twice";
    std::string err;
    if (name == "name") {
      out->name = std::string(val);
      if (!valid_ibdev_name(val)) {
        err = key + ": " + in_quotes(val) +
              " must start with a letter and have at most 63 letters, digits or '_'";
      }
    } else if (name == "port") {
      err = set_port(val, index, out);
    } else if (name == "mac") {
      err = set_mac(val, index, out);
    } else if (name == "ipv4") {
      err = set_ipv4(val, index, out);
    } else if (name == "mtu") {
      std::int64_t v = 0;
      const auto r = std::from_chars(val.data(), val.data() + val.size(), v);
      if (r.ec != std::errc() || r.ptr != val.data() + val.size()) {
        err = key + ": " + in_quotes(val) + " is not an integer";
      } else {
        err = set_mtu(v, index, out);
      }
    } else if (is_impair_key(name)) {
      err = set_impair_text(name, val, index, out);
    } else if (name == "pfc") {
      err = parse_priorities(val, key, &out->pfc.enable);
    } else if (name == "tx_ttl" || name == "link_mbps") {
      std::int64_t v = 0;
      const auto r = std::from_chars(val.data(), val.data() + val.size(), v);
      if (val.empty() || r.ec != std::errc() || r.ptr != val.data() + val.size()) {
        err = key + ": " + in_quotes(val) + " is not an integer";
      } else {
        err = name == "tx_ttl" ? set_tx_ttl(v, key, out) : set_link_mbps(v, key, out);
      }
    } else {
      err = key +
            ": unknown key (expected name, port, mac, ipv4, mtu, drop_tx_every, "
            "drop_rx_every, drop_tx_rate, drop_rx_rate, drop_seed, pfc, tx_ttl or "
            "link_mbps)";
    }
    if (!err.empty()) return err;
    seen.insert(name);
  }
  return check_required(seen, index);
}

std::string apply_command_line(const CommandLine& cl, DaemonConfig* cfg) {
  if (cl.run_dir) cfg->run_dir = *cl.run_dir;
  if (cl.lcore) {
    if (*cl.lcore > kMaxLcore) {
      return "--lcore: " + std::to_string(*cl.lcore) + " is outside 0.." +
             std::to_string(kMaxLcore);
    }
    cfg->lcore = *cl.lcore;
  }
  if (cl.poll) {
    if (std::string err = parse_poll(*cl.poll, "--poll", &cfg->poll); !err.empty()) {
      return err;
    }
  }
  if (cl.log_level) {
    if (std::string err = parse_log_level(*cl.log_level, "--log-level", &cfg->log_level);
        !err.empty()) {
      return err;
    }
  }
  for (const auto& a : cl.eal_args) cfg->eal_args.push_back(a);
  if (!cl.devices.empty()) {
    std::vector<DeviceConfig> devs;
    for (std::size_t i = 0; i < cl.devices.size(); ++i) {
      DeviceConfig d;
      if (std::string err = parse_device_spec(cl.devices[i], i, &d); !err.empty()) {
        return err;
      }
      devs.push_back(std::move(d));
    }
    cfg->devices = std::move(devs);
  }
  return {};
}

std::string validate(const DaemonConfig& cfg) {
  if (cfg.run_dir.empty() || cfg.run_dir[0] != '/') {
    return "daemon.run_dir: " + in_quotes(cfg.run_dir) + " must be an absolute path";
  }
  if (cfg.socket_path().size() > kMaxSocketPath) {
    return "daemon.run_dir: " + in_quotes(cfg.run_dir) + " is too long (the socket path " +
           cfg.socket_path() + " must have at most " + std::to_string(kMaxSocketPath) +
           " characters)";
  }
  if (!kLogLevels.contains(cfg.log_level)) {
    return "daemon.log_level: " + in_quotes(cfg.log_level) + " is not a log level";
  }
  if (cfg.backoff_max_us > kMaxBackoffUs) {
    return "daemon.backoff_max_us: " + std::to_string(cfg.backoff_max_us) +
           " is outside 0.." + std::to_string(kMaxBackoffUs);
  }
  if (cfg.lcore > kMaxLcore) {
    return "eal.lcore: " + std::to_string(cfg.lcore) + " is outside 0.." +
           std::to_string(kMaxLcore);
  }
  if (cfg.devices.empty()) {
    return "device: no devices (add a [[device]] table or --device)";
  }
  for (std::size_t i = 0; i < cfg.devices.size(); ++i) {
    if (!valid_ibdev_name(cfg.devices[i].name)) {
      return dev_key(i, "name") + ": " + in_quotes(cfg.devices[i].name) +
             " must start with a letter and have at most 63 letters, digits or '_'";
    }
    if (std::string err = check_device_values(cfg.devices[i], i); !err.empty()) {
      return err;
    }
  }
  if (std::string err = check_unique(cfg); !err.empty()) return err;
  return check_rings(cfg);
}

std::string load_config(const CommandLine& cl, DaemonConfig* out) {
  if (cl.config_file) {
    std::ifstream in(*cl.config_file);
    if (!in) {
      return *cl.config_file + ": cannot open the configuration file";
    }
    std::stringstream ss;
    ss << in.rdbuf();
    if (std::string err = load_toml(ss.str(), *cl.config_file, out); !err.empty()) {
      return err;
    }
  }
  if (std::string err = apply_command_line(cl, out); !err.empty()) return err;
  return validate(*out);
}

std::string make_eal_config(const DaemonConfig& cfg, int pid, port::EalConfig* out) {
  port::EalConfig e;
  e.lcores = std::to_string(cfg.lcore);
  e.file_prefix = cfg.file_prefix.empty() ? "uroced-" + std::to_string(pid)
                                          : cfg.file_prefix;
  // Everything the args do not switch off stays on, as rte_eal_init would.
  e.hugepages = true;
  e.pci = true;
  e.telemetry = true;
  const auto& a = cfg.eal_args;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string& s = a[i];
    if (s == "-l" || s == "--lcores" || s == "-c" || s.starts_with("--lcores=") ||
        s == "--main-lcore") {
      return "eal.args: " + in_quotes(s) + " is set by uroced (use eal.lcore or --lcore)";
    }
    if (s == "--file-prefix" || s.starts_with("--file-prefix=")) {
      return "eal.args: " + in_quotes(s) + " is set by uroced (use eal.file_prefix)";
    }
    if (s == "-m") {
      std::uint32_t mb = 0;
      const std::string v = i + 1 < a.size() ? a[i + 1] : std::string();
      const auto r = std::from_chars(v.data(), v.data() + v.size(), mb);
      if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size() || mb < 16) {
        return "eal.args: \"-m\" needs a size in MB (at least 16)";
      }
      e.memory_mb = mb;
      ++i;
    } else if (s == "--no-huge") {
      e.hugepages = false;
    } else if (s == "--no-pci") {
      e.pci = false;
    } else if (s == "--no-telemetry") {
      e.telemetry = false;
    } else if (s.starts_with("--log-level=")) {
      e.log_level = s.substr(12);
    } else if (s.starts_with("--vdev=")) {
      e.vdevs.push_back(s.substr(7));
    } else {
      e.extra_args.push_back(s);
    }
  }
  for (const auto& d : cfg.devices) {
    if (d.port_spec.kind == PortKind::kPci) {
      e.pci = true;
      e.allow.push_back(d.port_spec.name);
    } else if (d.port_spec.kind == PortKind::kVdev && d.port_spec.args.empty()) {
      e.vdevs.push_back(d.port_spec.name);
    }
  }
  *out = std::move(e);
  return {};
}

}  // namespace uroce::daemon
