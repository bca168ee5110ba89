// uroce-cpu-gaps: how often, and for how long, the machine takes a CPU away
// from a thread that never sleeps (docs/tails.md, "What the machine takes").
// One thread per CPU, pinned, reads the clock in a tight loop; a gap between
// two reads of 1 us or more is time the thread did not run (an interrupt, a
// preemption, the hypervisor running something else). A round trip of W us
// that some gap of X us or more falls into takes at least X us longer: the
// share of such round trips, for each W and X asked, is the share of a
// fixed-period loop's iterations that the machine alone pushes into its
// tail, whatever the program does. Raw DPDK's round trip and uroce's differ
// in W, so the same machine hits them in different shares.
//
//   uroce-cpu-gaps [--cpus 0,1] [--seconds S] [--windows 2,4,8] [--gaps 5,10]
//
// Prints one JSON line: per CPU the gaps of 1, 2, 5, 10, 20, 50 and 100 us
// or more per second, the share of time lost to gaps and the longest; then,
// for each window W and gap X, the share of a back-to-back W-us loop's
// iterations into which a gap of X us or more falls (cpu_gaps.h).
#include <pthread.h>
#include <sched.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "bench/cpu_gaps.h"

namespace {

using uroce::bench::Gap;

using Clock = std::chrono::steady_clock;

bool pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

constexpr std::int64_t kMinGapNs = 1'000;
constexpr std::array<std::int64_t, 7> kThresholdsUs{1, 2, 5, 10, 20, 50, 100};
// Room for this many gaps per CPU (set up before the clock runs, so the
// loop never allocates); further gaps are counted as lost records.
constexpr std::size_t kMaxGaps = 4'000'000;

struct CpuRun {
  int cpu = 0;
  bool pinned = false;
  std::vector<Gap> gaps;
  std::uint64_t unrecorded = 0;
};

void spin(CpuRun& r, Clock::time_point t0, std::int64_t run_ns) {
  r.pinned = pin_to(r.cpu);
  std::int64_t prev = (Clock::now() - t0).count();
  while (prev < run_ns) {
    const std::int64_t now = (Clock::now() - t0).count();
    if (now - prev >= kMinGapNs) {
      if (r.gaps.size() < kMaxGaps) {
        r.gaps.push_back(Gap{prev, now - prev});
      } else {
        ++r.unrecorded;
      }
    }
    prev = now;
  }
}

std::string join(const std::vector<std::string>& parts) {
  std::string s;
  for (std::size_t i = 0; i < parts.size(); ++i) s += (i == 0 ? "" : ", ") + parts[i];
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Gaps the machine leaves in a spinning thread's time, per CPU"};
  std::vector<int> cpus{0, 1};
  double seconds = 5;
  std::vector<double> windows_us{2, 4, 8};
  std::vector<double> gaps_us{5, 10};
  app.add_option("--cpus", cpus, "CPUs to spin on, one thread each")->delimiter(',');
  app.add_option("--seconds", seconds, "how long to spin")->check(CLI::Range(0.01, 3600.0));
  app.add_option("--windows", windows_us, "round-trip lengths W (us)")->delimiter(',');
  app.add_option("--gaps", gaps_us, "gap lengths X (us)")->delimiter(',');
  CLI11_PARSE(app, argc, argv);

  const auto run_ns = static_cast<std::int64_t>(seconds * 1e9);
  std::vector<CpuRun> runs(cpus.size());
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    runs[i].cpu = cpus[i];
    runs[i].gaps.reserve(kMaxGaps);
  }
  const Clock::time_point t0 = Clock::now();
  std::vector<std::thread> threads;
  for (CpuRun& r : runs) threads.emplace_back([&r, t0, run_ns] { spin(r, t0, run_ns); });
  for (std::thread& t : threads) t.join();

  std::vector<std::string> per_cpu;
  for (const CpuRun& r : runs) {
    if (!r.pinned) {
      std::fprintf(stderr, "uroce-cpu-gaps: cannot pin to CPU %d\n", r.cpu);
      return 1;
    }
    std::vector<std::string> rates;
    std::int64_t lost = 0;
    for (const Gap& g : r.gaps) lost += g.len_ns;
    for (const std::int64_t us : kThresholdsUs) {
      const auto n = std::count_if(r.gaps.begin(), r.gaps.end(),
                                   [us](const Gap& g) { return g.len_ns >= us * 1'000; });
      rates.push_back("\"" + std::to_string(us) +
                      "\": " + std::to_string(static_cast<double>(n) / seconds));
    }
    const std::int64_t longest =
        r.gaps.empty()
            ? 0
            : std::max_element(r.gaps.begin(), r.gaps.end(), [](const Gap& a, const Gap& b) {
                return a.len_ns < b.len_ns;
              })->len_ns;
    per_cpu.push_back("{\"cpu\": " + std::to_string(r.cpu) + ", \"gaps_per_s_at_least_us\": {" +
                      join(rates) + "}, \"lost_share\": " +
                      std::to_string(static_cast<double>(lost) / static_cast<double>(run_ns)) +
                      ", \"longest_us\": " + std::to_string(longest / 1'000) +
                      ", \"unrecorded\": " + std::to_string(r.unrecorded) + "}");
  }
  std::vector<std::vector<Gap>> gaps;
  for (const CpuRun& r : runs) gaps.push_back(r.gaps);
  const auto lost = uroce::bench::lost_union(gaps);
  std::vector<std::string> shares;
  for (const double w : windows_us) {
    for (const double x : gaps_us) {
      const double s =
          uroce::bench::iteration_share(gaps, lost, static_cast<std::int64_t>(w * 1'000),
                                        static_cast<std::int64_t>(x * 1'000), run_ns);
      char buf[160];
      std::snprintf(buf, sizeof buf,
                    "{\"window_us\": %g, \"gap_us\": %g, \"iterations_hit\": %.6f}", w, x, s);
      shares.emplace_back(buf);
    }
  }
  std::printf("{\"bench\": \"cpu-gaps\", \"seconds\": %g, \"cpus\": [%s], \"windows\": [%s]}\n",
              seconds, join(per_cpu).c_str(), join(shares).c_str());
  return 0;
}
