#include "testbed/slowdown.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace uroce::testbed {

namespace {

using Json = nlohmann::ordered_json;

constexpr double kInf = std::numeric_limits<double>::infinity();

SlowdownStats stats_of(std::vector<SlowdownSample>::const_iterator first,
                       std::vector<SlowdownSample>::const_iterator last, std::uint64_t before,
                       std::uint64_t total) {
  SlowdownStats s;
  std::vector<double> v;
  v.reserve(static_cast<std::size_t>(last - first));
  double sum = 0;
  std::uint64_t done = 0;
  s.min_length = first == last ? 0 : first->length;
  for (auto it = first; it != last; ++it) {
    s.min_length = std::min(s.min_length, it->length);
    s.max_length = std::max(s.max_length, it->length);
    if (it->done) {
      v.push_back(it->slowdown);
      sum += it->slowdown;
      ++done;
    } else {
      v.push_back(kInf);
    }
  }
  s.count = v.size();
  s.incomplete = s.count - done;
  std::sort(v.begin(), v.end());
  s.p50 = percentile_of_sorted(v, 50);
  s.p99 = percentile_of_sorted(v, 99);
  s.mean = done == 0 ? 0 : sum / static_cast<double>(done);
  s.min = done == 0 ? 0 : v.front();
  s.cdf_lo = total == 0 ? 0 : static_cast<double>(before) / static_cast<double>(total);
  s.cdf_hi = total == 0 ? 0 : static_cast<double>(before + s.count) / static_cast<double>(total);
  return s;
}

std::string num(const std::optional<double>& v) {
  if (!v) return "n/r";
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", *v);
  return b;
}

Json stats_json(const SlowdownStats& s) {
  Json j;
  j["min_length"] = s.min_length;
  j["max_length"] = s.max_length;
  j["cdf_lo"] = s.cdf_lo;
  j["cdf_hi"] = s.cdf_hi;
  j["count"] = s.count;
  j["incomplete"] = s.incomplete;
  j["p50"] = optional_json(s.p50);
  j["p99"] = optional_json(s.p99);
  j["mean"] = s.mean;
  j["min"] = s.min;
  return j;
}

}  // namespace

Json optional_json(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

std::optional<double> percentile_of_sorted(const std::vector<double>& sorted, double pct) {
  if (sorted.empty()) return std::nullopt;
  auto rank = static_cast<std::size_t>(std::ceil(pct / 100.0 * static_cast<double>(sorted.size())));
  rank = std::clamp<std::size_t>(rank, 1, sorted.size());
  const double v = sorted[rank - 1];
  if (std::isinf(v)) return std::nullopt;
  return v;
}

SlowdownSummary summarize_slowdown(std::vector<SlowdownSample> samples, std::uint32_t buckets) {
  SlowdownSummary out;
  std::stable_sort(samples.begin(), samples.end(),
                   [](const SlowdownSample& a, const SlowdownSample& b) {
                     return a.length < b.length;
                   });
  const std::uint64_t n = samples.size();
  out.overall = stats_of(samples.begin(), samples.end(), 0, n);
  const std::uint64_t b = std::min<std::uint64_t>(buckets, n);
  for (std::uint64_t k = 0; k < b; ++k) {
    const std::uint64_t lo = k * n / b;
    const std::uint64_t hi = (k + 1) * n / b;
    out.buckets.push_back(stats_of(samples.begin() + static_cast<std::ptrdiff_t>(lo),
                                   samples.begin() + static_cast<std::ptrdiff_t>(hi), lo, n));
  }
  return out;
}

std::string slowdown_table(const SlowdownSummary& s) {
  std::string t;
  char line[160];
  std::snprintf(line, sizeof line, "%-21s %-13s %8s %6s %8s %8s %8s\n", "length (bytes)",
                "messages", "count", "n/r", "p50", "p99", "mean");
  t += line;
  auto row = [&](const SlowdownStats& b, const char* what) {
    char len[32];
    char share[32];
    std::snprintf(len, sizeof len, "%llu..%llu", static_cast<unsigned long long>(b.min_length),
                  static_cast<unsigned long long>(b.max_length));
    if (what != nullptr) {
      std::snprintf(share, sizeof share, "%s", what);
    } else {
      std::snprintf(share, sizeof share, "%.0f-%.0f %%", b.cdf_lo * 100, b.cdf_hi * 100);
    }
    std::snprintf(line, sizeof line, "%-21s %-13s %8llu %6llu %8s %8s %8.2f\n", len, share,
                  static_cast<unsigned long long>(b.count),
                  static_cast<unsigned long long>(b.incomplete), num(b.p50).c_str(),
                  num(b.p99).c_str(), b.mean);
    t += line;
  };
  for (const SlowdownStats& b : s.buckets) row(b, nullptr);
  row(s.overall, "all");
  return t;
}

Json slowdown_json(const SlowdownSummary& s) {
  Json j;
  j["overall"] = stats_json(s.overall);
  Json arr = Json::array();
  for (const SlowdownStats& b : s.buckets) arr.push_back(stats_json(b));
  j["buckets"] = arr;
  return j;
}

}  // namespace uroce::testbed
