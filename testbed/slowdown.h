// Slowdown statistics of a message workload (issue 15; docs/homa-testbed.md):
// slowdown = a message's completion time / the best time for its length on
// an idle network (idle_time.h), summarized per length bucket and overall.
//
// Buckets: the measured messages sorted by length (ties in arrival order)
// and cut into `buckets` groups of equal count (sizes differ by at most
// one), so every bucket has the same number of samples behind its p99 and
// the buckets are the workload's deciles (for 10) by message count, the
// x axis of Homa's slowdown plots. A bucket reports the lengths it spans
// and the share of messages before and through it. A length with many
// messages may straddle two buckets; the buckets are the same for every
// scheme run with the same workload, load and seed (the arrivals are).
//
// Percentiles are nearest-rank. A message that was not received by the end
// of the run counts as an infinite slowdown: a percentile that lands on
// one is reported as "not reached" (std::nullopt), never as a number that
// leaves it out. Means are over the received messages.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace uroce::testbed {

struct SlowdownSample {
  std::uint64_t length = 0;
  double slowdown = 0;  // meaningful when done
  bool done = false;
};

struct SlowdownStats {
  std::uint64_t min_length = 0;
  std::uint64_t max_length = 0;
  std::uint64_t count = 0;
  std::uint64_t incomplete = 0;
  double cdf_lo = 0;  // share of measured messages before this bucket
  double cdf_hi = 0;  // ... through it
  std::optional<double> p50;
  std::optional<double> p99;
  double mean = 0;  // over the received ones (0 if none)
  double min = 0;   // smallest slowdown received (0 if none)
};

struct SlowdownSummary {
  SlowdownStats overall;
  std::vector<SlowdownStats> buckets;
};

// Precondition: buckets >= 1. Fewer samples than buckets gives one bucket
// per sample.
SlowdownSummary summarize_slowdown(std::vector<SlowdownSample> samples, std::uint32_t buckets);

// The nearest-rank `pct` percentile (0 < pct <= 100) of sorted values,
// nullopt for an empty list or when it lands on +infinity.
std::optional<double> percentile_of_sorted(const std::vector<double>& sorted, double pct);
// A percentile in JSON: the number, or null when not reached.
nlohmann::ordered_json optional_json(const std::optional<double>& v);

// A text table: one row per bucket (lengths, share of messages, count,
// p50, p99, mean) and the overall row.
std::string slowdown_table(const SlowdownSummary& s);
nlohmann::ordered_json slowdown_json(const SlowdownSummary& s);

}  // namespace uroce::testbed
