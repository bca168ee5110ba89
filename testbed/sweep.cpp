#include "testbed/sweep.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>

#include "testbed/run.h"
#include "testbed/simulator.h"

namespace uroce::testbed {

namespace {

constexpr std::uint64_t kPurposeMinRate = 100;
constexpr std::uint64_t kPurposeTtd = 200;
// Bisection steps per point at most (the bracket shrinks by 2 each).
constexpr unsigned kMaxSteps = 40;

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string alpha_text(std::uint32_t num, std::uint32_t den) {
  return den == 1 ? std::to_string(num) : std::to_string(num) + "/" + std::to_string(den);
}

template <class Fn>
void parallel(std::size_t n, unsigned threads, Fn&& fn) {
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism,
                            threads == 0 ? 1 : threads);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1),
                    [&](const tbb::blocked_range<std::size_t>& r) {
                      for (std::size_t i = r.begin(); i != r.end(); ++i) fn(i);
                    });
}

}  // namespace

PointOutcome run_loop_point(const LoopParams& p) {
  PointOutcome out;
  RunOptions opts;
  opts.summary_text = false;
  const RunResult r = run_scenario(make_loop_scenario(p), opts);
  if (r.status != RunStatus::kOk) {
    out.error = r.error;
    return out;
  }
  out.events = r.events;
  if (!r.deadlocks.empty()) {
    out.deadlocked = true;
    out.time_to_deadlock_ns = r.deadlocks.front().formed_at - r.first_flow_start;
  }
  return out;
}

std::vector<MinRateRow> sweep_min_rate(const MinRateSpec& spec) {
  std::vector<std::pair<unsigned, unsigned>> points;
  for (const unsigned n : spec.loops) {
    for (const unsigned t : spec.ttls) points.emplace_back(n, t);
  }
  std::vector<MinRateRow> rows(points.size());
  parallel(points.size(), spec.threads, [&](std::size_t i) {
    MinRateRow& row = rows[i];
    row.loop = points[i].first;
    row.ttl = points[i].second;
    const double bound = loop_bound_bps(row.loop, spec.base.link_bps, row.ttl);
    row.bound_gbps = bound / 1e9;
    const double exact = loop_exact_bound_bps(row.loop, spec.base.link_bps, row.ttl);
    row.exact_bound_gbps = exact / 1e9;
    LoopParams p = spec.base;
    p.switches = row.loop;
    p.ttl = static_cast<std::uint8_t>(row.ttl);
    unsigned trial = 0;
    auto try_rate = [&](double bps, PointOutcome& o) {
      p.rate_bps = static_cast<std::uint64_t>(std::llround(bps));
      p.seed = derive_seed(spec.base.seed, kPurposeMinRate + i, trial++);
      o = run_loop_point(p);
      ++row.runs;
      return o.deadlocked;
    };
    const double line = static_cast<double>(spec.base.link_bps);
    double lo = std::min(bound * spec.lo_factor, line);
    double hi = std::min(bound * spec.hi_factor, line);
    PointOutcome o;
    // Widen until lo is clean and hi deadlocks.
    while (try_rate(lo, o) && lo > bound * 0.01) {
      hi = lo;
      row.ttd_ms = static_cast<double>(o.time_to_deadlock_ns) / 1e6;
      lo /= 2;
    }
    PointOutcome hi_o;
    bool hi_dead = try_rate(hi, hi_o);
    while (!hi_dead && hi < line) {
      lo = hi;
      hi = std::min(hi * 2, line);
      hi_dead = try_rate(hi, hi_o);
    }
    row.bracketed = hi_dead;
    if (!hi_dead) {
      row.max_clean_gbps = hi / 1e9;
      return;
    }
    row.ttd_ms = static_cast<double>(hi_o.time_to_deadlock_ns) / 1e6;
    for (unsigned step = 0; step < kMaxSteps && hi - lo > spec.tolerance * bound; ++step) {
      const double mid = (lo + hi) / 2;
      if (try_rate(mid, o)) {
        hi = mid;
        row.ttd_ms = static_cast<double>(o.time_to_deadlock_ns) / 1e6;
      } else {
        lo = mid;
      }
    }
    row.min_rate_gbps = hi / 1e9;
    row.max_clean_gbps = lo / 1e9;
    row.ratio = hi / bound;
    row.ratio_exact = hi / exact;
  });
  return rows;
}

std::vector<TtdRow> sweep_time_to_deadlock(const TtdSpec& spec) {
  std::vector<TtdRow> rows;
  for (const unsigned t : spec.ttls) {
    for (const auto& a : spec.alphas) {
      for (const double r : spec.rates_gbps) {
        TtdRow row;
        row.rate_gbps = r;
        row.alpha_num = a.first;
        row.alpha_den = a.second;
        row.ttl = t;
        row.loop = spec.base.switches;
        rows.push_back(row);
      }
    }
  }
  parallel(rows.size(), spec.threads, [&](std::size_t i) {
    TtdRow& row = rows[i];
    LoopParams p = spec.base;
    p.rate_bps = static_cast<std::uint64_t>(std::llround(row.rate_gbps * 1e9));
    p.alpha_num = row.alpha_num;
    p.alpha_den = row.alpha_den;
    p.ttl = static_cast<std::uint8_t>(row.ttl);
    p.seed = derive_seed(spec.base.seed, kPurposeTtd, i);
    row.seed = p.seed;
    const PointOutcome o = run_loop_point(p);
    row.deadlocked = o.deadlocked;
    row.ttd_ms = static_cast<double>(o.time_to_deadlock_ns) / 1e6;
  });
  return rows;
}

std::string min_rate_markdown(const std::vector<MinRateRow>& rows, const MinRateSpec& spec) {
  std::string s =
      "| loop n | TTL | bound n·B/TTL (Gb/s) | exact B/⌈(TTL-1)/n⌉ (Gb/s) | highest clean (Gb/s) "
      "| min deadlocking (Gb/s) | ratio to n·B/TTL | ratio to exact | time to deadlock at min "
      "(ms) | runs |\n"
      "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const MinRateRow& r : rows) {
    s += "| " + std::to_string(r.loop) + " | " + std::to_string(r.ttl) + " | " +
         fmt("%.4f", r.bound_gbps) + " | " + fmt("%.4f", r.exact_bound_gbps) + " | " +
         fmt("%.4f", r.max_clean_gbps) + " | ";
    if (r.bracketed) {
      s += fmt("%.4f", r.min_rate_gbps) + " | " + fmt("%.4f", r.ratio) + " | " +
           fmt("%.4f", r.ratio_exact) + " | " + fmt("%.2f", r.ttd_ms);
    } else {
      s += "none up to line rate | - | - | -";
    }
    s += " | " + std::to_string(r.runs) + " |\n";
  }
  s += "\nHorizon " + fmt("%.0f", static_cast<double>(spec.base.duration_ns) / 1e6) +
       " ms per run; bisection to " + fmt("%.2f", spec.tolerance * 100) + " % of the bound.\n";
  return s;
}

std::string min_rate_csv(const std::vector<MinRateRow>& rows) {
  std::string s =
      "loop,ttl,bound_gbps,exact_bound_gbps,max_clean_gbps,min_rate_gbps,ratio,ratio_exact,"
      "ttd_ms,runs,bracketed\n";
  for (const MinRateRow& r : rows) {
    s += std::to_string(r.loop) + "," + std::to_string(r.ttl) + "," + fmt("%.6f", r.bound_gbps) +
         "," + fmt("%.6f", r.exact_bound_gbps) + "," + fmt("%.6f", r.max_clean_gbps) + "," +
         fmt("%.6f", r.min_rate_gbps) + "," + fmt("%.6f", r.ratio) + "," +
         fmt("%.6f", r.ratio_exact) + "," + fmt("%.4f", r.ttd_ms) + "," + std::to_string(r.runs) +
         "," + (r.bracketed ? "1" : "0") + "\n";
  }
  return s;
}

std::string ttd_markdown(const std::vector<TtdRow>& rows, const TtdSpec& spec) {
  auto cell = [&](double r, std::uint32_t an, std::uint32_t ad, unsigned t) {
    for (const TtdRow& row : rows) {
      if (row.ttl == t && row.rate_gbps == r && row.alpha_num == an && row.alpha_den == ad) {
        return row.deadlocked ? " " + fmt("%.3f", row.ttd_ms) + " |" : std::string(" none |");
      }
    }
    return std::string(" - |");
  };
  std::string s;
  const std::string horizon = "\"none\": no deadlock within the " +
                              fmt("%.0f", static_cast<double>(spec.base.duration_ns) / 1e6) +
                              " ms horizon.\n";
  if (spec.alphas.size() == 1 && spec.ttls.size() > 1) {
    // One alpha, several TTLs: rows = rates, columns = TTLs.
    const auto [an, ad] = spec.alphas[0];
    s += "α=" + alpha_text(an, ad) + ", loop n = " + std::to_string(spec.base.switches) +
         "; time to deadlock in ms (bound n·B/TTL in brackets):\n\n| rate (Gb/s) |";
    for (const unsigned t : spec.ttls) {
      s += " TTL " + std::to_string(t) + " (" +
           fmt("%.3g", loop_bound_bps(spec.base.switches, spec.base.link_bps, t) / 1e9) + ") |";
    }
    s += "\n|---:|";
    for (std::size_t i = 0; i < spec.ttls.size(); ++i) s += "---:|";
    s += "\n";
    for (const double r : spec.rates_gbps) {
      s += "| " + fmt("%g", r) + " |";
      for (const unsigned t : spec.ttls) s += cell(r, an, ad, t);
      s += "\n";
    }
    return s + "\n" + horizon;
  }
  // One table per TTL: rows = rates, columns = alphas.
  for (const unsigned t : spec.ttls) {
    s += "TTL " + std::to_string(t) + ", loop n = " + std::to_string(spec.base.switches) +
         " (bound " + fmt("%.3f", loop_bound_bps(spec.base.switches, spec.base.link_bps, t) / 1e9) +
         " Gb/s); time to deadlock in ms:\n\n| rate (Gb/s) |";
    for (const auto& a : spec.alphas) s += " α=" + alpha_text(a.first, a.second) + " |";
    s += "\n|---:|";
    for (std::size_t i = 0; i < spec.alphas.size(); ++i) s += "---:|";
    s += "\n";
    for (const double r : spec.rates_gbps) {
      s += "| " + fmt("%g", r) + " |";
      for (const auto& a : spec.alphas) s += cell(r, a.first, a.second, t);
      s += "\n";
    }
    s += "\n";
  }
  return s + horizon;
}

std::string ttd_csv(const std::vector<TtdRow>& rows) {
  std::string s = "loop,ttl,alpha,alpha_value,rate_gbps,deadlocked,ttd_ms,seed\n";
  for (const TtdRow& r : rows) {
    s += std::to_string(r.loop) + "," + std::to_string(r.ttl) + "," +
         alpha_text(r.alpha_num, r.alpha_den) + "," +
         fmt("%.6f", static_cast<double>(r.alpha_num) / r.alpha_den) + "," +
         fmt("%g", r.rate_gbps) + "," + (r.deadlocked ? "1" : "0") + "," + fmt("%.4f", r.ttd_ms) +
         "," + std::to_string(r.seed) + "\n";
  }
  return s;
}

}  // namespace uroce::testbed
