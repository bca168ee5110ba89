// Small scenarios shared by the testbed tests.
#pragma once

#include <string>

#include "testbed/loop_scenario.h"
#include "testbed/scenario.h"

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

}  // namespace uroce::testbed::testing
