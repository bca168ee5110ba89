#include "apps/uroced/status_json.h"

#include "apps/counters_json.h"
#include "apps/pfc_status_json.h"
#include "apps/uroced/config_dc.h"
#include "apps/uroced/status_values.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>

namespace uroce::sched::homa {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(HomaSettings, enabled, priorities, unsched_priorities,
                                   unsched_bytes, rtt_bytes, grant_increment, overcommit,
                                   max_incoming, fifo_permille, resend_ns, grant_timeout_ns,
                                   max_timeouts, max_messages, cutoffs_every)
}  // namespace uroce::sched::homa

namespace uroce::daemon {

namespace {

using nlohmann::json;

// UC and UD: the counter set, and what became of received packets by reason.
template <class Rx, class C, class Name>
json with_rx_json(const C& c, Name name, const StatusKey& key) {
  json j = c;
  j[std::string(key.name)] = counters::by_reason<Rx>(c.rx, name);
  return j;
}

json uc_json(const transport::UcCounters& c) {
  return with_rx_json<transport::UcRx>(c, transport::uc_rx_name, kUcRxKey);
}

json ud_json(const transport::UdCounters& c) {
  return with_rx_json<transport::UdRx>(c, transport::ud_rx_name, kUdRxKey);
}

// A QP's DCQCN state: its rates and alpha, the reaction point's counters
// ("rp") and the notification point's.
json dcqcn_json(const sched::DcqcnStatus& s) {
  json j = {{"rate_bps", s.rate_bps},
            {"target_bps", s.target_bps},
            {"alpha", s.alpha},
            {"limited", s.limited},
            {"rp", s.rp}};
  counters::put(j, s, kDcqcnValues);
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
            {"waiting", p.waiting},
            {"cc_bps", p.cc_bps},
            {"dcqcn", q.dcqcn ? dcqcn_json(q.cc) : json(nullptr)}};
  counters::put(j, p, kPaceValues);
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
  json j = {{"lcore", lcore}};
  for (const LoopKey& k : kLoopKeys) j[std::string(k.key.name)] = h.*k.member;
  return j;
}

json counters_json(const engine::VnicCounters& c) {
  json j = c;
  counters::put(j, c, kVnicRenamedValues);
  j[std::string(kParseErrorsKey.name)] =
      counters::by_reason<wire::ParseError>(c.parse_error, wire::parse_error_name, 1, true);
  j[std::string(kWqeErrorsKey.name)] = counters::by_reason<shm::WqeError>(
      c.wqe_error, [](shm::WqeError e) { return shm::to_string(e); }, 1, true);
  return j;
}

json arp_json(const port::ArpCounters& c) {
  json j = c;
  j[std::string(kArpDropsKey.name)] = counters::by_reason<port::ArpDrop>(
      c.drops, [](port::ArpDrop d) { return port::to_string(d); }, 1, true);
  return j;
}

json mw_json(const transport::MwCounters& c) {
  json j = c;
  auto name = [](transport::MrError e) { return transport::mr_error_name(e); };
  j[std::string(kMwBindRefusedKey.name)] =
      counters::by_reason<transport::MrError>(c.bind_refused, name, 1, true);
  j[std::string(kMwInvRefusedKey.name)] =
      counters::by_reason<transport::MrError>(c.inv_refused, name, 1, true);
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
    j["sr_peer"] = q.sr_peer;
    j["sr"] = q.sr;
    j["sr_paths"] = q.sr_paths;
    j["sr_avoided"] = q.sr_avoided;
  }
  switch (q.type) {
    case transport::QpType::kRc: j["transport"] = q.rc; break;
    case transport::QpType::kUc: j["transport"] = uc_json(q.uc); break;
    case transport::QpType::kUd: j["transport"] = ud_json(q.ud); break;
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
      // Selective repeat's counters, the streams' summed (docs/lossy.md "DC").
      j["sr"] = q.sr;
      break;
    }
    case transport::QpType::kDct:
      // The RC counters of the contexts it served, retired ones included.
      j["transport"] = q.rc;
      j["dct"] = {{"contexts", q.dct_contexts}, {"counters", q.dct}};
      j["sr"] = q.sr;
      break;
  }
  return j;
}

json dc_json(const engine::VnicConfig& c, const DeviceSnapshot& s) {
  json settings;
  for (const DcKey& k : kDcKeys) settings[std::string(k.name)] = c.*k.vnic;
  json j = {{"settings", settings}, {"pool", nullptr}, {"sr", s.dc_sr}};
  if (!s.has_dc_pool) return j;
  const DcPoolStatus& p = s.dc_pool;
  json pool = {{"counters", p.counters}};
  counters::put(pool, p, kDcPoolValues);
  j["pool"] = pool;
  return j;
}

// The classes as configured now (DeviceSnapshot::classes, which a SIGHUP
// may have changed), or as at start-up for a device that does not say.
json sched_json(const engine::VnicConfig& c, const DeviceSnapshot& s) {
  const sched::TrafficClassConfig& tc = s.has_classes ? s.classes : c.sched.classes;
  json classes = json::array();
  for (std::uint32_t k = 0; k < sched::kNumClasses; ++k) {
    const sched::ClassConfig& cc = tc.classes[k];
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
  json r = {{"counters", h.grants}, {"cutoffs", levels}};
  counters::put(r, h, kHomaReceiverValues);
  j["receiver"] = r;
  return j;
}

json usage_json(const Usage& u) {
  json j = json::object();
  counters::put(j, u, kUsageValues);
  return j;
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

namespace {

// The largest k below n for which fits(k) holds, where fits holds up to
// some bound and not above it (a body grows with each entry it keeps) and
// fits(n) does not hold; 0 when no k from 1 up fits (fits(0) is then the
// caller's to try). About log2(n) calls, each a dump of the body.
template <class Fits>
std::size_t most_that_fit(std::size_t n, const Fits& fits) {
  std::size_t lo = 0;  // 0, or a k that fits
  std::size_t hi = n;  // does not fit
  while (hi - lo > 1) {
    const std::size_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

// A client's lists of plain handles, by their key under "objects" (the QPs'
// list, of objects, is "qps").
struct HandleList {
  const char* name;
  std::vector<std::uint32_t> ClientSummary::*list;
};
constexpr HandleList kHandleLists[] = {{"pds", &ClientSummary::pds},
                                       {"mrs", &ClientSummary::mrs},
                                       {"comp_channels", &ClientSummary::channels},
                                       {"cqs", &ClientSummary::cqs},
                                       {"srqs", &ClientSummary::srqs},
                                       {"ahs", &ClientSummary::ahs}};

// At most `cap` of `handles`; the rest are counted under "<name>_omitted".
void put_handles(json& o, const char* name, const std::vector<std::uint32_t>& handles,
                 std::size_t cap) {
  const std::size_t keep = std::min(cap, handles.size());
  o[name] = std::vector<std::uint32_t>(handles.begin(), handles.begin() + static_cast<long>(keep));
  if (keep < handles.size()) o[std::string(name) + "_omitted"] = handles.size() - keep;
}

}  // namespace

json client_json(const ClientSummary& c, const engine::QpEngineCounters* qp_engine,
                 std::size_t cap) {
  json j;
  j["id"] = c.id;
  j["pid"] = c.cred.pid;
  j["uid"] = c.cred.uid;
  j["gid"] = c.cred.gid;
  j["device"] = c.device;
  counters::put(j, c, kClientValues);
  j["used"] = usage_json(c.used);
  if (qp_engine != nullptr) j[std::string(kClientQpKey.name)] = *qp_engine;
  json o;
  for (const HandleList& h : kHandleLists) put_handles(o, h.name, c.*h.list, cap);
  json qps = json::array();
  const std::size_t keep = std::min(cap, c.qps.size());
  for (std::size_t i = 0; i < keep; ++i) {
    const ClientQp& q = c.qps[i];
    json e{{"handle", q.handle}, {"qpn", q.qpn}};
    if (q.mcast_groups != 0) e["mcast_groups"] = q.mcast_groups;
    qps.push_back(e);
  }
  o["qps"] = qps;
  if (keep < c.qps.size()) o["qps_omitted"] = c.qps.size() - keep;
  j["objects"] = o;
  return j;
}

json stages_json(const std::vector<engine::StageReport>& stages) {
  json out = json::array();
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const engine::StageReport& r = stages[i];
    const engine::StageWorst w = engine::slowest(r.recent, kStageSlowest);
    json mean = json::object(), max = json::object();
    json j = {{"shard", i},
              {std::string(kStageUntrackedKey.name), r.untracked},
              {std::string(kStageRecentKey.name), r.recent.size()}};
    for (const StageKey& k : kStageKeys) {
      const std::string name(k.key.name);
      j[name] = r.hist.*k.hist;
      mean[name] = w.mean.*k.record;
      max[name] = w.max.*k.record;
    }
    j["slowest"] = {{"fraction", kStageSlowest}, {"count", w.count}, {"mean", mean}, {"max", max}};
    out.push_back(j);
  }
  return out;
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
  json objects = json::object();
  counters::put(objects, s, kObjectValues);
  j["objects"] = objects;
  if (!s.shards.empty()) {
    json shards = json::array();
    for (std::size_t i = 0; i < s.shards.size(); ++i) {
      json h = {{"shard", i}};
      counters::put(h, s.shards[i], kShardValues);
      shards.push_back(h);
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
  if (const std::optional<Device::PortCounts> pc = d.port_counts()) {
    json ps = json::object();
    counters::put(ps, pc->stats);
    j["port_stats"] = ps;
    if (pc->xdp) {
      json x = json::object();
      counters::put(x, *pc->xdp);
      j["port_xdp"] = x;
    }
  }
  j["arp"] = arp_json(s.arp);
  j["mw"] = mw_json(s.mw);
  j["pfc"] = engine::pfc_status_json(s.pfc);
  j["sched"] = sched_json(c, s);
  j["homa"] = homa_json(c, s);
  j["dc"] = dc_json(c, s);
  if (!s.stages.empty()) j["stages"] = stages_json(s.stages);
  return j;
}

QpSums qp_sums(const std::vector<DeviceSnapshot>& snaps) {
  QpSums out;
  std::map<std::tuple<std::size_t, int, int>, std::size_t> line;  // -> index in classes
  for (std::size_t d = 0; d < snaps.size(); ++d) {
    for (const engine::QpStatus& q : snaps[d].qp_status) {
      const auto key = std::make_tuple(d, static_cast<int>(q.type), static_cast<int>(q.tx_class));
      auto [it, fresh] = line.try_emplace(key, out.classes.size());
      if (fresh) {
        QpClassSum& n = out.classes.emplace_back();
        n.device = d;
        n.type = q.type;
        n.tx_class = q.tx_class;
      }
      QpClassSum& c = out.classes[it->second];
      ++c.qps;
      counters::add(c.engine, q.engine);
      counters::add(c.rc, q.rc);
      counters::add(c.uc, q.uc);
      for (std::size_t r = 0; r < c.uc.rx.size(); ++r) c.uc.rx[r] += q.uc.rx[r];
      counters::add(c.ud, q.ud);
      for (std::size_t r = 0; r < c.ud.rx.size(); ++r) c.ud.rx[r] += q.ud.rx[r];
      c.pace.parks += q.pace.parks;
      c.pace.paced_ns += q.pace.paced_ns;
      c.pace.sent_bytes += q.pace.sent_bytes;
      if (q.dcqcn) {
        c.dcqcn = true;
        counters::add(c.cc.rp, q.cc.rp);
        c.cc.ce_packets += q.cc.ce_packets;
        c.cc.cnps_sent += q.cc.cnps_sent;
        c.cc.cnps_suppressed += q.cc.cnps_suppressed;
      }
      counters::add(c.homa, q.homa);
      counters::add(c.sr, q.sr);
      counters::add(c.dci, q.dci);
      for (const engine::QpStatus::DcStream& st : q.dci_streams)
        counters::add(c.dci_streams, st.ctr);
      counters::add(c.dct, q.dct);
      c.dct_contexts += q.dct_contexts;
      counters::add(out.clients[q.client], q.engine);
    }
  }
  return out;
}

json qp_class_json(const std::string& device, const QpClassSum& c) {
  json j = {{"device", device},
            {"type", qp_type_name(c.type)},
            {"class", c.tx_class},
            {std::string(kQpClassQpsKey.name), c.qps},
            {"engine", c.engine}};
  json pace = json::object();
  counters::put(pace, c.pace, kPaceValues);
  j["pace"] = pace;
  switch (c.type) {
    case transport::QpType::kRc:
      j["transport"] = c.rc;
      j["homa"] = c.homa;
      j["sr"] = c.sr;
      break;
    case transport::QpType::kUc: j["transport"] = uc_json(c.uc); break;
    case transport::QpType::kUd: j["transport"] = ud_json(c.ud); break;
    case transport::QpType::kDci:
      j["transport"] = c.rc;
      j["dci"] = c.dci;
      j["dci_streams"] = c.dci_streams;
      break;
    case transport::QpType::kDct: {
      j["transport"] = c.rc;
      json t = c.dct;
      t[std::string(kDctContextsKey.name)] = c.dct_contexts;
      j["dct"] = t;
      break;
    }
  }
  if (c.dcqcn) {
    json d = {{"rp", c.cc.rp}};
    counters::put(d, c.cc, kDcqcnValues);
    j["dcqcn"] = d;
  }
  return j;
}

std::string status_json(const DaemonInfo& info, const std::vector<Device*>& devices,
                        const std::vector<DeviceSnapshot>& snaps, bool with_qps,
                        const std::vector<ClientSummary>* clients, std::size_t max_bytes,
                        const QpSums* sums) {
  json j;
  j["daemon"] = {{"version", info.version},
                 {"pid", info.pid},
                 {"run_dir", info.run_dir},
                 {"socket", info.socket},
                 {"poll", info.poll},
                 {"lcore", info.lcores.empty() ? 0u : info.lcores.front()},
                 {"lcores", info.lcores},
                 {"engine_cpu", info.engine_cpu},
                 {std::string(kUptimeKey.name), info.uptime_s},
                 {std::string(kClientsKey.name), info.clients}};
  if (info.qp_classes_omitted != 0) {
    j["daemon"][std::string(kQpClassesOmittedKey.name)] = info.qp_classes_omitted;
  }
  j["daemon"]["limits"] = limits_json(info.limits);
  json workers = json::object();
  counters::put(workers, info.workers, kWorkerValues);
  j["daemon"]["workers"] = workers;
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
  json cm = json::object();
  counters::put(cm, c, kCmValues);
  counters::put(cm, c.service);
  counters::put(cm, c.machine);
  j["cm"] = cm;
  if (sums != nullptr) {
    json classes = json::array();
    for (const QpClassSum& k : sums->classes) {
      if (k.device < devices.size()) {
        classes.push_back(qp_class_json(devices[k.device]->config().name, k));
      }
    }
    j["qp_classes"] = classes;
  }
  json caps = json::array();
  for (const CaptureStatus& c : info.captures) {
    json e{{"device", c.device}, {"counters", c.counters}};
    counters::put(e, c, kCaptureValues);
    caps.push_back(e);
  }
  j["captures"] = caps;
  // Each client's handle lists hold at most `cap` entries.
  const auto put_clients = [&](std::size_t cap) {
    json cl = json::array();
    for (const auto& c : *clients) {
      const engine::QpEngineCounters* q = nullptr;
      if (sums != nullptr) {
        static const engine::QpEngineCounters kNone{};
        const auto it = sums->clients.find(c.id);
        q = it != sums->clients.end() ? &it->second : &kNone;
      }
      cl.push_back(client_json(c, q, cap));
    }
    j["clients"] = cl;
  };
  if (clients != nullptr) put_clients(SIZE_MAX);
  if (with_qps) j["qps"] = json(qps);
  std::string out = j.dump();
  if (out.size() <= max_bytes) return out;
  // Too big: first keep as many QP lines as fit; then cut every client's
  // handle lists to as many entries as fit (the same number for each
  // list); then keep as many clients as fit. A body that still does not
  // fit (its devices alone are too many) is returned so (its caller
  // decides: the control session refuses one over a message).
  const auto fits = [&] {
    out = j.dump();
    return out.size() <= max_bytes;
  };
  if (with_qps && !qps.empty()) {
    j["qps_truncated"] = true;
    const auto keep_qps = [&](std::size_t k) {
      j["qps"] = json(std::vector<json>(qps.begin(), qps.begin() + static_cast<long>(k)));
      return fits();
    };
    if (keep_qps(most_that_fit(qps.size(), keep_qps))) return out;
  }
  if (clients == nullptr) return out;
  std::size_t longest = 0;
  for (const ClientSummary& c : *clients) {
    for (const HandleList& h : kHandleLists) longest = std::max(longest, (c.*h.list).size());
    longest = std::max(longest, c.qps.size());
  }
  j["client_objects_truncated"] = true;
  const auto cap_lists = [&](std::size_t cap) {
    put_clients(cap);
    return fits();
  };
  if (cap_lists(most_that_fit(longest, cap_lists))) return out;
  // Every handle list empty and still too big (a few hundred clients): the
  // first clients that fit stay, and the body says how many it left out.
  const json all = j["clients"];
  const auto keep_clients = [&](std::size_t k) {
    j["clients"] = json(all.begin(), all.begin() + static_cast<long>(k));
    j["clients_omitted"] = all.size() - k;
    return fits();
  };
  (void)keep_clients(most_that_fit(all.size(), keep_clients));
  return out;
}

}  // namespace uroce::daemon
