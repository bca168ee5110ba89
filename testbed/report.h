// The summary of a finished run as JSON (nlohmann::ordered_json: keys in a
// fixed, readable order; integers for counts and ns; Gb/s and utilisation
// rounded to fixed decimals), so the same run writes the same bytes.
//
// Top level: scenario, seed, end and stop reason; then flows, hosts,
// switches (per port: PFC sent/received, pause time, egress counters,
// watchdog drops), links, deadlocks (each with when it formed, was
// detected and resolved, time to deadlock from the first flow start, and
// the cycle of queues), the watchdog's storms and what it dropped, route
// changes and raw PFC injections with the receiver's verdict.
// docs/testbed.md lists every field.
#pragma once

#include <string>

namespace uroce::testbed {

class Simulator;

// Pretty-printed JSON text, newline-terminated.
std::string summary_json(const Simulator& sim);

}  // namespace uroce::testbed
