#include "testbed/dc_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "apps/counters_json.h"
#include "testbed/dc_flow.h"
#include "testbed/engine_report.h"
#include "testbed/simulator.h"

namespace uroce::testbed {

namespace {

using Json = nlohmann::ordered_json;

// What a DC flow's summary shows of its targets' DCTs.
constexpr auto kTargetDct =
    counters::pick(transport::kDctCounterFields, {"rx_requests", "tx_busy", "tx_gone", "tx_unknown",
                                                  "drop_stale", "key_violations"});

double milli_round(double v) { return std::round(v * 1000.0) / 1000.0; }

// The DCI: its streams' connection counters summed, and its lanes' RC
// counters.
Json dci_json(DcFlow& f) {
  engine::QpStatus st;
  if (f.src().status(f.dci(), &st) != 0) return Json(nullptr);
  transport::DcStreamCounters sum;
  for (const engine::QpStatus::DcStream& s : st.dci_streams) counters::add(sum, s.ctr);
  Json j;
  j["qpn"] = st.qpn;
  j["state"] = static_cast<int>(st.state);
  j["streams"] = st.dci_streams.size();
  counters::put(j, sum);
  // A connection the target retired (GONE) or never opened (UNKNOWN before
  // any response) under the stream: it starts one again for what is left.
  j["reconnects"] = sum.gone + sum.unknown_restart;
  j["stream_recoveries"] = st.dci.stream_recoveries;
  put_qp_counters(j, st, false);
  return j;
}

// Target k: what arrived, its DCT's counters and its host's context pool.
Json target_json(DcFlow& f, std::uint32_t k, const std::string& host) {
  const DcTargetStats& t = f.target_stats(k);
  Json j;
  j["host"] = host;
  j["recv_completed"] = t.recv_completed;
  j["recv_errors"] = t.recv_errors;
  j["payload_mismatch"] = t.payload_mismatch;
  j["misdirected"] = t.misdirected;
  j["duplicates"] = t.duplicates;
  engine::QpStatus st;
  if (f.target_driver(k).status(f.dct(k), &st) == 0) {
    j["dctn"] = st.qpn;
    counters::put(j, st.dct, kTargetDct);
    j["contexts_end"] = st.dct_contexts;
    j["rx_duplicates"] = st.rc.rx_duplicates;
  }
  const transport::DcTargetPool* p = f.target_driver(k).vnic().dc_pool();
  if (p == nullptr) return j;
  const transport::DcTargetCounters& c = p->table().counters();
  Json pool;
  pool["capacity"] = p->table().capacity();
  pool["open_end"] = p->table().size();
  pool["open_peak"] = t.contexts_peak;
  counters::put(pool, c);
  // retired_pressure under the name the DC scenarios' reports use.
  pool["evicted"] = c.retired_pressure;
  j["pool"] = pool;
  return j;
}

Json flow_json(const Simulator& sim, std::size_t i) {
  const DcFlowSpec& ds = sim.scenario().dc_flows[i];
  const Topology& topo = sim.topology();
  Json j;
  j["name"] = ds.name;
  j["src"] = ds.src;
  j["targets"] = ds.targets;
  j["op"] = ds.write ? "write" : "send";
  j["size_bytes"] = ds.size_bytes;
  j["count"] = ds.count;
  j["window"] = ds.window;
  j["streams"] = ds.streams;
  j["mtu"] = ds.mtu;
  j["sl"] = ds.sl;
  j["start_ns"] = ds.start_ns;
  const int setup = sim.dc_flow_setup()[i];
  j["setup"] = setup == 0                            ? std::string("ok")
               : setup == Simulator::kRcFlowDisabled ? std::string("disabled")
                                                     : std::string(std::strerror(setup));
  if (sim.dc_flows()[i] == nullptr || setup != 0) return j;
  DcFlow& f = *sim.dc_flows()[i];
  const DcFlowStats& s = f.stats();
  j["dscp"] = f.config().dscp;
  j["src_psn"] = f.config().src_psn;
  j["posted"] = s.posted;
  j["completed"] = s.completed;
  j["bytes"] = s.bytes;
  j["errors"] = s.errors;
  j["first_error_status"] = s.errors == 0 ? Json(nullptr) : Json(s.first_error);
  j["duplicate_completions"] = s.duplicate_completions;
  DcTargetStats sum;
  for (std::uint32_t k = 0; k < f.num_targets(); ++k) {
    const DcTargetStats& t = f.target_stats(k);
    sum.recv_completed += t.recv_completed;
    sum.recv_errors += t.recv_errors;
    sum.payload_mismatch += t.payload_mismatch;
    sum.misdirected += t.misdirected;
    sum.duplicates += t.duplicates;
  }
  j["delivered"] = sum.recv_completed;
  j["recv_errors"] = sum.recv_errors;
  j["payload_mismatch"] = sum.payload_mismatch;
  j["misdirected"] = sum.misdirected;
  j["duplicates"] = sum.duplicates;
  j["done"] = f.done();
  j["first_post_ns"] = s.posted == 0 ? Json(nullptr) : Json(s.first_post_ns);
  j["last_completion_ns"] = s.completed == 0 ? Json(nullptr) : Json(s.last_completion_ns);
  const TimeNs span = s.last_completion_ns - s.first_post_ns;
  const bool timed = s.completed != 0 && span != 0;
  // Thousand messages a second between the first post and the last
  // completion.
  j["msg_rate_kps"] =
      timed ? milli_round(static_cast<double>(s.completed) * 1e6 / static_cast<double>(span)) : 0.0;
  j["goodput_gbps"] =
      timed ? milli_round(static_cast<double>(s.bytes) * 8.0 / static_cast<double>(span)) : 0.0;
  j["mct_ns"] = time_stats_json(s.mct_ns);
  j["delivery_ns"] = time_stats_json(s.delivery_ns);
  j["dci"] = dci_json(f);
  // The target hosts' pools, summed (peak: the largest).
  Json pools;
  std::uint64_t opened = 0, evicted = 0, busy = 0, open_end = 0;
  std::uint32_t peak = 0;
  Json per = Json::array();
  for (std::uint32_t k = 0; k < f.num_targets(); ++k) {
    Json t = target_json(f, k, topo.names[topo.dc_flows[i].targets[k]]);
    if (t.contains("pool")) {
      opened += t["pool"]["opened"].get<std::uint64_t>();
      evicted += t["pool"]["evicted"].get<std::uint64_t>();
      busy += t["pool"]["busy"].get<std::uint64_t>();
      open_end += t["pool"]["open_end"].get<std::uint64_t>();
      peak = std::max(peak, t["pool"]["open_peak"].get<std::uint32_t>());
    }
    per.push_back(t);
  }
  pools["opened"] = opened;
  pools["evicted"] = evicted;
  pools["busy"] = busy;
  pools["open_end"] = open_end;
  pools["open_peak_max"] = peak;
  j["target_pools"] = pools;
  j["per_target"] = per;
  return j;
}

double us(const Json& stats, const char* key) {
  return stats.is_null() ? 0.0 : static_cast<double>(stats[key].get<TimeNs>()) / 1e3;
}

}  // namespace

Json dc_flows_json(const Simulator& sim) {
  Json arr = Json::array();
  for (std::size_t i = 0; i < sim.scenario().dc_flows.size(); ++i) arr.push_back(flow_json(sim, i));
  return arr;
}

std::string dc_flows_text(const Simulator& sim) {
  std::string out;
  char line[512];
  for (const Json& j : dc_flows_json(sim)) {
    std::snprintf(line, sizeof line,
                  "dc_flow %s: %s -> %zu targets, %s %u B x %llu, window %u, %u stream(s): %s\n",
                  j["name"].get<std::string>().c_str(), j["src"].get<std::string>().c_str(),
                  j["targets"].size(), j["op"].get<std::string>().c_str(),
                  j["size_bytes"].get<std::uint32_t>(),
                  static_cast<unsigned long long>(j["count"].get<std::uint64_t>()),
                  j["window"].get<std::uint32_t>(), j["streams"].get<std::uint32_t>(),
                  j["setup"].get<std::string>().c_str());
    out += line;
    if (!j.contains("completed")) continue;
    std::snprintf(line, sizeof line,
                  "  completed %llu, errors %llu, delivered %llu (mismatch %llu, misdirected %llu, "
                  "duplicates %llu, duplicate completions %llu)\n",
                  static_cast<unsigned long long>(j["completed"].get<std::uint64_t>()),
                  static_cast<unsigned long long>(j["errors"].get<std::uint64_t>()),
                  static_cast<unsigned long long>(j["delivered"].get<std::uint64_t>()),
                  static_cast<unsigned long long>(j["payload_mismatch"].get<std::uint64_t>()),
                  static_cast<unsigned long long>(j["misdirected"].get<std::uint64_t>()),
                  static_cast<unsigned long long>(j["duplicates"].get<std::uint64_t>()),
                  static_cast<unsigned long long>(j["duplicate_completions"].get<std::uint64_t>()));
    out += line;
    const Json& m = j["mct_ns"];
    const Json& d = j["delivery_ns"];
    std::snprintf(line, sizeof line,
                  "  %.3f k msg/s, %.3f Gb/s; completion p50 %.3f us p99 %.3f us; delivery p50 "
                  "%.3f us p99 %.3f us\n",
                  j["msg_rate_kps"].get<double>(), j["goodput_gbps"].get<double>(), us(m, "p50"),
                  us(m, "p99"), us(d, "p50"), us(d, "p99"));
    out += line;
    const Json& c = j["dci"];
    if (!c.is_null()) {
      std::snprintf(line, sizeof line,
                    "  DCI: connects %llu (reconnects %llu), disconnects %llu, RNR NAKs (BUSY) "
                    "%llu, retransmits %llu, timeouts %llu\n",
                    static_cast<unsigned long long>(c["connects"].get<std::uint64_t>()),
                    static_cast<unsigned long long>(c["reconnects"].get<std::uint64_t>()),
                    static_cast<unsigned long long>(c["disconnects"].get<std::uint64_t>()),
                    static_cast<unsigned long long>(c["rx_rnr_naks"].get<std::uint64_t>()),
                    static_cast<unsigned long long>(c["tx_retransmits"].get<std::uint64_t>()),
                    static_cast<unsigned long long>(c["timeouts"].get<std::uint64_t>()));
      out += line;
    }
    const Json& p = j["target_pools"];
    std::snprintf(line, sizeof line,
                  "  targets: contexts opened %llu, open at the end %llu, peak %u per host, "
                  "evicted %llu, requests finding the pool full %llu\n",
                  static_cast<unsigned long long>(p["opened"].get<std::uint64_t>()),
                  static_cast<unsigned long long>(p["open_end"].get<std::uint64_t>()),
                  p["open_peak_max"].get<std::uint32_t>(),
                  static_cast<unsigned long long>(p["evicted"].get<std::uint64_t>()),
                  static_cast<unsigned long long>(p["busy"].get<std::uint64_t>()));
    out += line;
  }
  return out;
}

}  // namespace uroce::testbed
