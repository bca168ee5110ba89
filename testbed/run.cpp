#include "testbed/run.h"

#include <cstring>
#include <filesystem>
#include <fstream>

#include "testbed/dc_report.h"
#include "testbed/engine_report.h"
#include "testbed/pcap_tap.h"
#include "testbed/recorder.h"
#include "testbed/report.h"
#include "testbed/simulator.h"
#include "testbed/workload_report.h"

namespace uroce::testbed {

RunResult run_scenario(const Scenario& sc_in, const RunOptions& opts) {
  RunResult res;
  Scenario sc = sc_in;
  if (opts.seed) sc.seed = *opts.seed;
  if (opts.pcap_all) sc.output.pcap = true;
  Topology topo;
  std::string err = resolve(sc, topo);
  if (err.empty()) err = Simulator::check(sc, topo);
  if (!err.empty()) {
    res.status = RunStatus::kBadScenario;
    res.error = err;
    return res;
  }
  const bool files = !opts.out_dir.empty();
  const std::filesystem::path dir(opts.out_dir);
  auto fail_io = [&](const std::string& what) {
    res.status = RunStatus::kOutputError;
    res.error = what;
    return res;
  };
  if (files) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return fail_io(dir.string() + ": " + ec.message());
  }
  Simulator sim(sc, topo, sc.seed);
  Recorder rec;
  PcapTap tap;
  bool any_pcap = false;
  for (const bool b : topo.pcap_link) any_pcap = any_pcap || b;
  if (files && sc.output.csv) {
    const std::string p = (dir / "timeseries.csv").string();
    if (const int rc = rec.open(p); rc != 0) return fail_io(p + ": " + std::strerror(rc));
    sim.attach_recorder(&rec);
    res.files.push_back(p);
  }
  if (files && any_pcap) {
    std::error_code ec;
    std::filesystem::create_directories(dir / "pcap", ec);
    if (ec) return fail_io((dir / "pcap").string() + ": " + ec.message());
    if (auto e = tap.open(topo, (dir / "pcap").string(), sc.output.pcap_snaplen); !e.empty()) {
      return fail_io(e);
    }
    sim.attach_pcap(&tap);
    for (std::uint32_t l = 0; l < topo.links.size(); ++l) {
      if (topo.pcap_link[l]) {
        res.files.push_back((dir / "pcap" / (topo.link_name(l) + ".pcap")).string());
      }
    }
  }
  sim.run();
  res.stop = sim.stop_reason();
  res.end_ns = sim.end_ns();
  res.first_flow_start = sim.first_flow_start();
  res.events = sim.events_processed();
  res.deadlocks = sim.deadlocks().all();
  if (files && sc.output.csv) {
    if (const int rc = rec.close(); rc != 0) {
      return fail_io((dir / "timeseries.csv").string() + ": " + std::strerror(rc));
    }
  }
  if (files && any_pcap) {
    if (auto e = tap.close(); !e.empty()) return fail_io(e);
  }
  if (files) {
    bool any = false;
    for (const RcFlowSpec& f : sc.rc_flows) any = any || (f.enabled && f.mct_samples);
    if (any) {
      const std::string p = (dir / "rc_mct.csv").string();
      if (!write_mct_csv(sim, p)) return fail_io(p + ": write failed");
      res.files.push_back(p);
    }
  }
  if (files && sc.workload.enabled && sc.workload.samples) {
    const std::string p = (dir / "messages.csv").string();
    if (!write_messages_csv(sim, p)) return fail_io(p + ": write failed");
    res.files.push_back(p);
  }
  if (sc.workload.enabled) res.workload = workload_text(sim);
  if (!sc.dc_flows.empty()) res.dc_flows = dc_flows_text(sim);
  if (opts.summary_text || files) res.summary = summary_json(sim);
  if (files) {
    const std::string p = (dir / "summary.json").string();
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << res.summary;
    out.close();
    if (!out) return fail_io(p + ": write failed");
    res.files.insert(res.files.begin(), p);
  }
  return res;
}

}  // namespace uroce::testbed
