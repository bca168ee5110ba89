// uroced's configuration, the rules one value is held to wherever it comes
// from (a TOML file, a --device string, the command line): parsers and
// setters of single values, and the checks across devices. Internal to
// config.cpp and config_toml.cpp; the public interface is config.h.
#pragma once

#include <array>
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

// An ibdev name as sysfs and the protocol (kNameBytes) allow.
bool valid_ibdev_name(std::string_view s);

// "DDDD:BB:DD.F" or "BB:DD.F", hex digits.
bool is_pci_address(std::string_view s);

std::string parse_port(std::string_view s, std::size_t index, PortSpec* out);

std::string set_mac(std::string_view s, std::size_t index, DeviceConfig* d);

std::string set_ipv4(std::string_view s, std::size_t index, DeviceConfig* d);
std::string set_ipv6(std::string_view s, std::size_t index, DeviceConfig* d);

std::string set_mtu(std::int64_t v, std::size_t index, DeviceConfig* d);

std::string set_port(std::string_view s, std::size_t index, DeviceConfig* d);

// ---- Loss injection keys (shared by [[device]] and --device) -----------------
inline constexpr std::array<std::string_view, 7> kImpairKeys = {"drop_tx_every", "drop_rx_every",
                                                                "drop_tx_rate",  "drop_rx_rate",
                                                                "drop_seed",     "drop_tx_max",
                                                                "drop_rx_max"};

bool is_impair_key(std::string_view k);

// One loss injection key from an integer (`is_int`) or a real value.
std::string set_impair(std::string_view name, bool is_int, std::int64_t i, double r,
                       std::size_t index, DeviceConfig* d);

// The same from --device text: an integer, or (rates only) a real number.
std::string set_impair_text(std::string_view name, std::string_view val, std::size_t index,
                            DeviceConfig* d);

// "3" or "3,4,6" (priorities 0..7, or classes 0..7 when `noun` says so)
// or "none" into a mask.
std::string parse_priorities(std::string_view s, const std::string& key, std::uint8_t* mask,
                             std::string_view noun = "priorities");

std::string set_tx_ttl(std::int64_t v, const std::string& key, DeviceConfig* d);

std::string set_link_mbps(std::int64_t v, const std::string& key, DeviceConfig* d);

// ---- TX scheduling keys (docs/sched.md) ----------------------------------------
inline constexpr std::int64_t kMaxClassWeight = sched::kMaxClassWeight;
inline constexpr std::int64_t kMinPaceGranularityNs = 100;
inline constexpr std::int64_t kMaxPaceGranularityNs = 1'000'000;

std::string set_isolation(std::string_view s, const std::string& key, DeviceConfig* d);

// Classes in `mask` strict, the others weighted.
void set_strict_classes(std::uint8_t mask, DeviceConfig* d);

// Class `c`'s weight after its range check; `key` names it in the error.
std::string set_class_weight(std::size_t c, std::int64_t w, const std::string& key,
                             DeviceConfig* d);

// --device's class_weights: "1,1,2,4", at most kNumClasses integers.
std::string parse_class_weights(std::string_view s, const std::string& key, DeviceConfig* d);

// Class `c`'s rate limit in Mb/s (0: none) after its range check.
std::string set_class_rate(std::size_t c, std::int64_t mbps, const std::string& key,
                           DeviceConfig* d);
// --device's class_rates_mbps: "0,0,0,1000", at most kNumClasses integers.
std::string parse_class_rates(std::string_view s, const std::string& key, DeviceConfig* d);

std::string set_pace_granularity(std::int64_t v, const std::string& key, DeviceConfig* d);

std::string set_class_quantum(std::int64_t v, const std::string& key, DeviceConfig* d);

std::string set_tx_limit_bytes(std::int64_t v, const std::string& key, DeviceConfig* d);

// ---- DCQCN keys (docs/sched.md "DCQCN") ---------------------------------------
inline constexpr std::int64_t kMaxCnpIntervalUs = 1'000'000;

// --device's dcqcn: "on" or "off" (TOML: a boolean).
std::string parse_on_off(std::string_view s, const std::string& key, bool* out);
std::string set_cnp_dscp(std::int64_t v, const std::string& key, DeviceConfig* d);
std::string set_cnp_interval_us(std::int64_t v, const std::string& key, DeviceConfig* d);

// ---- The Homa-like scheduler's keys (config_homa.cpp; docs/homa.md) -----------
// `homa` itself is on/off like dcqcn (TOML: a boolean); the others are
// integers in kHomaKeys, each with the range its errors state (lo..hi),
// and for homa_grant_timeout_us the key it must exceed.
// The microsecond keys stop at 10 s: a grant silent that long is from a
// peer that is gone, which RC's own retries already handle.
inline constexpr std::uint64_t kMaxHomaUs = 10'000'000;

struct HomaKey {
  std::string_view name;
  std::uint64_t lo, hi;
  const char* more_than;  // the key this one must exceed, or null
  std::uint64_t (*get)(const sched::homa::HomaSettings&);
  void (*set)(sched::homa::HomaSettings&, std::uint64_t);
};
extern const std::array<HomaKey, 9> kHomaKeys;

const HomaKey* find_homa_key(std::string_view name);
// "homa, homa_priorities, ..., homa_grant_timeout_us", for the unknown-key
// message (the DC keys follow them there).
std::string homa_key_names();
// Key `k` to `v` (TOML) or to the integer in `val` (--device); `key` names
// it in the error.
std::string set_homa_key(const HomaKey& k, std::int64_t v, const std::string& key, DeviceConfig* d);
std::string parse_homa_key(const HomaKey& k, std::string_view val, const std::string& key,
                           DeviceConfig* d);
// HomaSettings::first_bad_field() over device i's settings, as a message
// naming the key.
std::string check_homa(const DeviceConfig& d, std::size_t i);

// The link speed the PFC checks assume before the port tells it.
std::uint64_t check_bps(const DeviceConfig& d);

// The pfc/ state machines' own checks, named by the keys that feed them.
std::string check_pfc(const DeviceConfig& d, std::size_t i);

std::string missing_port(std::size_t index);

// The keys every device must have, checked after all its keys were read.
std::string check_required(const std::set<std::string, std::less<>>& seen, std::size_t index);

// ---- [limits] (apps/uroced/resource_limits.h): the one key table both the file
// and --limit KEY=VALUE read through.
struct LimitKey {
  std::string_view name;
  std::uint64_t Limits::*field;
  std::uint64_t lo, hi;
};
extern const std::array<LimitKey, 12> kLimitKeys;

// Sets limit `name` to `v` after its range check; `key` names it in the
// error ("limits.connections" or "--limit connections").
std::string set_limit(std::string_view name, std::int64_t v, const std::string& key, Limits* out);

// One --limit "KEY=VALUE".
std::string parse_limit_arg(std::string_view arg, Limits* out);

std::string parse_poll(std::string_view s, const std::string& key, PollMode* out);

std::string parse_log_level(std::string_view s, const std::string& key, std::string* out);

std::string check_unique(const DaemonConfig& cfg);

std::string check_rings(const DaemonConfig& cfg);

std::string check_device_values(const DeviceConfig& d, std::size_t i);

}  // namespace uroce::daemon::config_detail
