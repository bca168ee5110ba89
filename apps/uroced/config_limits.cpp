// The [limits] keys (apps/uroced/resource_limits.h): one table that the
// TOML reader and --limit KEY=VALUE both go through, so the two cannot
// disagree on a name or a range.
#include <string>

#include "apps/uroced/config_keys.h"
#include "apps/uroced/config_values.h"

namespace uroce::daemon {

namespace {

using L = Limits;
constexpr std::int64_t kCount = std::int64_t{1} << 32;
constexpr std::int64_t kBytes = std::int64_t{1} << 47;  // the user address space

// 0 in every key but `connections`: a default (resource_limits.h).
const KeyDesc<L> kLimitKeys[] = {
    integer_key<L, &L::connections>("connections", 1, 65536,
                                    "client connections the daemon serves at once"),
    live_key(integer_key<L, &L::user_connections>("user_connections", 0, 65536,
                                                  "connections of one user",
                                                  "0 = three quarters of connections")),
    live_key(integer_key<L, &L::user_qps>("user_qps", 0, kCount, "QPs of one user",
                                          "0 = three quarters of the device's max_qp")),
    live_key(integer_key<L, &L::user_cqs>("user_cqs", 0, kCount, "CQs of one user",
                                          "0 = three quarters of the device's max_cq")),
    live_key(integer_key<L, &L::user_mrs>("user_mrs", 0, kCount, "MRs of one user",
                                          "0 = three quarters of the device's max_mr")),
    live_key(integer_key<L, &L::user_reg_bytes>("user_reg_bytes", 0, kBytes,
                                                "bytes one user registers", "0 = 16 TiB")),
    live_key(integer_key<L, &L::user_map_bytes>("user_map_bytes", 0, kBytes,
                                                "queue and ring bytes one user maps",
                                                "0 = 16 TiB")),
    live_key(integer_key<L, &L::client_qps>("client_qps", 0, kCount, "QPs of one connection",
                                            "0 = the user's value")),
    live_key(integer_key<L, &L::client_cqs>("client_cqs", 0, kCount, "CQs of one connection",
                                            "0 = the user's value")),
    live_key(integer_key<L, &L::client_mrs>("client_mrs", 0, kCount, "MRs of one connection",
                                            "0 = the user's value")),
    live_key(integer_key<L, &L::client_reg_bytes>("client_reg_bytes", 0, kBytes,
                                                  "bytes one connection registers",
                                                  "0 = the user's value")),
    live_key(integer_key<L, &L::client_map_bytes>("client_map_bytes", 0, kBytes,
                                                  "queue and ring bytes one connection maps",
                                                  "0 = the user's value")),
};

const KeySet<L> kLimitSet = {"[limits]", "apps/uroced/resource_limits.h", kLimitKeys};

}  // namespace

const KeySet<Limits>& limit_key_set() { return kLimitSet; }

namespace config_detail {

std::string parse_limit_arg(std::string_view arg, Limits* out) {
  const std::size_t eq = arg.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return "--limit: " + in_quotes(arg) + " is not KEY=VALUE";
  }
  const std::string_view name = arg.substr(0, eq), val = arg.substr(eq + 1);
  const std::string key = "--limit " + std::string(name);
  const KeyDesc<Limits>* k = find_limit_key(name);
  if (k == nullptr) return key + ": unknown limit (expected one of " + limit_key_names() + ")";
  return set_key_text(*k, val, key, out);
}

}  // namespace config_detail

}  // namespace uroce::daemon
