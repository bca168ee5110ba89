#include "testbed/workload.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace uroce::testbed {
namespace {

std::string workload_path(const std::string& name) {
  return std::string(UROCE_SOURCE_ROOT) + "/testbed/workloads/" + name + ".csv";
}

SizeDistribution must_load(const std::string& name) {
  SizeDistribution d;
  EXPECT_EQ(SizeDistribution::load(workload_path(name), d), "");
  return d;
}

// The facts of each shipped workload: point count and largest length as in
// HomaModule's dist.cc; the means computed from the same points by a
// separate script (Python, to 9 decimals), full and capped at Homa's
// 1,000,000-byte limit.
struct Expected {
  const char* name;
  std::size_t points;
  std::uint64_t max;
  double mean;
  double mean_capped_1mb;
};
constexpr Expected kWorkloads[] = {
    {"w1", 300, 100'000, 189.172954594, 189.172954594},
    {"w2", 152, 3'529'904, 441.603439191, 433.318900650},
    {"w3", 842, 15'158'197, 2927.678802146, 2423.110172503},
    {"w4", 460, 10'000'000, 127796.64365, 60175.12119},
    {"w5", 400, 29'400'000, 2564689.6824, 385315.50834},
};

// The mean from the CSV text read here on its own (not through
// SizeDistribution), integrating the complementary CDF instead of summing
// length x jump: E[L] = sum over i of (L_i - L_{i-1}) x (1 - F_{i-1}).
double tail_integral_mean(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  double mean = 0, prev_len = 0, prev_frac = 0;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    unsigned long long len = 0;
    double frac = 0;
    EXPECT_EQ(std::sscanf(line.c_str(), "%llu,%lf", &len, &frac), 2) << line;
    mean += (static_cast<double>(len) - prev_len) * (1.0 - prev_frac);
    prev_len = static_cast<double>(len);
    prev_frac = frac;
  }
  return mean;
}

TEST(SizeDistribution_Load, HomaWorkloadsLoadWithTheirPointsMaxAndMean) {
  for (const Expected& w : kWorkloads) {
    SCOPED_TRACE(w.name);
    const SizeDistribution d = must_load(w.name);
    EXPECT_EQ(d.points().size(), w.points);
    EXPECT_EQ(d.max_length(), w.max);
    EXPECT_EQ(d.points().back().fraction, 1.0);
    EXPECT_NEAR(d.mean(), w.mean, w.mean * 1e-9);
    EXPECT_NEAR(d.mean(), tail_integral_mean(workload_path(w.name)), w.mean * 1e-9);
    const SizeDistribution c = d.truncated(1'000'000);
    EXPECT_NEAR(c.mean(), w.mean_capped_1mb, w.mean * 1e-9);
    std::printf("%s: %zu points, %llu..%llu bytes, mean %.2f bytes (%.2f capped at 1 MB)\n", w.name,
                d.points().size(), static_cast<unsigned long long>(d.min_length()),
                static_cast<unsigned long long>(d.max_length()), d.mean(), c.mean());
  }
}

TEST(SizeDistribution_Sample, AMillionSamplesReproduceEveryPointOfTheCdf) {
  constexpr std::size_t kN = 1'000'000;
  for (const Expected& w : kWorkloads) {
    SCOPED_TRACE(w.name);
    const SizeDistribution d = must_load(w.name);
    const auto& p = d.points();
    std::vector<std::uint64_t> lengths;
    for (const SizePoint& q : p) lengths.push_back(q.length);
    std::vector<std::size_t> hits(p.size(), 0);
    SeededRng rng(42);
    std::size_t off_grid = 0;
    for (std::size_t i = 0; i < kN; ++i) {
      const std::uint64_t len = d.sample(rng);
      const auto it = std::lower_bound(lengths.begin(), lengths.end(), len);
      if (it == lengths.end() || *it != len) {
        ++off_grid;
        continue;
      }
      ++hits[static_cast<std::size_t>(it - lengths.begin())];
    }
    EXPECT_EQ(off_grid, 0u);  // a step CDF: only the listed lengths occur
    // Empirical CDF at each point against the published fraction: within
    // 5 binomial standard deviations (plus two samples' worth for the
    // extreme tail), and never more than 0.002 anywhere.
    std::size_t cum = 0;
    double worst = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
      cum += hits[i];
      const double emp = static_cast<double>(cum) / kN;
      const double f = p[i].fraction;
      const double tol = 5 * std::sqrt(f * (1 - f) / kN) + 2.0 / kN;
      EXPECT_NEAR(emp, f, tol) << "at length " << p[i].length;
      worst = std::max(worst, std::abs(emp - f));
    }
    EXPECT_LT(worst, 0.002);
  }
}

// A small distribution with a zero jump: 8 (1/4), 16 (never), 32 (1/2), 64 (1/4).
SizeDistribution small() {
  SizeDistribution d;
  EXPECT_EQ(SizeDistribution::from_points({{8, 0.25}, {16, 0.25}, {32, 0.75}, {64, 1.0}}, d), "");
  return d;
}

TEST(SizeDistribution_SampleAt, EachPointOwnsTheJumpBelowItAndZeroJumpsNeverOccur) {
  const SizeDistribution d = small();
  EXPECT_EQ(d.sample_at(0.0), 8u);
  EXPECT_EQ(d.sample_at(std::nextafter(0.25, 0.0)), 8u);
  EXPECT_EQ(d.sample_at(0.25), 32u);  // 16 has no jump
  EXPECT_EQ(d.sample_at(std::nextafter(0.75, 0.0)), 32u);
  EXPECT_EQ(d.sample_at(0.75), 64u);
  EXPECT_EQ(d.sample_at(std::nextafter(1.0, 0.0)), 64u);
  EXPECT_DOUBLE_EQ(d.mean(), 8 * 0.25 + 32 * 0.5 + 64 * 0.25);
}

TEST(SizeDistribution_Cdf, IsTheFractionOfTheLastPointAtOrBelow) {
  const SizeDistribution d = small();
  EXPECT_EQ(d.cdf(7), 0.0);
  EXPECT_EQ(d.cdf(8), 0.25);
  EXPECT_EQ(d.cdf(31), 0.25);
  EXPECT_EQ(d.cdf(32), 0.75);
  EXPECT_EQ(d.cdf(1'000'000), 1.0);
  EXPECT_EQ(d.min_length(), 8u);
  EXPECT_EQ(d.max_length(), 64u);
}

TEST(SizeDistribution_Truncated, CapsTheTailIntoOnePointAtTheLimit) {
  const SizeDistribution d = small().truncated(20);
  ASSERT_EQ(d.points().size(), 3u);
  EXPECT_EQ(d.points()[2].length, 20u);
  EXPECT_EQ(d.points()[2].fraction, 1.0);
  EXPECT_DOUBLE_EQ(d.mean(), 8 * 0.25 + 20 * 0.75);
  // A cap at or above the largest length changes nothing.
  const SizeDistribution same = small().truncated(64);
  EXPECT_EQ(same.points().size(), 4u);
  EXPECT_EQ(same.max_length(), 64u);
  const SizeDistribution w1 = must_load("w1");
  EXPECT_EQ(w1.truncated(1'000'000).points().size(), w1.points().size());
  EXPECT_EQ(w1.truncated(1'000'000).max_length(), 100'000u);
  // W4 below the cap is untouched.
  const SizeDistribution w4 = must_load("w4");
  const SizeDistribution c = w4.truncated(1'000'000);
  EXPECT_EQ(c.max_length(), 1'000'000u);
  EXPECT_EQ(c.cdf(940'700), w4.cdf(940'700));
}

TEST(SizeDistribution_Parse, BadInputsGiveTheExactError) {
  struct Case {
    const char* text;
    const char* error;
  };
  const Case cases[] = {
      {"", "t.csv: no points"},
      {"# only a comment\n\n", "t.csv: no points"},
      {"8\n", "t.csv:1: expected 'length,fraction'"},
      {"8,0.5,1\n", "t.csv:1: expected 'length,fraction'"},
      {"x,1\n", "t.csv:1: length must be a positive integer"},
      {"0,1\n", "t.csv:1: length must be a positive integer"},
      {"-8,1\n", "t.csv:1: length must be a positive integer"},
      {"8.5,1\n", "t.csv:1: length must be a positive integer"},
      {",1\n", "t.csv:1: length must be a positive integer"},
      {"8,1.5\n", "t.csv:1: fraction must be a number in [0, 1]"},
      {"8,-0.1\n", "t.csv:1: fraction must be a number in [0, 1]"},
      {"8,nan\n", "t.csv:1: fraction must be a number in [0, 1]"},
      {"8,\n", "t.csv:1: fraction must be a number in [0, 1]"},
      {"8,0.5x\n", "t.csv:1: fraction must be a number in [0, 1]"},
      {"8,0.5\n8,1\n", "t.csv:2: length 8 is not greater than the previous length 8"},
      {"16,0.5\n8,1\n", "t.csv:2: length 8 is not greater than the previous length 16"},
      {"# c\n\n8,0.6\n\n16,0.5\n32,1\n",
       "t.csv:5: fraction 0.5 is less than the previous fraction 0.6"},
      {"8,0.5\n16,0.9\n", "t.csv: the last fraction is 0.9, not 1"},
      {"8,0.5\n16,0.9999999999\n", "t.csv: the last fraction is 0.9999999999, not 1"},
  };
  for (const Case& c : cases) {
    SizeDistribution d = small();
    EXPECT_EQ(SizeDistribution::parse(c.text, "t.csv", d), c.error) << c.text;
    EXPECT_EQ(d.points().size(), 4u) << "left unchanged: " << c.text;
  }
}

TEST(SizeDistribution_Parse, SpacesCarriageReturnsAndCommentsAreAccepted) {
  SizeDistribution d;
  ASSERT_EQ(SizeDistribution::parse("# header\r\n 8 , 0.5 \r\n\t16,1e0\r\n", "t.csv", d), "");
  ASSERT_EQ(d.points().size(), 2u);
  EXPECT_EQ(d.points()[0].length, 8u);
  EXPECT_EQ(d.points()[1].fraction, 1.0);
  EXPECT_DOUBLE_EQ(d.mean(), 12.0);
}

TEST(SizeDistribution_Load, AMissingFileIsNamed) {
  SizeDistribution d;
  EXPECT_EQ(SizeDistribution::load("/nonexistent/w9.csv", d), "/nonexistent/w9.csv: cannot open");
}

TEST(SizeDistribution_FromPoints, BadPointsGiveTheExactError) {
  SizeDistribution d;
  EXPECT_EQ(SizeDistribution::from_points({}, d), "no points");
  EXPECT_EQ(SizeDistribution::from_points({{0, 1.0}}, d),
            "point 0: length must be a positive integer");
  EXPECT_EQ(SizeDistribution::from_points({{8, 0.5}, {16, 1.5}}, d),
            "point 1: fraction must be a number in [0, 1]");
  EXPECT_EQ(SizeDistribution::from_points({{8, 0.5}, {4, 1.0}}, d),
            "point 1: length 4 is not greater than the previous length 8");
  EXPECT_EQ(SizeDistribution::from_points({{8, 0.5}, {16, 0.25}, {32, 1.0}}, d),
            "point 1: fraction 0.25 is less than the previous fraction 0.5");
  EXPECT_EQ(SizeDistribution::from_points({{8, 0.5}}, d), "the last fraction is 0.5, not 1");
}

WorkloadSpec spec16(double load, std::uint64_t seed = 7) {
  WorkloadSpec s;
  s.hosts = 16;
  s.link_bps = 10'000'000'000ull;
  s.load = load;
  s.seed = seed;
  return s;
}

TEST(PoissonArrivals_Check, RejectsUnusableSpecs) {
  EXPECT_EQ(PoissonArrivals::check(spec16(0.5)), "");
  WorkloadSpec s = spec16(0.5);
  s.hosts = 1;
  EXPECT_EQ(PoissonArrivals::check(s), "hosts must be at least 2");
  s = spec16(0.5);
  s.link_bps = 0;
  EXPECT_EQ(PoissonArrivals::check(s), "link_bps must be positive");
  for (const double load : {0.0, -0.5, std::nan(""), std::numeric_limits<double>::infinity()}) {
    EXPECT_EQ(PoissonArrivals::check(spec16(load)),
              "load must be a positive finite fraction of the link rate");
  }
}

// Offered message bytes per host per second over the run, as a fraction of
// the link rate, plus each host's sent and received shares.
struct Measured {
  double load;
  std::vector<double> sent, received;
};
Measured measure(PoissonArrivals& gen, const WorkloadSpec& s, std::size_t n) {
  std::vector<double> sent(s.hosts, 0), received(s.hosts, 0);
  TimeNs last = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Arrival a = gen.next();
    sent[a.src] += static_cast<double>(a.length);
    received[a.dst] += static_cast<double>(a.length);
    last = a.time_ns;
  }
  const double link_bytes = static_cast<double>(s.link_bps) / 8 * (static_cast<double>(last) / 1e9);
  Measured m;
  double total = 0;
  for (std::uint32_t h = 0; h < s.hosts; ++h) {
    total += sent[h];
    m.sent.push_back(sent[h] / link_bytes);
    m.received.push_back(received[h] / link_bytes);
  }
  m.load = total / s.hosts / link_bytes;
  return m;
}

TEST(PoissonArrivals_Next, OfferedLoadOverALongRunIsWithinOnePercentOfTheTarget) {
  // W4 and W5: heavy enough tails to matter, light enough (coefficient of
  // variation 5.5 and 2.4) that a few million messages settle the mean.
  struct Run {
    const char* name;
    double load;
    std::size_t n;
  };
  for (const Run& r : {Run{"w4", 0.5, 4'000'000}, Run{"w5", 0.8, 1'000'000}}) {
    SCOPED_TRACE(r.name);
    const SizeDistribution d = must_load(r.name);
    const WorkloadSpec s = spec16(r.load);
    PoissonArrivals gen(s, d);
    EXPECT_NEAR(gen.host_offered_bytes_per_sec(), r.load * 10e9 / 8, 1e-3);
    EXPECT_NEAR(gen.host_rate_per_sec(), r.load * 10e9 / 8 / d.mean(), 1e-9);
    const Measured m = measure(gen, s, r.n);
    std::printf("%s at %.2f: offered %.4f of the link over %zu messages\n", r.name, r.load, m.load,
                r.n);
    EXPECT_NEAR(m.load, r.load, 0.01 * r.load);
    for (std::uint32_t h = 0; h < s.hosts; ++h) {
      EXPECT_NEAR(m.sent[h], r.load, 0.05 * r.load) << "host " << h;
      EXPECT_NEAR(m.received[h], r.load, 0.05 * r.load) << "host " << h;
    }
  }
}

TEST(PoissonArrivals_Next, GapsAreExponentialAtTheTotalRate) {
  const SizeDistribution d = must_load("w5");
  WorkloadSpec s = spec16(0.5);
  s.start_ns = 5'000'000;
  PoissonArrivals gen(s, d);
  constexpr std::size_t kN = 200'000;
  const double mean_gap = 1e9 / gen.total_rate_per_sec();
  TimeNs prev = s.start_ns;
  std::size_t longer = 0;
  for (std::size_t i = 0; i < kN; ++i) {
    const Arrival a = gen.next();
    ASSERT_GE(a.time_ns, prev);
    if (static_cast<double>(a.time_ns - prev) > mean_gap) ++longer;
    prev = a.time_ns;
  }
  // Mean gap within 1 % (about 4.5 standard deviations at this n), and the
  // share of gaps longer than the mean is e^-1 as for an exponential.
  EXPECT_NEAR(static_cast<double>(prev - s.start_ns) / kN, mean_gap, 0.01 * mean_gap);
  EXPECT_NEAR(static_cast<double>(longer) / kN, std::exp(-1.0), 0.005);
}

std::vector<Arrival> take(const WorkloadSpec& s, const SizeDistribution& d, std::size_t n) {
  PoissonArrivals gen(s, d);
  std::vector<Arrival> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(gen.next());
  return out;
}

bool same(const Arrival& a, const Arrival& b) {
  return a.time_ns == b.time_ns && a.src == b.src && a.dst == b.dst && a.length == b.length;
}

TEST(PoissonArrivals_Next, TheSameSeedGivesTheSameSequence) {
  const SizeDistribution d = must_load("w3");
  const auto a = take(spec16(0.8, 99), d, 10'000);
  const auto b = take(spec16(0.8, 99), d, 10'000);
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_TRUE(same(a[i], b[i])) << "arrival " << i;
}

TEST(PoissonArrivals_Next, DifferentSeedsGiveDifferentSequences) {
  const SizeDistribution d = must_load("w3");
  const auto a = take(spec16(0.8, 1), d, 10'000);
  const auto b = take(spec16(0.8, 2), d, 10'000);
  std::size_t times = 0, pairs = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].time_ns != b[i].time_ns) ++times;
    if (a[i].src != b[i].src || a[i].dst != b[i].dst) ++pairs;
  }
  EXPECT_GT(times, 9'900u);  // every arrival time differs, bar coincidences
  EXPECT_GT(pairs, 9'000u);  // 1 in 240 ordered pairs match by chance
}

TEST(PoissonArrivals_Next, PairsAreUniformOverOrderedPairsAndNeverSelf) {
  const SizeDistribution d = must_load("w1");
  WorkloadSpec s = spec16(0.5);
  s.hosts = 5;
  PoissonArrivals gen(s, d);
  constexpr std::size_t kN = 1'000'000;
  std::vector<std::size_t> count(25, 0);
  for (std::size_t i = 0; i < kN; ++i) {
    const Arrival a = gen.next();
    ASSERT_NE(a.src, a.dst);
    ASSERT_LT(a.src, 5u);
    ASSERT_LT(a.dst, 5u);
    ++count[a.src * 5 + a.dst];
  }
  // 20 ordered pairs at 1/20 each: every count within 5 standard
  // deviations, and Pearson's chi-square (19 degrees of freedom) below its
  // 99.9th percentile, 43.8.
  const double expect = kN / 20.0;
  const double sd = std::sqrt(kN * (1.0 / 20) * (19.0 / 20));
  double chi2 = 0;
  for (std::uint32_t src = 0; src < 5; ++src) {
    for (std::uint32_t dst = 0; dst < 5; ++dst) {
      const double c = static_cast<double>(count[src * 5 + dst]);
      if (src == dst) continue;
      EXPECT_NEAR(c, expect, 5 * sd) << src << " -> " << dst;
      chi2 += (c - expect) * (c - expect) / expect;
    }
  }
  EXPECT_LT(chi2, 43.8);
}

TEST(PoissonArrivals_Next, PairsIgnoreTheDistributionAndSizesIgnoreTheHostCount) {
  const SizeDistribution w1 = must_load("w1");
  const SizeDistribution w5 = must_load("w5");
  const auto a = take(spec16(0.5), w1, 1'000);
  const auto b = take(spec16(0.5), w5, 1'000);
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].src, b[i].src);
    ASSERT_EQ(a[i].dst, b[i].dst);
  }
  WorkloadSpec four = spec16(0.5);
  four.hosts = 4;
  const auto c = take(four, w5, 1'000);
  for (std::size_t i = 0; i < b.size(); ++i) ASSERT_EQ(b[i].length, c[i].length);
}

}  // namespace
}  // namespace uroce::testbed
