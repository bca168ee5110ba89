#include "apps/uroced/config_dc.h"

#include <charconv>

namespace uroce::daemon {

namespace {
// A context is an RC responder (a few KiB with its READ/atomic resources):
// a million of them is already gigabytes, the most a device may ask for.
constexpr std::uint64_t kMaxContexts = std::uint64_t{1} << 20;
// 2^24 records of 24 bytes: 384 MiB, far more than any context count
// needs (records only remember retired connections per hash slot).
constexpr std::uint64_t kMaxRecordsLog2 = 24;
// One hour: dc_stale_ms must exceed the initiators' retry span (docs/dc.md),
// and no sane timeout x retry count comes near it.
constexpr std::uint64_t kMaxStaleMs = 3'600'000;
// One hour too: past that a stream might as well never disconnect.
constexpr std::uint64_t kMaxIdleDisconnectUs = 3'600'000'000;
}  // namespace

const std::array<DcKey, 4> kDcKeys = {{
    {"dc_contexts", 1, kMaxContexts, &DeviceConfig::dc_contexts, &engine::VnicConfig::dc_contexts},
    {"dc_records_log2", 0, kMaxRecordsLog2, &DeviceConfig::dc_records_log2,
     &engine::VnicConfig::dc_records_log2},
    {"dc_stale_ms", 1, kMaxStaleMs, &DeviceConfig::dc_stale_ms, &engine::VnicConfig::dc_stale_ms},
    {"dc_idle_disconnect_us", 1, kMaxIdleDisconnectUs, &DeviceConfig::dc_idle_disconnect_us,
     &engine::VnicConfig::dc_idle_disconnect_us},
}};

const DcKey* find_dc_key(std::string_view name) {
  for (const DcKey& k : kDcKeys) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

std::string dc_key_names() {
  std::string s;
  for (std::size_t j = 0; j < kDcKeys.size(); ++j) {
    if (j != 0) s += j + 1 == kDcKeys.size() ? " or " : ", ";
    s += kDcKeys[j].name;
  }
  return s;
}

std::string set_dc_key(const DcKey& k, std::int64_t v, const std::string& key, DeviceConfig* d) {
  if (v < 0 || static_cast<std::uint64_t>(v) < k.lo || static_cast<std::uint64_t>(v) > k.hi) {
    return key + ": " + std::to_string(v) + " is outside " + std::to_string(k.lo) + ".." +
           std::to_string(k.hi);
  }
  d->*k.dev = static_cast<std::uint32_t>(v);
  return {};
}

std::string parse_dc_key(const DcKey& k, std::string_view val, const std::string& key,
                         DeviceConfig* d) {
  std::int64_t v = 0;
  const auto r = std::from_chars(val.data(), val.data() + val.size(), v);
  if (val.empty() || r.ec != std::errc() || r.ptr != val.data() + val.size()) {
    return key + ": \"" + std::string(val) + "\" is not an integer";
  }
  return set_dc_key(k, v, key, d);
}

void apply_dc_keys(const DeviceConfig& d, engine::VnicConfig* vc) {
  for (const DcKey& k : kDcKeys) vc->*k.vnic = d.*k.dev;
}

}  // namespace uroce::daemon
