// The [[dc_flow]]s' report: the `dc_flows` section of summary.json
// (report.cpp adds it when the scenario has DC flows) and the same figures
// as a few lines of text per flow for the command line (run.cpp). Per flow:
// messages posted, completed and delivered with their checks, message rate
// and goodput, completion and delivery time percentiles, the DCI's
// connections (opened, reconnects, disconnects, switch waits, BUSY
// answers) and transport counters, and per target its DCT's counters and
// its host's DC context pool (contexts open at the end and at the peak,
// evictions, requests finding the pool full).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace uroce::testbed {

class Simulator;

nlohmann::ordered_json dc_flows_json(const Simulator& sim);
std::string dc_flows_text(const Simulator& sim);

}  // namespace uroce::testbed
