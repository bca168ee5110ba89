// The Homa-like scheduler's device keys (docs/homa.md, "On real daemons"):
// one table (kHomaKeys) that the TOML reader and --device both go through,
// and the check that runs HomaSettings::first_bad_field(), the scheduler's
// own rule of what it can run, over the device's settings.
//
// A key's setter refuses only what its field cannot hold (more than hi, or
// negative) and stores the rest; values the field holds but the scheduler
// cannot use (below lo, or a grant timeout not longer than the resend)
// are found by first_bad_field() at validation. Both give the same
// "outside lo..hi" message, so a user sees one rule per key.
#include <charconv>
#include <string>

#include "apps/uroced/config_values.h"

namespace uroce::daemon::config_detail {

namespace {

using sched::homa::HomaSettings;

constexpr std::uint64_t kU32 = 0xFFFF'FFFFu;
// TOML integers and --device's are signed 64-bit.
constexpr std::uint64_t kI64 = 0x7FFF'FFFF'FFFF'FFFFu;
// The scheduler's least useful grant room (homa_settings.h): rtt_bytes and
// max_incoming below it never grant.
constexpr std::uint64_t kMinRoom = HomaSettings{}.grant_increment;

}  // namespace

const std::array<HomaKey, 9> kHomaKeys = {{
    {"homa_priorities", 1, 8, nullptr,
     [](const HomaSettings& s) -> std::uint64_t { return s.priorities; },
     [](HomaSettings& s, std::uint64_t v) { s.priorities = static_cast<std::uint8_t>(v); }},
    {"homa_unsched_priorities", 1, 8, nullptr,
     [](const HomaSettings& s) -> std::uint64_t { return s.unsched_priorities; },
     [](HomaSettings& s, std::uint64_t v) { s.unsched_priorities = static_cast<std::uint8_t>(v); }},
    {"homa_unsched_bytes", 1, kU32, nullptr,
     [](const HomaSettings& s) -> std::uint64_t { return s.unsched_bytes; },
     [](HomaSettings& s, std::uint64_t v) { s.unsched_bytes = static_cast<std::uint32_t>(v); }},
    {"homa_rtt_bytes", kMinRoom, kU32, nullptr,
     [](const HomaSettings& s) -> std::uint64_t { return s.rtt_bytes; },
     [](HomaSettings& s, std::uint64_t v) { s.rtt_bytes = static_cast<std::uint32_t>(v); }},
    {"homa_overcommit", 1, 64, nullptr,
     [](const HomaSettings& s) -> std::uint64_t { return s.overcommit; },
     [](HomaSettings& s, std::uint64_t v) { s.overcommit = static_cast<std::uint32_t>(v); }},
    {"homa_max_incoming", kMinRoom, kI64, nullptr,
     [](const HomaSettings& s) -> std::uint64_t { return s.max_incoming; },
     [](HomaSettings& s, std::uint64_t v) { s.max_incoming = v; }},
    {"homa_fifo_permille", 0, 1000, nullptr,
     [](const HomaSettings& s) -> std::uint64_t { return s.fifo_permille; },
     [](HomaSettings& s, std::uint64_t v) { s.fifo_permille = static_cast<std::uint32_t>(v); }},
    {"homa_resend_us", 1, kMaxHomaUs, nullptr,
     [](const HomaSettings& s) -> std::uint64_t { return s.resend_ns / kNsPerUs; },
     [](HomaSettings& s, std::uint64_t v) { s.resend_ns = v * kNsPerUs; }},
    {"homa_grant_timeout_us", 1, kMaxHomaUs, "homa_resend_us",
     [](const HomaSettings& s) -> std::uint64_t { return s.grant_timeout_ns / kNsPerUs; },
     [](HomaSettings& s, std::uint64_t v) { s.grant_timeout_ns = v * kNsPerUs; }},
}};

const HomaKey* find_homa_key(std::string_view name) {
  for (const HomaKey& k : kHomaKeys) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

std::string homa_key_names() {
  std::string s = "homa";
  for (std::size_t j = 0; j < kHomaKeys.size(); ++j) {
    s += ", " + std::string(kHomaKeys[j].name);
  }
  return s;
}

namespace {

// The one message for a value out of key k's rule.
std::string homa_rule_error(const HomaKey& k, std::uint64_t v, const HomaSettings& s,
                            const std::string& key) {
  if (k.more_than != nullptr) {
    const HomaKey* other = find_homa_key(k.more_than);
    if (other != nullptr && v <= other->get(s)) {
      return key + ": " + std::to_string(v) + " must be more than " + k.more_than + " (" +
             std::to_string(other->get(s)) + ")";
    }
  }
  return key + ": " + std::to_string(v) + " is outside " + std::to_string(k.lo) + ".." +
         std::to_string(k.hi);
}

}  // namespace

std::string set_homa_key(const HomaKey& k, std::int64_t v, const std::string& key,
                         DeviceConfig* d) {
  if (v < 0) {
    return key + ": " + std::to_string(v) + " is outside " + std::to_string(k.lo) + ".." +
           std::to_string(k.hi);
  }
  const auto u = static_cast<std::uint64_t>(v);
  if (u > k.hi) return homa_rule_error(k, u, d->homa, key);
  k.set(d->homa, u);
  return {};
}

std::string parse_homa_key(const HomaKey& k, std::string_view val, const std::string& key,
                           DeviceConfig* d) {
  std::int64_t v = 0;
  const auto r = std::from_chars(val.data(), val.data() + val.size(), v);
  if (val.empty() || r.ec != std::errc() || r.ptr != val.data() + val.size()) {
    return key + ": " + in_quotes(val) + " is not an integer";
  }
  return set_homa_key(k, v, key, d);
}

std::string check_homa(const DeviceConfig& d, std::size_t i) {
  const std::string_view bad = d.homa.first_bad_field();
  if (bad.empty()) return {};
  const HomaKey* k = find_homa_key(bad);
  // A field without a key keeps its default, which the scheduler accepts;
  // should that ever change, say which field rather than nothing.
  if (k == nullptr) return dev_key(i, "homa") + ": the scheduler refuses its " + std::string(bad);
  return homa_rule_error(*k, k->get(d.homa), d.homa, dev_key(i, std::string(bad).c_str()));
}

}  // namespace uroce::daemon::config_detail
