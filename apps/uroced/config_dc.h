// The DC target's device keys (docs/dc.md, "Target"; engine::VnicConfig's
// dc_* fields): their key table is dc_keys() (config_keys.h); this file
// copies their values into the engine's VnicConfig (engine_host.cpp) and
// names them in the status JSON (which uroce-ctl prints), each through the
// table, so a key has one name, one range and one meaning wherever it
// appears.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "apps/uroced/config.h"
#include "datapath/engine/vnic_types.h"

namespace uroce::daemon {

// A DC key and the engine field its value goes to.
struct DcKey {
  std::string_view name;
  std::uint32_t engine::VnicConfig::*vnic;
};
// dc_keys() in order (their names taken from it), with their engine fields.
extern const std::array<DcKey, 4> kDcKeys;

// The device's dc_* values into the engine's configuration.
void apply_dc_keys(const DeviceConfig& d, engine::VnicConfig* vc);

}  // namespace uroce::daemon
