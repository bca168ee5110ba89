#include "testbed/run.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "testbed/scenario_toml.h"
#include "tests/testbed/test_support.h"

namespace uroce::testbed {
namespace {

namespace fs = std::filesystem;

std::string read_all(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& tag)
      : path(fs::temp_directory_path() / ("uroce-run-" + tag + "-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

// Runs `sc` with `opts` (pcaps of every link) into `a` and then into `b`,
// and expects both runs to succeed and write the same `files` files, byte
// for byte. `*first` is the run into `a`; opts->out_dir is left at `b`.
void run_twice_identical(const Scenario& sc, RunOptions* opts, const TempDir& a, const TempDir& b,
                         std::size_t files, RunResult* first) {
  opts->pcap_all = true;
  opts->out_dir = a.path.string();
  *first = run_scenario(sc, *opts);
  opts->out_dir = b.path.string();
  const RunResult rb = run_scenario(sc, *opts);
  const RunResult& ra = *first;
  ASSERT_EQ(ra.status, RunStatus::kOk) << ra.error;
  ASSERT_EQ(rb.status, RunStatus::kOk) << rb.error;
  ASSERT_EQ(ra.files.size(), files);
  ASSERT_EQ(rb.files.size(), ra.files.size());
  for (std::size_t i = 0; i < ra.files.size(); ++i) {
    EXPECT_EQ(fs::path(ra.files[i]).filename(), fs::path(rb.files[i]).filename());
    const std::string x = read_all(ra.files[i]);
    EXPECT_GE(x.size(), 24u) << ra.files[i];
    EXPECT_TRUE(x == read_all(rb.files[i])) << ra.files[i] << " differs";
  }
}

Scenario shipped_loop() {
  Scenario sc;
  const std::string path = std::string(UROCE_SOURCE_ROOT) + "/testbed/scenarios/loop2.toml";
  EXPECT_EQ(scenario_from_file(path, sc), "");
  sc.duration_ns = 11 * kNsPerMs;  // the deadlock forms at about 9 ms
  return sc;
}

// The determinism promise: the same scenario and seed give byte-identical
// summary, time series and pcaps.
TEST(Run_Determinism, SameSeedGivesByteIdenticalOutputs) {
  const Scenario sc = shipped_loop();
  TempDir a("a");
  TempDir b("b");
  RunOptions opts;
  RunResult ra;
  // summary, csv, 3 pcaps
  ASSERT_NO_FATAL_FAILURE(run_twice_identical(sc, &opts, a, b, 5, &ra));
  ASSERT_EQ(ra.deadlocks.size(), 1u);
  EXPECT_EQ(fs::path(ra.files[0]).filename(), "summary.json");
  EXPECT_EQ(fs::path(ra.files[4]).filename(), "s1-s2.pcap");
  // The loop link carried ~80k frames until the deadlock (144 bytes each
  // at snaplen 128, plus PFC frames).
  EXPECT_GT(fs::file_size(ra.files[4]), 10'000'000u);
  // Another seed moves the flow's start (start_jitter_us = 1): other output.
  opts.seed = 99;
  TempDir c("c");
  opts.out_dir = c.path.string();
  const RunResult rc = run_scenario(sc, opts);
  ASSERT_EQ(rc.status, RunStatus::kOk);
  EXPECT_NE(read_all(rc.files[1]), read_all(ra.files[1]));
}

// The same promise with real-engine hosts: the RC flows' frames (the
// engine's own bytes in the pcaps), PSNs and counters repeat byte for byte;
// another seed changes the PSNs (and so the frames).
TEST(Run_Determinism, EngineScenarioGivesByteIdenticalOutputs) {
  Scenario sc;
  ASSERT_EQ(scenario_from_file(std::string(UROCE_SOURCE_ROOT) + "/testbed/scenarios/rc_flows.toml",
                               sc),
            "");
  sc.output.pcap_snaplen = 65535;
  TempDir a("ea");
  TempDir b("eb");
  RunOptions opts;
  RunResult ra;
  // summary, csv, 4 pcaps
  ASSERT_NO_FATAL_FAILURE(run_twice_identical(sc, &opts, a, b, 6, &ra));
  opts.seed = 2;
  TempDir c("ec");
  opts.out_dir = c.path.string();
  const RunResult rc = run_scenario(sc, opts);
  ASSERT_EQ(rc.status, RunStatus::kOk);
  EXPECT_NE(read_all(rc.files[0]), read_all(ra.files[0]));
  EXPECT_NE(read_all(rc.files[5]), read_all(ra.files[5]));
}

// And with the engine's own PFC (rc_engine_pfc.toml): the engines' PFC
// counters and pause times in the summary repeat byte for byte.
TEST(Run_Determinism, EnginePfcScenarioGivesByteIdenticalOutputs) {
  Scenario sc;
  ASSERT_EQ(scenario_from_file(std::string(UROCE_SOURCE_ROOT) +
                                   "/testbed/scenarios/rc_engine_pfc.toml",
                               sc),
            "");
  TempDir a("pa");
  TempDir b("pb");
  RunOptions opts;
  RunResult ra;
  // summary, csv, 3 pcaps
  ASSERT_NO_FATAL_FAILURE(run_twice_identical(sc, &opts, a, b, 5, &ra));
  const std::string summary = read_all(ra.files[0]);
  EXPECT_NE(summary.find("\"xoff_sent\""), std::string::npos);
  EXPECT_NE(summary.find("\"tx_pfc\""), std::string::npos);
}

TEST(Run_Errors, BadScenarioAndUnwritableOutput) {
  Scenario sc = testing::line();
  sc.flows[0].dst = "h9";
  RunResult r = run_scenario(sc, RunOptions{});
  EXPECT_EQ(r.status, RunStatus::kBadScenario);
  EXPECT_EQ(r.error, "flow[0] (f).dst: unknown node 'h9'");
  sc = testing::line();
  sc.hosts[1].rx_bps = 1'000'000'000ull;
  sc.hosts[1].rx_alpha_num = 0;
  r = run_scenario(sc, RunOptions{});
  EXPECT_EQ(r.error, "host[1] (h2): receive buffer: BadAlpha");
  TempDir d("file");
  fs::create_directories(d.path);
  std::ofstream(d.path / "blocker") << "x";
  RunOptions opts;
  opts.out_dir = (d.path / "blocker" / "out").string();
  r = run_scenario(testing::line(), opts);
  EXPECT_EQ(r.status, RunStatus::kOutputError);
  EXPECT_NE(r.error.find("blocker/out"), std::string::npos) << r.error;
}

TEST(Run_NoFiles, SweepsGetResultsWithoutWriting) {
  LoopParams p = testing::small_loop(10, 20 * kNsPerMs);
  p.stop_on_deadlock = true;
  RunOptions opts;
  opts.summary_text = false;
  const RunResult r = run_scenario(make_loop_scenario(p), opts);
  ASSERT_EQ(r.status, RunStatus::kOk);
  EXPECT_TRUE(r.files.empty());
  EXPECT_TRUE(r.summary.empty());
  EXPECT_EQ(r.stop, StopReason::kDeadlock);
  ASSERT_EQ(r.deadlocks.size(), 1u);
  EXPECT_EQ(r.end_ns, r.deadlocks[0].detected_at);
}

// And with the message workload (the shipped homa_slowdown.toml, its
// window cut short, lengths capped): summary, messages.csv and the pcaps of
// all 16 links repeat byte for byte; the run ends on the workload.
TEST(Run_Determinism, WorkloadScenarioGivesByteIdenticalOutputs) {
  Scenario sc;
  ASSERT_EQ(scenario_from_file(std::string(UROCE_SOURCE_ROOT) +
                                   "/testbed/scenarios/homa_slowdown.toml",
                               {"workload.warmup_ms=0.05", "workload.measure_ms=0.05",
                                "workload.max_length_bytes=100000", "workload.samples=true"},
                               sc),
            "");
  TempDir a("wa");
  TempDir b("wb");
  RunOptions opts;
  RunResult ra;
  // summary, messages.csv, 16 pcaps
  ASSERT_NO_FATAL_FAILURE(run_twice_identical(sc, &opts, a, b, 18, &ra));
  EXPECT_EQ(fs::path(ra.files[17]).filename(), "messages.csv");
  EXPECT_NE(read_all(ra.files[0]).find("\"stop_reason\": \"workload_done\""), std::string::npos);
  EXPECT_NE(ra.workload.find("length (bytes)"), std::string::npos);
}

// Selective repeat through one lossy hop (the shipped lossy_one_hop.toml,
// shorter): both flows complete with their bytes intact, both engines
// negotiated selective repeat through the HELLO handshake and used it
// (h1 resent lost packets alone, h2 held packets beyond gaps and sent
// SACKs), the hop lost frames both ways, and every file repeats byte for
// byte.
TEST(Run_Determinism, LossyScenarioNegotiatesSelectiveRepeatAndRepeats) {
  Scenario sc;
  ASSERT_EQ(scenario_from_file(std::string(UROCE_SOURCE_ROOT) +
                                   "/testbed/scenarios/lossy_one_hop.toml",
                               {"rc_flow.0.count=200", "rc_flow.1.count=50",
                                "scenario.duration_ms=30", "output.sample_us=1000"},
                               sc),
            "");
  TempDir a("la");
  TempDir b("lb");
  RunOptions opts;
  RunResult ra;
  // summary, csv, 2 pcaps
  ASSERT_NO_FATAL_FAILURE(run_twice_identical(sc, &opts, a, b, 4, &ra));
  const nlohmann::json j = nlohmann::json::parse(read_all(ra.files[0]));
  ASSERT_EQ(j["rc_flows"].size(), 2u);
  for (const nlohmann::json& f : j["rc_flows"]) {
    EXPECT_EQ(f["completed"], f["count"]) << f["name"];
    EXPECT_EQ(f["bytes"].get<std::uint64_t>(), f["count"].get<std::uint64_t>() * 65536);
    EXPECT_EQ(f["payload_mismatch"], 0) << f["name"];
    EXPECT_EQ(f["errors"], 0) << f["name"];
    EXPECT_EQ(f["done"], true) << f["name"];
    // Per connection: both ends saw the peer accept it.
    EXPECT_EQ(f["src_qp"]["sr_peer"], true) << f["name"];
    EXPECT_EQ(f["dst_qp"]["sr_peer"], true) << f["name"];
  }
  const nlohmann::json& hosts = j["engine"]["hosts"];
  ASSERT_EQ(hosts.size(), 2u);
  for (const nlohmann::json& h : hosts) {
    // One connection per flow on each host, both using selective repeat.
    EXPECT_EQ(h["lossy"]["sr_connections"], 2) << h["name"];
    EXPECT_EQ(h["lossy"]["sr_qps"], 2) << h["name"];
    EXPECT_EQ(h["lossy"]["sr_hello_rx_declined"], 0) << h["name"];
  }
  const nlohmann::json& h1 = hosts[0]["lossy"];
  const nlohmann::json& h2 = hosts[1]["lossy"];
  EXPECT_GT(h1["sr_tx_resends"], 0);
  // The host's sum is its connections' (the requester side is h1's).
  const nlohmann::json& flows = j["rc_flows"];
  EXPECT_GT(flows[0]["src_qp"]["sr"]["sr_tx_resends"], 0);
  EXPECT_EQ(h1["sr_tx_resends"],
            flows[0]["src_qp"]["sr"]["sr_tx_resends"].get<std::uint64_t>() +
                flows[1]["src_qp"]["sr"]["sr_tx_resends"].get<std::uint64_t>());
  EXPECT_EQ(h2["tx_sacks"], flows[0]["dst_qp"]["sr"]["tx_sacks"].get<std::uint64_t>() +
                                flows[1]["dst_qp"]["sr"]["tx_sacks"].get<std::uint64_t>());
  EXPECT_GT(h1["sr_rx_sacks"], 0);
  EXPECT_GT(h2["sr_rx_held"], 0);
  EXPECT_GT(h2["tx_sacks"], 0);
  // Loss on h1-s1 only, both ways; s1-h2 has no loss rate and no "lost".
  const nlohmann::json& links = j["links"];
  ASSERT_EQ(links.size(), 4u);
  EXPECT_GT(links[0]["lost"], 0);
  EXPECT_GT(links[1]["lost"], 0);
  EXPECT_FALSE(links[2].contains("lost"));
  EXPECT_EQ(j["engine"]["frames"]["link_lost"],
            links[0]["lost"].get<std::uint64_t>() + links[1]["lost"].get<std::uint64_t>());
  // Resends are the only retransmissions: no timeout, no go-back-N.
  const nlohmann::json& q = j["rc_flows"][0]["src_qp"];
  EXPECT_EQ(q["timeouts"], 0);
  EXPECT_EQ(q["go_back_n"], 0);
}

}  // namespace
}  // namespace uroce::testbed
