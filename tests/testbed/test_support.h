// Small scenarios shared by the testbed tests.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testbed/loop_scenario.h"
#include "testbed/run.h"
#include "testbed/scenario.h"
#include "testbed/scenario_toml.h"

namespace uroce::testbed::testing {

// h1 - s1 - h2 at `gbps` with 1 us links; one flow h1 -> h2 at
// `flow_gbps` (1000-byte frames, TTL 64, priority 3) from 0 to 1 ms; the
// run lasts 2 ms.
inline Scenario line(double gbps = 10, double flow_gbps = 5) {
  Scenario sc;
  sc.name = "line";
  sc.duration_ns = 2 * kNsPerMs;
  HostSpec h1;
  h1.name = "h1";
  HostSpec h2;
  h2.name = "h2";
  sc.hosts = {h1, h2};
  SwitchSpec s1;
  s1.name = "s1";
  s1.buffer.buffer_bytes = 1'000'000;
  s1.buffer.headroom_bytes = 50'000;
  sc.switches = {s1};
  LinkSpec a;
  a.a = "h1";
  a.b = "s1";
  a.rate_bps = static_cast<std::uint64_t>(gbps * 1e9);
  LinkSpec b = a;
  b.a = "s1";
  b.b = "h2";
  sc.links = {a, b};
  FlowSpec f;
  f.name = "f";
  f.src = "h1";
  f.dst = "h2";
  f.rate_bps = static_cast<std::uint64_t>(flow_gbps * 1e9);
  f.size_bytes = 1000;
  f.stop_ns = kNsPerMs;
  sc.flows = {f};
  return sc;
}

// The paper's two-switch loop, small and quick: TTL 16 (bound 5 Gb/s),
// 2 MB buffer, alpha 1/16.
inline LoopParams small_loop(double gbps, TimeNs duration) {
  LoopParams p;
  p.ttl = 16;
  p.rate_bps = static_cast<std::uint64_t>(gbps * 1e9);
  p.buffer_bytes = 2'000'000;
  p.duration_ns = duration;
  p.stop_on_deadlock = false;
  return p;
}

// The shipped scenario testbed/scenarios/`file` with `sets` applied (as
// --set), run twice with its seed: both runs must succeed with the same
// summary, workload and DC figures, byte for byte. The first run's result.
inline RunResult run_shipped_twice(const std::string& file, const std::vector<std::string>& sets) {
  Scenario sc;
  const std::string path = std::string(UROCE_SOURCE_ROOT) + "/testbed/scenarios/" + file;
  EXPECT_EQ(scenario_from_file(path, sets, sc), "");
  const RunOptions opts;
  const RunResult a = run_scenario(sc, opts);
  const RunResult b = run_scenario(sc, opts);
  EXPECT_EQ(a.status, RunStatus::kOk) << a.error;
  EXPECT_TRUE(a.summary == b.summary) << "the same seed gave other summaries";
  EXPECT_EQ(a.workload, b.workload);
  EXPECT_EQ(a.dc_flows, b.dc_flows);
  return a;
}

}  // namespace uroce::testbed::testing
