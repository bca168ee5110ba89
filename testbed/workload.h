// Message workloads for the testbed: a message-size distribution given as the
// points of a published CDF, and Poisson arrivals of such messages between
// random host pairs at an offered load (issue 15; docs/homa.md, Workloads).
//
// A distribution is a list of (length, fraction) points: `fraction` is the
// share of messages whose length is at most `length`. The points are read as
// a step function, the way Homa's own generator (HomaModule util/dist.cc)
// reads them: every message has one of the listed lengths, and a length's
// probability is the jump of the CDF at its point (the first point's is its
// fraction). Nothing is interpolated between points; a message never has a
// length the list does not name.
//
// testbed/workloads/w1.csv .. w5.csv hold Homa's five workloads in this form.
// Everything here is deterministic for a seed: the same seed gives the same
// sizes and arrivals on every machine (datapath/base/rng.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "datapath/base/rng.h"
#include "datapath/base/time.h"

namespace uroce::testbed {

struct SizePoint {
  std::uint64_t length = 0;  // bytes, > 0
  double fraction = 0;       // share of messages of this length or shorter
};

class SizeDistribution {
 public:
  // An empty distribution (no points); only assignment and points() are
  // meaningful until parse/load/from_points succeeds.
  SizeDistribution() = default;

  // The CSV form: one point per line, "length,fraction" (spaces around the
  // fields are allowed); lines that are empty or start with '#' are skipped.
  // Invariants checked: at least one point, lengths positive integers in
  // strictly increasing order, fractions in [0, 1] and non-decreasing, the
  // last exactly 1. Returns "" on success, else the first problem, prefixed
  // "source:line: " (or "source: " for the whole file); `out` is then left
  // unchanged.
  static std::string parse(std::string_view text, std::string_view source, SizeDistribution& out);

  // Reads the file at `path` and parses it with `path` as the source.
  static std::string load(const std::string& path, SizeDistribution& out);

  // The same checks on points given directly (messages without a line).
  static std::string from_points(std::vector<SizePoint> points, SizeDistribution& out);

  // One length by inverse CDF: a uniform u in [0, 1) picks the first point
  // whose fraction exceeds u, so point i is drawn with probability
  // fraction[i] - fraction[i-1], and a point with no jump is never drawn.
  // One draw of `rng`; no allocation.
  std::uint64_t sample(SeededRng& rng) const { return sample_at(rng.next_unit()); }
  // The same for a given u (precondition: 0 <= u < 1).
  std::uint64_t sample_at(double u) const;

  // The mean length of the step distribution: sum of length x jump.
  double mean() const { return mean_; }
  std::uint64_t min_length() const { return points_.front().length; }
  std::uint64_t max_length() const { return points_.back().length; }
  // The share of messages of at most `length` bytes (0 below the first point).
  double cdf(std::uint64_t length) const;
  const std::vector<SizePoint>& points() const { return points_; }

  // The distribution with lengths capped at `max_length` (> 0), as
  // HomaModule's cp_node caps its workloads at Homa's 1,000,000-byte message
  // limit: the points shorter than the cap stay, and everything from the
  // first point at or above it becomes one point (max_length, 1). A cap at
  // or above max_length() returns the distribution unchanged.
  SizeDistribution truncated(std::uint64_t max_length) const;

 private:
  std::vector<SizePoint> points_;
  double mean_ = 0;
};

// The workload of one run. Offered load follows Homa's definition (HomaModule
// cp_node's target utilisation "including only message data"): each host
// sends message bytes at an average of load x link_bps / 8 bytes per second,
// and receives the same on average since destinations are uniform. Headers,
// framing, inter-frame gaps, ACKs and grants are not counted, so the link
// itself carries more than `load` of its rate.
struct WorkloadSpec {
  std::uint32_t hosts = 0;     // >= 2
  std::uint64_t link_bps = 0;  // each host's link, > 0
  double load = 0;             // > 0 and finite; above 1 overloads the hosts
  std::uint64_t seed = 1;
  TimeNs start_ns = 0;  // time origin of the first gap
};

struct Arrival {
  TimeNs time_ns = 0;
  std::uint32_t src = 0;
  std::uint32_t dst = 0;  // != src
  std::uint64_t length = 0;
};

// Messages arriving as one Poisson process over all hosts, at N times the
// per-host rate lambda = load x link_bps / 8 / mean length; each arrival's
// source is uniform over the hosts and its destination uniform over the
// others. That is the same as an independent Poisson process of rate lambda
// per host with uniform destinations (a sum of Poisson processes is one, and
// each arrival belongs to a host with probability 1/N), and it yields the
// arrivals in time order without a merge.
//
// Gaps, pairs and sizes draw from three streams derived from the seed, so
// the pair sequence does not depend on the distribution and the sizes do
// not depend on the number of hosts or the load. Time is kept exactly in
// double ns and rounded down per arrival, so rounding never accumulates;
// arrivals can share a nanosecond and come in sequence order.
class PoissonArrivals {
 public:
  // "" if the spec is usable, else the first problem.
  static std::string check(const WorkloadSpec& spec);

  // Precondition: check(spec) is "" and `dist` has points. Copies `dist`.
  PoissonArrivals(const WorkloadSpec& spec, const SizeDistribution& dist);

  // The next message; no allocation.
  Arrival next();

  // Messages per second from one host (lambda) and from all of them.
  double host_rate_per_sec() const { return host_rate_; }
  double total_rate_per_sec() const { return host_rate_ * spec_.hosts; }
  // Message bytes per second each host offers: load x link_bps / 8.
  double host_offered_bytes_per_sec() const { return host_rate_ * dist_.mean(); }
  const SizeDistribution& distribution() const { return dist_; }

 private:
  WorkloadSpec spec_;
  SizeDistribution dist_;
  double host_rate_;
  double mean_gap_ns_;  // of the merged process
  double t_ns_ = 0;     // exact time of the last arrival after start_ns
  SeededRng gaps_;
  SeededRng pairs_;
  SeededRng sizes_;
};

}  // namespace uroce::testbed
