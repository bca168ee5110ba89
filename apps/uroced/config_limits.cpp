// The [limits] keys: one table (kLimitKeys) that the TOML reader and
// --limit KEY=VALUE both go through, so the two cannot disagree on a name
// or a range.
#include <charconv>
#include <string>

#include "apps/uroced/config_values.h"

namespace uroce::daemon::config_detail {

namespace {
constexpr std::uint64_t kCount = std::uint64_t{1} << 32;
constexpr std::uint64_t kBytes = std::uint64_t{1} << 47;  // the user address space
}  // namespace

// 0 in every key but `connections`: the default (resource_limits.h).
const std::array<LimitKey, 12> kLimitKeys = {{
    {"connections", &Limits::connections, 1, 65536},
    {"user_connections", &Limits::user_connections, 0, 65536},
    {"user_qps", &Limits::user_qps, 0, kCount},
    {"user_cqs", &Limits::user_cqs, 0, kCount},
    {"user_mrs", &Limits::user_mrs, 0, kCount},
    {"user_reg_bytes", &Limits::user_reg_bytes, 0, kBytes},
    {"user_map_bytes", &Limits::user_map_bytes, 0, kBytes},
    {"client_qps", &Limits::client_qps, 0, kCount},
    {"client_cqs", &Limits::client_cqs, 0, kCount},
    {"client_mrs", &Limits::client_mrs, 0, kCount},
    {"client_reg_bytes", &Limits::client_reg_bytes, 0, kBytes},
    {"client_map_bytes", &Limits::client_map_bytes, 0, kBytes},
}};

namespace {

const LimitKey* find_limit(std::string_view name) {
  for (const LimitKey& k : kLimitKeys) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

std::string known_limits() {
  std::string s;
  for (const LimitKey& k : kLimitKeys) s += (s.empty() ? "" : ", ") + std::string(k.name);
  return s;
}

}  // namespace

std::string set_limit(std::string_view name, std::int64_t v, const std::string& key, Limits* out) {
  const LimitKey* k = find_limit(name);
  if (k == nullptr) return key + ": unknown limit (expected one of " + known_limits() + ")";
  if (v < 0 || static_cast<std::uint64_t>(v) < k->lo || static_cast<std::uint64_t>(v) > k->hi) {
    return key + ": " + std::to_string(v) + " is outside " + std::to_string(k->lo) + ".." +
           std::to_string(k->hi);
  }
  out->*(k->field) = static_cast<std::uint64_t>(v);
  return {};
}

std::string parse_limit_arg(std::string_view arg, Limits* out) {
  const std::size_t eq = arg.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return "--limit: " + in_quotes(arg) + " is not KEY=VALUE";
  }
  const std::string_view name = arg.substr(0, eq), val = arg.substr(eq + 1);
  const std::string key = "--limit " + std::string(name);
  std::int64_t v = 0;
  const auto r = std::from_chars(val.data(), val.data() + val.size(), v);
  if (val.empty() || r.ec != std::errc() || r.ptr != val.data() + val.size()) {
    return key + ": " + in_quotes(val) + " is not an integer";
  }
  return set_limit(name, v, key, out);
}

}  // namespace uroce::daemon::config_detail
