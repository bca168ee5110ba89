#include "testbed/workload.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>
#include <utility>

#include "testbed/simulator.h"

namespace uroce::testbed {
namespace {

// Purposes of the three streams derived from the run's seed (derive_seed's
// `purpose`): 15xx for issue 15's workloads, clear of the simulator's and
// the sweeps' so a workload seeded like its run shares no stream with them.
constexpr std::uint64_t kPurposeGaps = 1501;
constexpr std::uint64_t kPurposePairs = 1502;
constexpr std::uint64_t kPurposeSizes = 1503;

// Shortest text that reads back as the same double, for messages.
std::string show(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

bool parse_length(std::string_view s, std::uint64_t& out) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size() && out > 0;
}

bool parse_fraction(std::string_view s, double& out) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size() && out >= 0.0 && out <= 1.0;
}

// Checks the points' invariants (see parse()); `where(i)` names point i in
// a message. Returns "" or the first problem.
template <typename Where>
std::string check_points(const std::vector<SizePoint>& p, Where where) {
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i].length == 0) return where(i) + "length must be a positive integer";
    if (!(p[i].fraction >= 0.0 && p[i].fraction <= 1.0)) {
      return where(i) + "fraction must be a number in [0, 1]";
    }
    if (i == 0) continue;
    if (p[i].length <= p[i - 1].length) {
      return where(i) + "length " + std::to_string(p[i].length) +
             " is not greater than the previous length " + std::to_string(p[i - 1].length);
    }
    if (p[i].fraction < p[i - 1].fraction) {
      return where(i) + "fraction " + show(p[i].fraction) + " is less than the previous fraction " +
             show(p[i - 1].fraction);
    }
  }
  return {};
}

double step_mean(const std::vector<SizePoint>& p) {
  double mean = 0, prev = 0;
  for (const SizePoint& q : p) {
    mean += static_cast<double>(q.length) * (q.fraction - prev);
    prev = q.fraction;
  }
  return mean;
}

// The whole-list rules, checked after the per-point ones. Exactly 1, not
// "close to 1": the sampler relies on the last fraction exceeding every
// u < 1, and a list that stops short is more likely cut than rounded.
std::string check_ends(const std::vector<SizePoint>& p) {
  if (p.empty()) return "no points";
  if (p.back().fraction != 1.0) {
    return "the last fraction is " + show(p.back().fraction) + ", not 1";
  }
  return {};
}

}  // namespace

std::string SizeDistribution::parse(std::string_view text, std::string_view source,
                                    SizeDistribution& out) {
  const std::string src(source);
  std::vector<SizePoint> points;
  std::vector<std::size_t> lines;  // the line of each point, for messages
  std::size_t line_no = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    line = trim(line);
    if (line.empty() || line.front() == '#') continue;
    const auto where = [&] { return src + ":" + std::to_string(line_no) + ": "; };
    const std::size_t comma = line.find(',');
    if (comma == std::string_view::npos || line.find(',', comma + 1) != std::string_view::npos) {
      return where() + "expected 'length,fraction'";
    }
    SizePoint p;
    if (!parse_length(trim(line.substr(0, comma)), p.length)) {
      return where() + "length must be a positive integer";
    }
    if (!parse_fraction(trim(line.substr(comma + 1)), p.fraction)) {
      return where() + "fraction must be a number in [0, 1]";
    }
    points.push_back(p);
    lines.push_back(line_no);
  }
  std::string e = check_points(points, [&](std::size_t i) {
    return src + ":" + std::to_string(lines[i]) + ": ";
  });
  if (!e.empty()) return e;
  e = check_ends(points);
  if (!e.empty()) return src + ": " + e;
  out.mean_ = step_mean(points);
  out.points_ = std::move(points);
  return {};
}

std::string SizeDistribution::load(const std::string& path, SizeDistribution& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return path + ": cannot open";
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) return path + ": read error";
  return parse(ss.str(), path, out);
}

std::string SizeDistribution::from_points(std::vector<SizePoint> points, SizeDistribution& out) {
  std::string e =
      check_points(points, [](std::size_t i) { return "point " + std::to_string(i) + ": "; });
  if (e.empty()) e = check_ends(points);
  if (!e.empty()) return e;
  out.mean_ = step_mean(points);
  out.points_ = std::move(points);
  return {};
}

std::uint64_t SizeDistribution::sample_at(double u) const {
  // The last fraction is 1 > u, so a point is always found; equal fractions
  // (zero jumps) are skipped because the search is for fraction > u.
  const auto it = std::upper_bound(points_.begin(), points_.end(), u,
                                   [](double v, const SizePoint& p) { return v < p.fraction; });
  return it->length;
}

double SizeDistribution::cdf(std::uint64_t length) const {
  const auto it =
      std::upper_bound(points_.begin(), points_.end(), length,
                       [](std::uint64_t v, const SizePoint& p) { return v < p.length; });
  return it == points_.begin() ? 0.0 : std::prev(it)->fraction;
}

SizeDistribution SizeDistribution::truncated(std::uint64_t max_length) const {
  // A cap at or above the largest length would only add a point with no
  // jump; the distribution stays as it is.
  if (max_length >= points_.back().length) return *this;
  SizeDistribution d;
  for (const SizePoint& p : points_) {
    if (p.length >= max_length) break;
    d.points_.push_back(p);
  }
  d.points_.push_back({max_length, 1.0});
  d.mean_ = step_mean(d.points_);
  return d;
}

std::string PoissonArrivals::check(const WorkloadSpec& spec) {
  if (spec.hosts < 2) return "hosts must be at least 2";
  if (spec.link_bps == 0) return "link_bps must be positive";
  if (!(spec.load > 0.0) || !std::isfinite(spec.load)) {
    return "load must be a positive finite fraction of the link rate";
  }
  return {};
}

PoissonArrivals::PoissonArrivals(const WorkloadSpec& spec, const SizeDistribution& dist)
    : spec_(spec),
      dist_(dist),
      host_rate_(spec.load * static_cast<double>(spec.link_bps) / 8.0 / dist.mean()),
      mean_gap_ns_(1e9 / (host_rate_ * spec.hosts)),
      gaps_(derive_seed(spec.seed, kPurposeGaps, 0)),
      pairs_(derive_seed(spec.seed, kPurposePairs, 0)),
      sizes_(derive_seed(spec.seed, kPurposeSizes, 0)) {}

Arrival PoissonArrivals::next() {
  // Exponential gap by inversion; 1 - u lies in (0, 1], so the log is finite.
  t_ns_ += -std::log(1.0 - gaps_.next_unit()) * mean_gap_ns_;
  Arrival a;
  a.time_ns = spec_.start_ns + static_cast<TimeNs>(t_ns_);
  a.src = static_cast<std::uint32_t>(pairs_.below(spec_.hosts));
  // Uniform over the other N - 1 hosts: draw among N - 1 and skip src.
  a.dst = static_cast<std::uint32_t>(pairs_.below(spec_.hosts - 1));
  if (a.dst >= a.src) ++a.dst;
  a.length = dist_.sample(sizes_);
  return a;
}

}  // namespace uroce::testbed
