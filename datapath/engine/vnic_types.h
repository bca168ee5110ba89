// The plain value types around a Vnic (vnic.h): its configuration, its
// counters, a QP's query result and its status line for uroce-ctl. Kept
// apart from the class template so status code can use them without
// instantiating a Vnic.
#pragma once

// <netinet/in.h> before anything that reaches <rdma/rdma_user_rxe.h>
// (shm/ring.h): that header includes <linux/in.h>, which clashes with a later
// <netinet/in.h> (DPDK's headers include it), while the other order is fine.
#include <netinet/in.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "datapath/base/counter_fields.h"
#include "datapath/engine/comp_event_batch.h"
#include "datapath/engine/cq_sink_counters.h"
#include "datapath/engine/impairment.h"
#include "datapath/engine/pfc_endpoint.h"
#include "datapath/port/arp_agent.h"
#include "datapath/port/nd_agent.h"
#include "datapath/shm/wqe_copy.h"
#include "datapath/transport/dc_counters.h"
#include "datapath/transport/dc_stream.h"
#include "datapath/transport/dc_target.h"
#include "datapath/transport/qp_attr.h"
#include "datapath/transport/qp_common.h"
#include "datapath/transport/rc_counters.h"
#include "datapath/transport/uc_counters.h"
#include "datapath/transport/ud_counters.h"
#include "datapath/wire/addr.h"
#include "datapath/wire/opcodes.h"
#include "datapath/wire/parser.h"
#include "sched/dcqcn.h"
#include "sched/homa_settings.h"
#include "sched/pacer.h"
#include "sched/port_limit.h"
#include "sched/tx_policy.h"

namespace uroce::engine {

// An engine object's id (vnic_api.h: assigned by the control plane, unique
// per Vnic while the object lives, never 0).
using ObjId = std::uint32_t;

struct VnicConfig {
  std::string name;  // "uroce0"
  wire::MacAddr mac{};
  wire::Ipv4Addr ip{};
  // The global IPv6 address (all zero: none). The link-local one is always
  // fe80:: + EUI-64 of `mac` (GID 0).
  wire::Ipv6Addr ip6{};
  // Ethernet MTU (L3 bytes), at least wire::kMinRoceEthMtu (320) so that a
  // 256-byte path MTU fits; uroced and the testbed accept 576..9216.
  std::uint32_t eth_mtu = 1500;
  // Object limits (also what the daemon reports in ibv_device_attr). The QP
  // limit also sizes the QPN demux table (next power of two).
  std::uint32_t max_qps = 1024;
  // Which of the device's engine lcores this Vnic is (docs/engine.md
  // "Several lcores"): shard `shard` of `shards`, on the port's queue
  // `shard`, owning the QPs whose QPN port::shard_of_qpn maps to it (its
  // QPNs are allocated so; QP1 is shard 0's). A RoCE frame for another
  // shard's QP is handed to it through the port adapter. max_qps is per
  // shard. One shard (the default) hands nothing off.
  std::uint16_t shard = 0;
  std::uint16_t shards = 1;
  // The least local ACK timeout exponent (4.096 us x 2^N) modify_qp gives an
  // RC QP or DCI: a timeout asked below it is raised to it (0, infinite,
  // stays). For peers that can stall longer than a QP's retries last (an
  // emulated guest on a busy host). 0: every QP gets what it asks.
  std::uint8_t min_ack_timeout = 0;
  // Give an RC or UC QP, once modify_qp sets its address, the UDP source
  // port that steers its packets to the lcore of the peer's QP under the
  // documented RSS key and table (port::steered_src_port_v4/_v6, docs/
  // engine.md "Several lcores"): one Toeplitz search per connection, none
  // per packet. Off: rxe's ports (a receiver hands a packet that lands on
  // another lcore over). UD and DC packets keep rxe's ports.
  bool steer_src_port = false;
  // Keep the stage stamps of messages (stage_stamps.h): a few clock reads
  // per iteration; off, one test per WQE, per QP served and per completion.
  bool stage_stamps = false;
  // Embedded mode: an iteration an application's poll drives ends after an
  // RX phase that wrote a completion of peer data (Vnic::poll's may_cut).
  bool cut_on_completion = true;
  std::uint32_t max_cqs = 1024;
  std::uint32_t max_srqs = 256;
  std::uint32_t max_mrs = 4096;
  // Memory windows (ibv_device_attr.max_mw); they share the MR table.
  std::uint32_t max_mws = 4096;
  // Seeds the MR table's key generator (mr_table.h): uroced draws it from
  // the system's entropy; the testbed and the tests keep a fixed one, so a
  // run replays with the same keys.
  std::uint64_t key_seed = 0;
  std::uint32_t max_ahs = 4096;
  // ARP resolver timing and neighbour table (defaults: Linux-like).
  port::ArpConfig arp{};  // mac/ip are taken from above
  // Neighbour discovery timing and table; mac and addresses from above.
  port::NdConfig nd{};
  // Loss injection (impairment.h); all off by default. Must pass
  // ImpairConfig::first_bad_field().
  ImpairConfig impair{};
  // PFC generation and honouring, storm watchdog, TTL (pfc_endpoint.h);
  // PFC off by default, TX TTL 64.
  PfcEndpointConfig pfc{};
  // TX scheduling (sched/tx_policy.h): isolation off (round robin) by
  // default; and the pacer's timing wheel (sched/pacer.h).
  sched::TxPolicyConfig sched{};
  sched::PacerConfig pacer{};
  // A bound on the bytes the pump hands the port beyond what the link has
  // sent (sched/port_limit.h); off by default. link_bps is the device's
  // link rate.
  sched::PortLimitConfig port_limit{};
  // DCQCN (sched/dcqcn.h, datapath/policy/dcqcn.h): off by default. rp.line_rate_bps is
  // the device's link rate.
  sched::DcqcnSettings dcqcn{};
  // The Homa-like scheduler between uroce peers (sched/homa_settings.h,
  // datapath/policy/homa.h): off by default. Priorities map to DSCP through pfc.map.
  sched::homa::HomaSettings homa{};
  // Selective repeat for RC between uroce devices that both enable it
  // (docs/lossy.md, datapath/policy/lossy.h): off by default; lossy_qps
  // connections' state (about 4 KiB each) made when the device starts.
  bool lossy = false;
  std::uint32_t lossy_qps = 256;
  // UDP source ports ("paths") a selective-repeat connection sprays its
  // SEND and WRITE packets over (docs/lossy.md "Spraying",
  // transport/rc_sr_spray.h): 1 = its own port only; at most 16. Each
  // path keeps the receiver's RX queue of the connection's own port
  // (port::path_src_port).
  std::uint32_t spray_paths = 1;
  // ECN steering (docs/lossy.md "Spraying"): a spraying connection's SEND
  // and WRITE packets go ECT(0) and a path that marks one CE is skipped a
  // while (transport::SrSpray::congested). Off: not ECN-capable (unless
  // the path's own ECN, DCQCN's, makes them so) and marks echoed by the
  // peer are ignored.
  bool spray_ecn = false;
  // Packets a selective-repeat connection has in flight at most (1..256;
  // docs/lossy.md "The cap"): one bandwidth-delay product of the fabric.
  std::uint32_t lossy_cap = 256;
  // The DC target's context pool (docs/dc.md, "Target"; transport/
  // dc_target.h), made with the device's first DCT and shared by all its
  // DCTs, so a target's memory is bounded by these and not by its
  // initiators: dc_contexts responder contexts, 2^dc_records_log2 records of
  // retired connections, and the time without a packet after which a
  // context is retired whatever its state. dc_stale_ms must exceed the
  // initiators' retry span (timeout x retry count) or an initiator still
  // retrying can meet a context retired behind its back.
  std::uint32_t dc_contexts = 4096;
  std::uint32_t dc_records_log2 = 16;
  std::uint32_t dc_stale_ms = 10'000;
  // A DCI stream with nothing outstanding for this long disconnects from
  // its target (transport::DciQpConfig::idle_disconnect_ns): short frees
  // the targets' contexts early, long saves reconnecting an initiator that
  // pauses between messages.
  std::uint32_t dc_idle_disconnect_us = 1000;
};

// The pool limits VnicConfig's dc_* keys give.
inline transport::DcTargetLimits dc_target_limits(const VnicConfig& c) {
  transport::DcTargetLimits l;
  l.contexts = c.dc_contexts;
  l.records_log2 = c.dc_records_log2;
  l.stale_ns = TimeNs{c.dc_stale_ms} * kNsPerMs;
  return l;
}

inline constexpr std::size_t kNumWqeErrors = shm::kNumWqeErrors;

// Everything one Vnic counts, by reason. Plain integers written only by the
// engine lcore; read them through Engine::call (or on the engine thread).
struct VnicCounters {
  std::uint64_t iterations = 0;      // poll() calls
  std::uint64_t iterations_cut = 0;  // of those, ended after RX (poll()'s may_cut)
  // RX. rx_frames counts every frame received, port and loopback; each is
  // then counted in exactly one of the classes rx_frames_accounted() sums
  // (vnic/rx.h).
  std::uint64_t rx_frames = 0;
  std::uint64_t rx_bytes = 0;
  std::uint64_t rx_unreadable = 0;  // the port could not hand it over (a chain too long)
  std::uint64_t rx_pfc_drop = 0;    // lossless priority, dropped: stage full or not admitted
  std::uint64_t rx_arp = 0;         // frames handed to the ARP agent
  std::uint64_t rx_nd = 0;          // ICMPv6 frames handed to the ND agent
  std::uint64_t rx_loopback = 0;    // frames received from the loopback queue
  std::uint64_t rx_roce = 0;        // frames that parsed as RoCEv2
  std::uint64_t rx_roce_ipv6 = 0;   // of those to our MAC, RoCEv2 over IPv6
  std::uint64_t rx_dispatched = 0;  // RoCEv2 frames handed to a QP
  std::uint64_t rx_parse_errors = 0;
  std::array<std::uint64_t, wire::kNumParseErrors> parse_error{};
  std::uint64_t rx_not_our_mac = 0;     // RoCEv2 to another (or a group) MAC
  std::uint64_t rx_not_our_ip = 0;      // RoCEv2 to an address not ours (IPv4 or IPv6)
  std::uint64_t rx_no_qp = 0;           // BTH destination QP not here
  std::uint64_t rx_mcast = 0;           // UD packets to a group with QPs here (one per frame)
  std::uint64_t rx_mcast_drop = 0;      // to a group MAC: no group here, or not a UD group packet
  std::uint64_t rx_handoff = 0;         // RoCEv2-looking frames for another shard's QP, and ARP
                                        // and ICMPv6 frames on a shard other than 0, handed to
                                        // the owner unparsed (not counted rx_roce, rx_arp here)
  std::uint64_t rx_handoff_drop = 0;    // ... which its hand-off ring (or the pool) refused
  std::uint64_t rx_dc_no_target = 0;    // DC packets (docs/dc.md) with no DCT (request) or
                                        // DCI (response) of that QPN here
  std::uint64_t rx_impair_drop = 0;     // RoCEv2 frames dropped by loss injection
  std::uint64_t rx_mac_control = 0;     // EtherType 0x8808 (PAUSE/PFC), to the gate
  std::uint64_t rx_gsi = 0;             // MADs to QP1 queued for the CM service
  std::uint64_t rx_gsi_bad_opcode = 0;  // to QP1 but not UD SEND_ONLY
  std::uint64_t rx_gsi_bad_qkey = 0;    // to QP1 with a Q_Key other than 0x80010000
  std::uint64_t rx_gsi_bad_length = 0;  // to QP1 with a payload other than 256 bytes
  std::uint64_t rx_gsi_full = 0;        // dropped: the CM service's queue was full
  std::uint64_t rx_gsi_ipv6 = 0;        // to QP1 over IPv6 (the CM speaks IPv4 only)
  // TX.
  std::uint64_t tx_frames = 0;  // frames committed to the port
  std::uint64_t tx_bytes = 0;
  std::uint64_t tx_arp = 0;            // ARP and ND (NS/NA) frames committed
  std::uint64_t tx_arp_no_buffer = 0;  // ARP or ND frame dropped: no TX buffer
  std::uint64_t tx_flushed = 0;        // frames the port accepted at flush
  std::uint64_t tx_pumped = 0;         // frames emitted in the pump phase
  std::uint64_t tx_limit_stops = 0;    // pumps the port limit ended or held back
  std::uint64_t tx_loopback = 0;       // frames to our own MAC, looped back
  std::uint64_t tx_loopback_drop = 0;  // of those, dropped: loopback queue full
  std::uint64_t tx_impair_drop = 0;    // RoCEv2 frames dropped by loss injection
  std::uint64_t tx_gsi = 0;            // MADs sent from QP1
  std::uint64_t tx_gsi_no_buffer = 0;  // MADs not sent: no TX buffer
  // Doorbells (shared rings).
  std::uint64_t doorbells = 0;         // doorbell bits collected from client pages
  std::uint64_t doorbell_foreign = 0;  // of those, naming no ring of that client
  std::uint64_t ring_visits = 0;       // QP ring pairs visited
  std::uint64_t sq_wqes = 0;           // send WQEs taken from SQ rings
  std::uint64_t rq_wqes = 0;           // receive WQEs taken from RQ rings
  std::uint64_t srq_wqes = 0;          // receive WQEs taken from SRQ rings
  // Of rq_wqes and srq_wqes, those the RX path took itself: a packet found
  // its QP's receive queue (or SRQ) empty while the ring held a WQE posted
  // since the last doorbell phase (vnic/doorbells.h, rx_refill_rq).
  std::uint64_t rx_recv_refills = 0;
  std::array<std::uint64_t, kNumWqeErrors> wqe_error{};  // by shm::WqeError
  std::uint64_t wqe_rejected = 0;                        // copied fine, the transport refused it
  std::uint64_t ah_missing = 0;                          // UD WQE naming no live AH
  std::uint64_t ah_foreign = 0;                          // UD WQE naming another client's/PD's AH
  std::uint64_t sq_full = 0;             // SQ WQE left in its ring: transport SQ full
  std::uint64_t rq_full = 0;             // RQ WQE left in its ring: transport RQ full
  std::uint64_t srq_full = 0;            // SRQ WQE left in its ring: SRQ full
  std::uint64_t srq_bad_wqe = 0;         // SRQ WQE dropped (SRQ_ERR raised)
  std::uint64_t error_cqe_deferred = 0;  // engine error CQE waited: CQ full
  // Completions for the CQ a DC QP does not have (a DCT's send side, a
  // DCI's receive side), dropped: the transports never make one, so this
  // stays 0 unless one of them has a bug.
  std::uint64_t dc_no_cq = 0;
  // CQs: completions written and refused (ring full), comp-channel records
  // handed on, over every CQ of the device; the records' writes (one per
  // channel per iteration: comp_event_batch.h).
  CqSinkCounters cq{};
  CompEventCounters comp{};
  // Async events.
  std::uint64_t async_events = 0;        // records written to async pipes
  std::uint64_t async_event_errors = 0;  // writes that failed (full, closed)
  std::uint64_t async_events_lost = 0;   // raised but no fd / owner gone
  // Timers and scheduling.
  std::uint64_t timer_scans = 0;
  std::uint64_t timer_fires = 0;
  // The QP extensions' counters are theirs (datapath/policy/: DcqcnCounters,
  // HomaCounters, LossyCounters; Vnic::policy_counters()).
};

inline constexpr counters::FieldList<VnicCounters, 62> kVnicCounterFields{{
    {"iterations", &VnicCounters::iterations, "poll() calls"},
    {"iterations_cut", &VnicCounters::iterations_cut,
     "of those, ended after RX: an application's poll wrote a completion of peer data"},
    {"rx_frames", &VnicCounters::rx_frames, "frames received from the port"},
    {"rx_bytes", &VnicCounters::rx_bytes, "bytes of the frames received"},
    {"rx_unreadable", &VnicCounters::rx_unreadable,
     "the port could not hand it over (a chain of too many segments)"},
    {"rx_pfc_drop", &VnicCounters::rx_pfc_drop,
     "lossless priority, dropped: stage full or not admitted"},
    {"rx_arp", &VnicCounters::rx_arp, "frames handed to the ARP agent"},
    {"rx_nd", &VnicCounters::rx_nd, "ICMPv6 frames handed to the ND agent"},
    {"rx_loopback", &VnicCounters::rx_loopback, "frames received from the loopback queue"},
    {"rx_roce", &VnicCounters::rx_roce, "frames that parsed as RoCEv2"},
    {"rx_roce_ipv6", &VnicCounters::rx_roce_ipv6, "of those to our MAC, RoCEv2 over IPv6"},
    {"rx_dispatched", &VnicCounters::rx_dispatched, "RoCEv2 frames handed to a QP"},
    {"rx_parse_errors", &VnicCounters::rx_parse_errors,
     "RoCEv2-looking frames that failed to parse (parse_errors by reason)"},
    {"rx_not_our_mac", &VnicCounters::rx_not_our_mac, "RoCEv2 to another (or a group) MAC"},
    {"rx_not_our_ip", &VnicCounters::rx_not_our_ip, "RoCEv2 to an address not ours (IPv4 or IPv6)"},
    {"rx_no_qp", &VnicCounters::rx_no_qp, "BTH destination QP not here"},
    {"rx_mcast", &VnicCounters::rx_mcast,
     "UD packets to a multicast group with QPs attached here (each handed to all of them)"},
    {"rx_mcast_drop", &VnicCounters::rx_mcast_drop,
     "RoCEv2 to a group MAC while a group exists: no such group here, or not a UD group packet"},
    {"rx_handoff", &VnicCounters::rx_handoff,
     "RoCEv2-looking frames for a QP of another engine lcore (and ARP/ICMPv6 frames off lcore 0), "
     "handed to it unparsed"},
    {"rx_handoff_drop", &VnicCounters::rx_handoff_drop,
     "frames to hand to another engine lcore that its ring refused"},
    {"rx_dc_no_target", &VnicCounters::rx_dc_no_target,
     "DC packets (docs/dc.md) with no DCT (request) or DCI (response) of that QPN here"},
    {"rx_impair_drop", &VnicCounters::rx_impair_drop, "RoCEv2 frames dropped by loss injection"},
    {"rx_mac_control", &VnicCounters::rx_mac_control, "EtherType 0x8808 (PAUSE/PFC), to the gate"},
    {"rx_gsi", &VnicCounters::rx_gsi, "MADs to QP1 queued for the CM service"},
    {"rx_gsi_bad_opcode", &VnicCounters::rx_gsi_bad_opcode, "to QP1 but not UD SEND_ONLY"},
    {"rx_gsi_bad_qkey", &VnicCounters::rx_gsi_bad_qkey,
     "to QP1 with a Q_Key other than 0x80010000"},
    {"rx_gsi_bad_length", &VnicCounters::rx_gsi_bad_length,
     "to QP1 with a payload other than 256 bytes"},
    {"rx_gsi_full", &VnicCounters::rx_gsi_full, "dropped: the CM service's queue was full"},
    {"rx_gsi_ipv6", &VnicCounters::rx_gsi_ipv6, "to QP1 over IPv6 (the CM speaks IPv4 only)"},
    {"tx_frames", &VnicCounters::tx_frames, "frames committed to the port"},
    {"tx_bytes", &VnicCounters::tx_bytes, "bytes of the frames committed to the port"},
    {"tx_arp", &VnicCounters::tx_arp, "ARP and ND (NS/NA) frames committed"},
    {"tx_arp_no_buffer", &VnicCounters::tx_arp_no_buffer, "ARP or ND frame dropped: no TX buffer"},
    {"tx_flushed", &VnicCounters::tx_flushed, "frames the port accepted at flush"},
    {"tx_pumped", &VnicCounters::tx_pumped, "frames emitted in the pump phase"},
    {"tx_limit_stops", &VnicCounters::tx_limit_stops, "pumps the port limit ended or held back"},
    {"tx_loopback", &VnicCounters::tx_loopback, "frames to our own MAC, looped back"},
    {"tx_loopback_drop", &VnicCounters::tx_loopback_drop, "of those, dropped: loopback queue full"},
    {"tx_impair_drop", &VnicCounters::tx_impair_drop, "RoCEv2 frames dropped by loss injection"},
    {"tx_gsi", &VnicCounters::tx_gsi, "MADs sent from QP1"},
    {"tx_gsi_no_buffer", &VnicCounters::tx_gsi_no_buffer, "MADs not sent: no TX buffer"},
    {"doorbells", &VnicCounters::doorbells, "doorbell bits collected from client pages"},
    {"doorbell_foreign", &VnicCounters::doorbell_foreign,
     "of those, naming no ring of that client"},
    {"ring_visits", &VnicCounters::ring_visits, "QP ring pairs visited"},
    {"sq_wqes", &VnicCounters::sq_wqes, "send WQEs taken from SQ rings"},
    {"rq_wqes", &VnicCounters::rq_wqes, "receive WQEs taken from RQ rings"},
    {"srq_wqes", &VnicCounters::srq_wqes, "receive WQEs taken from SRQ rings"},
    {"rx_recv_refills", &VnicCounters::rx_recv_refills,
     "of rq_wqes and srq_wqes, those the RX path took itself from a ring posted since the last "
     "doorbell phase"},
    {"wqe_rejected", &VnicCounters::wqe_rejected, "copied fine, the transport refused it"},
    {"ah_missing", &VnicCounters::ah_missing, "UD WQE naming no live AH"},
    {"ah_foreign", &VnicCounters::ah_foreign, "UD WQE naming another client's/PD's AH"},
    {"sq_full", &VnicCounters::sq_full, "SQ WQE left in its ring: transport SQ full"},
    {"rq_full", &VnicCounters::rq_full, "RQ WQE left in its ring: transport RQ full"},
    {"srq_full", &VnicCounters::srq_full, "SRQ WQE left in its ring: SRQ full"},
    {"srq_bad_wqe", &VnicCounters::srq_bad_wqe, "SRQ WQE dropped (SRQ_ERR raised)"},
    {"error_cqe_deferred", &VnicCounters::error_cqe_deferred, "engine error CQE waited: CQ full"},
    {"dc_no_cq", &VnicCounters::dc_no_cq,
     "completions for the CQ a DC QP does not have, dropped (0 unless a transport has a bug)"},
    {"async_events", &VnicCounters::async_events, "records written to async pipes"},
    {"async_event_errors", &VnicCounters::async_event_errors, "writes that failed (full, closed)"},
    {"async_events_lost", &VnicCounters::async_events_lost, "raised but no fd / owner gone"},
    {"timer_scans", &VnicCounters::timer_scans, "timer phases that found a deadline due"},
    {"timer_fires", &VnicCounters::timer_fires, "QP deadlines that fired (RC and DCI timers)"},
}};
static_assert(counters::covers(kVnicCounterFields, &VnicCounters::parse_error,
                               &VnicCounters::wqe_error, &VnicCounters::cq, &VnicCounters::comp));
constexpr const auto& counter_fields(const VnicCounters&) { return kVnicCounterFields; }

// The received frames VnicCounters classified (vnic/rx.h): equal to
// rx_frames whenever PFC holds no frame staged.
inline std::uint64_t rx_frames_accounted(const VnicCounters& c) {
  return c.rx_unreadable + c.rx_impair_drop + c.rx_mac_control + c.rx_pfc_drop + c.rx_arp +
         c.rx_nd + c.rx_parse_errors + c.rx_roce + c.rx_handoff + c.rx_handoff_drop;
}

// What the engine itself counts per QP (the transport's own counters are in
// QpStatus next to these).
struct QpEngineCounters {
  std::uint64_t rx_packets = 0;
  std::uint64_t rx_bytes = 0;  // whole frames
  std::uint64_t tx_packets = 0;
  std::uint64_t tx_bytes = 0;  // whole frames
  std::uint64_t sq_wqes = 0;
  std::uint64_t rq_wqes = 0;
  std::uint64_t bad_wqes = 0;  // WQEs the engine completed in error
  std::uint64_t sq_full = 0;
  std::uint64_t rq_full = 0;
  std::uint64_t timer_fires = 0;
};

inline constexpr counters::FieldList<QpEngineCounters, 10> kQpEngineCounterFields{{
    {"rx_packets", &QpEngineCounters::rx_packets, "RoCEv2 packets dispatched to the QP"},
    {"rx_bytes", &QpEngineCounters::rx_bytes, "whole frames"},
    {"tx_packets", &QpEngineCounters::tx_packets, "packets the QP sent"},
    {"tx_bytes", &QpEngineCounters::tx_bytes, "whole frames"},
    {"sq_wqes", &QpEngineCounters::sq_wqes, "send WQEs taken from the QP's SQ ring"},
    {"rq_wqes", &QpEngineCounters::rq_wqes, "receive WQEs taken from the QP's RQ ring"},
    {"bad_wqes", &QpEngineCounters::bad_wqes, "WQEs the engine completed in error"},
    {"sq_full", &QpEngineCounters::sq_full,
     "SQ WQEs left in the ring: the transport's SQ was full"},
    {"rq_full", &QpEngineCounters::rq_full,
     "RQ WQEs left in the ring: the transport's RQ was full"},
    {"timer_fires", &QpEngineCounters::timer_fires, "the QP's timers that fired"},
}};
static_assert(counters::covers(kQpEngineCounterFields));
constexpr const auto& counter_fields(const QpEngineCounters&) { return kQpEngineCounterFields; }

struct QpQuery {
  transport::QpState state = transport::QpState::kReset;
  transport::QpAttrValues values{};
};

// One line of `uroce-ctl qps`. Only the transport counters of the QP's type
// are filled; the other two stay zero.
struct QpStatus {
  ObjId id = 0;
  std::uint32_t qpn = 0;
  transport::QpType type = transport::QpType::kRc;
  transport::QpState state = transport::QpState::kReset;
  std::uint32_t client = 0;
  std::uint32_t dest_qpn = 0;    // RC/UC once set; 0 for UD
  std::uint32_t send_queue = 0;  // WRs the transport holds
  std::uint32_t recv_queue = 0;
  // TX scheduling: the QP's class, whether uroce_dv pinned it (else it
  // follows the address vector's DSCP), and its rate limit when paced.
  std::uint8_t tx_class = 0;
  bool class_pinned = false;
  // With isolation auto, the kind the classifier gives the QP (its class
  // unless pinned); -1 otherwise.
  std::int8_t auto_kind = -1;
  bool paced = false;
  sched::PaceStatus pace{};
  // DCQCN, when the device runs it (RC and UC QPs).
  bool dcqcn = false;
  sched::DcqcnStatus cc{};
  // The Homa-like scheduler (RC, device with it on): whether the peer runs
  // it too (the connection is scheduled) and the sender's counters.
  bool homa_peer = false;
  transport::RcHomaCounters homa{};
  // Selective repeat (RC, device with lossy on; docs/lossy.md): whether the
  // peer accepted it, and the connection's counters (0 without its state).
  bool sr_peer = false;
  transport::RcSrCounters sr{};
  // Spraying (docs/lossy.md "Spraying"): the connection's paths (0 when it
  // does not spray) and how many it avoids now.
  std::uint32_t sr_paths = 0;
  std::uint32_t sr_avoided = 0;
  // DC QPs (docs/dc.md). A DCI: one line per stream (its lane) and the
  // DCI's own counters; a DCT: its counters and the pool contexts it holds
  // now. `rc` then holds the RC counters their lanes and contexts sum to.
  struct DcStream {
    bool bound = false;  // connected to a target
    std::uint32_t conn = 0;
    bool syn = false;  // no response of the connection yet
    std::uint32_t dctn = 0;
    std::uint32_t send_queue = 0;
    transport::DcStreamCounters ctr{};
  };
  std::vector<DcStream> dci_streams;
  transport::DciCounters dci{};
  transport::DctCounters dct{};
  std::uint32_t dct_contexts = 0;
  QpEngineCounters engine{};
  transport::RcCounters rc{};
  transport::UcCounters uc{};
  transport::UdCounters ud{};
};

}  // namespace uroce::engine
