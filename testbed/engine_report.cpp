#include "testbed/engine_report.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "testbed/engine_host.h"
#include "testbed/rc_flow.h"
#include "testbed/simulator.h"

namespace uroce::testbed {

namespace {

using Json = nlohmann::ordered_json;

double round3(double v) { return std::round(v * 1000.0) / 1000.0; }

// The nearest-rank percentile of sorted values.
TimeNs percentile(const std::vector<TimeNs>& sorted, std::uint32_t pct) {
  if (sorted.empty()) return 0;
  std::size_t rank = (sorted.size() * pct + 99) / 100;
  if (rank == 0) rank = 1;
  return sorted[rank - 1];
}

Json mct_json(const std::vector<TimeNs>& mct) {
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

Json qp_json(RcFlow& f, bool source) {
  RcDriver& d = source ? f.src() : f.dst();
  const std::uint32_t qp = source ? f.src_qp() : f.dst_qp();
  engine::QpStatus st;
  Json j;
  if (d.status(qp, &st) != 0) return Json(nullptr);
  j["qpn"] = st.qpn;
  j["state"] = static_cast<int>(st.state);
  j["tx_packets"] = st.engine.tx_packets;
  j["rx_packets"] = st.engine.rx_packets;
  j["tx_requests"] = st.rc.tx_requests;
  j["tx_retransmits"] = st.rc.tx_retransmits;
  j["timeouts"] = st.rc.timeouts;
  j["rx_seq_naks"] = st.rc.rx_seq_naks;
  j["rx_rnr_naks"] = st.rc.rx_rnr_naks;
  j["go_back_n"] = st.rc.go_back_n;
  j["rx_acks"] = st.rc.rx_acks;
  j["rx_requests"] = st.rc.rx_requests;
  j["rx_duplicates"] = st.rc.rx_duplicates;
  j["drop_out_of_sequence"] = st.rc.drop_out_of_sequence;
  j["tx_acks"] = st.rc.tx_acks;
  j["tx_seq_naks"] = st.rc.tx_seq_naks;
  j["tx_rnr_naks"] = st.rc.tx_rnr_naks;
  return j;
}

}  // namespace

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
    j["setup"] = setup == 0 ? std::string("ok") : std::string(std::strerror(setup));
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
    j["goodput_gbps"] = s.completed == 0 || span == 0
                            ? 0.0
                            : round3(static_cast<double>(s.bytes) * 8.0 / static_cast<double>(span));
    j["mct_ns"] = mct_json(s.mct_ns);
    if (setup == 0) {
      j["src_qp"] = qp_json(f, true);
      j["dst_qp"] = qp_json(f, false);
    }
    arr.push_back(j);
  }
  return arr;
}

namespace {

// The engine's own PFC at one host (pfc_endpoint.h), at the end of the
// run: per lossless priority, what it sent (XOFF, refreshes, XON), what it
// obeyed, the time it held the switch and was held by it, and its staging
// and hold queues' counts and drops.
Json engine_pfc_json(const engine::PfcStatus& s) {
  Json j;
  Json prios = Json::array();
  std::uint64_t xoff = 0;
  std::uint64_t xon = 0;
  std::uint64_t pauses = 0;
  TimeNs paused = 0;
  TimeNs asserted = 0;
  for (std::uint8_t p = 0; p < engine::kNumPfcPrio; ++p) {
    if (((s.enable >> p) & 1) == 0) continue;
    const pfc::IngressPrioCounters& in = s.ingress.prio[p];
    const pfc::PauseGatePrioCounters& g = s.gate.prio[p];
    const engine::PfcEnginePrioCounters& e = s.engine.prio[p];
    Json x;
    x["prio"] = p;
    x["xoff_sent"] = in.xoff_sent;
    x["refresh_sent"] = in.refresh_sent;
    x["xon_sent"] = in.xon_sent;
    x["peak_bytes"] = in.peak_bytes;
    x["asserted_ns"] = s.asserted_ns[p];
    x["pause_rx"] = g.pause_rx;
    x["resume_rx"] = g.resume_rx;
    x["paused_ns"] = s.paused_ns[p];
    x["staged"] = e.staged;
    x["processed"] = e.processed;
    x["stage_full"] = e.stage_full;
    x["admit_drops"] = e.admit_drops;
    x["drops_headroom_full"] = in.drops_headroom_full;
    x["rx_while_paused"] = e.rx_while_paused;
    x["pump_skips"] = e.pump_skips;
    x["tx_held"] = e.tx_held;
    x["tx_released"] = e.tx_released;
    x["tx_hold_full"] = e.tx_hold_full;
    x["tx_storm_drops"] = e.tx_storm_drops;
    prios.push_back(x);
    xoff += in.xoff_sent;
    xon += in.xon_sent;
    pauses += g.pause_rx;
    paused += s.paused_ns[p];
    asserted += s.asserted_ns[p];
  }
  j["link_bps"] = s.link_bps;
  j["xoff_sent"] = xoff;
  j["xon_sent"] = xon;
  j["frames_sent"] = s.engine.pfc_tx;
  j["frames_no_buffer"] = s.engine.pfc_tx_no_buffer;
  j["asserted_ns"] = asserted;
  j["frames_rx"] = s.gate.frames_rx;
  j["pause_rx"] = pauses;
  j["paused_ns"] = paused;
  j["priorities"] = prios;
  return j;
}

}  // namespace

Json engine_json(const Simulator& sim) {
  const Topology& t = sim.topology();
  const EngineFrameCounters& c = sim.engine_frames();
  Json j;
  Json fr;
  fr["tx_records"] = c.tx_records;
  Json un;
  for (std::size_t r = 1; r < c.tx_unroutable.size(); ++r) {
    un[std::string(frame_record_error_name(static_cast<FrameRecordError>(r)))] =
        c.tx_unroutable[r];
  }
  fr["tx_unroutable"] = un;
  fr["tx_refused"] = c.tx_refused;
  fr["rx_frames"] = c.rx_frames;
  fr["switch_dropped"] = c.switch_dropped;
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
    x["rx_frames"] = v.rx_frames;
    x["rx_roce"] = v.rx_roce;
    x["rx_dispatched"] = v.rx_dispatched;
    x["rx_parse_errors"] = v.rx_parse_errors;
    x["rx_not_our_mac"] = v.rx_not_our_mac;
    x["rx_not_our_ip"] = v.rx_not_our_ip;
    x["rx_no_qp"] = v.rx_no_qp;
    x["tx_frames"] = v.tx_frames;
    x["tx_bytes"] = v.tx_bytes;
    x["sq_wqes"] = v.sq_wqes;
    x["rq_wqes"] = v.rq_wqes;
    x["timer_fires"] = v.timer_fires;
    x["tx_over_room"] = e->port().counters().tx_over_room;
    // Only with the engine's own PFC (the host's `pfc` key): without it the
    // summary stays as it was.
    if (e->config().pfc_enable != 0) {
      x["pfc"] = engine_pfc_json(e->vnic().pfc().status(sim.end_ns()));
    }
    hosts.push_back(x);
  }
  j["hosts"] = hosts;
  return j;
}

}  // namespace uroce::testbed
