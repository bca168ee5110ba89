// What uroce-cpu-gaps (cpu_gaps.cpp) computes from the gaps it recorded:
// their union over the CPUs, and the share of a back-to-back loop's
// iterations that they hit.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace uroce::bench {

struct Gap {
  std::int64_t start_ns;  // the last read before the gap, since the run began
  std::int64_t len_ns;
};

// Every gap of every CPU as an interval, merged where they overlap, in
// order.
inline std::vector<std::pair<std::int64_t, std::int64_t>> lost_union(
    const std::vector<std::vector<Gap>>& cpus) {
  std::vector<std::pair<std::int64_t, std::int64_t>> iv, u;
  for (const std::vector<Gap>& gaps : cpus) {
    for (const Gap& g : gaps) iv.emplace_back(g.start_ns, g.start_ns + g.len_ns);
  }
  std::sort(iv.begin(), iv.end());
  for (const auto& [a, b] : iv) {
    if (!u.empty() && a <= u.back().second) {
      u.back().second = std::max(u.back().second, b);
    } else {
      u.emplace_back(a, b);
    }
  }
  return u;
}

// The share of a loop's iterations of `w` ns (run back to back whenever no
// CPU is in a gap, and needing every CPU, as a round trip between two
// threads does) into which a gap of `min_len` or more falls. Time in gaps
// is taken out first: iteration k covers run time [k w, (k + 1) w) with
// the gaps removed, and a gap hits the iteration in which it starts.
inline double iteration_share(const std::vector<std::vector<Gap>>& cpus,
                              const std::vector<std::pair<std::int64_t, std::int64_t>>& lost,
                              std::int64_t w, std::int64_t min_len, std::int64_t run_ns) {
  std::vector<std::int64_t> starts;
  for (const std::vector<Gap>& gaps : cpus) {
    for (const Gap& g : gaps) {
      if (g.len_ns >= min_len) starts.push_back(g.start_ns);
    }
  }
  std::sort(starts.begin(), starts.end());
  std::int64_t lost_total = 0;
  for (const auto& [a, b] : lost) lost_total += b - a;
  std::size_t u = 0;
  std::int64_t lost_before = 0;  // of the intervals before lost[u]
  std::int64_t last_hit = -1, hits = 0;
  for (const std::int64_t s : starts) {
    while (u < lost.size() && lost[u].second <= s) {
      lost_before += lost[u].second - lost[u].first;
      ++u;
    }
    // A start inside lost[u] (another CPU's gap began first) counts the
    // part of lost[u] before it.
    const std::int64_t inside = u < lost.size() && lost[u].first < s ? s - lost[u].first : 0;
    const std::int64_t k = (s - lost_before - inside) / w;
    if (k != last_hit) {
      ++hits;
      last_hit = k;
    }
  }
  const std::int64_t iterations = (run_ns - lost_total) / w;
  return iterations <= 0 ? 0.0 : static_cast<double>(hits) / static_cast<double>(iterations);
}

}  // namespace uroce::bench
