// The DC target's key table (dc_keys()) and the copy of its values into
// the engine's VnicConfig.
#include "apps/uroced/config_dc.h"

#include "apps/uroced/config_keys.h"

namespace uroce::daemon {

namespace {

using D = DeviceConfig;

// A context is an RC responder (a few KiB with its READ/atomic resources):
// a million of them is already gigabytes, the most a device may ask for.
constexpr std::int64_t kMaxContexts = std::int64_t{1} << 20;
// 2^24 records of 24 bytes: 384 MiB, far more than any context count
// needs (records only remember retired connections per hash slot).
constexpr std::int64_t kMaxRecordsLog2 = 24;
// One hour: dc_stale_ms must exceed the initiators' retry span (docs/dc.md),
// and no sane timeout x retry count comes near it.
constexpr std::int64_t kMaxStaleMs = 3'600'000;
// One hour too: past that a stream might as well never disconnect.
constexpr std::int64_t kMaxIdleDisconnectUs = 3'600'000'000;

const KeyDesc<D> kDcKeyTable[] = {
    integer_key<D, &D::dc_contexts>("dc_contexts", 1, kMaxContexts,
                                    "the DC target's pool of responder contexts"),
    integer_key<D, &D::dc_records_log2>(
        "dc_records_log2", 0, kMaxRecordsLog2,
        "log2 of the records that remember retired connections (per hash slot)"),
    integer_key<D, &D::dc_stale_ms>(
        "dc_stale_ms", 1, kMaxStaleMs,
        "when a silent context may be reclaimed; more than the initiators' retry span"),
    integer_key<D, &D::dc_idle_disconnect_us>("dc_idle_disconnect_us", 1, kMaxIdleDisconnectUs,
                                              "a DCI stream idle this long disconnects"),
};

}  // namespace

std::span<const KeyDesc<DeviceConfig>> dc_keys() { return kDcKeyTable; }

const std::array<DcKey, 4> kDcKeys = {{
    {kDcKeyTable[0].name, &engine::VnicConfig::dc_contexts},
    {kDcKeyTable[1].name, &engine::VnicConfig::dc_records_log2},
    {kDcKeyTable[2].name, &engine::VnicConfig::dc_stale_ms},
    {kDcKeyTable[3].name, &engine::VnicConfig::dc_idle_disconnect_us},
}};
static_assert(kDcKeys.size() == std::size(kDcKeyTable));

void apply_dc_keys(const DeviceConfig& d, engine::VnicConfig* vc) {
  for (std::size_t j = 0; j < kDcKeys.size(); ++j) {
    vc->*kDcKeys[j].vnic = static_cast<std::uint32_t>(kDcKeyTable[j].get(d).i);
  }
}

}  // namespace uroce::daemon
