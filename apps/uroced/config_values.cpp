#include "apps/uroced/config_values.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "apps/uroced/config_keys.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cstdio>
#include <limits>
#include <map>
#include <vector>

namespace uroce::daemon::config_detail {

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
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }
bool is_hex_char(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

std::string check_ibdev_name(std::string_view s, const std::string& key) {
  if (!s.empty() && s.size() <= 63 && std::isalpha(static_cast<unsigned char>(s[0])) != 0 &&
      all_of(s, is_name_char)) {
    return {};
  }
  return key + ": " + in_quotes(s) +
         " must start with a letter and have at most 63 letters, digits or '_'";
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
  return hex_run(p, 2) && s[p + 2] == ':' && hex_run(p + 3, 2) && s[p + 5] == '.' &&
         s[p + 6] >= '0' && s[p + 6] <= '7';
}

// A Linux interface name: 1..15 bytes, none of them '/', ':', ',', '=' or
// white space (dev_valid_name, and the separators of a port string).
bool is_ifname(std::string_view s) {
  if (s.empty() || s.size() > 15 || s == "." || s == "..") return false;
  return std::none_of(s.begin(), s.end(), [](char c) {
    return c == '/' || c == ':' || c == ',' || c == '=' ||
           std::isspace(static_cast<unsigned char>(c)) != 0;
  });
}

// "af_xdp:IFACE[,queue=Q][,count=N][,busy_budget=B]" (after the prefix):
// net_af_xdp's iface, start_queue, queue_count and busy_budget.
std::string parse_af_xdp(std::string_view s, std::string_view rest, const std::string& key,
                         PortSpec* out) {
  const std::size_t comma = rest.find(',');
  const std::string_view iface = rest.substr(0, comma);
  if (!is_ifname(iface)) {
    return key + ": " + in_quotes(s) +
           ": the interface name must be 1..15 bytes without '/', ':', ',', '=' or spaces";
  }
  // busy_budget 0: no preferred busy polling. With it (the PMD's default,
  // 64) the kernel leaves the queue's NAPI to the socket's own syscalls,
  // which an engine that sleeps between polls (backoff, yield) makes only
  // when it wakes: ib_send_lat in backoff mode took 1.6 ms a round trip
  // against 0.15 ms without (docs/nic.md).
  std::uint32_t queue = 0, count = 1, budget = 0;
  std::string_view opts =
      comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  while (!opts.empty()) {
    const std::size_t next = opts.find(',');
    const std::string_view kv = opts.substr(0, next);
    opts = next == std::string_view::npos ? std::string_view() : opts.substr(next + 1);
    const std::size_t eq = kv.find('=');
    const std::string_view k = kv.substr(0, eq);
    const std::string_view v =
        eq == std::string_view::npos ? std::string_view() : kv.substr(eq + 1);
    std::uint32_t* dst = k == "queue"         ? &queue
                         : k == "count"       ? &count
                         : k == "busy_budget" ? &budget
                                              : nullptr;
    if (dst == nullptr) {
      return key + ": " + in_quotes(s) + ": " + in_quotes(k) +
             " is not an af_xdp option (expected queue=Q, count=N or busy_budget=B)";
    }
    const std::uint32_t lo = dst == &count ? 1 : 0;
    std::uint32_t n = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (v.empty() || ec != std::errc() || end != v.data() + v.size() || n < lo || n > 1024) {
      return key + ": " + in_quotes(s) + ": " + std::string(k) + " must be an integer in " +
             std::to_string(lo) + "..1024";
    }
    *dst = n;
  }
  *out = PortSpec{PortKind::kAfXdp, std::string(iface),
                  "iface=" + std::string(iface) + ",start_queue=" + std::to_string(queue) +
                      ",queue_count=" + std::to_string(count) +
                      ",busy_budget=" + std::to_string(budget),
                  queue, count};
  return {};
}

std::string parse_port(std::string_view s, const std::string& key, PortSpec* out) {
  if (s.starts_with("af_xdp:")) return parse_af_xdp(s, s.substr(7), key, out);
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
    out->args = comma == std::string_view::npos ? std::string() : std::string(s.substr(comma + 1));
    return {};
  }
  return key + ": " + in_quotes(s) +
         " is not a vdev devargs string (net_<pmd><n>,key=value,...), a PCI "
         "address, \"af_xdp:IFACE\" or \"ring:NAME\"";
}

std::string set_mac(std::string_view s, const std::string& key, DeviceConfig* d) {
  const auto m = wire::MacAddr::parse(s);
  if (!m) {
    return key + ": " + in_quotes(s) +
           " is not a MAC address (expected six hex bytes like 02:00:00:00:00:01)";
  }
  d->mac = *m;
  return {};
}

std::string set_ipv4(std::string_view s, const std::string& key, DeviceConfig* d) {
  const auto a = wire::Ipv4Addr::parse(s);
  if (!a) {
    return key + ": " + in_quotes(s) + " is not an IPv4 address (expected a.b.c.d)";
  }
  d->ipv4 = *a;
  return {};
}

std::string set_ipv6(std::string_view s, const std::string& key, DeviceConfig* d) {
  const auto a = wire::Ipv6Addr::parse(s);
  if (!a) return key + ": " + in_quotes(s) + " is not an IPv6 address";
  // The link-local address is GID 0, derived from the MAC; this key adds a
  // routable unicast one.
  if (a->is_zero() || a->is_multicast() || a->is_link_local() || a->is_ipv4_mapped() ||
      *a == *wire::Ipv6Addr::parse("::1")) {
    return key + ": " + a->to_string() +
           " is not a global unicast address (the link-local one is GID 0, from the MAC)";
  }
  d->ipv6 = *a;
  return {};
}

std::string set_port(std::string_view s, const std::string& key, DeviceConfig* d) {
  d->port = std::string(s);
  return parse_port(s, key, &d->port_spec);
}

std::string set_isolation(std::string_view s, const std::string& key, DeviceConfig* d) {
  if (!sched::parse_isolation(s, &d->sched.isolation)) {
    return key + ": " + in_quotes(s) + " is not an isolation mode (expected " +
           std::string(sched::kIsolationModes) + ")";
  }
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
           std::to_string(
               c.map.priority_of_dscp(c.map.dscp_of_priority(static_cast<std::uint8_t>(p))));
  }
  if (c.enable != 0 && (c.stage_slots == 0 || c.rx_budget == 0 || c.hold_slots == 0)) {
    return k + "stage_slots, rx_budget and hold_slots must be at least 1";
  }
  return {};
}

std::string missing_port(std::size_t index) {
  return dev_key(index, "port") +
         ": missing (a vdev devargs string, a PCI address, \"af_xdp:IFACE\" or \"ring:NAME\")";
}

// The keys every device must have, checked after all its keys were read.
std::string check_required(const std::set<std::string, std::less<>>& seen, std::size_t index) {
  for (const KeySet<DeviceConfig>& set : device_key_sets()) {
    for (const KeyDesc<DeviceConfig>& k : set.keys) {
      if (!k.required || seen.contains(k.name)) continue;
      if (k.name == "port") return missing_port(index);
      return dev_key(index, std::string(k.name).c_str()) + ": missing";
    }
  }
  return {};
}

std::string parse_poll(std::string_view s, const std::string& key, PollMode* out) {
  if (s == "busy") {
    *out = PollMode::kBusy;
  } else if (s == "backoff") {
    *out = PollMode::kBackoff;
  } else if (s == "yield") {
    *out = PollMode::kYield;
  } else {
    return key + ": " + in_quotes(s) +
           " is not a poll mode (expected \"busy\", \"backoff\" or \"yield\")";
  }
  return {};
}

std::string parse_log_level(std::string_view s, const std::string& key, std::string* out) {
  if (!kLogLevels.contains(s)) {
    return key + ": " + in_quotes(s) +
           " is not a log level (expected trace, debug, info, warn, error, "
           "critical or off)";
  }
  *out = std::string(s);
  return {};
}

std::string parse_metrics_listen(std::string_view s, const std::string& key, MetricsListen* out) {
  MetricsListen m;
  m.text = std::string(s);
  if (s.empty()) {
    *out = m;
    return {};
  }
  const std::string what = key + ": " + in_quotes(s);
  if (s.starts_with("unix:")) {
    m.kind = MetricsListen::Kind::kUnix;
    m.path = std::string(s.substr(5));
    if (m.path.empty() || m.path[0] != '/') {
      return what + " must name an absolute path (unix:/run/uroce/metrics.sock)";
    }
    if (m.path.size() > kMaxSocketPath) {
      return what + " is too long (a socket path has at most " + std::to_string(kMaxSocketPath) +
             " bytes)";
    }
    *out = m;
    return {};
  }
  const std::size_t colon = s.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    return what + " is not unix:PATH, 127.0.0.1:PORT or [::1]:PORT";
  }
  std::string_view host = s.substr(0, colon);
  const std::string_view port = s.substr(colon + 1);
  bool v6 = false;
  if (host.starts_with('[') && host.ends_with(']')) {
    host = host.substr(1, host.size() - 2);
    v6 = true;
  }
  const std::string h(host);
  in_addr a4{};
  in6_addr a6{};
  const bool is4 = !v6 && inet_pton(AF_INET, h.c_str(), &a4) == 1;
  const bool is6 = v6 && inet_pton(AF_INET6, h.c_str(), &a6) == 1;
  if (!is4 && !is6) return what + " is not unix:PATH, 127.0.0.1:PORT or [::1]:PORT";
  const bool loopback = is4 ? (ntohl(a4.s_addr) >> 24) == 127 : IN6_IS_ADDR_LOOPBACK(&a6);
  if (!loopback) {
    return what +
           " is not a loopback address (the metrics name clients: expected unix:PATH, "
           "127.0.0.1:PORT or [::1]:PORT)";
  }
  std::uint32_t p = 0;
  const bool digits = !port.empty() && port.size() <= 5 &&
                      all_of(port, [](char c) { return c >= '0' && c <= '9'; });
  if (digits) {
    for (const char c : port) p = p * 10 + static_cast<std::uint32_t>(c - '0');
  }
  if (!digits || p == 0 || p > 65535) return what + ": the port must be 1..65535";
  m.kind = is4 ? MetricsListen::Kind::kTcp4 : MetricsListen::Kind::kTcp6;
  m.host = h;
  m.port = static_cast<std::uint16_t>(p);
  *out = m;
  return {};
}

std::string check_unique(const DaemonConfig& cfg) {
  const auto& ds = cfg.devices;
  for (std::size_t i = 0; i < ds.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      const std::string other = "device[" + std::to_string(j) + "]";
      if (ds[i].name == ds[j].name) {
        return dev_key(i, "name") + ": " + in_quotes(ds[i].name) + " is already the name of " +
               other;
      }
      if (ds[i].mac == ds[j].mac) {
        return dev_key(i, "mac") + ": " + ds[i].mac.to_string() + " is already the MAC of " + other;
      }
      if (ds[i].ipv4 == ds[j].ipv4) {
        return dev_key(i, "ipv4") + ": " + ds[i].ipv4.to_string() + " is already the address of " +
               other;
      }
      if (!ds[i].ipv6.is_zero() && ds[i].ipv6 == ds[j].ipv6) {
        return dev_key(i, "ipv6") + ": " + ds[i].ipv6.to_string() + " is already the address of " +
               other;
      }
      if (ds[i].port_spec.kind != PortKind::kRing && ds[i].port == ds[j].port) {
        return dev_key(i, "port") + ": " + in_quotes(ds[i].port) + " is already the port of " +
               other;
      }
      // Two af_xdp ports on one interface must take distinct queues: a
      // queue has one AF_XDP socket.
      const PortSpec& a = ds[i].port_spec;
      const PortSpec& b = ds[j].port_spec;
      if (a.kind == PortKind::kAfXdp && b.kind == PortKind::kAfXdp && a.name == b.name &&
          a.first_queue < b.first_queue + b.queue_count &&
          b.first_queue < a.first_queue + a.queue_count) {
        auto range = [](const PortSpec& p) {
          return std::to_string(p.first_queue) + ".." +
                 std::to_string(p.first_queue + p.queue_count - 1);
        };
        return dev_key(i, "port") + ": " + in_quotes(ds[i].port) + ": queues " + range(a) + " of " +
               a.name + " overlap " + other + "'s (" + range(b) + ")";
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
      return dev_key(idx[2], "port") + ": ring " + in_quotes(name) + " already joins device[" +
             std::to_string(idx[0]) + "] and device[" + std::to_string(idx[1]) + "]";
    }
  }
  return {};
}

std::string check_device_values(const DeviceConfig& d, std::size_t i) {
  if (d.mac.is_zero() || d.mac.is_multicast()) {
    return dev_key(i, "mac") + ": " + d.mac.to_string() + " is not a unicast address";
  }
  const std::uint32_t top = d.ipv4.v >> 24;
  if (d.ipv4.v == 0 || top == 127 || top >= 224) {
    return dev_key(i, "ipv4") + ": " + d.ipv4.to_string() + " is not a unicast host address";
  }
  if (d.port.empty()) return missing_port(i);
  if (const char* f = d.impair.first_bad_field(); f != nullptr) {
    const double v =
        std::string_view(f) == "drop_tx_rate" ? d.impair.drop_tx_rate : d.impair.drop_rx_rate;
    return dev_key(i, f) + ": " + fmt_real(v) + " is outside 0..1 (a fraction of RoCEv2 frames)";
  }
  if (std::string err = check_pfc(d, i); !err.empty()) return err;
  return check_homa(d, i);
}

}  // namespace uroce::daemon::config_detail
