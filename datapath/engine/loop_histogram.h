// Where an engine's time goes between two iterations (issue 31's tail
// profile, docs/performance.md "Tails"): log2 histograms of the time from
// one iteration's start to the next's, kept by the engine from the one
// clock reading it takes per iteration (Engine::run_once), so they cost
// no clock read and stay on.
//
//   work_ns       after an iteration that did work: its cost, plus any
//                 time the thread was away before the next one
//                 (preemption, an interrupt, a page fault);
//   idle_ns       after an idle iteration that was not followed by an
//                 intended sleep or yield: a spin's cost, plus time away;
//                 in embedded mode also the time nobody drove the engine;
//   oversleep_ns  a backoff sleep's lateness: the next iteration's start
//                 minus (the iteration's start + the sleep asked for).
//
// Bucket b counts values in [2^(b-1), 2^b) ns (bucket 0: 0 ns); the last
// bucket holds everything from 2^(kLoopBuckets-2) ns (about 1.07 s) up.
// A packet that arrives while the loop is away waits for the rest of that
// interval, so the high buckets of work_ns and idle_ns are the engine's
// share of a tail.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "datapath/base/time.h"

namespace uroce::engine {

inline constexpr std::size_t kLoopBuckets = 32;
using LoopBuckets = std::array<std::uint64_t, kLoopBuckets>;

// The bucket of `ns` (see above).
constexpr std::size_t loop_bucket(TimeNs ns) {
  const auto b = static_cast<std::size_t>(std::bit_width(static_cast<std::uint64_t>(ns)));
  return b < kLoopBuckets ? b : kLoopBuckets - 1;
}

// The largest value bucket `b` holds (its upper bound, exclusive, minus
// one); the last bucket is open and reports its lower bound.
constexpr std::uint64_t loop_bucket_ceiling_ns(std::size_t b) {
  if (b == 0) return 0;
  if (b >= kLoopBuckets - 1) return std::uint64_t{1} << (kLoopBuckets - 2);
  return (std::uint64_t{1} << b) - 1;
}

struct LoopHistograms {
  LoopBuckets work_ns{};
  LoopBuckets idle_ns{};
  LoopBuckets oversleep_ns{};
};

inline void add(LoopBuckets& to, const LoopBuckets& from) {
  for (std::size_t b = 0; b < kLoopBuckets; ++b) to[b] += from[b];
}

inline void add(LoopHistograms& to, const LoopHistograms& from) {
  add(to.work_ns, from.work_ns);
  add(to.idle_ns, from.idle_ns);
  add(to.oversleep_ns, from.oversleep_ns);
}

inline std::uint64_t total(const LoopBuckets& h) {
  std::uint64_t n = 0;
  for (const std::uint64_t c : h) n += c;
  return n;
}

// The ceiling of the bucket that holds quantile `q` (0 < q <= 1) of the
// values, or 0 when there are none: "q of the intervals took at most this".
inline std::uint64_t loop_quantile_ns(const LoopBuckets& h, double q) {
  const std::uint64_t n = total(h);
  if (n == 0) return 0;
  // The rank of the quantile, 1-based, rounded up.
  auto rank = static_cast<std::uint64_t>(q * static_cast<double>(n));
  if (static_cast<double>(rank) < q * static_cast<double>(n)) ++rank;
  if (rank == 0) rank = 1;
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < kLoopBuckets; ++b) {
    seen += h[b];
    if (seen >= rank) return loop_bucket_ceiling_ns(b);
  }
  return loop_bucket_ceiling_ns(kLoopBuckets - 1);
}

// How many values were at least `ns` (counted by whole buckets: those whose
// lower bound is at least `ns`; exact when `ns` is a power of two).
inline std::uint64_t loop_at_least(const LoopBuckets& h, TimeNs ns) {
  std::uint64_t n = 0;
  for (std::size_t b = loop_bucket(ns); b < kLoopBuckets; ++b) {
    const std::uint64_t lower = b == 0 ? 0 : std::uint64_t{1} << (b - 1);
    if (lower >= ns) n += h[b];
  }
  return n;
}

}  // namespace uroce::engine
