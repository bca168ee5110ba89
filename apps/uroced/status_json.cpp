#include "apps/uroced/status_json.h"

#include "apps/pfc_status_json.h"
#include "apps/uroced/config_dc.h"

namespace uroce::sched {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DcqcnCounters, cnps, cnps_ignored, decreases, fast_recovery,
                                   additive, hyper)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DcqcnStatus, rate_bps, target_bps, alpha, limited, rp,
                                   ce_packets, cnps_sent, cnps_suppressed)
}  // namespace uroce::sched

namespace uroce::sched::homa {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(GrantCounters, messages, completed, grants, resends, fifo_grants,
                                   granted_bytes, table_full, bad_length, incoming_capped)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(HomaSettings, enabled, priorities, unsched_priorities,
                                   unsched_bytes, rtt_bytes, grant_increment, overcommit,
                                   max_incoming, fifo_permille, resend_ns, grant_timeout_ns,
                                   max_timeouts, max_messages, cutoffs_every)
}  // namespace uroce::sched::homa

namespace uroce::transport {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RcHomaCounters, gated, mlen, wait_grant, grants, grant_stale,
                                   timeouts, fallbacks)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DcTargetCounters, opened, restarted, retired_pressure,
                                   retired_disconnect, retired_stale, stale_conn, gone, unknown,
                                   busy, record_overwrites)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DctCounters, rx_requests, key_violations, drop_state,
                                   drop_not_dc, drop_other_dct, drop_stale, drop_busy_later,
                                   tx_gone, tx_unknown, tx_busy, tx_key_violation, tx_no_buffer)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DciCounters, bad_lane, bad_status, stream_recoveries, other_conn)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DcStreamCounters, connects, wait_switch, disconnects, gone,
                                   unknown_restart, unknown_abort, busy, key_violations,
                                   stale_answers)
}  // namespace uroce::transport

namespace uroce::daemon {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(WorkerPoolStats, workers, idle, queued, started, retired, tasks)
}  // namespace uroce::daemon
namespace uroce::engine {
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(EngineRunCounters, iterations, idle_iterations, sleeps, slept_ns,
                                   yields, yields_switched, calls, app_quiet_sleeps)
}  // namespace uroce::engine
namespace uroce::daemon {

namespace {

using nlohmann::json;

json rc_json(const transport::RcCounters& c) {
  json j;
  j["tx_requests"] = c.tx_requests;
  j["tx_retransmits"] = c.tx_retransmits;
  j["tx_no_buffer"] = c.tx_no_buffer;
  j["tx_build_errors"] = c.tx_build_errors;
  j["wait_window"] = c.wait_window;
  j["wait_fence"] = c.wait_fence;
  j["wait_rd_atomic"] = c.wait_rd_atomic;
  j["wait_local_inv"] = c.wait_local_inv;
  j["local_errors"] = c.local_errors;
  j["local_invalidates"] = c.local_invalidates;
  j["local_inv_errors"] = c.local_inv_errors;
  j["mw_binds"] = c.mw_binds;
  j["mw_bind_errors"] = c.mw_bind_errors;
  j["rx_acks"] = c.rx_acks;
  j["rx_read_responses"] = c.rx_read_responses;
  j["rx_atomic_acks"] = c.rx_atomic_acks;
  j["rx_seq_naks"] = c.rx_seq_naks;
  j["rx_rnr_naks"] = c.rx_rnr_naks;
  j["rx_error_naks"] = c.rx_error_naks;
  j["timeouts"] = c.timeouts;
  j["go_back_n"] = c.go_back_n;
  j["retry_exceeded"] = c.retry_exceeded;
  j["rnr_retry_exceeded"] = c.rnr_retry_exceeded;
  j["drop_stale_ack"] = c.drop_stale_ack;
  j["drop_ghost_ack"] = c.drop_ghost_ack;
  j["drop_response_gap"] = c.drop_response_gap;
  j["drop_bad_response"] = c.drop_bad_response;
  j["drop_duplicate_nak"] = c.drop_duplicate_nak;
  j["drop_reserved_aeth"] = c.drop_reserved_aeth;
  j["rx_reserved_naks"] = c.rx_reserved_naks;
  j["rx_bad_response_opcode"] = c.rx_bad_response_opcode;
  j["rx_requests"] = c.rx_requests;
  j["rx_duplicates"] = c.rx_duplicates;
  j["drop_out_of_sequence"] = c.drop_out_of_sequence;
  j["drop_dup_unknown"] = c.drop_dup_unknown;
  j["drop_no_resource"] = c.drop_no_resource;
  j["tx_acks"] = c.tx_acks;
  j["tx_read_responses"] = c.tx_read_responses;
  j["tx_atomic_acks"] = c.tx_atomic_acks;
  j["tx_seq_naks"] = c.tx_seq_naks;
  j["tx_rnr_naks"] = c.tx_rnr_naks;
  j["tx_nak_invalid_request"] = c.tx_nak_invalid_request;
  j["tx_nak_remote_access"] = c.tx_nak_remote_access;
  j["tx_nak_remote_op"] = c.tx_nak_remote_op;
  j["rx_unsupported_ops"] = c.rx_unsupported_ops;
  j["atomics_executed"] = c.atomics_executed;
  j["atomics_replayed"] = c.atomics_replayed;
  j["reads_replayed"] = c.reads_replayed;
  j["rx_invalidates"] = c.rx_invalidates;
  j["rx_inv_refused"] = c.rx_inv_refused;
  j["drop_state"] = c.drop_state;
  j["drop_not_rc"] = c.drop_not_rc;
  j["drop_qpn"] = c.drop_qpn;
  j["drop_pkey"] = c.drop_pkey;
  j["drop_addr"] = c.drop_addr;
  j["cq_overflow"] = c.cq_overflow;
  return j;
}

// {reason name: count} for a counter array indexed by the enum E.
template <class E, std::size_t N, class Name>
json by_reason(const std::array<std::uint64_t, N>& counts, Name name) {
  json j;
  for (std::size_t i = 0; i < N; ++i) j[name(static_cast<E>(i))] = counts[i];
  return j;
}

json uc_json(const transport::UcCounters& c) {
  json j;
  j["tx_packets"] = c.tx_packets;
  j["tx_payload_bytes"] = c.tx_payload_bytes;
  j["tx_messages"] = c.tx_messages;
  j["tx_no_buffer"] = c.tx_no_buffer;
  j["tx_local_err"] = c.tx_local_err;
  j["rx_abandoned"] = c.rx_abandoned;
  j["cq_overflow"] = c.cq_overflow;
  j["rx"] = by_reason<transport::UcRx>(c.rx, transport::uc_rx_name);
  return j;
}

json ud_json(const transport::UdCounters& c) {
  json j;
  j["tx_packets"] = c.tx_packets;
  j["tx_payload_bytes"] = c.tx_payload_bytes;
  j["tx_too_long"] = c.tx_too_long;
  j["tx_no_buffer"] = c.tx_no_buffer;
  j["tx_local_err"] = c.tx_local_err;
  j["cq_overflow"] = c.cq_overflow;
  j["rx"] = by_reason<transport::UdRx>(c.rx, transport::ud_rx_name);
  return j;
}

json qp_engine_json(const engine::QpEngineCounters& c) {
  json j;
  j["rx_packets"] = c.rx_packets;
  j["rx_bytes"] = c.rx_bytes;
  j["tx_packets"] = c.tx_packets;
  j["tx_bytes"] = c.tx_bytes;
  j["sq_wqes"] = c.sq_wqes;
  j["rq_wqes"] = c.rq_wqes;
  j["bad_wqes"] = c.bad_wqes;
  j["sq_full"] = c.sq_full;
  j["rq_full"] = c.rq_full;
  j["timer_fires"] = c.timer_fires;
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

json counters_json(const engine::VnicCounters& c) {
  json j;
  j["iterations"] = c.iterations;
  j["rx_frames"] = c.rx_frames;
  j["rx_bytes"] = c.rx_bytes;
  j["rx_arp"] = c.rx_arp;
  j["rx_nd"] = c.rx_nd;
  j["rx_roce_ipv6"] = c.rx_roce_ipv6;
  j["rx_roce"] = c.rx_roce;
  j["rx_dispatched"] = c.rx_dispatched;
  j["rx_parse_errors"] = c.rx_parse_errors;
  j["rx_not_our_mac"] = c.rx_not_our_mac;
  j["rx_not_our_ip"] = c.rx_not_our_ip;
  j["rx_no_qp"] = c.rx_no_qp;
  j["rx_dc_no_target"] = c.rx_dc_no_target;
  j["rx_impair_drop"] = c.rx_impair_drop;
  j["rx_mac_control"] = c.rx_mac_control;
  j["rx_unreadable"] = c.rx_unreadable;
  j["rx_pfc_drop"] = c.rx_pfc_drop;
  j["rx_gsi"] = c.rx_gsi;
  j["rx_gsi_bad_opcode"] = c.rx_gsi_bad_opcode;
  j["rx_gsi_bad_qkey"] = c.rx_gsi_bad_qkey;
  j["rx_gsi_bad_length"] = c.rx_gsi_bad_length;
  j["rx_gsi_full"] = c.rx_gsi_full;
  j["rx_gsi_ipv6"] = c.rx_gsi_ipv6;
  j["tx_frames"] = c.tx_frames;
  j["tx_bytes"] = c.tx_bytes;
  j["tx_arp"] = c.tx_arp;
  j["tx_arp_no_buffer"] = c.tx_arp_no_buffer;
  j["tx_flushed"] = c.tx_flushed;
  j["tx_pumped"] = c.tx_pumped;
  j["tx_limit_stops"] = c.tx_limit_stops;
  j["tx_impair_drop"] = c.tx_impair_drop;
  j["tx_gsi"] = c.tx_gsi;
  j["tx_gsi_no_buffer"] = c.tx_gsi_no_buffer;
  j["doorbells"] = c.doorbells;
  j["doorbell_foreign"] = c.doorbell_foreign;
  j["ring_visits"] = c.ring_visits;
  j["sq_wqes"] = c.sq_wqes;
  j["rq_wqes"] = c.rq_wqes;
  j["srq_wqes"] = c.srq_wqes;
  j["rx_recv_refills"] = c.rx_recv_refills;
  j["wqe_rejected"] = c.wqe_rejected;
  j["ah_missing"] = c.ah_missing;
  j["ah_foreign"] = c.ah_foreign;
  j["sq_full"] = c.sq_full;
  j["rq_full"] = c.rq_full;
  j["srq_full"] = c.srq_full;
  j["srq_bad_wqe"] = c.srq_bad_wqe;
  j["error_cqe_deferred"] = c.error_cqe_deferred;
  j["dc_no_cq"] = c.dc_no_cq;
  j["cqes"] = c.cq.cqes;
  j["cq_overflow"] = c.cq.overflow;
  j["comp_events"] = c.comp.records;
  j["comp_events_unsolicited"] = c.cq.unsolicited;
  j["comp_event_writes"] = c.comp.writes;
  j["comp_event_errors"] = c.comp.errors;
  j["async_events"] = c.async_events;
  j["async_event_errors"] = c.async_event_errors;
  j["async_events_lost"] = c.async_events_lost;
  j["timer_scans"] = c.timer_scans;
  j["timer_fires"] = c.timer_fires;
  j["rx_ce"] = c.rx_ce;
  j["tx_cnp"] = c.tx_cnp;
  j["cnp_suppressed"] = c.cnp_suppressed;
  j["tx_cnp_no_buffer"] = c.tx_cnp_no_buffer;
  j["rx_cnp"] = c.rx_cnp;
  j["cc_no_entry"] = c.cc_no_entry;
  j["homa_rx_grants"] = c.homa_rx_grants;
  j["homa_rx_cutoffs"] = c.homa_rx_cutoffs;
  j["homa_rx_mlen"] = c.homa_rx_mlen;
  j["homa_rx_bad"] = c.homa_rx_bad;
  j["homa_tx_grants"] = c.homa_tx_grants;
  j["homa_tx_cutoffs"] = c.homa_tx_cutoffs;
  j["homa_tx_no_buffer"] = c.homa_tx_no_buffer;
  j["homa_grant_no_qp"] = c.homa_grant_no_qp;
  j["homa_peers"] = c.homa_peers;
  j["homa_cutoffs_updates"] = c.homa_cutoffs_updates;
  json pe;
  for (std::size_t i = 1; i < wire::kNumParseErrors; ++i) {
    if (c.parse_error[i] != 0) {
      pe[std::string(wire::parse_error_name(static_cast<wire::ParseError>(i)))] = c.parse_error[i];
    }
  }
  j["parse_errors"] = pe.is_null() ? json::object() : pe;
  json we;
  for (std::size_t i = 1; i < engine::kNumWqeErrors; ++i) {
    if (c.wqe_error[i] != 0) we[shm::to_string(static_cast<shm::WqeError>(i))] = c.wqe_error[i];
  }
  j["wqe_errors"] = we.is_null() ? json::object() : we;
  return j;
}

json arp_json(const port::ArpCounters& c) {
  json j;
  j["rx_frames"] = c.rx_frames;
  j["rx_requests"] = c.rx_requests;
  j["rx_replies"] = c.rx_replies;
  j["rx_gratuitous"] = c.rx_gratuitous;
  j["learned"] = c.learned;
  j["refreshed"] = c.refreshed;
  j["tx_requests"] = c.tx_requests;
  j["tx_retransmits"] = c.tx_retransmits;
  j["tx_probes"] = c.tx_probes;
  j["tx_replies"] = c.tx_replies;
  j["tx_announcements"] = c.tx_announcements;
  j["resolve_resolved"] = c.resolve_resolved;
  j["resolve_pending"] = c.resolve_pending;
  j["resolve_failed"] = c.resolve_failed;
  j["entries_failed"] = c.entries_failed;
  json drops = json::object();
  for (std::size_t i = 1; i < static_cast<std::size_t>(port::ArpDrop::kCount); ++i) {
    if (c.drops[i] != 0) drops[port::to_string(static_cast<port::ArpDrop>(i))] = c.drops[i];
  }
  j["drops"] = drops;
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
  j["engine"] = qp_engine_json(q.engine);
  j["sched"] = qp_sched_json(q);
  // RC only: whether the peer runs the Homa-like scheduler too (the
  // connection is scheduled), and the sender's counters.
  if (q.type == transport::QpType::kRc) {
    j["homa_peer"] = q.homa_peer;
    j["homa"] = q.homa;
  }
  switch (q.type) {
    case transport::QpType::kRc: j["transport"] = rc_json(q.rc); break;
    case transport::QpType::kUc: j["transport"] = uc_json(q.uc); break;
    case transport::QpType::kUd: j["transport"] = ud_json(q.ud); break;
    case transport::QpType::kDci: {
      // The lanes' RC counters summed, then one line per stream.
      j["transport"] = rc_json(q.rc);
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
      j["transport"] = rc_json(q.rc);
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
  j["mac"] = c.mac.to_string();
  j["ipv4"] = c.ip.to_string();
  j["ipv6_link_local"] = wire::Ipv6Addr::link_local(c.mac).to_string();
  j["ipv6"] = c.ip6.is_zero() ? std::string() : c.ip6.to_string();
  j["mtu"] = c.eth_mtu;
  j["active_mtu"] = wire::path_mtu_bytes(d.active_mtu());
  j["objects"] = {{"qps", s.qps}, {"cqs", s.cqs}, {"srqs", s.srqs}, {"mrs", s.mrs}, {"ahs", s.ahs}};
  j["counters"] = counters_json(s.counters);
  if (s.has_port_tx) {
    const engine::MbufTxCounters& t = s.port_tx;
    j["counters"]["port_tx"] = {{"committed", t.committed},   {"sent", t.sent},
                                {"bursts", t.bursts},         {"refused", t.refused},
                                {"no_mbuf", t.no_mbuf},       {"oversize", t.oversize},
                                {"burst_full", t.burst_full}, {"bad_commit", t.bad_commit},
                                {"discarded", t.discarded},   {"streamed", t.streamed}};
  }
  j["arp"] = arp_json(s.arp);
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
      {{"version", info.version},       {"pid", info.pid},           {"run_dir", info.run_dir},
       {"socket", info.socket},         {"poll", info.poll},         {"lcore", info.lcore},
       {"engine_cpu", info.engine_cpu}, {"uptime_s", info.uptime_s}, {"clients", info.clients}};
  j["daemon"]["limits"] = limits_json(info.limits);
  j["daemon"]["workers"] = info.workers;
  if (info.engine) j["daemon"]["engine"] = *info.engine;
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
  j["cm"] = {{"files", c.files},
             {"ids", c.ids},
             {"listeners", c.listeners},
             {"connections", c.connections},
             {"commands", c.service.commands},
             {"bad_commands", c.service.bad_commands},
             {"events", c.service.events},
             {"event_pipe_full", c.service.event_pipe_full},
             {"mads_no_arp", c.service.mads_no_arp},
             {"mads_no_buffer", c.service.mads_no_buffer},
             {"mads_foreign_device", c.service.mads_foreign_device},
             {"rx_mads", c.machine.rx_mads},
             {"tx_mads", c.machine.tx_mads},
             {"retransmits", c.machine.retransmits},
             {"drop_bad_header", c.machine.drop_bad_header},
             {"drop_unknown_attr", c.machine.drop_unknown_attr},
             {"drop_unknown_conn", c.machine.drop_unknown_conn},
             {"drop_wrong_state", c.machine.drop_wrong_state},
             {"drop_bad_req", c.machine.drop_bad_req},
             {"duplicates", c.machine.duplicates},
             {"rej_no_listener", c.machine.rej_no_listener},
             {"timeouts", c.machine.timeouts}};
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
