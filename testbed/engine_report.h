// The summary.json sections of real-engine runs (report.cpp adds them when
// the scenario has engine hosts): `rc_flows` (per [[rc_flow]]: what was
// posted and completed, bytes, message completion times, and the QPs'
// transport counters: retransmissions, timeouts, NAKs) and `engine` (per
// engine host: polls and the Vnic's counters; what became of the frames
// the engines sent; the frame store).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "datapath/base/time.h"

namespace uroce::engine {
struct QpStatus;
}  // namespace uroce::engine

namespace uroce::testbed {

class Simulator;

// A QP of a flow in the summary: its packets, the RC counters of a
// requester, and with `responder` those of a responder too (a DCI's lanes
// only send requests).
void put_qp_counters(nlohmann::ordered_json& j, const engine::QpStatus& st, bool responder);

nlohmann::ordered_json rc_flows_json(const Simulator& sim);
// The nearest-rank percentile (pct of 100) of sorted values (0 if none).
TimeNs percentile(const std::vector<TimeNs>& sorted, std::uint32_t pct);
// {min, avg, p50, p99, max} of the values, or null when there are none.
nlohmann::ordered_json time_stats_json(const std::vector<TimeNs>& v);
nlohmann::ordered_json engine_json(const Simulator& sim);

// rc_mct.csv: `flow,message,mct_ns`, one row per completed message of each
// enabled [[rc_flow]] with mct_samples, in completion order. False when the
// file could not be written.
bool write_mct_csv(const Simulator& sim, const std::string& path);

}  // namespace uroce::testbed
