// The [workload]'s outputs (report.cpp and run.cpp add them when the
// scenario has one): the `workload` section of summary.json (settings,
// counts and checks, the offered load the arrivals really made, the
// slowdown table of slowdown.h), the same table as text for the command
// line, and messages.csv with every measured message.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "testbed/slowdown.h"

namespace uroce::testbed {

class Simulator;

// The slowdowns of the measured messages (precondition: sim.workload()).
SlowdownSummary workload_slowdown(const Simulator& sim);
nlohmann::ordered_json workload_json(const Simulator& sim);
// A few lines of counts and the slowdown table.
std::string workload_text(const Simulator& sim);
// messages.csv: `message,src,dst,length,arrival_ns,post_ns,done_ns,best_ns,
// slowdown,ok,burst`, one row per measured message in arrival order (done_ns
// and slowdown empty when it was not received; burst, the message's incast
// burst, empty for a Poisson message). False if it could not be written.
bool write_messages_csv(const Simulator& sim, const std::string& path);

}  // namespace uroce::testbed
