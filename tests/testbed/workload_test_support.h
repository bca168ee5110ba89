// Test support (not a source mirror): scenarios with a [workload] on
// real-engine hosts, and size distributions written to temporary files.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "testbed/scenario.h"

namespace uroce::testbed::testing {

inline std::string workload_file(const char* name) {
  return std::string(UROCE_SOURCE_ROOT) + "/testbed/workloads/" + name;
}

// `name` in a directory of this test process's own under the temporary
// directory, removed with everything in it when the process exits: the
// suite leaves no file behind.
inline std::string scratch_path(const std::string& name) {
  struct Dir {
    std::filesystem::path path;
    Dir()
        : path(std::filesystem::path(::testing::TempDir()) /
               ("uroce-testbed-" + std::to_string(::getpid()))) {
      std::filesystem::create_directories(path);
    }
    ~Dir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const Dir dir;
  return (dir.path / name).string();
}

// A distribution of lengths written as a CSV in the process's scratch
// directory: each length equally likely.
inline std::string lengths_file(const std::string& name,
                                const std::vector<std::uint64_t>& lengths) {
  const std::string path = scratch_path(name + ".csv");
  std::ofstream out(path, std::ios::trunc);
  out << "# test lengths\n";
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    const double f = i + 1 == lengths.size() ? 1.0 : static_cast<double>(i + 1) / lengths.size();
    out << lengths[i] << "," << f << "\n";
  }
  return path;
}

// `n` engine hosts h1..hn on one switch s1, every link at `gbps` with
// `delay_us`, PFC on priority 3, and a [workload] over them with
// `distribution` at `load`: warmup 0, `measure_ms`, a run of `run_ms`.
inline Scenario star_workload(std::uint32_t n, const std::string& distribution, double load,
                              double measure_ms, double run_ms, double gbps = 10,
                              double delay_us = 1) {
  Scenario sc;
  sc.name = "star";
  sc.duration_ns = static_cast<TimeNs>(run_ms * 1e6);
  sc.deadlock.enabled = false;
  SwitchSpec s;
  s.name = "s1";
  s.buffer.buffer_bytes = 4'000'000;
  s.buffer.headroom_bytes = 40'000;
  sc.switches = {s};
  for (std::uint32_t i = 1; i <= n; ++i) {
    HostSpec h;
    h.name = "h" + std::to_string(i);
    h.engine = true;
    h.tx_queue_packets = 2;
    sc.hosts.push_back(h);
    LinkSpec l;
    l.a = h.name;
    l.b = "s1";
    l.rate_bps = static_cast<std::uint64_t>(gbps * 1e9);
    l.delay_ns = static_cast<TimeNs>(delay_us * 1e3);
    sc.links.push_back(l);
  }
  sc.workload.enabled = true;
  sc.workload.distribution = distribution;
  sc.workload.load = load;
  sc.workload.warmup_ns = 0;
  sc.workload.measure_ns = static_cast<TimeNs>(measure_ms * 1e6);
  return sc;
}

// Two engine hosts through two switches: h1 - s1 - s2 - h2, the hosts'
// links at `host_gbps`, the s1 - s2 link at `core_gbps`, each with
// `overhead` bytes per frame.
inline Scenario line_workload(const std::string& distribution, double load, double measure_ms,
                              double run_ms, double host_gbps, double core_gbps,
                              std::uint32_t overhead) {
  Scenario sc = star_workload(2, distribution, load, measure_ms, run_ms, host_gbps);
  SwitchSpec s2 = sc.switches[0];
  s2.name = "s2";
  sc.switches.push_back(s2);
  sc.links[1].b = "s2";
  LinkSpec core = sc.links[0];
  core.a = "s1";
  core.b = "s2";
  core.rate_bps = static_cast<std::uint64_t>(core_gbps * 1e9);
  sc.links.push_back(core);
  for (LinkSpec& l : sc.links) l.overhead_bytes = overhead;
  return sc;
}

}  // namespace uroce::testbed::testing
