// The paper's experiment as a scenario generator: a routing loop through n
// switches (two switches joined by one link for n = 2, a ring for n >= 3),
// a sender h1 on s1 injecting constant-rate traffic toward hd on s2, and
// every switch's route for hd pointing to the next switch of the loop (s2
// included, which is the misconfiguration). Packets circle until their TTL
// runs out; with TTL T each one crosses T - 1 loop links, so the loop
// drains at most n x B / (T - 1) of injected traffic (about n x B / T, the
// bound the paper states). With fix_at set, s2's route is corrected at that
// instant: a transient loop.
#pragma once

#include <cstdint>

#include "datapath/base/time.h"
#include "testbed/scenario.h"

namespace uroce::testbed {

struct LoopParams {
  unsigned switches = 2;
  std::uint64_t link_bps = 40'000'000'000ull;
  TimeNs delay_ns = 1000;
  std::uint64_t buffer_bytes = 12'000'000;
  std::uint64_t headroom_bytes = 64u << 10;
  std::uint64_t xon_offset_bytes = 2048;
  std::uint32_t alpha_num = 1;
  std::uint32_t alpha_den = 16;
  std::uint8_t ttl = 64;
  std::uint64_t rate_bps = 2'000'000'000ull;
  std::uint32_t size_bytes = 1024;
  TimeNs duration_ns = 50 * kNsPerMs;
  TimeNs start_jitter_ns = kNsPerUs;
  TimeNs fix_at_ns = kNever;  // s2's route to hd corrected at this instant
  bool watchdog = false;
  TimeNs watchdog_detection_ns = 200 * kNsPerMs;
  TimeNs watchdog_restoration_ns = 200 * kNsPerMs;
  bool stop_on_deadlock = true;
  TimeNs stall_ns = 500 * kNsPerUs;
  TimeNs check_ns = 100 * kNsPerUs;
  std::uint64_t seed = 1;
};

Scenario make_loop_scenario(const LoopParams& p);

// The paper's bound on the injection rate a loop can drain: n x B / TTL.
double loop_bound_bps(unsigned switches, std::uint64_t link_bps, unsigned ttl);

// The exact bound in this model: a packet entering the loop at s1 with TTL
// T makes T - 1 loop hops starting on s1 -> s2, so that link is crossed
// ceil((T - 1) / n) times per packet and saturates first:
// B / ceil((T - 1) / n). Equal to n x B / T when n divides T (n = 2, 4 with
// the TTLs swept), else up to n / (n - 1) different either way.
double loop_exact_bound_bps(unsigned switches, std::uint64_t link_bps, unsigned ttl);

}  // namespace uroce::testbed
