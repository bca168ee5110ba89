#include "apps/uroced/status_json.h"

#include "apps/counters_json.h"
#include "apps/pfc_status_json.h"
#include "apps/uroced/config_dc.h"

namespace uroce::sched {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DcqcnStatus, rate_bps, target_bps, alpha, limited, rp,
                                   ce_packets, cnps_sent, cnps_suppressed)
}  // namespace uroce::sched

namespace uroce::sched::homa {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(HomaSettings, enabled, priorities, unsched_priorities,
                                   unsched_bytes, rtt_bytes, grant_increment, overcommit,
                                   max_incoming, fifo_permille, resend_ns, grant_timeout_ns,
                                   max_timeouts, max_messages, cutoffs_every)
}  // namespace uroce::sched::homa

namespace uroce::daemon {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(WorkerPoolStats, workers, idle, queued, started, retired, tasks)

namespace {

using nlohmann::json;

// UC and UD: the counter set, and what became of received packets by reason.
template <class Rx, class C, class Name>
json with_rx_json(const C& c, Name name) {
  json j = c;
  j["rx"] = counters::by_reason<Rx>(c.rx, name);
  return j;
}

const char* qp_state_text(transport::QpState s) { return transport::qp_state_name(s); }

// A QP's TX class and rate limit (uroce-ctl sched).
json qp_sched_json(const engine::QpStatus& q) {
  const sched::PaceStatus& p = q.pace;
  json j = {{"class", q.tx_class},
            {"pinned", q.class_pinned},
            {"paced", q.paced},
            {"rate_bps", p.spec.rate_bps},
            {"burst_bytes", p.spec.burst_bytes},
            {"typical_bytes", p.spec.typical_bytes},
            {"parks", p.parks},
            {"paced_ns", p.paced_ns},
            {"sent_bytes", p.sent_bytes},
            {"waiting", p.waiting},
            {"cc_bps", p.cc_bps},
            {"dcqcn", q.dcqcn ? json(q.cc) : json(nullptr)}};
  // Isolation auto: what the classifier makes of the QP.
  if (q.auto_kind >= 0) {
    j["kind"] = sched::flow_kind_name(static_cast<sched::FlowKind>(q.auto_kind));
  }
  return j;
}

}  // namespace

const char* qp_type_name(transport::QpType t) {
  switch (t) {
    case transport::QpType::kRc: return "RC";
    case transport::QpType::kUc: return "UC";
    case transport::QpType::kUd: return "UD";
    case transport::QpType::kDci: return "DCI";
    case transport::QpType::kDct: return "DCT";
  }
  return "?";
}

json loop_json(std::uint32_t lcore, const engine::LoopHistograms& h) {
  return {{"lcore", lcore},
          {"work_ns", h.work_ns},
          {"idle_ns", h.idle_ns},
          {"oversleep_ns", h.oversleep_ns}};
}

json counters_json(const engine::VnicCounters& c) {
  json j = c;
  // The CQ and comp-channel sets, under the names they have always had here.
  j["cqes"] = c.cq.cqes;
  j["cq_overflow"] = c.cq.overflow;
  j["comp_events"] = c.comp.records;
  j["comp_events_unsolicited"] = c.cq.unsolicited;
  j["comp_event_writes"] = c.comp.writes;
  j["comp_event_errors"] = c.comp.errors;
  j["parse_errors"] =
      counters::by_reason<wire::ParseError>(c.parse_error, wire::parse_error_name, 1, true);
  j["wqe_errors"] = counters::by_reason<shm::WqeError>(
      c.wqe_error, [](shm::WqeError e) { return shm::to_string(e); }, 1, true);
  return j;
}

json arp_json(const port::ArpCounters& c) {
  json j = c;
  j["drops"] = counters::by_reason<port::ArpDrop>(
      c.drops, [](port::ArpDrop d) { return port::to_string(d); }, 1, true);
  return j;
}

json mw_json(const transport::MwCounters& c) {
  json j = c;
  auto name = [](transport::MrError e) { return transport::mr_error_name(e); };
  j["bind_refused"] = counters::by_reason<transport::MrError>(c.bind_refused, name, 1, true);
  j["inv_refused"] = counters::by_reason<transport::MrError>(c.inv_refused, name, 1, true);
  return j;
}

json qp_json(const std::string& device, const engine::QpStatus& q) {
  json j;
  j["device"] = device;
  j["id"] = q.id;
  j["qpn"] = q.qpn;
  j["type"] = qp_type_name(q.type);
  j["state"] = qp_state_text(q.state);
  j["client"] = q.client;
  j["dest_qpn"] = q.dest_qpn;
  j["send_queue"] = q.send_queue;
  j["recv_queue"] = q.recv_queue;
  j["engine"] = q.engine;
  j["sched"] = qp_sched_json(q);
  // RC only: whether the peer runs the Homa-like scheduler too (the
  // connection is scheduled), and the sender's counters.
  if (q.type == transport::QpType::kRc) {
    j["homa_peer"] = q.homa_peer;
    j["homa"] = q.homa;
  }
  switch (q.type) {
    case transport::QpType::kRc: j["transport"] = q.rc; break;
    case transport::QpType::kUc:
      j["transport"] = with_rx_json<transport::UcRx>(q.uc, transport::uc_rx_name);
      break;
    case transport::QpType::kUd:
      j["transport"] = with_rx_json<transport::UdRx>(q.ud, transport::ud_rx_name);
      break;
    case transport::QpType::kDci: {
      // The lanes' RC counters summed, then one line per stream.
      j["transport"] = q.rc;
      json streams = json::array();
      for (std::size_t i = 0; i < q.dci_streams.size(); ++i) {
        const engine::QpStatus::DcStream& s = q.dci_streams[i];
        streams.push_back({{"stream", i},
                           {"bound", s.bound},
                           {"dctn", s.dctn},
                           {"conn", s.conn},
                           {"syn", s.syn},
                           {"send_queue", s.send_queue},
                           {"counters", s.ctr}});
      }
      j["dci"] = {{"counters", q.dci}, {"streams", streams}};
      break;
    }
    case transport::QpType::kDct:
      // The RC counters of the contexts it served, retired ones included.
      j["transport"] = q.rc;
      j["dct"] = {{"contexts", q.dct_contexts}, {"counters", q.dct}};
      break;
  }
  return j;
}

json dc_json(const engine::VnicConfig& c, const DeviceSnapshot& s) {
  json settings;
  for (const DcKey& k : kDcKeys) settings[std::string(k.name)] = c.*k.vnic;
  json j = {{"settings", settings}, {"pool", nullptr}};
  if (!s.has_dc_pool) return j;
  const DcPoolStatus& p = s.dc_pool;
  j["pool"] = {{"contexts", p.capacity},
               {"open", p.open},
               {"bytes", p.bytes},
               {"counters", p.counters}};
  return j;
}

json sched_json(const engine::VnicConfig& c) {
  json classes = json::array();
  for (std::uint32_t k = 0; k < sched::kNumClasses; ++k) {
    const sched::ClassConfig& cc = c.sched.classes.classes[k];
    classes.push_back({{"class", k},
                       {"mode", cc.mode == sched::ClassMode::kStrict ? "strict" : "weighted"},
                       {"weight", cc.weight},
                       {"rate_mbps", cc.rate_mbps}});
  }
  return {{"isolation", std::string(sched::isolation_name(c.sched.isolation))},
          {"pace_granularity_ns", c.pacer.granularity_ns},
          {"classes", classes},
          {"dcqcn",
           {{"enabled", c.dcqcn.enabled},
            {"line_rate_bps", c.dcqcn.rp.line_rate_bps},
            {"cnp_dscp", c.dcqcn.cnp_dscp},
            {"cnp_interval_ns", c.dcqcn.cnp_interval_ns}}}};
}

json homa_json(const engine::VnicConfig& c, const DeviceSnapshot& s) {
  json j = {{"settings", c.homa},
            {"unsched_levels", c.homa.unsched_levels()},
            {"receiver", nullptr}};
  if (!s.has_homa) return j;
  const HomaReceiverStatus& h = s.homa;
  // Level k takes lengths up to max_length (the last any length: null) at
  // network priority top - k.
  json levels = json::array();
  for (std::uint32_t k = 0; k < h.cutoffs.levels && k < sched::homa::kMaxLevels; ++k) {
    const bool last = k + 1 == h.cutoffs.levels || h.cutoffs.max_length[k] == UINT64_MAX;
    levels.push_back({{"level", k},
                      {"priority", c.homa.top_priority() - static_cast<int>(k)},
                      {"max_length", last ? json(nullptr) : json(h.cutoffs.max_length[k])}});
    if (last) break;
  }
  j["receiver"] = {{"tracked", h.tracked},
                   {"outstanding", h.outstanding},
                   {"counters", h.grants},
                   {"generation", h.generation},
                   {"cutoffs", levels}};
  return j;
}

json usage_json(const Usage& u) {
  return {{"connections", u.connections},
          {"qps", u.qps},
          {"cqs", u.cqs},
          {"mrs", u.mrs},
          {"reg_bytes", u.reg_bytes},
          {"map_bytes", u.map_bytes}};
}

json limits_json(const Limits& l) {
  return {{"connections", l.connections},
          {"user_connections", l.user_connections},
          {"user_qps", l.user_qps},
          {"user_cqs", l.user_cqs},
          {"user_mrs", l.user_mrs},
          {"user_reg_bytes", l.user_reg_bytes},
          {"user_map_bytes", l.user_map_bytes},
          {"client_qps", l.client_qps},
          {"client_cqs", l.client_cqs},
          {"client_mrs", l.client_mrs},
          {"client_reg_bytes", l.client_reg_bytes},
          {"client_map_bytes", l.client_map_bytes}};
}

json client_json(const ClientSummary& c) {
  json j;
  j["id"] = c.id;
  j["pid"] = c.cred.pid;
  j["uid"] = c.cred.uid;
  j["gid"] = c.cred.gid;
  j["device"] = c.device;
  j["requests"] = c.requests;
  j["bad_requests"] = c.bad_requests;
  j["used"] = usage_json(c.used);
  json o;
  o["pds"] = c.pds;
  o["mrs"] = c.mrs;
  o["comp_channels"] = c.channels;
  o["cqs"] = c.cqs;
  o["srqs"] = c.srqs;
  o["ahs"] = c.ahs;
  json qps = json::array();
  for (const auto& [h, qpn] : c.qps) qps.push_back({{"handle", h}, {"qpn", qpn}});
  o["qps"] = qps;
  j["objects"] = o;
  return j;
}

json device_json(const Device& d, const DeviceSnapshot& s) {
  const engine::VnicConfig& c = d.config();
  json j;
  j["name"] = c.name;
  j["index"] = d.index();
  j["uverbs"] = d.uverbs();
  j["port"] = d.port_name();
  if (!d.port_mode().empty()) j["port_mode"] = d.port_mode();
  j["mac"] = c.mac.to_string();
  j["ipv4"] = c.ip.to_string();
  j["ipv6_link_local"] = wire::Ipv6Addr::link_local(c.mac).to_string();
  j["ipv6"] = c.ip6.is_zero() ? std::string() : c.ip6.to_string();
  j["mtu"] = c.eth_mtu;
  j["active_mtu"] = wire::path_mtu_bytes(d.active_mtu());
  j["objects"] = {{"qps", s.qps}, {"cqs", s.cqs}, {"srqs", s.srqs}, {"mrs", s.mrs}, {"ahs", s.ahs}};
  if (!s.shards.empty()) {
    json shards = json::array();
    for (std::size_t i = 0; i < s.shards.size(); ++i) {
      const DeviceSnapshot::Shard& h = s.shards[i];
      shards.push_back({{"shard", i},
                        {"clients", h.clients},
                        {"qps", h.qps},
                        {"queue_frames", h.queue_frames},
                        {"rx_frames", h.rx_frames},
                        {"tx_frames", h.tx_frames},
                        {"rx_handoff", h.rx_handoff},
                        {"handed_in", h.handed_in}});
    }
    j["shards"] = shards;
  }
  j["counters"] = counters_json(s.counters);
  policy::each_counter_set(s.policy, [&](const auto& c) { counters::put(j["counters"], c); });
  if (s.has_port_tx) {
    j["counters"]["port_tx"] = s.port_tx;
  }
  if (s.has_port_rx) {
    j["counters"]["port_rx"] = s.port_rx;
  }
  if (const port::PortInfo* p = d.port_info()) {
    j["port_info"] = {{"driver", p->driver},
                      {"rx_desc", p->rx_desc},
                      {"tx_desc", p->tx_desc},
                      {"queues", p->queues},
                      {"rss", p->rss},
                      {"reta_size", p->reta_size},
                      {"rss_key_size", p->rss_key_size},
                      {"rss_types_offered", p->rss_types_offered},
                      {"rss_types", p->rss_types},
                      {"rss_key", p->rss_key},
                      {"rx_desc_max", p->rx_desc_max},
                      {"tx_desc_max", p->tx_desc_max},
                      {"max_mtu", p->max_mtu},
                      {"rx_buf", p->rx_buf},
                      {"rx_scatter", p->rx_scatter},
                      {"rx_offloads_offered", p->rx_offloads_offered},
                      {"tx_offloads_offered", p->tx_offloads_offered},
                      {"rx_offloads", p->rx_offloads},
                      {"tx_offloads", p->tx_offloads}};
  }
  j["arp"] = arp_json(s.arp);
  j["mw"] = mw_json(s.mw);
  j["pfc"] = engine::pfc_status_json(s.pfc);
  j["sched"] = sched_json(c);
  j["homa"] = homa_json(c, s);
  j["dc"] = dc_json(c, s);
  return j;
}

std::string status_json(const DaemonInfo& info, const std::vector<Device*>& devices,
                        const std::vector<DeviceSnapshot>& snaps, bool with_qps,
                        const std::vector<ClientSummary>* clients, std::size_t max_bytes) {
  json j;
  j["daemon"] =
      {{"version", info.version},   {"pid", info.pid},
       {"run_dir", info.run_dir},   {"socket", info.socket},
       {"poll", info.poll},         {"lcore", info.lcores.empty() ? 0u : info.lcores.front()},
       {"lcores", info.lcores},     {"engine_cpu", info.engine_cpu},
       {"uptime_s", info.uptime_s}, {"clients", info.clients}};
  j["daemon"]["limits"] = limits_json(info.limits);
  j["daemon"]["workers"] = info.workers;
  if (info.engine) j["daemon"]["engine"] = *info.engine;
  if (!info.loops.empty()) {
    json loops = json::array();
    for (std::size_t k = 0; k < info.loops.size(); ++k) {
      loops.push_back(loop_json(k < info.lcores.size() ? info.lcores[k] : 0u, info.loops[k]));
    }
    j["daemon"]["engine_loops"] = loops;
  }
  json users = json::array();
  for (const auto& [uid, u] : info.users) {
    json e = usage_json(u);
    e["uid"] = uid;
    users.push_back(e);
  }
  j["daemon"]["users"] = users;
  json devs = json::array();
  std::vector<json> qps;
  for (std::size_t i = 0; i < devices.size() && i < snaps.size(); ++i) {
    devs.push_back(device_json(*devices[i], snaps[i]));
    if (with_qps) {
      for (const auto& q : snaps[i].qp_status) {
        qps.push_back(qp_json(devices[i]->config().name, q));
      }
    }
  }
  j["devices"] = devs;
  const CmStatus& c = info.cm;
  json cm = {{"files", c.files},
             {"ids", c.ids},
             {"listeners", c.listeners},
             {"connections", c.connections}};
  counters::put(cm, c.service);
  counters::put(cm, c.machine);
  j["cm"] = cm;
  json caps = json::array();
  for (const CaptureStatus& c : info.captures) {
    caps.push_back({{"device", c.device},
                    {"count", c.count},
                    {"snaplen", c.snaplen},
                    {"written", c.written},
                    {"counters", c.counters}});
  }
  j["captures"] = caps;
  if (clients != nullptr) {
    json cl = json::array();
    for (const auto& c : *clients) cl.push_back(client_json(c));
    j["clients"] = cl;
  }
  if (!with_qps) return j.dump();
  // Keep as many QP lines as fit, halving until the body does.
  std::size_t keep = qps.size();
  for (;;) {
    j["qps"] = json(std::vector<json>(qps.begin(), qps.begin() + static_cast<long>(keep)));
    if (keep < qps.size()) j["qps_truncated"] = true;
    std::string s = j.dump();
    if (s.size() <= max_bytes || keep == 0) return s;
    keep /= 2;
  }
}

}  // namespace uroce::daemon
