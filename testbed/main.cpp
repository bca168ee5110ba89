// uroce-testbed: runs a testbed scenario, or one of the paper sweeps.
//
//   uroce-testbed SCENARIO.toml [--seed N] [--out DIR] [--pcap]
//   uroce-testbed sweep min-rate [options]
//   uroce-testbed sweep time-to-deadlock [options]
//
// Exit status: 0 done; 1 an output could not be written; 2 bad command
// line or bad scenario (the message names the problem).
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "testbed/run.h"
#include "testbed/scenario_toml.h"
#include "testbed/sweep.h"

namespace {

using namespace uroce;
using namespace uroce::testbed;

constexpr int kExitOk = 0;
constexpr int kExitIo = 1;
constexpr int kExitUsage = 2;

int write_text(const std::string& path, const std::string& text) {
  if (path.empty()) return kExitOk;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    std::fprintf(stderr, "uroce-testbed: %s: write failed\n", path.c_str());
    return kExitIo;
  }
  return kExitOk;
}

bool parse_alphas(const std::vector<std::string>& in,
                  std::vector<std::pair<std::uint32_t, std::uint32_t>>& out) {
  out.clear();
  for (const std::string& s : in) {
    std::uint32_t n = 0;
    std::uint32_t d = 0;
    const std::string e = parse_alpha(s, n, d);
    if (!e.empty()) {
      std::fprintf(stderr, "uroce-testbed: --alphas: %s\n", e.c_str());
      return false;
    }
    out.emplace_back(n, d);
  }
  return true;
}

// Options shared by both sweeps: the loop's fixed parameters.
struct BaseOpts {
  double link_gbps = 40;
  double delay_us = 1;
  std::uint64_t buffer_bytes = 12'000'000;
  std::uint64_t headroom_bytes = 64u << 10;
  std::uint64_t xon_offset_bytes = 2048;
  std::string alpha = "1/16";
  std::uint32_t size_bytes = 1024;
  double horizon_ms = 100;
  std::uint64_t seed = 1;
  unsigned threads = 2;
  std::string csv;
  std::string markdown;
};

void add_base(CLI::App* app, BaseOpts& b) {
  app->add_option("--link-gbps", b.link_gbps, "link rate B")->capture_default_str();
  app->add_option("--delay-us", b.delay_us, "propagation delay per link")->capture_default_str();
  app->add_option("--buffer-bytes", b.buffer_bytes, "switch shared buffer")->capture_default_str();
  app->add_option("--headroom-bytes", b.headroom_bytes, "per (port, lossless priority)")
      ->capture_default_str();
  app->add_option("--xon-offset-bytes", b.xon_offset_bytes, "XON hysteresis")
      ->capture_default_str();
  app->add_option("--size-bytes", b.size_bytes, "frame size")->capture_default_str();
  app->add_option("--horizon-ms", b.horizon_ms, "virtual time per run")->capture_default_str();
  app->add_option("--seed", b.seed, "base seed; each point derives its own")->capture_default_str();
  app->add_option("--threads", b.threads, "TBB worker threads")->capture_default_str();
  app->add_option("--csv", b.csv, "write the table as CSV here");
  app->add_option("--markdown", b.markdown, "write the table as Markdown here");
}

bool base_params(const BaseOpts& b, LoopParams& p) {
  p.link_bps = static_cast<std::uint64_t>(b.link_gbps * 1e9);
  p.delay_ns = static_cast<TimeNs>(b.delay_us * 1e3);
  p.buffer_bytes = b.buffer_bytes;
  p.headroom_bytes = b.headroom_bytes;
  p.xon_offset_bytes = b.xon_offset_bytes;
  p.size_bytes = b.size_bytes;
  p.duration_ns = static_cast<TimeNs>(b.horizon_ms * 1e6);
  p.seed = b.seed;
  const std::string e = parse_alpha(b.alpha, p.alpha_num, p.alpha_den);
  if (!e.empty()) {
    std::fprintf(stderr, "uroce-testbed: --alpha: %s\n", e.c_str());
    return false;
  }
  if (p.link_bps == 0 || p.duration_ns == 0) {
    std::fprintf(stderr, "uroce-testbed: --link-gbps and --horizon-ms must be > 0\n");
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"uroce-testbed: deterministic PFC/loop network testbed (docs/testbed.md)"};
  app.require_subcommand(0, 1);
  std::string scenario_path;
  std::uint64_t seed = 0;
  std::string out_dir = "testbed-out";
  bool pcap = false;
  auto* o_seed = app.add_option("--seed", seed, "seed (replaces the scenario's)");
  app.add_option("scenario", scenario_path, "scenario file (TOML)");
  app.add_option("--out", out_dir, "output directory")->capture_default_str();
  app.add_flag("--pcap", pcap, "capture every link into DIR/pcap/");
  std::vector<std::string> overrides;
  app.add_option("--set", overrides,
                 "PATH=VALUE: change the scenario file's TOML before it is read "
                 "(e.g. defaults.host.dcqcn=false); repeatable");

  CLI::App* sweep = app.add_subcommand("sweep", "paper sweeps over the loop scenario");
  sweep->require_subcommand(1);
  CLI::App* min_rate =
      sweep
          ->add_subcommand("min-rate",
                           "minimum deadlocking injection rate per (loop size, TTL), by bisection");
  BaseOpts mb;
  MinRateSpec ms;
  add_base(min_rate, mb);
  min_rate->add_option("--alpha", mb.alpha, "dynamic threshold alpha")->capture_default_str();
  min_rate->add_option("--loops", ms.loops, "loop sizes n")->delimiter(',');
  min_rate->add_option("--ttls", ms.ttls, "TTLs")->delimiter(',');
  min_rate->add_option("--tolerance", ms.tolerance, "bisection width / bound")
      ->capture_default_str();

  CLI::App* ttd =
      sweep->add_subcommand("time-to-deadlock", "time to deadlock over a grid of rate, alpha, TTL");
  BaseOpts tb;
  TtdSpec ts;
  std::vector<std::string> alphas{"1/16"};
  unsigned ttd_loop = 2;
  add_base(ttd, tb);
  ttd->add_option("--rates", ts.rates_gbps, "injection rates (Gb/s)")->delimiter(',');
  ttd->add_option("--alphas", alphas, "alphas, e.g. 1/16,1/4,1,8")->delimiter(',');
  ttd->add_option("--ttls", ts.ttls, "TTLs")->delimiter(',');
  ttd->add_option("--loop", ttd_loop, "loop size n")->capture_default_str();

  // CLI11 reports parse errors by exception; they end here, as exit codes.
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }

  if (min_rate->parsed()) {
    ms.threads = mb.threads;
    if (!base_params(mb, ms.base)) return kExitUsage;
    for (const unsigned t : ms.ttls) {
      if (t < 2 || t > 255) {
        std::fprintf(stderr, "uroce-testbed: --ttls: %u is outside 2..255\n", t);
        return kExitUsage;
      }
    }
    const auto rows = sweep_min_rate(ms);
    const std::string md = min_rate_markdown(rows, ms);
    std::fputs(md.c_str(), stdout);
    if (int rc = write_text(mb.csv, min_rate_csv(rows)); rc != kExitOk) return rc;
    return write_text(mb.markdown, md);
  }
  if (ttd->parsed()) {
    ts.threads = tb.threads;
    if (!base_params(tb, ts.base) || !parse_alphas(alphas, ts.alphas)) return kExitUsage;
    ts.base.switches = ttd_loop < 2 ? 2 : ttd_loop;
    for (const unsigned t : ts.ttls) {
      if (t < 2 || t > 255) {
        std::fprintf(stderr, "uroce-testbed: --ttls: %u is outside 2..255\n", t);
        return kExitUsage;
      }
    }
    const auto rows = sweep_time_to_deadlock(ts);
    const std::string md = ttd_markdown(rows, ts);
    std::fputs(md.c_str(), stdout);
    if (int rc = write_text(tb.csv, ttd_csv(rows)); rc != kExitOk) return rc;
    return write_text(tb.markdown, md);
  }
  if (sweep->parsed()) return kExitUsage;

  if (scenario_path.empty()) {
    std::fprintf(stderr, "uroce-testbed: give a scenario file (or `sweep ...`); see --help\n");
    return kExitUsage;
  }
  Scenario sc;
  if (const std::string e = scenario_from_file(scenario_path, overrides, sc); !e.empty()) {
    std::fprintf(stderr, "uroce-testbed: %s\n", e.c_str());
    return kExitUsage;
  }
  RunOptions opts;
  opts.out_dir = out_dir;
  if (*o_seed) opts.seed = seed;
  opts.pcap_all = pcap;
  const RunResult r = run_scenario(sc, opts);
  if (r.status == RunStatus::kBadScenario) {
    std::fprintf(stderr, "uroce-testbed: %s: %s\n", scenario_path.c_str(), r.error.c_str());
    return kExitUsage;
  }
  if (r.status == RunStatus::kOutputError) {
    std::fprintf(stderr, "uroce-testbed: %s\n", r.error.c_str());
    return kExitIo;
  }
  std::printf("%s: %s at %.3f ms, %zu deadlock(s), %llu events\n", sc.name.c_str(),
              r.stop == StopReason::kDeadlock       ? "stopped on deadlock"
              : r.stop == StopReason::kWorkloadDone ? "every measured message received"
                                                    : "ran to the end",
              static_cast<double>(r.end_ns) / 1e6, r.deadlocks.size(),
              static_cast<unsigned long long>(r.events));
  for (const Deadlock& d : r.deadlocks) {
    std::printf("  deadlock formed at %.3f ms, detected at %.3f ms, ",
                static_cast<double>(d.formed_at) / 1e6, static_cast<double>(d.detected_at) / 1e6);
    if (d.resolved) {
      std::printf("resolved at %.3f ms\n", static_cast<double>(d.resolved_at) / 1e6);
    } else {
      std::printf("not resolved\n");
    }
  }
  std::fputs(r.workload.c_str(), stdout);
  std::fputs(r.dc_flows.c_str(), stdout);
  for (const std::string& f : r.files) std::printf("  wrote %s\n", f.c_str());
  return kExitOk;
}
