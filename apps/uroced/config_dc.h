// The DC target's device keys (docs/dc.md, "Target"; engine::VnicConfig's
// dc_* fields): one table, kDcKeys, that the TOML reader, --device, the
// copy into the engine's VnicConfig (main.cpp) and the status JSON (which
// uroce-ctl prints) all go through, so each key has one name, one range
// and one meaning wherever it appears.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "apps/uroced/config.h"
#include "datapath/engine/vnic_types.h"

namespace uroce::daemon {

struct DcKey {
  std::string_view name;
  std::uint64_t lo, hi;
  std::uint32_t DeviceConfig::*dev;
  std::uint32_t engine::VnicConfig::*vnic;
};
extern const std::array<DcKey, 4> kDcKeys;

const DcKey* find_dc_key(std::string_view name);
// "dc_contexts, dc_records_log2, dc_stale_ms or dc_idle_disconnect_us", for the
// unknown-key message.
std::string dc_key_names();
// Key `k` to `v` (TOML) or to the integer in `val` (--device) after its
// range check; `key` names it in the error ("device[0].dc_contexts: 0 is
// outside 1..1048576").
std::string set_dc_key(const DcKey& k, std::int64_t v, const std::string& key, DeviceConfig* d);
std::string parse_dc_key(const DcKey& k, std::string_view val, const std::string& key,
                         DeviceConfig* d);
// The device's dc_* values into the engine's configuration.
void apply_dc_keys(const DeviceConfig& d, engine::VnicConfig* vc);

}  // namespace uroce::daemon
