// uroced's configuration, the rules one value is held to wherever it comes
// from (a TOML file, a --device string, the command line): parsers and
// setters of single values, and the checks across devices. Internal to
// config.cpp and config_toml.cpp; the public interface is config.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>

#include "apps/uroced/config.h"

namespace uroce::daemon::config_detail {

inline const std::set<std::string, std::less<>> kLogLevels = {"trace", "debug",    "info", "warn",
                                                              "error", "critical", "off"};

// Longest socket path a sockaddr_un holds (108 bytes with the NUL).
inline constexpr std::size_t kMaxSocketPath = 107;

// Ring names become rte_ring names "<NAME>_ab" (29 characters at most).
inline constexpr std::size_t kMaxRingName = 24;

std::string in_quotes(std::string_view s);

// A real number as a user wrote it (shortest round-trip form).
std::string fmt_real(double v);

std::string dev_key(std::size_t i, const char* key);

bool all_of(std::string_view s, bool (*pred)(char));

bool is_name_char(char c);

bool is_hex_char(char c);

// The one rule for an ibdev name (sysfs and the protocol's kNameBytes):
// "" or "key: "0x" must start with a letter ...".
std::string check_ibdev_name(std::string_view s, const std::string& key);

// "DDDD:BB:DD.F" or "BB:DD.F", hex digits.
bool is_pci_address(std::string_view s);

// The text keys' setters (config_keys_device.cpp); `key` names the key in
// the error.
std::string parse_port(std::string_view s, const std::string& key, PortSpec* out);
std::string set_port(std::string_view s, const std::string& key, DeviceConfig* d);
std::string set_mac(std::string_view s, const std::string& key, DeviceConfig* d);
std::string set_ipv4(std::string_view s, const std::string& key, DeviceConfig* d);
std::string set_ipv6(std::string_view s, const std::string& key, DeviceConfig* d);
std::string set_isolation(std::string_view s, const std::string& key, DeviceConfig* d);

// ---- Ranges of the TX scheduling and DCQCN keys (docs/sched.md) ---------------------
inline constexpr std::int64_t kMaxClassWeight = sched::kMaxClassWeight;
inline constexpr std::int64_t kMinPaceGranularityNs = 100;
inline constexpr std::int64_t kMaxPaceGranularityNs = 1'000'000;
inline constexpr std::int64_t kMaxCnpIntervalUs = 1'000'000;

// HomaSettings::first_bad_field() over device i's settings, as a message
// naming the key (config_homa.cpp).
std::string check_homa(const DeviceConfig& d, std::size_t i);

// The link speed the PFC checks assume before the port tells it.
std::uint64_t check_bps(const DeviceConfig& d);

// The pfc/ state machines' own checks, named by the keys that feed them.
std::string check_pfc(const DeviceConfig& d, std::size_t i);

std::string missing_port(std::size_t index);

// The keys every device must have (the table's required ones), checked
// after all its keys were read.
std::string check_required(const std::set<std::string, std::less<>>& seen, std::size_t index);

// One --limit "KEY=VALUE" through the [limits] key table (config_limits.cpp).
std::string parse_limit_arg(std::string_view arg, Limits* out);

std::string parse_poll(std::string_view s, const std::string& key, PollMode* out);

std::string parse_log_level(std::string_view s, const std::string& key, std::string* out);

// daemon.metrics_listen: "" (off), "unix:/ABSOLUTE/PATH", "127.x.y.z:PORT"
// or "[::1]:PORT". Any other address is refused: the metrics name clients
// (pids, uids) and are for this host's collector only.
std::string parse_metrics_listen(std::string_view s, const std::string& key, MetricsListen* out);

std::string check_unique(const DaemonConfig& cfg);

std::string check_rings(const DaemonConfig& cfg);

std::string check_device_values(const DeviceConfig& d, std::size_t i);

}  // namespace uroce::daemon::config_detail
