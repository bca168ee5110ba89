// The summary.json sections of real-engine runs (report.cpp adds them when
// the scenario has engine hosts): `rc_flows` (per [[rc_flow]]: what was
// posted and completed, bytes, message completion times, and the QPs'
// transport counters: retransmissions, timeouts, NAKs) and `engine` (per
// engine host: polls and the Vnic's counters; what became of the frames
// the engines sent; the frame store).
#pragma once

#include <nlohmann/json.hpp>

namespace uroce::testbed {

class Simulator;

nlohmann::ordered_json rc_flows_json(const Simulator& sim);
nlohmann::ordered_json engine_json(const Simulator& sim);

}  // namespace uroce::testbed
