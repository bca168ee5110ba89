// The paper sweeps over make_loop_scenario(), run in parallel with TBB
// (one simulation per task; each point has its own seed derived from the
// base seed and the point's index, so results do not depend on the thread
// count or on scheduling, and rows come out in input order).
//
//   min-rate          for each (loop size n, TTL): the smallest injection
//                     rate that deadlocks within the horizon, by bisection
//                     between a rate that does not and one that does,
//                     against the bound n x B / TTL.
//   time-to-deadlock  for each (rate, alpha, TTL) of a grid: whether a
//                     deadlock forms within the horizon and when (from the
//                     first packet).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "datapath/base/time.h"
#include "testbed/loop_scenario.h"

namespace uroce::testbed {

struct PointOutcome {
  bool deadlocked = false;
  TimeNs time_to_deadlock_ns = 0;  // formed - first flow start
  std::uint64_t events = 0;
  std::string error;  // a scenario problem (never expected)
};

// One run of the loop scenario `p` (stops at the first deadlock).
PointOutcome run_loop_point(const LoopParams& p);

struct MinRateSpec {
  std::vector<unsigned> loops{2, 3, 4};
  std::vector<unsigned> ttls{16, 32, 64, 128};
  LoopParams base;  // everything but switches, ttl, rate and seed
  // Bisection stops when hi - lo <= tolerance x bound.
  double tolerance = 0.005;
  // Initial bracket as multiples of the bound; widened if it does not hold.
  double lo_factor = 0.9;
  double hi_factor = 2.0;
  unsigned threads = 2;
};

struct MinRateRow {
  unsigned loop = 0;
  unsigned ttl = 0;
  double bound_gbps = 0;        // n x B / TTL
  double exact_bound_gbps = 0;  // B / ceil((TTL - 1) / n)
  double min_rate_gbps = 0;     // lowest rate seen to deadlock
  double max_clean_gbps = 0;    // highest rate seen not to, within the horizon
  double ratio = 0;             // min_rate / bound
  double ratio_exact = 0;       // min_rate / exact bound
  double ttd_ms = 0;            // time to deadlock at min_rate
  unsigned runs = 0;
  bool bracketed = false;  // false: no deadlock even at the line rate
};

std::vector<MinRateRow> sweep_min_rate(const MinRateSpec& spec);

struct TtdSpec {
  std::vector<double> rates_gbps{2, 5, 10, 20, 40};
  std::vector<std::pair<std::uint32_t, std::uint32_t>> alphas{{1, 16}};
  std::vector<unsigned> ttls{64};
  LoopParams base;
  unsigned threads = 2;
};

struct TtdRow {
  double rate_gbps = 0;
  std::uint32_t alpha_num = 1;
  std::uint32_t alpha_den = 1;
  unsigned ttl = 0;
  unsigned loop = 0;
  bool deadlocked = false;
  double ttd_ms = 0;
  std::uint64_t seed = 0;
};

std::vector<TtdRow> sweep_time_to_deadlock(const TtdSpec& spec);

// Tables: Markdown for docs/, CSV for scripts/plot_testbed.py.
std::string min_rate_markdown(const std::vector<MinRateRow>& rows, const MinRateSpec& spec);
std::string min_rate_csv(const std::vector<MinRateRow>& rows);
std::string ttd_markdown(const std::vector<TtdRow>& rows, const TtdSpec& spec);
std::string ttd_csv(const std::vector<TtdRow>& rows);

}  // namespace uroce::testbed
