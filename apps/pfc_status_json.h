// The PFC and TTL state of one Vnic (PfcStatus, pfc_endpoint.h) as JSON: the
// one serialisation uroced's status (uroce-ctl pfc) and the testbed's
// summary.json both use, so a counter has one name everywhere
// (docs/pfc.md lists them). Off the data path: allocates.
#pragma once

#include <nlohmann/json.hpp>

#include "datapath/engine/pfc_endpoint.h"

namespace uroce::engine {

nlohmann::json pfc_status_json(const PfcStatus& s);

}  // namespace uroce::engine
