// uroce-line-rtt: the round trip of one cache line between two CPUs, for
// telling which speed state a shared machine is in while it benchmarks
// (docs/performance.md, "Two speed states"). Two threads, pinned one per
// CPU, hand a counter back and forth through one line; the figure is the
// mean time of a round trip (two line transfers). On the project VM it is
// ~50 ns when the two vCPUs share a core's caches and ~330 ns when they do
// not, and every cross-core figure of a run moves with it.
//
//   uroce-line-rtt [--cpus A,B] [--round-trips N]
//
// Prints one JSON line: {"bench": "line-rtt", "cpus": [A, B],
// "round_trips": N, "ns_per_round_trip": X}.
#include <pthread.h>
#include <sched.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

bool pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

// The line the two threads hand back and forth: A writes odd values, B
// answers each with the next even one.
struct alignas(64) Line {
  std::atomic<long> turn{0};
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Round trip of one cache line between two CPUs"};
  std::vector<int> cpus{0, 1};
  long n = 200'000;
  app.add_option("--cpus", cpus, "the two CPUs")->delimiter(',')->expected(2);
  app.add_option("--round-trips", n, "round trips to time")->check(CLI::Range(1L, 100'000'000L));
  CLI11_PARSE(app, argc, argv);

  Line line;
  std::atomic<bool> b_pinned{true};
  std::thread b([&] {
    b_pinned = pin_to(cpus[1]);
    for (long i = 0; i < n; ++i) {
      while (line.turn.load(std::memory_order_acquire) != 2 * i + 1) {
      }
      line.turn.store(2 * i + 2, std::memory_order_release);
    }
  });
  if (!pin_to(cpus[0])) {
    std::fprintf(stderr, "uroce-line-rtt: cannot pin to CPU %d\n", cpus[0]);
    std::quick_exit(1);  // b spins on a line nobody will write
  }
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < n; ++i) {
    line.turn.store(2 * i + 1, std::memory_order_release);
    while (line.turn.load(std::memory_order_acquire) != 2 * i + 2) {
    }
  }
  const auto t1 = std::chrono::steady_clock::now();
  b.join();
  if (!b_pinned) {
    std::fprintf(stderr, "uroce-line-rtt: cannot pin to CPU %d\n", cpus[1]);
    return 1;
  }
  const double ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / n;
  std::printf(
      "{\"bench\": \"line-rtt\", \"cpus\": [%d, %d], \"round_trips\": %ld, "
      "\"ns_per_round_trip\": %.1f}\n",
      cpus[0], cpus[1], n, ns);
  return 0;
}
