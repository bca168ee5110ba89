#include "testbed/engine_report.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <vector>

#include "apps/counters_json.h"
#include "apps/pfc_status_json.h"
#include "datapath/policy/dcqcn.h"
#include "datapath/policy/homa.h"
#include "datapath/policy/lossy.h"
#include "testbed/engine_host.h"
#include "testbed/rc_flow.h"
#include "testbed/simulator.h"

namespace uroce::testbed {

namespace {

using Json = nlohmann::ordered_json;

// What the summary shows of a flow's QP: packets, then the RC counters of
// the requester and of the responder.
constexpr auto kQpPackets =
    counters::pick(engine::kQpEngineCounterFields, {"tx_packets", "rx_packets"});
constexpr auto kRequester = counters::pick(transport::kRcCounterFields,
                                           {"tx_requests", "tx_retransmits", "timeouts",
                                            "rx_seq_naks", "rx_rnr_naks", "go_back_n", "rx_acks"});
constexpr auto kResponder = counters::pick(transport::kRcCounterFields,
                                           {"rx_requests", "rx_duplicates", "drop_out_of_sequence",
                                            "tx_acks", "tx_seq_naks", "tx_rnr_naks"});

// What a host's summary shows of its Vnic's counters: RX and TX, then with
// DCQCN or Homa on, their counters.
constexpr auto kHostVnic =
    counters::pick(engine::kVnicCounterFields,
                   {"rx_frames", "rx_roce", "rx_dispatched", "rx_parse_errors", "rx_not_our_mac",
                    "rx_not_our_ip", "rx_no_qp", "tx_frames", "tx_bytes", "sq_wqes", "rq_wqes",
                    "timer_fires"});
constexpr auto kHostDcqcn =
    counters::pick(policy::kDcqcnCounterFields, {"rx_ce", "tx_cnp", "cnp_suppressed",
                                                 "tx_cnp_no_buffer", "rx_cnp", "cc_no_entry"});
constexpr auto kHostHoma =
    counters::pick(policy::kHomaCounterFields,
                   {"homa_peers", "homa_rx_grants", "homa_tx_grants", "homa_rx_cutoffs",
                    "homa_tx_cutoffs", "homa_rx_mlen", "homa_rx_bad", "homa_tx_no_buffer",
                    "homa_grant_no_qp", "homa_cutoffs_updates"});

double round3(double v) { return std::round(v * 1000.0) / 1000.0; }

// `lossy`: the QP's host has selective repeat on; then whether the peer
// accepted it and the connection's RcSrCounters, every field.
Json qp_json(RcFlow& f, bool source, bool lossy) {
  RcDriver& d = source ? f.src() : f.dst();
  const std::uint32_t qp = source ? f.src_qp() : f.dst_qp();
  engine::QpStatus st;
  Json j;
  if (d.status(qp, &st) != 0) return Json(nullptr);
  j["qpn"] = st.qpn;
  j["state"] = static_cast<int>(st.state);
  put_qp_counters(j, st, true);
  if (lossy) {
    j["sr_peer"] = st.sr_peer;
    Json sr;
    counters::put(sr, st.sr);
    j["sr"] = sr;
  }
  return j;
}

}  // namespace

void put_qp_counters(Json& j, const engine::QpStatus& st, bool responder) {
  counters::put(j, st.engine, kQpPackets);
  counters::put(j, st.rc, kRequester);
  if (responder) counters::put(j, st.rc, kResponder);
}

// The nearest-rank percentile of sorted values.
TimeNs percentile(const std::vector<TimeNs>& sorted, std::uint32_t pct) {
  if (sorted.empty()) return 0;
  std::size_t rank = (sorted.size() * pct + 99) / 100;
  if (rank == 0) rank = 1;
  return sorted[rank - 1];
}

Json time_stats_json(const std::vector<TimeNs>& mct) {
  if (mct.empty()) return Json(nullptr);
  std::vector<TimeNs> s = mct;
  std::sort(s.begin(), s.end());
  TimeNs sum = 0;
  for (const TimeNs v : s) sum += v;
  Json j;
  j["min"] = s.front();
  j["avg"] = sum / s.size();
  j["p50"] = percentile(s, 50);
  j["p99"] = percentile(s, 99);
  j["max"] = s.back();
  return j;
}

Json rc_flows_json(const Simulator& sim) {
  const Scenario& sc = sim.scenario();
  Json arr = Json::array();
  for (std::size_t i = 0; i < sim.rc_flows().size(); ++i) {
    const RcFlowSpec& fs = sc.rc_flows[i];
    RcFlow& f = *sim.rc_flows()[i];
    const RcFlowStats& s = f.stats();
    const RcFlowConfig& c = f.config();
    Json j;
    j["name"] = fs.name;
    j["src"] = fs.src;
    j["dst"] = fs.dst;
    j["op"] = fs.write ? "write" : "send";
    j["size_bytes"] = fs.size_bytes;
    j["count"] = fs.count;
    j["window"] = fs.window;
    j["mtu"] = fs.mtu;
    j["sl"] = fs.sl;
    j["dscp"] = c.path.dscp;
    j["start_ns"] = fs.start_ns;
    const int setup = sim.rc_flow_setup()[i];
    j["setup"] = setup == 0                            ? std::string("ok")
                 : setup == Simulator::kRcFlowDisabled ? std::string("disabled")
                                                       : std::string(std::strerror(setup));
    j["src_psn"] = c.src_psn;
    j["dst_psn"] = c.dst_psn;
    j["posted"] = s.posted;
    j["completed"] = s.completed;
    j["bytes"] = s.bytes;
    j["errors"] = s.errors;
    j["first_error_status"] = s.errors == 0 ? Json(nullptr) : Json(s.first_error);
    j["recv_completed"] = s.recv_completed;
    j["recv_bytes"] = s.recv_bytes;
    j["payload_mismatch"] = s.payload_mismatch;
    j["done"] = f.done();
    j["first_post_ns"] = s.posted == 0 ? Json(nullptr) : Json(s.first_post_ns);
    j["last_completion_ns"] = s.completed == 0 ? Json(nullptr) : Json(s.last_completion_ns);
    const TimeNs span = s.last_completion_ns - s.first_post_ns;
    j["goodput_gbps"] =
        s.completed == 0 || span == 0
            ? 0.0
            : round3(static_cast<double>(s.bytes) * 8.0 / static_cast<double>(span));
    j["mct_ns"] = time_stats_json(s.mct_ns);
    if (setup == 0) {
      const ResolvedFlow& rf = sim.topology().rc_flows[i];
      j["src_qp"] = qp_json(f, true, sim.engines()[rf.src]->config().lossy);
      j["dst_qp"] = qp_json(f, false, sim.engines()[rf.dst]->config().lossy);
    }
    arr.push_back(j);
  }
  return arr;
}

Json engine_json(const Simulator& sim) {
  const Topology& t = sim.topology();
  const EngineFrameCounters& c = sim.engine_frames();
  Json j;
  Json fr;
  fr["tx_records"] = c.tx_records;
  Json un;
  for (std::size_t r = 1; r < c.tx_unroutable.size(); ++r) {
    un[std::string(frame_record_error_name(static_cast<FrameRecordError>(r)))] = c.tx_unroutable[r];
  }
  fr["tx_unroutable"] = un;
  fr["tx_refused"] = c.tx_refused;
  fr["rx_frames"] = c.rx_frames;
  fr["switch_dropped"] = c.switch_dropped;
  // Only with a link's loss_rate (a lossy hop).
  const auto& links = sim.scenario().links;
  if (std::any_of(links.begin(), links.end(), [](const LinkSpec& l) { return l.loss_rate > 0; })) {
    fr["link_lost"] = c.link_lost;
  }
  fr["misdelivered"] = c.misdelivered;
  fr["to_constant_host"] = c.to_constant_host;
  if (c.tx_pfc + c.rx_pfc + c.tx_pfc_refused != 0) {
    fr["tx_pfc"] = c.tx_pfc;
    fr["tx_pfc_refused"] = c.tx_pfc_refused;
    fr["rx_pfc"] = c.rx_pfc;
  }
  j["frames"] = fr;
  Json st;
  st["stored"] = sim.frame_store().stored();
  st["peak"] = sim.frame_store().peak();
  st["live_end"] = sim.frame_store().live();
  j["frame_store"] = st;
  Json hosts = Json::array();
  for (std::uint32_t h = 0; h < t.num_hosts; ++h) {
    const EngineHost* e = sim.engines()[h].get();
    if (e == nullptr) continue;
    const engine::VnicCounters& v = e->vnic().counters();
    Json x;
    x["name"] = t.names[h];
    x["services"] = e->services();
    x["polls"] = e->polls();
    counters::put(x, v, kHostVnic);
    x["tx_over_room"] = e->port().counters().tx_over_room;
    x["tx_limit_stops"] = v.tx_limit_stops;
    // Only with loss on receive (the host's `drop_rx_rate` key).
    if (e->config().drop_rx_rate > 0) x["rx_impair_drop"] = v.rx_impair_drop;
    // Only with the engine's own PFC (the host's `pfc` key): without it the
    // summary stays as it was.
    if (e->config().pfc_enable != 0) {
      x["pfc"] = Json(engine::pfc_status_json(e->vnic().pfc().status(sim.end_ns())));
    }
    // Only with DCQCN (the host's `dcqcn` key): the device's counts, and per
    // connected QP its rate at the end and what its CNPs did.
    if (e->config().dcqcn) {
      Json d;
      counters::put(d, e->vnic().policy<policy::Dcqcn>().counters(), kHostDcqcn);
      std::vector<engine::QpStatus> qs;
      e->vnic().qp_status(&qs);
      Json qps = Json::array();
      for (const engine::QpStatus& q : qs) {
        if (!q.dcqcn) continue;
        Json y;
        y["qpn"] = q.qpn;
        y["rate_bps"] = q.cc.rate_bps;
        y["target_bps"] = q.cc.target_bps;
        y["alpha"] = q.cc.alpha;
        y["limited"] = q.cc.limited;
        y["cnps_rx"] = q.cc.rp.cnps;
        y["decreases"] = q.cc.rp.decreases;
        y["ce_rx"] = q.cc.ce_packets;
        y["cnps_tx"] = q.cc.cnps_sent;
        qps.push_back(y);
      }
      d["qps"] = qps;
      x["dcqcn"] = d;
    }
    // Only with selective repeat (the host's `lossy` key): the device's
    // handshake and the sum of its connections' counters, every field.
    if (e->config().lossy) {
      Json l;
      counters::put(l, e->vnic().policy<policy::Lossy>().counters());
      x["lossy"] = l;
    }
    // Only with the Homa-like scheduler (the host's `homa` key).
    if (e->config().homa.enabled) {
      Json m;
      // The device's homa_ counters, named here without the prefix.
      counters::put(m, e->vnic().policy<policy::Homa>().counters(), kHostHoma, "homa_");
      x["homa"] = m;
    }
    hosts.push_back(x);
  }
  j["hosts"] = hosts;
  return j;
}

bool write_mct_csv(const Simulator& sim, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << "flow,message,mct_ns\n";
  const Scenario& sc = sim.scenario();
  for (std::size_t i = 0; i < sim.rc_flows().size(); ++i) {
    if (!sc.rc_flows[i].enabled || !sc.rc_flows[i].mct_samples) continue;
    const std::vector<TimeNs>& m = sim.rc_flows()[i]->stats().mct_ns;
    for (std::size_t k = 0; k < m.size(); ++k) {
      out << sc.rc_flows[i].name << ',' << k << ',' << m[k] << '\n';
    }
  }
  out.close();
  return static_cast<bool>(out);
}

}  // namespace uroce::testbed
