// The body of a Status reply (protocol.h, kStatus): one JSON object that
// uroce-ctl prints as tables or passes through with --json.
//
//   {
//     "daemon":  {"version", "pid", "run_dir", "socket", "poll", "lcore", "lcores",
//                 "uptime_s", "clients", "qp_classes_omitted" (metrics only, not 0),
//                 "workers": {"workers", "idle", "queued", "started", "retired",
//                             "tasks"}   (worker_pool.h),
//                 "limits": {every [limits] key, resolved},
//                 "users": [{"uid", "connections", "qps", "cqs", "mrs",
//                            "reg_bytes", "map_bytes"}]},
//     "devices": [{"name", "index", "uverbs", "port", "port_mode" (af_xdp only),
//                  "port_info" (DPDK ports: port::PortInfo), "port_stats" (DPDK ports:
//                  port::PortStats), "port_xdp" (af_xdp only: port::XdpStats),
//                  "mac", "ipv4", "ipv6_link_local", "ipv6", "mtu",
//                  "active_mtu", "objects": {"qps", "cqs", "srqs", "mrs", "ahs"},
//                  "shards" (several engine lcores; the rest are sums): [{"shard",
//                     "clients", "qps", "queue_frames", "rx_frames", "tx_frames",
//                     "rx_handoff", "handed_in"}],
//                  "counters": {... VnicCounters, "parse_errors": {name: n},
//                               "wqe_errors": {name: n}},
//                  "arp": {... ArpCounters, "drops": {name: n}},
//                  "pfc": {"enabled_priorities", "link_mbps", "tx_ttl",
//                          "priorities": [8 x {"priority", "lossless",
//                             generation: xoff/refresh/xon_sent, asserted_ns, ...;
//                             honouring: pause_rx, resume_rx, paused_ns, ...;
//                             storm: stormed, storms_detected, ...}],
//                          "frames_sent", "mac_control_rx", "rx_bad": {reason: n},
//                          "ttl": {... TtlCounters}},
//                  "sched": {"isolation": "off"|"classes", "pace_granularity_ns",
//                            "classes": [8 x {"class", "mode": "strict"|"weighted",
//                                             "weight", "rate_mbps" (0: none)}]},
//                  "homa": {"settings": {HomaSettings: "enabled", "priorities", ...,
//                                        "resend_ns", "grant_timeout_ns", ...},
//                           "unsched_levels",
//                           "receiver": null (off) | {"tracked", "outstanding",
//                              "counters": {GrantCounters}, "generation",
//                              "cutoffs": [{"level", "priority",
//                                           "max_length" (null: any length)}]}},
//                  "dc": {"settings": {every key of config_dc.h's kDcKeys},
//                         "sr": {RcSrCounters: every DCI's and DCT's,
//                                destroyed ones included},
//                         "pool": null (no DCT yet) | {"contexts", "open",
//                            "bytes", "counters": {DcTargetCounters}}}}],
//     "qps":     [{"device", "id", "qpn", "type", "state", "client", "dest_qpn",
//                  "send_queue", "recv_queue", "engine": {...},
//                  "sched": {"class", "pinned", "paced", "rate_bps", "burst_bytes",
//                            "typical_bytes", "parks", "paced_ns", "sent_bytes",
//                            "waiting"},
//                  "homa_peer", "homa": {RcHomaCounters},
//                  "sr_peer", "sr": {RcSrCounters}   (RC QPs; DCI and
//                  DCT: "sr" alone, their streams' or contexts' summed),
//                  "transport": {... the counters of its type; RC's for DC},
//                  "dci": {"counters": {DciCounters}, "streams": [{"stream",
//                          "bound", "dctn", "conn", "syn", "send_queue",
//                          "counters": {DcStreamCounters}}]}   (DCIs only),
//                  "dct": {"contexts", "counters": {DctCounters}}   (DCTs only)}]
//                                                               (kStatusQps)
//     "qp_classes": [{"device", "type", "class", "qps", "engine": {QpEngineCounters},
//                  "pace": {parks, paced_ns, sent_bytes}, "transport": {as in "qps"},
//                  "homa", "sr" (RC), "dci", "dci_streams" (DCI), "dct" (DCT, with "contexts"),
//                  "dcqcn": {"rp", ce_packets, ...} (QPs that run it)}]
//                  (kStatusQps: the QPs of each device, type and class summed, over
//                  every QP whoever asks: status_values.h)
//     "captures": [{"device", "count" (0: no limit), "snaplen", "written",
//                   "counters": {CaptureCounters}}]   (root and status_group)
//     "clients": [{"id", "pid", "uid", "gid", "device", "requests",
//                  "bad_requests", "used": {as in "users"}, "objects": {"pds": [handles], "mrs", "comp_channels",
//                  "cqs", "srqs", "ahs", "qps": [{"handle", "qpn", "mcast_groups" (when > 0)}],
//                  "<kind>_omitted" (when cut to fit)},
//                  "qp_engine": {QpEngineCounters of its QPs, summed} (with kStatusQps)}]
//                                                               (kStatusClients)
//     "clients_omitted": clients left out of "clients" to fit (when cut)
//   }
// The values that no counter set defines are listed in status_values.h,
// with what each means; the metrics (metrics_text.h) read the same lists.
// Counters are only those that are non-negative integers the engine keeps;
// nothing is estimated. A body that would not fit one message keeps its
// first QP lines and says "qps_truncated": true; if that is not enough,
// each client's handle lists keep their first entries (the same number for
// every list, as many as fit), a cut list's kind gains
// "<kind>_omitted" (e.g. "qps_omitted": 1100), and the body says
// "client_objects_truncated": true; if even every list empty is too much
// (a few hundred clients), the first clients that fit stay and
// "clients_omitted" counts the rest.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "apps/uroced/capture_service.h"
#include "apps/uroced/client_session.h"
#include "apps/uroced/device.h"
#include "apps/uroced/status_values.h"
#include "apps/uroced/worker_pool.h"
#include "datapath/engine/engine.h"
#include "datapath/engine/loop_histogram.h"

namespace uroce::daemon {

struct DaemonInfo {
  std::string version;
  long pid = 0;
  std::string run_dir;
  std::string socket;
  std::string poll;
  // The engine's lcores (config.h engine_lcores), EAL's main lcore first;
  // "lcore" in the JSON is the first.
  std::vector<std::uint32_t> lcores;
  int engine_cpu = -1;  // the one CPU the engine thread may run on; -1: several
  double uptime_s = 0;
  std::size_t clients = 0;       // connections open, the asking one included
  CmStatus cm{};                 // the rdma_cm service (cm_service.h)
  Limits limits{};               // resolved ([limits]; resource_limits.h)
  std::map<uid_t, Usage> users;  // what each user holds against them
  WorkerPoolStats workers{};     // the connections' threads
  // The engine loop's own counters (iterations, sleeps, yields), when the
  // server was given a way to read them (Server::set_engine_counters).
  std::optional<engine::EngineRunCounters> engine;
  // Per engine lcore, in lcores' order: where the time between its
  // iterations went (engine/loop_histogram.h; Server::set_engine_loops).
  std::vector<engine::LoopHistograms> loops;
  // The metrics' status only: the QPs whose sums by class were left out
  // (Server::metrics_status); written when not 0.
  std::uint64_t qp_classes_omitted = 0;
  // The captures running (capture_service.h).
  std::vector<CaptureStatus> captures;
};

nlohmann::json usage_json(const Usage& u);
nlohmann::json limits_json(const Limits& l);

nlohmann::json counters_json(const engine::VnicCounters& c);
// One lcore's loop histograms: {"lcore", "work_ns", "idle_ns",
// "oversleep_ns"}, each an array of kLoopBuckets counts (bucket b: values
// in [2^(b-1), 2^b) ns).
nlohmann::json loop_json(std::uint32_t lcore, const engine::LoopHistograms& h);
nlohmann::json arp_json(const port::ArpCounters& c);
nlohmann::json pfc_json(const engine::PfcStatus& s);
// A device's TX policy as configured (isolation, each class's mode/weight).
nlohmann::json sched_json(const engine::VnicConfig& c);
// The Homa-like scheduler: the device's settings, and its receiver's state
// when it runs (s.has_homa).
nlohmann::json homa_json(const engine::VnicConfig& c, const DeviceSnapshot& s);
// The DC target's settings (config_dc.h's keys) and its context pool once
// the device has one.
nlohmann::json dc_json(const engine::VnicConfig& c, const DeviceSnapshot& s);
nlohmann::json qp_json(const std::string& device, const engine::QpStatus& q);
// `qp_engine`: the sum of its QPs' engine counters, or null (not asked for).
// Each handle list keeps its first `cap` entries; a cut list's kind gains
// "<kind>_omitted": the number left out.
nlohmann::json client_json(const ClientSummary& c,
                           const engine::QpEngineCounters* qp_engine = nullptr,
                           std::size_t cap = SIZE_MAX);
// One line of "qp_classes".
nlohmann::json qp_class_json(const std::string& device, const QpClassSum& c);
nlohmann::json device_json(const Device& d, const DeviceSnapshot& s);
// A device's stage stamps, one entry per shard (status_values.h kStageKeys).
nlohmann::json stages_json(const std::vector<engine::StageReport>& stages);

// The whole body; `clients` may be null (not asked for), and `sums` (the
// "qp_classes" and each client's "qp_engine"; qp_sums() of the snapshots
// before they were cut to the asker's QPs). At most `max_bytes` bytes (see
// the header comment).
std::string status_json(const DaemonInfo& info, const std::vector<Device*>& devices,
                        const std::vector<DeviceSnapshot>& snaps, bool with_qps,
                        const std::vector<ClientSummary>* clients, std::size_t max_bytes,
                        const QpSums* sums = nullptr);

const char* qp_type_name(transport::QpType t);

}  // namespace uroce::daemon
