// The summary.json sections of real-engine runs (report.cpp adds them when
// the scenario has engine hosts): `rc_flows` (per [[rc_flow]]: what was
// posted and completed, bytes, message completion times, and the QPs'
// transport counters: retransmissions, timeouts, NAKs) and `engine` (per
// engine host: polls and the Vnic's counters; what became of the frames
// the engines sent; the frame store).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace uroce::testbed {

class Simulator;

nlohmann::ordered_json rc_flows_json(const Simulator& sim);
nlohmann::ordered_json engine_json(const Simulator& sim);

// rc_mct.csv: `flow,message,mct_ns`, one row per completed message of each
// enabled [[rc_flow]] with mct_samples, in completion order. False when the
// file could not be written.
bool write_mct_csv(const Simulator& sim, const std::string& path);

}  // namespace uroce::testbed
