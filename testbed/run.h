// One testbed run from a scenario to its output files:
//   <out>/summary.json     summary_json()
//   <out>/timeseries.csv   Recorder (unless output.csv = false)
//   <out>/pcap/<a>-<b>.pcap  PcapTap, for the links output.pcap /
//                          output.pcap_links select (or all with --pcap)
// With an empty out_dir nothing is written (sweeps); the result still
// carries the deadlocks and the summary text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "datapath/base/time.h"
#include "testbed/scenario.h"
#include "testbed/simulator.h"
#include "testbed/switch/deadlock_detector.h"

namespace uroce::testbed {

struct RunOptions {
  std::string out_dir;
  std::optional<std::uint64_t> seed;  // replaces the scenario's seed
  bool pcap_all = false;              // tap every link
  bool summary_text = true;           // build RunResult::summary
};

enum class RunStatus : std::uint8_t {
  kOk = 0,
  kBadScenario,  // resolve() or a configuration check failed
  kOutputError,  // a file could not be written
};

struct RunResult {
  RunStatus status = RunStatus::kOk;
  std::string error;
  StopReason stop = StopReason::kDuration;
  TimeNs end_ns = 0;
  TimeNs first_flow_start = 0;
  std::uint64_t events = 0;
  std::vector<Deadlock> deadlocks;
  std::string summary;
  std::string workload;            // the [workload]'s counts and slowdown table, as text
  std::string dc_flows;            // the [[dc_flow]]s' figures, as text (dc_report.h)
  std::vector<std::string> files;  // written, in order
};

RunResult run_scenario(const Scenario& sc, const RunOptions& opts);

}  // namespace uroce::testbed
