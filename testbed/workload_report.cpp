#include "testbed/workload_report.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>

#include "apps/counters_json.h"
#include "testbed/engine_host.h"
#include "testbed/message_workload.h"
#include "testbed/simulator.h"

namespace uroce::testbed {

namespace {

using Json = nlohmann::ordered_json;

constexpr auto kWorkloadRc =
    counters::pick(transport::kRcCounterFields,
                   {"timeouts", "tx_retransmits", "go_back_n", "rx_seq_naks", "rx_rnr_naks"});

double slowdown_of(const MessageRecord& m) {
  return static_cast<double>(m.done_ns - m.arrival_ns) / static_cast<double>(m.best_ns);
}

// Message bytes that arrived in the measurement window over what the hosts'
// links carry in it: the load the Poisson draws really offered (incast
// bursts not counted).
double measured_load(const MessageWorkload& w) {
  const MessageWorkloadConfig& c = w.config();
  double bytes = 0;
  for (const MessageRecord& m : w.records()) {
    if (m.measured && m.burst == MessageRecord::kNoBurst) bytes += static_cast<double>(m.length);
  }
  const double capacity = static_cast<double>(c.measure_ns) / 1e9 *
                          static_cast<double>(c.link_bps) / 8.0 * static_cast<double>(w.hosts());
  return capacity == 0 ? 0 : bytes / capacity;
}

// The measured bursts' completion times (us, +infinity when not done),
// sorted, and their slowdowns in one bucket.
struct BurstFigures {
  std::vector<double> rct_us;
  SlowdownSummary slowdown;
  std::uint64_t done = 0;
};

BurstFigures burst_figures(const MessageWorkload& w) {
  BurstFigures f;
  std::vector<SlowdownSample> v;
  for (const BurstRecord& b : w.bursts()) {
    if (!b.measured) continue;
    SlowdownSample s;
    s.length = w.config().incast.burst_bytes();
    s.done = b.done_ns != MessageRecord::kNotDone;
    if (s.done) {
      ++f.done;
      s.slowdown = static_cast<double>(b.done_ns - b.arrival_ns) / static_cast<double>(b.best_ns);
      f.rct_us.push_back(static_cast<double>(b.done_ns - b.arrival_ns) / 1e3);
    } else {
      f.rct_us.push_back(std::numeric_limits<double>::infinity());
    }
    v.push_back(s);
  }
  std::sort(f.rct_us.begin(), f.rct_us.end());
  f.slowdown = summarize_slowdown(std::move(v), 1);
  return f;
}

}  // namespace

SlowdownSummary workload_slowdown(const Simulator& sim) {
  const MessageWorkload& w = *sim.workload();
  std::vector<SlowdownSample> v;
  v.reserve(w.stats().measured);
  for (const MessageRecord& m : w.records()) {
    if (!m.measured || m.burst != MessageRecord::kNoBurst) continue;
    SlowdownSample s;
    s.length = m.length;
    s.done = m.done_ns != MessageRecord::kNotDone;
    if (s.done) s.slowdown = slowdown_of(m);
    v.push_back(s);
  }
  return summarize_slowdown(std::move(v), sim.scenario().workload.buckets);
}

Json workload_json(const Simulator& sim) {
  const WorkloadScenario& ws = sim.scenario().workload;
  Json j;
  j["distribution"] = ws.distribution;
  j["max_length_bytes"] = ws.max_length_bytes;
  j["load"] = ws.load;
  j["hosts"] = sim.topology().workload_hosts.size();
  j["qps_per_pair"] = ws.qps_per_pair;
  j["op"] = ws.write ? "write_imm" : "send";
  j["mtu"] = ws.mtu;
  j["sl"] = ws.sl;
  j["warmup_ns"] = ws.warmup_ns;
  j["measure_ns"] = ws.measure_ns;
  j["buckets"] = ws.buckets;
  const int setup = sim.workload_setup();
  j["setup"] = setup == 0 ? std::string("ok") : std::string(std::strerror(setup));
  const MessageWorkload* w = sim.workload();
  if (w == nullptr || setup != 0) return j;
  j["mean_length"] = w->distribution().mean();
  j["measured_load"] = measured_load(*w);
  const MessageWorkloadStats& s = w->stats();
  Json c;
  c["arrived"] = s.arrived;
  c["posted"] = s.posted;
  c["waited_for_qp"] = s.waited_for_qp;
  c["max_pair_queue"] = s.max_pair_queue;
  c["received"] = s.received;
  c["send_completed"] = s.send_completed;
  c["send_errors"] = s.send_errors;
  c["first_send_error"] = s.send_errors == 0 ? Json(nullptr) : Json(s.first_send_error);
  c["recv_errors"] = s.recv_errors;
  c["first_recv_error"] = s.recv_errors == 0 ? Json(nullptr) : Json(s.first_recv_error);
  c["length_mismatch"] = s.length_mismatch;
  c["imm_mismatch"] = s.imm_mismatch;
  c["payload_mismatch"] = s.payload_mismatch;
  c["repost_failed"] = s.repost_failed;
  c["measured"] = s.measured;
  c["measured_done"] = s.measured_done;
  j["counts"] = c;
  // What RC had to do for them (every QP of the workload's hosts): no
  // timeout or retransmission on a lossless fabric unless a message made
  // no progress for the QP's whole timeout.
  transport::RcCounters rc;
  // And, with the Homa-like scheduler, what its gates did (summed over the
  // QPs whose peer answered).
  transport::RcHomaCounters homa;
  bool any_homa = false;
  std::vector<engine::QpStatus> qs;
  for (const std::uint32_t h : sim.topology().workload_hosts) {
    // qp_status appends: each host's QPs alone, so each is counted once.
    qs.clear();
    sim.engines()[h]->vnic().qp_status(&qs);
    for (const engine::QpStatus& q : qs) {
      counters::add(rc, q.rc);
      if (!q.homa_peer) continue;
      any_homa = true;
      counters::add(homa, q.homa);
    }
  }
  Json t;
  counters::put(t, rc, kWorkloadRc);
  if (any_homa) t["homa"] = homa;
  j["transport"] = t;
  j["slowdown"] = slowdown_json(workload_slowdown(sim));
  if (w->config().incast.senders > 0) {
    const BurstFigures f = burst_figures(*w);
    Json in;
    in["senders"] = w->config().incast.senders;
    in["bytes"] = w->config().incast.bytes;
    in["every_ns"] = w->config().incast.every_ns;
    in["bursts"] = w->bursts().size();
    in["measured"] = f.rct_us.size();
    in["done"] = f.done;
    in["completion_us"] = {{"p50", optional_json(percentile_of_sorted(f.rct_us, 50))},
                           {"p99", optional_json(percentile_of_sorted(f.rct_us, 99))},
                           {"max", optional_json(percentile_of_sorted(f.rct_us, 100))}};
    in["slowdown"] = slowdown_json(f.slowdown)["overall"];
    j["incast"] = in;
  }
  return j;
}

std::string workload_text(const Simulator& sim) {
  const MessageWorkload* w = sim.workload();
  if (w == nullptr) return {};
  if (sim.workload_setup() != 0) {
    return std::string("workload: setup failed: ") + std::strerror(sim.workload_setup()) + "\n";
  }
  const MessageWorkloadStats& s = w->stats();
  char line[256];
  std::snprintf(line, sizeof line,
                "workload: %llu messages arrived, %llu measured (load %.4f offered), %llu of them "
                "received; mismatches: length %llu, imm %llu, payload %llu; errors: send %llu, "
                "recv %llu\n",
                static_cast<unsigned long long>(s.arrived),
                static_cast<unsigned long long>(s.measured), measured_load(*w),
                static_cast<unsigned long long>(s.measured_done),
                static_cast<unsigned long long>(s.length_mismatch),
                static_cast<unsigned long long>(s.imm_mismatch),
                static_cast<unsigned long long>(s.payload_mismatch),
                static_cast<unsigned long long>(s.send_errors),
                static_cast<unsigned long long>(s.recv_errors));
  std::string out = line + slowdown_table(workload_slowdown(sim));
  if (w->config().incast.senders > 0) {
    const BurstFigures f = burst_figures(*w);
    auto us = [&](double pct) {
      const std::optional<double> v = percentile_of_sorted(f.rct_us, pct);
      return v ? std::to_string(static_cast<long long>(std::llround(*v))) + " us"
               : std::string("not reached");
    };
    std::snprintf(line, sizeof line,
                  "incast: %zu bursts of %u x %llu bytes measured, %llu done; completion p50 "
                  "%s, p99 %s, max %s\n",
                  f.rct_us.size(), w->config().incast.senders,
                  static_cast<unsigned long long>(w->config().incast.bytes),
                  static_cast<unsigned long long>(f.done), us(50).c_str(), us(99).c_str(),
                  us(100).c_str());
    out += line;
  }
  return out;
}

bool write_messages_csv(const Simulator& sim, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << "message,src,dst,length,arrival_ns,post_ns,done_ns,best_ns,slowdown,ok,burst\n";
  const MessageWorkload* w = sim.workload();
  if (w != nullptr) {
    const std::vector<std::uint32_t>& hs = sim.topology().workload_hosts;
    const std::vector<std::string>& names = sim.topology().names;
    char sd[32];
    for (std::size_t i = 0; i < w->records().size(); ++i) {
      const MessageRecord& m = w->records()[i];
      if (!m.measured) continue;
      const bool done = m.done_ns != MessageRecord::kNotDone;
      out << i << ',' << names[hs[m.src]] << ',' << names[hs[m.dst]] << ',' << m.length << ','
          << m.arrival_ns << ',';
      if (m.post_ns != MessageRecord::kNeverPosted) out << m.post_ns;
      out << ',';
      if (done) out << m.done_ns;
      out << ',' << m.best_ns << ',';
      if (done) {
        std::snprintf(sd, sizeof sd, "%.6g", slowdown_of(m));
        out << sd;
      }
      out << ',' << (m.ok ? 1 : 0) << ',';
      if (m.burst != MessageRecord::kNoBurst) out << m.burst;
      out << '\n';
    }
  }
  out.close();
  return static_cast<bool>(out);
}

}  // namespace uroce::testbed
