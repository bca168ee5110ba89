// The values of the Status body (status_json.h) that are no counter set of
// the datapath: levels the daemon reads (objects, shards, pools, users,
// workers), counts it shows under names of their own, the objects of counts
// by reason, and the sums over QPs. Each is a list (counters::Value,
// apps/counters_json.h) that status_json.cpp writes from and that the
// metrics (metrics_text.h) take names, help and kinds from: one definition.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "apps/counters_json.h"
#include "apps/uroced/capture_service.h"
#include "apps/uroced/client_session.h"
#include "apps/uroced/cm_service.h"
#include "apps/uroced/device.h"
#include "apps/uroced/resource_limits.h"
#include "apps/uroced/worker_pool.h"
#include "datapath/engine/loop_histogram.h"
#include "datapath/engine/stage_stamps.h"
#include "datapath/engine/vnic_types.h"

namespace uroce::daemon {

// A JSON key the status writes by hand, and what it means: an object of
// counts by reason ({reason: n}), a number of its own, a histogram.
struct StatusKey {
  std::string_view name;
  std::string_view help;
  counters::Kind kind = counters::Kind::kCount;
};

namespace status_detail {
template <class S, std::size_t N>
consteval std::string_view help(const counters::FieldList<S, N>& list, std::string_view name) {
  return counters::field(list, name).help;
}
using K = counters::Kind;
}  // namespace status_detail

// ---- daemon ----------------------------------------------------------------------
inline constexpr StatusKey kUptimeKey{"uptime_s", "seconds since the daemon started",
                                      counters::Kind::kLevel};
inline constexpr StatusKey kClientsKey{"clients",
                                       "client connections open, the asking one included",
                                       counters::Kind::kLevel};
inline constexpr StatusKey kQpClassesOmittedKey{
    "qp_classes_omitted",
    "QPs of the daemon when the metrics left the sums by QP class out (too many to read at each "
    "scrape)",
    counters::Kind::kLevel};

// The connections' worker threads (worker_pool.h).
inline constexpr counters::ValueList<WorkerPoolStats, 6> kWorkerValues{{
    {"workers", [](const WorkerPoolStats& w) -> std::uint64_t { return w.workers; },
     "worker threads alive", status_detail::K::kLevel},
    {"idle", [](const WorkerPoolStats& w) -> std::uint64_t { return w.idle; },
     "worker threads waiting for a connection", status_detail::K::kLevel},
    {"queued", [](const WorkerPoolStats& w) -> std::uint64_t { return w.queued; },
     "connections waiting for a worker thread", status_detail::K::kLevel},
    {"started", [](const WorkerPoolStats& w) { return w.started; }, "worker threads ever started"},
    {"retired", [](const WorkerPoolStats& w) { return w.retired; },
     "worker threads that exited after idling"},
    {"tasks", [](const WorkerPoolStats& w) { return w.tasks; }, "connections ever served"},
}};
static_assert(counters::well_formed(kWorkerValues));

// What one user (or one client) holds against the [limits].
inline constexpr counters::ValueList<Usage, 6> kUsageValues{{
    {"connections", [](const Usage& u) { return u.connections; },
     "device connections (after Hello)", status_detail::K::kLevel},
    {"qps", [](const Usage& u) { return u.qps; }, "QPs held", status_detail::K::kLevel},
    {"cqs", [](const Usage& u) { return u.cqs; }, "CQs held", status_detail::K::kLevel},
    {"mrs", [](const Usage& u) { return u.mrs; }, "MRs held", status_detail::K::kLevel},
    {"reg_bytes", [](const Usage& u) { return u.reg_bytes; }, "bytes registered",
     status_detail::K::kLevel},
    {"map_bytes", [](const Usage& u) { return u.map_bytes; },
     "bytes the daemon maps for the registrations", status_detail::K::kLevel},
}};
static_assert(counters::well_formed(kUsageValues));

// The rdma_cm service's objects (beside its counter sets).
inline constexpr counters::ValueList<CmStatus, 4> kCmValues{{
    {"files", [](const CmStatus& c) -> std::uint64_t { return c.files; },
     "rdma_cm files open (one per event channel)", status_detail::K::kLevel},
    {"ids", [](const CmStatus& c) -> std::uint64_t { return c.ids; }, "rdma_cm IDs",
     status_detail::K::kLevel},
    {"listeners", [](const CmStatus& c) -> std::uint64_t { return c.listeners; },
     "rdma_cm IDs listening", status_detail::K::kLevel},
    {"connections", [](const CmStatus& c) -> std::uint64_t { return c.connections; },
     "CM connections the service tracks", status_detail::K::kLevel},
}};
static_assert(counters::well_formed(kCmValues));

// An engine lcore's loop histograms (loop_histogram.h): arrays of
// kLoopBuckets counts, bucket b the values in [2^(b-1), 2^b) ns.
struct LoopKey {
  StatusKey key;
  engine::LoopBuckets engine::LoopHistograms::*member;
};
inline constexpr LoopKey kLoopKeys[] = {
    {{"work_ns", "intervals from an iteration that did work to the next iteration (ns)"},
     &engine::LoopHistograms::work_ns},
    {{"idle_ns", "intervals from an idle iteration (no sleep or yield) to the next (ns)"},
     &engine::LoopHistograms::idle_ns},
    {{"oversleep_ns", "backoff sleeps' lateness: time past the sleep asked for (ns)"},
     &engine::LoopHistograms::oversleep_ns},
};

// A device's stage stamps (engine/stage_stamps.h), per shard: each stage's
// histogram (as the loop histograms), and its mean and maximum over the
// slowest of the recent tracked messages (kStageSlowest of them).
struct StageKey {
  StatusKey key;
  engine::LoopBuckets engine::StageHistograms::*hist;
  TimeNs engine::StageRecord::*record;
};
inline constexpr StageKey kStageKeys[] = {
    {{"app_ns", "a QP's completion written to its next WQE seen: the application's turn (ns)"},
     &engine::StageHistograms::app_ns,
     &engine::StageRecord::app_ns},
    {{"seen_tx_ns", "a WQE seen to the TX burst with its first packet (ns)"},
     &engine::StageHistograms::seen_tx_ns,
     &engine::StageRecord::seen_tx_ns},
    {{"tx_rx_ns",
      "that TX burst to the RX burst with the packet that completed the WQE: wire and peer (ns)"},
     &engine::StageHistograms::tx_rx_ns,
     &engine::StageRecord::tx_rx_ns},
    {{"rx_cqe_ns", "an RX burst to a completion it caused written (ns)"},
     &engine::StageHistograms::rx_cqe_ns,
     &engine::StageRecord::rx_cqe_ns},
    {{"total_ns", "a tracked WQE seen to its completion written (ns)"},
     &engine::StageHistograms::total_ns,
     &engine::StageRecord::total_ns},
};
inline constexpr double kStageSlowest = 0.01;

// ---- devices ------------------------------------------------------------------------
inline constexpr counters::ValueList<DeviceSnapshot, 5> kObjectValues{{
    {"qps", [](const DeviceSnapshot& s) -> std::uint64_t { return s.qps; }, "QPs of the device",
     status_detail::K::kLevel},
    {"cqs", [](const DeviceSnapshot& s) -> std::uint64_t { return s.cqs; }, "CQs of the device",
     status_detail::K::kLevel},
    {"srqs", [](const DeviceSnapshot& s) -> std::uint64_t { return s.srqs; }, "SRQs of the device",
     status_detail::K::kLevel},
    {"mrs", [](const DeviceSnapshot& s) -> std::uint64_t { return s.mrs; }, "MRs of the device",
     status_detail::K::kLevel},
    {"ahs", [](const DeviceSnapshot& s) -> std::uint64_t { return s.ahs; }, "AHs of the device",
     status_detail::K::kLevel},
}};
static_assert(counters::well_formed(kObjectValues));

// A device of several engine lcores: each shard's share.
inline constexpr counters::ValueList<DeviceSnapshot::Shard, 7> kShardValues{{
    {"clients", [](const DeviceSnapshot::Shard& s) -> std::uint64_t { return s.clients; },
     "clients placed on the shard", status_detail::K::kLevel},
    {"qps", [](const DeviceSnapshot::Shard& s) -> std::uint64_t { return s.qps; },
     "QPs of the shard", status_detail::K::kLevel},
    {"queue_frames", [](const DeviceSnapshot::Shard& s) { return s.queue_frames; },
     "frames the shard's own queue of the port received"},
    {"rx_frames", [](const DeviceSnapshot::Shard& s) { return s.rx_frames; },
     "frames the shard received"},
    {"tx_frames", [](const DeviceSnapshot::Shard& s) { return s.tx_frames; },
     "frames the shard committed to the port"},
    {"rx_handoff", [](const DeviceSnapshot::Shard& s) { return s.rx_handoff; },
     "frames the shard handed to another shard"},
    {"handed_in", [](const DeviceSnapshot::Shard& s) { return s.handed_in; },
     "frames other shards handed to the shard"},
}};
static_assert(counters::well_formed(kShardValues));

// The CQ and comp-channel sets of VnicCounters, under the names the status
// has always given them.
inline constexpr counters::ValueList<engine::VnicCounters, 6> kVnicRenamedValues{{
    {"cqes", [](const engine::VnicCounters& c) { return c.cq.cqes; },
     status_detail::help(engine::kCqSinkCounterFields, "cqes")},
    {"cq_overflow", [](const engine::VnicCounters& c) { return c.cq.overflow; },
     status_detail::help(engine::kCqSinkCounterFields, "overflow")},
    {"comp_events", [](const engine::VnicCounters& c) { return c.comp.records; },
     "completion-channel records written"},
    {"comp_events_unsolicited", [](const engine::VnicCounters& c) { return c.cq.unsolicited; },
     status_detail::help(engine::kCqSinkCounterFields, "unsolicited")},
    {"comp_event_writes", [](const engine::VnicCounters& c) { return c.comp.writes; },
     status_detail::help(engine::kCompEventCounterFields, "writes")},
    {"comp_event_errors", [](const engine::VnicCounters& c) { return c.comp.errors; },
     status_detail::help(engine::kCompEventCounterFields, "errors")},
}};
static_assert(counters::well_formed(kVnicRenamedValues));

// Objects of counts by reason (zero reasons left out).
inline constexpr StatusKey kParseErrorsKey{"parse_errors",
                                           "received frames that failed to parse, by reason"};
inline constexpr StatusKey kWqeErrorsKey{"wqe_errors",
                                         "WQEs refused when copied from a ring, by reason"};
inline constexpr StatusKey kArpDropsKey{"drops", "ARP frames not used, by reason"};
inline constexpr StatusKey kMwBindRefusedKey{"bind_refused", "window binds refused, by reason"};
inline constexpr StatusKey kMwInvRefusedKey{"inv_refused",
                                            "window invalidations refused, by reason"};
inline constexpr StatusKey kPfcRxBadKey{"rx_bad", "MAC Control frames refused, by reason"};
inline constexpr StatusKey kUcRxKey{"rx", "what became of received UC packets, by reason"};
inline constexpr StatusKey kUdRxKey{"rx", "what became of received UD packets, by reason"};

// The Homa-like receiver, when the device runs it (beside its GrantCounters).
inline constexpr counters::ValueList<HomaReceiverStatus, 3> kHomaReceiverValues{{
    {"tracked", [](const HomaReceiverStatus& h) -> std::uint64_t { return h.tracked; },
     "incoming messages being scheduled now", status_detail::K::kLevel},
    {"outstanding", [](const HomaReceiverStatus& h) { return h.outstanding; },
     "bytes granted and not yet received, all messages", status_detail::K::kLevel},
    {"generation", [](const HomaReceiverStatus& h) -> std::uint64_t { return h.generation; },
     "the cutoffs' generation: times they changed"},
}};
static_assert(counters::well_formed(kHomaReceiverValues));

// The DC target's context pool, once a DCT made it (beside its counters).
inline constexpr counters::ValueList<DcPoolStatus, 3> kDcPoolValues{{
    {"contexts", [](const DcPoolStatus& p) -> std::uint64_t { return p.capacity; },
     "responder contexts the pool has (dc_contexts)", status_detail::K::kLevel},
    {"open", [](const DcPoolStatus& p) -> std::uint64_t { return p.open; },
     "contexts serving a connection now", status_detail::K::kLevel},
    {"bytes", [](const DcPoolStatus& p) { return p.bytes; }, "memory of the table and contexts",
     status_detail::K::kLevel},
}};
static_assert(counters::well_formed(kDcPoolValues));

// ---- QPs ------------------------------------------------------------------------------
// What a QP's pacer counted (sched/pacer.h), of its status.
inline constexpr counters::ValueList<sched::PaceStatus, 3> kPaceValues{{
    {"parks", [](const sched::PaceStatus& p) { return p.parks; },
     "times it ran ahead of its rate and waited"},
    {"paced_ns", [](const sched::PaceStatus& p) { return p.paced_ns; },
     "time it waited in the timing wheel (ns)"},
    {"sent_bytes", [](const sched::PaceStatus& p) { return p.sent_bytes; },
     "bytes charged to its rate"},
}};
static_assert(counters::well_formed(kPaceValues));

// DCQCN's notification point on a QP (the reaction point's counters are
// the set "rp", sched/dcqcn.h).
inline constexpr counters::ValueList<sched::DcqcnStatus, 3> kDcqcnValues{{
    {"ce_packets", [](const sched::DcqcnStatus& s) { return s.ce_packets; },
     "CE-marked packets received"},
    {"cnps_sent", [](const sched::DcqcnStatus& s) { return s.cnps_sent; }, "CNPs sent for them"},
    {"cnps_suppressed", [](const sched::DcqcnStatus& s) { return s.cnps_suppressed; },
     "CE-marked packets within the CNP interval (no CNP)"},
}};
static_assert(counters::well_formed(kDcqcnValues));

// The QPs of one device, QP type and TX class, their counters summed: the
// status's "qp_classes" (with kStatusQps), taken before the status is cut
// to what the asker may see of single QPs, since a sum names no client
// (as the device totals). Which sets a line has follows its type: RC, and
// DCI and DCT (whose lanes and contexts are RC), sum `rc`; UC `uc`; UD `ud`.
struct QpClassSum {
  std::size_t device = 0;  // index into the status's devices
  transport::QpType type = transport::QpType::kRc;
  std::uint8_t tx_class = 0;
  std::uint64_t qps = 0;
  engine::QpEngineCounters engine{};
  transport::RcCounters rc{};
  transport::UcCounters uc{};
  transport::UdCounters ud{};
  sched::PaceStatus pace{};  // parks, paced_ns, sent_bytes
  bool dcqcn = false;        // some QP of the line runs DCQCN
  sched::DcqcnStatus cc{};   // rp and the notification point's counts
  transport::RcHomaCounters homa{};
  transport::RcSrCounters sr{};
  transport::DciCounters dci{};
  transport::DcStreamCounters dci_streams{};  // every stream's, summed
  transport::DctCounters dct{};
  std::uint64_t dct_contexts = 0;
};

inline constexpr StatusKey kQpClassQpsKey{"qps", "QPs of the device, QP type and TX class",
                                          counters::Kind::kLevel};
inline constexpr StatusKey kDctContextsKey{"contexts", "pool contexts the DCTs hold now",
                                           counters::Kind::kLevel};

// The sums by (device, type, class) and, per client id, the QP engine
// counters of its QPs, over the snapshots' qp_status.
struct QpSums {
  std::vector<QpClassSum> classes;
  std::map<std::uint32_t, engine::QpEngineCounters> clients;
};
QpSums qp_sums(const std::vector<DeviceSnapshot>& snaps);

// Per client (kStatusClients).
inline constexpr counters::ValueList<ClientSummary, 2> kClientValues{{
    {"requests", [](const ClientSummary& c) { return c.requests; },
     "control requests the client sent"},
    {"bad_requests", [](const ClientSummary& c) { return c.bad_requests; },
     "control requests refused as malformed (logged at a bounded rate)"},
}};
static_assert(counters::well_formed(kClientValues));
inline constexpr StatusKey kClientQpKey{"qp_engine",
                                        "the engine counters of the client's QPs, summed"};

// A running capture (capture_service.h; beside its CaptureCounters).
inline constexpr counters::ValueList<CaptureStatus, 3> kCaptureValues{{
    {"count", [](const CaptureStatus& c) { return c.count; },
     "frames the capture stops after (0: no limit)", status_detail::K::kLevel},
    {"snaplen", [](const CaptureStatus& c) -> std::uint64_t { return c.snaplen; },
     "bytes of each frame the capture keeps", status_detail::K::kLevel},
    {"written", [](const CaptureStatus& c) { return c.written; },
     "pcapng bytes the capture has written"},
}};
static_assert(counters::well_formed(kCaptureValues));

}  // namespace uroce::daemon
