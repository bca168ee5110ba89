// The [workload] table's relations to the rest of a scenario (the part of
// resolve() that concerns it): its hosts, each ordered pair's path through
// the routes, its path MTU against the hosts, its size distribution file.
#pragma once

#include <string>

#include "testbed/incast.h"
#include "testbed/scenario.h"

namespace uroce::testbed {

// The [workload]'s incast bursts over `hosts` workload hosts (senders 0:
// none), without a seed (the run's gives it).
IncastSpec incast_spec(const WorkloadScenario& w, std::uint32_t hosts);

// Fills out.workload_hosts, workload_paths and workload_dist when
// sc.workload.enabled; "" or the first problem ("workload.load: ...").
// Precondition: the rest of resolve() filled `out` (ports and routes).
std::string resolve_workload(const Scenario& sc, Topology& out);

}  // namespace uroce::testbed
