// One virtual NIC's datapath (a device: uroce0, ...): its port, ARP agent
// and neighbour table, MR table, QPs (RC, UC, UD), SRQs, CQs and AHs, and
// one engine iteration over them. Templated on the port adapter (EthPortIo
// in the daemon, SimPortIo in tests) and the TX scheduling policy.
//
// Public API (final signatures; the control plane codes against these):
//
//   template <class PortIo, sched::TxScheduler Sched = sched::RoundRobin>
//   class Vnic {
//    public:
//     Vnic(const VnicConfig& cfg, PortIo& io);
//     const VnicConfig& config() const;
//     wire::PathMtu active_mtu() const;
//     std::uint32_t poll(TimeNs now);
//     int alloc_qpn(std::uint32_t* qpn);
//     int create_cq(const CqCreate& c);
//     int destroy_cq(ObjId id);
//     int resize_cq(ObjId id, const RingMem& ring, ctl::CqNotify* notify);
//     int create_srq(const SrqCreate& c);
//     int modify_srq(ObjId id, std::uint32_t mask, const transport::SrqAttr& a);
//     int query_srq(ObjId id, transport::SrqAttr* out);
//     int destroy_srq(ObjId id);
//     int create_qp(const QpCreate& c);
//     int modify_qp(ObjId id, const QpModify& m);
//     int query_qp(ObjId id, QpQuery* out);
//     int destroy_qp(ObjId id);
//     std::uint32_t reg_mr(const MrCreate& m, int* err);
//     int rereg_mr(std::uint32_t key, const MrCreate& m);
//     int dereg_mr(std::uint32_t key);
//     int create_ah(const AhCreate& a);
//     int destroy_ah(ObjId id);
//     bool resolve(wire::Ipv4Addr ip, TimeNs now, wire::MacAddr* mac);
//     TimeNs last_now() const;
//     const VnicCounters& counters() const;
//     const port::ArpCounters& arp_counters() const;
//     void qp_status(std::vector<QpStatus>* out) const;
//     std::uint32_t qp_count() const;  cq_count(), srq_count(), ah_count(),
//     mr_count()
//     // for tests and tools:
//     TimeNs deadline(std::uint32_t qpn) const;
//     const Sched& scheduler() const;
//     PortIo& io();
//   };
// Value types (VnicConfig, VnicCounters, QpQuery, QpStatus, active_mtu_for)
// are in vnic_types.h; the create/modify structs in vnic_api.h.
//
// Threading: everything runs on the engine lcore. The control plane calls
// the control operations through Engine::call (between two iterations), so
// nothing here takes a lock. Control operations may allocate; poll() never
// does.
//
// One iteration, poll(now), in this fixed order (`now` taken once by the
// engine and used by every phase):
//   1. rx        one RX burst, then the frames looped back since the last
//                iteration (below). ARP frames (EtherType 0x0806) go to the
//                ARP agent (which may answer at once). Everything else is parsed
//                (wire::parse_roce, ICRC included); frames not to our MAC or
//                IPv4 address, or to a QPN with no QP here, are dropped and
//                counted; the rest go to their QP (dispatch on the QP's type
//                tag: RcQp / UcQp / UdQp, no virtual call).
//   2. doorbells for every QP: new WQEs in its SQ ring (copied and validated
//                with shm::copy_send_wqe, UD AHs resolved in the AH table,
//                then post_send) and RQ ring (copy_recv_wqe, post_recv); then
//                every SRQ ring. At most kDoorbellBurst WQEs per ring per
//                iteration.
//   3. timers    RC on_timer for every QP whose deadline passed (one
//                deadline per QP; the scan runs only once `now` passes the
//                earliest), and the ARP agent's retransmissions.
//   4. pump      one round of the TX scheduler (sched/) over the QPs with
//                output: RC pump_tx, UC/UD process_send (and their flush in
//                SQE/ERR), each within the room left in the TX burst.
//   5. flush     one TX burst of whatever is pending.
// Async events the QPs and SRQs raise are drained right after the call that
// raised them and written to the owner's async pipe.
//
// Loopback: a frame a QP sends to our own MAC (a peer QP on this same
// device) is not committed to the port but copied to a LoopbackQueue
// (loopback_queue.h) and received in the next iteration's RX phase, as rxe
// loops such packets back. resolve() of our own IPv4 address gives our MAC.
//
// WQE rules (what the engine does with what it finds in a ring):
//   - SQ WQEs are taken only in RTS, SQD, SQE and ERR; in RESET, INIT and
//     RTR they wait in the ring (as rxe's requester leaves them). RQ WQEs
//     are taken in every state but RESET.
//   - A transport queue that is full leaves the WQE in its ring (counted:
//     sq_full / rq_full), retried next iteration: the ring is the
//     application's back-pressure.
//   - A WQE that fails validation (shm::WqeError), names a missing AH, an AH
//     of another client or PD (IBV_WC_LOC_QP_OP_ERR, as rxe), or that the
//     transport refuses (EINVAL: IBV_WC_LOC_QP_OP_ERR) completes in error
//     IN ORDER: the engine stops taking WQEs from that ring until the
//     transport has retired every earlier WR, then writes the error
//     completion (status shm::wc_status_for(err)) and moves the QP to ERR,
//     which flushes everything after it (rxe's requester does the same).
//   - A bad SRQ WQE has no QP to complete on: it is dropped, counted and
//     IBV_EVENT_SRQ_ERR is sent.
//
// CQs: the transport's CqSink is a CqRingSink (cq_ring_sink.h) that writes
// ib_uverbs_wc into the shared ring and, when the provider armed the CQ,
// writes one comp-channel record. A full ring refuses (false) and the
// transport turns that into CQ_ERR/QP_FATAL. destroy_cq and destroy_srq
// refuse with EBUSY while a QP uses the object (as verbs does), so a QP never
// holds a pointer to a destroyed CQ or SRQ. destroy_qp removes the QP from
// the demux, the scheduler, the timer scan and its CQ/SRQ references and
// discards its undelivered events; nothing keeps a pointer into its rings
// afterwards.
//
// Async events go to the async pipe of the object's owner as
// ib_uverbs_async_event_desc {element = user_handle, event_type}; a CQ_ERR a
// QP raises names the CQ (its user_handle, its async fd). Writes are
// non-blocking (the fds are switched to O_NONBLOCK when the object is
// created); a failed write is counted, never retried. The daemon must ignore
// SIGPIPE (a client's pipe whose read end is gone gives EPIPE).
#pragma once

// <netinet/in.h> before anything that reaches <rdma/rdma_user_rxe.h>
// (shm/ring.h): that header includes <linux/in.h>, which clashes with a later
// <netinet/in.h> (DPDK's headers include it), while the other order is fine.
#include <netinet/in.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "datapath/base/time.h"
#include "datapath/engine/ah_table.h"
#include "datapath/engine/cq_ring_sink.h"
#include "datapath/engine/event_fd.h"
#include "datapath/engine/loopback_queue.h"
#include "datapath/engine/pfc_endpoint.h"
#include "datapath/engine/qp_demux.h"
#include "datapath/engine/vnic_api.h"
#include "datapath/engine/vnic_types.h"
#include "datapath/port/arp_agent.h"
#include "datapath/shm/ring.h"
#include "datapath/shm/wqe_copy.h"
#include "datapath/transport/async_event.h"
#include "datapath/transport/mr_table.h"
#include "datapath/transport/qp_common.h"
#include "datapath/transport/rc_qp.h"
#include "datapath/transport/srq.h"
#include "datapath/transport/uc_qp.h"
#include "datapath/transport/ud_qp.h"
#include "datapath/transport/wr.h"
#include "datapath/wire/builder.h"
#include "datapath/wire/byteorder.h"
#include "datapath/wire/eth.h"
#include "datapath/wire/parser.h"
#include "sched/round_robin.h"
#include "sched/tx_scheduler.h"

namespace uroce::engine {

// Sched must also be constructible from the number of flows (QP slots).
template <class PortIo, sched::TxScheduler Sched = sched::RoundRobin>
class Vnic {
 public:
  // WQEs taken from one ring per iteration.
  static constexpr std::uint32_t kDoorbellBurst = 32;
  // Frames to our own MAC held between two RX phases (loopback_queue.h).
  static constexpr std::uint32_t kLoopbackSlots = 64;

  // `io` must outlive the Vnic. All tables are allocated here.
  Vnic(const VnicConfig& cfg, PortIo& io)
      : cfg_(cfg),
        io_(io),
        arp_(arp_config(cfg)),
        mrs_(cfg.max_mrs),
        ahs_(cfg.max_ahs),
        demux_(cfg.max_qps),
        qps_(cfg.max_qps == 0 ? 1 : cfg.max_qps),
        sched_(static_cast<std::uint32_t>(qps_.size())),
        loop_(kLoopbackSlots, frame_slot_bytes(cfg)),
        pfc_(cfg.pfc, cfg.mac, cfg.ip, frame_slot_bytes(cfg)) {
    free_.reserve(qps_.size());
    for (std::size_t i = qps_.size(); i-- > 0;) {
      free_.push_back(static_cast<std::uint32_t>(i));
    }
    live_.reserve(qps_.size());
    srq_list_.reserve(cfg.max_srqs);
    impair_ = Impairment(cfg.impair);
  }
  Vnic(const Vnic&) = delete;
  Vnic& operator=(const Vnic&) = delete;

  const VnicConfig& config() const { return cfg_; }
  // Replaces the loss injection (impairment.h) and restarts its counts and
  // random streams; `c` must pass first_bad_field(). Control path.
  void set_impairment(const ImpairConfig& c) {
    cfg_.impair = c;
    impair_ = Impairment(c);
  }
  // PFC and TTL (pfc_endpoint.h): a snapshot of its state and counters,
  // and the events recorded since the last drain (appended). Control path.
  PfcStatus pfc_status() const { return pfc_.status(now_); }
  // Replaces the PFC/TTL configuration (link_bps included) and restarts
  // its state and counters; staged and held frames are discarded (losses
  // the transports recover from). Control path.
  void set_pfc(const PfcEndpointConfig& c) {
    cfg_.pfc = c;
    pfc_ = PfcEndpoint(c, cfg_.mac, cfg_.ip, frame_slot_bytes(cfg_));
  }
  void drain_pfc_events(std::vector<pfc::PfcEvent>* out) { pfc_.drain_events(out); }
  const PfcEndpoint& pfc() const { return pfc_; }
  // PfcEndpoint::next_deadline at last_now(): when a virtual-clock caller
  // must poll again for PFC alone (refreshes, the end of a pause, storm
  // transitions, staged frames); combine with next_deadline().
  TimeNs pfc_next_deadline() const { return pfc_.next_deadline(now_); }
  // active_mtu_for(config().eth_mtu): UD's message limit, QueryPort's value.
  wire::PathMtu active_mtu() const { return active_mtu_for(cfg_.eth_mtu); }

  // One engine iteration for this device (order in the header comment).
  // Returns the work done: frames received, WQEs taken, timers fired and
  // frames pumped (0: the iteration found nothing to do).
  std::uint32_t poll(TimeNs now) {
    now_ = now;
    ++ctr_.iterations;
    io_.begin(now);
    std::uint32_t work = rx_phase(now);
    work += doorbell_phase();
    work += timer_phase(now);
    work += pump_phase(now);
    flush_phase();
    return work;
  }

  // ---- Control operations (engine thread, via Engine::call) ----------
  // Each returns 0 or a positive errno value.

  // A QPN for the next create_qp: its demux slot is free; never 0 or 1;
  // successive calls return different QPNs (a freed QPN comes back only
  // after the allocator went once around the 24-bit space). ENOSPC when
  // max_qps QPs exist.
  int alloc_qpn(std::uint32_t* qpn) {
    if (free_.empty()) return ENOSPC;
    const std::uint32_t tries = demux_.capacity() + 2;
    for (std::uint32_t t = 0; t < tries; ++t) {
      const std::uint32_t q = next_qpn_;
      next_qpn_ = (next_qpn_ + 1) & wire::kQpnMask;
      if (q < 2) continue;
      if (demux_.slot_free(q)) {
        *qpn = q;
        return 0;
      }
    }
    return ENOSPC;
  }

  // EINVAL (id 0, ring memory does not match its geometry or its elements
  // are shorter than an ib_uverbs_wc), EEXIST (id in use), ENOMEM
  // (max_cqs). The channel and async fds are switched to O_NONBLOCK.
  int create_cq(const CqCreate& c) {
    if (c.id == 0) return EINVAL;
    if (cqs_.count(c.id) != 0) return EEXIST;
    if (cqs_.size() >= cfg_.max_cqs) return ENOMEM;
    auto cq = std::make_unique<CqObj>(&ctr_.cq);
    if (int rc = cq->sink.attach(c.ring, c.notify, c.channel_fd, c.user_handle);
        rc != 0) {
      return rc;
    }
    cq->id = c.id;
    cq->async_fd = c.async_fd;
    set_nonblocking(c.channel_fd);
    set_nonblocking(c.async_fd);
    cqs_.emplace(c.id, std::move(cq));
    return 0;
  }
  // ENOENT, EBUSY (a QP still uses it).
  int destroy_cq(ObjId id) {
    auto it = cqs_.find(id);
    if (it == cqs_.end()) return ENOENT;
    if (it->second->refs != 0) return EBUSY;
    cqs_.erase(it);
    return 0;
  }
  // Moves the completions not yet polled (between the old ring's consumer
  // and producer index) into `ring`, in order, and produces there from now
  // on; `notify` replaces the arming word (its armed state is carried
  // over). ENOENT, EINVAL (bad ring, or the new ring cannot hold the
  // unpolled completions; the CQ is left as it was).
  int resize_cq(ObjId id, const RingMem& ring, ctl::CqNotify* notify) {
    CqObj* cq = find_cq(id);
    if (cq == nullptr) return ENOENT;
    return cq->sink.resize(ring, notify);
  }

  // EINVAL (id 0, bad ring, max_sge over transport::kMaxSge, srq_limit over
  // the ring's capacity), EEXIST, ENOMEM (max_srqs). The SRQ holds as many
  // WRs as its ring (the granted max_wr).
  int create_srq(const SrqCreate& c) {
    if (c.id == 0) return EINVAL;
    if (srqs_.count(c.id) != 0) return EEXIST;
    if (srqs_.size() >= cfg_.max_srqs) return ENOMEM;
    shm::RqConsumer ring;
    if (!attach_ring(&ring, c.ring)) {
      return EINVAL;
    }
    const std::uint32_t depth = ring.geometry().capacity();
    if (c.max_sge > transport::kMaxSge || depth > transport::kMaxSrqWr ||
        c.srq_limit > depth) {
      return EINVAL;
    }
    transport::SrqConfig sc;
    sc.srq_num = c.srq_num;
    sc.pd = c.pd;
    sc.max_wr = depth;
    sc.max_sge = c.max_sge;
    sc.srq_limit = c.srq_limit;
    auto s = std::make_unique<SrqObj>();
    s->id = c.id;
    s->srq = std::make_unique<transport::Srq>(sc);
    s->ring = ring;
    s->max_sge = c.max_sge;
    s->user_handle = c.user_handle;
    s->async_fd = c.async_fd;
    s->pos = static_cast<std::uint32_t>(srq_list_.size());
    set_nonblocking(c.async_fd);
    srq_list_.push_back(s.get());
    srqs_.emplace(c.id, std::move(s));
    return 0;
  }
  // transport::Srq::modify (EINVAL on a bad mask or value); ENOENT.
  int modify_srq(ObjId id, std::uint32_t mask, const transport::SrqAttr& a) {
    SrqObj* s = find_srq(id);
    if (s == nullptr) return ENOENT;
    return s->srq->modify(mask, a);
  }
  // ENOENT.
  int query_srq(ObjId id, transport::SrqAttr* out) {
    SrqObj* s = find_srq(id);
    if (s == nullptr) return ENOENT;
    *out = s->srq->query();
    return 0;
  }
  // ENOENT, EBUSY (a QP still uses it).
  int destroy_srq(ObjId id) {
    auto it = srqs_.find(id);
    if (it == srqs_.end()) return ENOENT;
    SrqObj* s = it->second.get();
    if (s->refs != 0) return EBUSY;
    SrqObj* last = srq_list_.back();
    srq_list_[s->pos] = last;
    last->pos = s->pos;
    srq_list_.pop_back();
    srqs_.erase(it);
    return 0;
  }

  // EINVAL (id 0, type, QPN 0/1 or over 24 bits, rings), EEXIST (id in use
  // or the QPN's demux slot taken), ENOMEM (max_qps), ENOENT (send/recv CQ
  // or SRQ id unknown). The transport queues get the rings' capacities (the
  // granted max_send_wr / max_recv_wr); SGE and inline limits are clamped
  // to transport::kMaxSge / kMaxInline. The async fd is made non-blocking.
  int create_qp(const QpCreate& c) {
    using transport::QpType;
    if (c.id == 0) return EINVAL;
    if (qp_ids_.count(c.id) != 0) return EEXIST;
    if (free_.empty()) return ENOMEM;
    if (c.type != QpType::kRc && c.type != QpType::kUc && c.type != QpType::kUd) {
      return EINVAL;
    }
    if (c.qpn < 2 || c.qpn > wire::kQpnMask) return EINVAL;
    if (!demux_.slot_free(c.qpn)) return EEXIST;
    CqObj* scq = find_cq(c.send_cq);
    CqObj* rcq = find_cq(c.recv_cq);
    if (scq == nullptr || rcq == nullptr) return ENOENT;
    SrqObj* srq = nullptr;
    if (c.srq != 0) {
      srq = find_srq(c.srq);
      if (srq == nullptr) return ENOENT;
    }
    shm::SqConsumer sq;
    if (!attach_ring(&sq, c.sq)) return EINVAL;
    shm::RqConsumer rq;
    const bool has_rq = srq == nullptr;
    if (has_rq && !attach_ring(&rq, c.rq)) {
      return EINVAL;
    }
    const std::uint32_t send_wr = sq.geometry().capacity();
    // With an SRQ the transport's own RQ holds only the WR taken for the
    // message in progress.
    const std::uint32_t recv_wr = has_rq ? rq.geometry().capacity() : 1;
    const std::uint32_t send_sge = std::min(c.max_send_sge, transport::kMaxSge);
    const std::uint32_t recv_sge = std::min(c.max_recv_sge, transport::kMaxSge);
    const std::uint32_t inl = std::min(c.max_inline, transport::kMaxInline);
    transport::Srq* tsrq = srq != nullptr ? srq->srq.get() : nullptr;
    const transport::LocalPort local{cfg_.mac, cfg_.ip};

    const std::uint32_t slot = free_.back();
    QpEntry& e = qps_[slot];
    // The three transports' configs share these fields; UD adds the port MTU.
    auto fill = [&](auto& q) {
      q.qpn = c.qpn;
      q.pd = c.pd;
      q.local = local;
      q.max_send_wr = send_wr;
      q.max_recv_wr = recv_wr;
      q.max_send_sge = send_sge;
      q.max_recv_sge = recv_sge;
      q.max_inline = inl;
      q.sq_sig_all = c.sq_sig_all;
      q.srq = tsrq;
    };
    switch (c.type) {
      case QpType::kRc: {
        transport::RcQpConfig q;
        fill(q);
        e.rc = std::make_unique<transport::RcQp>(q, mrs_);
        break;
      }
      case QpType::kUc: {
        transport::UcQpConfig q;
        fill(q);
        e.uc = std::make_unique<transport::UcQp>(q, mrs_);
        break;
      }
      case QpType::kUd: {
        transport::UdQpConfig q;
        fill(q);
        q.port_mtu = active_mtu();
        e.ud = std::make_unique<transport::UdQp>(q, mrs_);
        break;
      }
    }
    free_.pop_back();
    e.used = true;
    e.type = c.type;
    e.qpn = c.qpn;
    e.slot = slot;
    e.scq = scq;
    e.rcq = rcq;
    e.srq = srq;
    e.sq = sq;
    e.rq = rq;
    e.has_rq = has_rq;
    e.sq_lim = shm::SqLimits{c.type, send_sge, inl};
    e.max_recv_sge = recv_sge;
    e.id = c.id;
    e.client = c.client;
    e.pd = c.pd;
    e.user_handle = c.user_handle;
    e.async_fd = c.async_fd;
    demux_.insert(c.qpn, &e);
    e.live_pos = static_cast<std::uint32_t>(live_.size());
    live_.push_back(slot);
    ++scq->refs;
    ++rcq->refs;
    if (srq != nullptr) ++srq->refs;
    set_nonblocking(c.async_fd);
    qp_ids_.emplace(c.id, slot);
    return 0;
  }
  // The transport's modify (EINVAL on an illegal transition or value);
  // ENOENT. Moving to RESET also forgets an error completion the engine
  // was holding for a rejected WQE (RESET discards WRs without completion).
  int modify_qp(ObjId id, const QpModify& m) {
    QpEntry* e = find_qp(id);
    if (e == nullptr) return ENOENT;
    const int rc = visit(*e, [&](auto& q) { return q.modify(m.mask, m.values); });
    if (rc != 0) return rc;
    merge_attrs(&e->attr, m.mask, m.values);
    if (qp_state(*e) == transport::QpState::kReset) {
      e->sq_err = PendingError{};
      e->rq_err = PendingError{};
      e->deadline = 0;
    }
    // A move to ERR needs a flush, to RTS may free waiting WRs: let the
    // pump look.
    sched_.activate(e->slot);
    drain_qp_events(*e);
    return 0;
  }
  // ENOENT. RC: the transport's query(). UC/UD: the attributes modify_qp
  // applied, with the live state and PSNs (and UD's Q_Key).
  int query_qp(ObjId id, QpQuery* out) {
    using transport::QpType;
    QpEntry* e = find_qp(id);
    if (e == nullptr) return ENOENT;
    switch (e->type) {
      case QpType::kRc:
        out->values = e->rc->query();
        break;
      case QpType::kUc:
        out->values = e->attr;
        out->values.sq_psn = e->uc->next_psn().value();
        out->values.rq_psn = e->uc->expected_psn().value();
        break;
      case QpType::kUd:
        out->values = e->attr;
        out->values.sq_psn = e->ud->next_psn().value();
        out->values.qkey = e->ud->qkey();
        break;
    }
    out->state = qp_state(*e);
    out->values.qp_state = out->state;
    out->values.cur_qp_state = out->state;
    return 0;
  }
  // ENOENT. The QP leaves the demux (later packets count as rx_no_qp), the
  // scheduler and the timer scan; undelivered events and queued WRs are
  // discarded without completions; its rings are no longer touched.
  int destroy_qp(ObjId id) {
    auto it = qp_ids_.find(id);
    if (it == qp_ids_.end()) return ENOENT;
    const std::uint32_t slot = it->second;
    QpEntry& e = qps_[slot];
    demux_.erase(e.qpn);
    sched_.remove(slot);
    const std::uint32_t last = live_.back();
    live_[e.live_pos] = last;
    qps_[last].live_pos = e.live_pos;
    live_.pop_back();
    --e.scq->refs;
    --e.rcq->refs;
    if (e.srq != nullptr) --e.srq->refs;
    e = QpEntry{};
    free_.push_back(slot);
    qp_ids_.erase(it);
    return 0;
  }

  // Registers `m.desc` (host = the daemon's mapping); returns the key
  // (lkey == rkey), or 0 with *err = ENOMEM (table full) or EINVAL.
  std::uint32_t reg_mr(const MrCreate& m, int* err) {
    *err = 0;
    return mrs_.reg(m.desc, err);
  }
  // Replaces the descriptor; the key stays. EINVAL for an unknown key.
  int rereg_mr(std::uint32_t key, const MrCreate& m) { return mrs_.rereg(key, m.desc); }
  // EINVAL for an unknown key. Once it returns no packet reaches the
  // memory: the caller may unmap it.
  int dereg_mr(std::uint32_t key) { return mrs_.dereg(key); }

  // EINVAL (id 0), EEXIST, ENOMEM (max_ahs).
  int create_ah(const AhCreate& a) {
    AhEntry e;
    e.id = a.id;
    e.client = a.client;
    e.pd = a.pd;
    e.dmac = a.dmac;
    e.dip = a.dip;
    e.dscp = a.dscp;
    e.ttl = a.ttl;
    return ahs_.insert(e);
  }
  // ENOENT. A UD WQE naming it afterwards completes in error.
  int destroy_ah(ObjId id) { return ahs_.erase(id); }

  // Neighbour lookup for the control plane: true with *mac when `ip` is
  // resolved (reachable or stale); otherwise starts (or keeps going) ARP
  // resolution, whose request leaves with the next flush, and returns
  // false. Our own address resolves to our MAC.
  bool resolve(wire::Ipv4Addr ip, TimeNs now, wire::MacAddr* mac) {
    if (ip == cfg_.ip) {
      *mac = cfg_.mac;
      return true;
    }
    ArpTx sink{this};
    const port::Resolution r = arp_.resolve(ip, now, sink);
    if (r.status != port::ResolveStatus::kResolved) return false;
    *mac = r.mac;
    return true;
  }
  // The `now` of the last poll() (for control calls that need a time).
  TimeNs last_now() const { return now_; }

  const VnicCounters& counters() const { return ctr_; }
  const port::ArpCounters& arp_counters() const { return arp_.counters(); }
  // Appends one QpStatus per QP (control path only: allocates).
  void qp_status(std::vector<QpStatus>* out) const {
    using transport::QpType;
    for (const std::uint32_t slot : live_) {
      const QpEntry& e = qps_[slot];
      QpStatus s;
      s.id = e.id;
      s.qpn = e.qpn;
      s.type = e.type;
      s.state = qp_state(e);
      s.client = e.client;
      s.engine = e.ctr;
      s.send_queue = visit(e, [](auto& q) { return q.send_queue_depth(); });
      s.recv_queue = visit(e, [](auto& q) { return q.recv_queue_depth(); });
      switch (e.type) {
        case QpType::kRc:
          s.rc = e.rc->counters();
          s.dest_qpn = e.rc->query().dest_qp_num;
          break;
        case QpType::kUc:
          s.uc = e.uc->counters();
          s.dest_qpn = e.attr.dest_qp_num;
          break;
        case QpType::kUd:
          s.ud = e.ud->counters();
          break;
      }
      out->push_back(s);
    }
  }
  std::uint32_t qp_count() const { return static_cast<std::uint32_t>(qp_ids_.size()); }
  std::uint32_t cq_count() const { return static_cast<std::uint32_t>(cqs_.size()); }
  std::uint32_t srq_count() const { return static_cast<std::uint32_t>(srqs_.size()); }
  std::uint32_t ah_count() const { return ahs_.size(); }
  std::uint32_t mr_count() const { return mrs_.live(); }

  // For tests: the RC timer deadline the engine holds for `qpn` (0: none).
  TimeNs deadline(std::uint32_t qpn) const {
    const QpEntry* e = demux_.find(qpn);
    return e == nullptr ? 0 : e->deadline;
  }
  // Phase 3 (timers), for a caller that runs poll() on a virtual clock (the
  // testbed) instead of spinning: the earliest instant at which poll() has
  // work that no new input brings. last_now() while looped-back frames wait
  // for the next RX phase; else the earliest RC timer deadline (possibly
  // stale-early: a poll then only rescans), or the maximum TimeNs when no
  // timer is armed. Inputs the caller knows about itself are not included:
  // a frame arriving, a WQE written to a ring, TX room opening, and a
  // poll() that returned work (a phase may have stopped at its burst). ARP
  // retransmissions are not included either: port::ArpAgent exposes no
  // deadline, and a QP's address vector already carries its MAC. With PFC
  // on, pfc_next_deadline() is included (staged frames, XOFF refreshes, the
  // end of a pause we obey, storm transitions); with PFC off that is
  // pfc::kNoDeadline, the maximum, and changes nothing.
  TimeNs next_deadline() const {
    return loop_.size() != 0 ? now_ : std::min(earliest_, pfc_next_deadline());
  }
  const Sched& scheduler() const { return sched_; }
  PortIo& io() { return io_; }

 private:
  static constexpr TimeNs kNever = std::numeric_limits<TimeNs>::max();
  using PortTx = typename PortIo::Tx;

  struct CqObj {
    explicit CqObj(CqSinkCounters* totals) : sink(totals) {}
    ObjId id = 0;
    CqRingSink sink;
    int async_fd = -1;
    std::uint32_t refs = 0;  // QPs using it (send or receive side, each)
  };

  struct SrqObj {
    ObjId id = 0;
    std::unique_ptr<transport::Srq> srq;
    shm::RqConsumer ring{};
    // As QpEntry::rq_held, for the SRQ's ring and transport queue.
    std::uint32_t held = 0;
    std::uint32_t max_sge = 0;
    std::uint64_t user_handle = 0;
    int async_fd = -1;
    std::uint32_t refs = 0;  // QPs attached
    std::uint32_t pos = 0;   // index in srq_list_
  };

  // An error completion the engine owes for a WQE it rejected, written once
  // the transport has retired every earlier WR of that queue.
  struct PendingError {
    bool active = false;
    std::uint64_t wr_id = 0;
    transport::WcStatus status = transport::WcStatus::kSuccess;
  };

  // One QP slot. Exactly one of rc/uc/ud is set while `used`; `type` is the
  // tag the packet path switches on.
  struct QpEntry {
    transport::QpType type = transport::QpType::kRc;
    bool used = false;
    bool has_rq = false;
    std::uint32_t qpn = 0;
    std::uint32_t slot = 0;
    std::uint32_t live_pos = 0;  // index in live_
    std::unique_ptr<transport::RcQp> rc;
    std::unique_ptr<transport::UcQp> uc;
    std::unique_ptr<transport::UdQp> ud;
    CqObj* scq = nullptr;
    CqObj* rcq = nullptr;
    SrqObj* srq = nullptr;
    TimeNs deadline = 0;  // RC timer; 0: none
    shm::SqConsumer sq{};
    shm::RqConsumer rq{};
    // RQ ring slots whose WR sits in the transport's receive queue: they are
    // released only once the transport has consumed the WR (rq_release_consumed),
    // so the application never has more receives outstanding than the ring
    // holds, as with rxe, where the ring is the queue.
    std::uint32_t rq_held = 0;
    shm::SqLimits sq_lim{};
    std::uint32_t max_recv_sge = 0;
    PendingError sq_err{};
    PendingError rq_err{};
    ObjId id = 0;
    std::uint32_t client = 0;
    transport::PdHandle pd = 0;
    std::uint64_t user_handle = 0;
    int async_fd = -1;
    transport::QpAttrValues attr{};  // values modify_qp applied (UC/UD query)
    QpEngineCounters ctr{};
  };

  // The TX sink QPs see: the port's, counting frames per QP, with frames
  // to our own MAC diverted to the loopback queue.
  struct QpTx {
    Vnic* v;
    QpEngineCounters& q;
    std::span<std::uint8_t> buf{};
    std::span<std::uint8_t> tx_alloc(std::size_t n) {
      buf = v->io_.tx().tx_alloc(n);
      return buf;
    }
    void tx_commit(std::size_t n) {
      ++q.tx_packets;
      q.tx_bytes += n;
      v->commit_frame(buf.first(n));
    }
  };

  // The ARP agent's frame sink.
  struct ArpTx {
    Vnic* v;
    void emit(std::span<const std::uint8_t> f) { v->emit_arp(f); }
  };

  // The TimerSink of every RC QP: one deadline per QP.
  struct Timers {
    Vnic* v;
    void arm(std::uint32_t qpn, TimeNs at) {
      QpEntry* e = v->demux_.find(qpn);
      if (e == nullptr) return;
      e->deadline = at;
      if (at < v->earliest_) v->earliest_ = at;
    }
  };

  struct QpEventSink {
    Vnic* v;
    QpEntry* e;
    void event(const transport::AsyncEvent& ev) { v->deliver_qp_event(*e, ev); }
  };
  struct SrqEventSink {
    Vnic* v;
    SrqObj* s;
    void event(const transport::AsyncEvent& ev) {
      v->post_async(s->async_fd, s->user_handle, ev.type);
    }
  };

  // The ring attach checks geometry, alignment and length; null memory is
  // refused here.
  template <class Ring>
  static bool attach_ring(Ring* r, const RingMem& m) {
    return m.mem != nullptr && r->attach(m.mem, m.bytes, m.geo) == shm::RingError::kOk;
  }

  static port::ArpConfig arp_config(const VnicConfig& c) {
    port::ArpConfig a = c.arp;
    a.mac = c.mac;
    a.ip = c.ip;
    return a;
  }

  // Calls f on the entry's concrete QP (type-tag switch; every branch
  // returns the same type).
  template <class E, class F>
  static auto visit(E& e, F&& f) {
    switch (e.type) {
      case transport::QpType::kUc: return f(*e.uc);
      case transport::QpType::kUd: return f(*e.ud);
      case transport::QpType::kRc: break;
    }
    return f(*e.rc);
  }
  static transport::QpState qp_state(const QpEntry& e) {
    return visit(e, [](auto& q) { return q.state(); });
  }
  static bool unreliable_needs_flush(transport::QpState s) {
    return s == transport::QpState::kSqe || s == transport::QpState::kErr;
  }

  static void merge_attrs(transport::QpAttrValues* d, std::uint32_t mask,
                          const transport::QpAttrValues& a) {
    namespace qa = transport::qp_attr;
    if (mask & qa::kState) d->qp_state = a.qp_state;
    if (mask & qa::kAccessFlags) d->qp_access_flags = a.qp_access_flags;
    if (mask & qa::kPkeyIndex) d->pkey_index = a.pkey_index;
    if (mask & qa::kPort) d->port_num = a.port_num;
    if (mask & qa::kQkey) d->qkey = a.qkey;
    if (mask & qa::kAv) d->av = a.av;
    if (mask & qa::kPathMtu) d->path_mtu = a.path_mtu;
    if (mask & qa::kRqPsn) d->rq_psn = a.rq_psn;
    if (mask & qa::kSqPsn) d->sq_psn = a.sq_psn;
    if (mask & qa::kDestQpn) d->dest_qp_num = a.dest_qp_num;
    if (mask & qa::kTimeout) d->timeout = a.timeout;
    if (mask & qa::kRetryCnt) d->retry_cnt = a.retry_cnt;
    if (mask & qa::kRnrRetry) d->rnr_retry = a.rnr_retry;
    if (mask & qa::kMinRnrTimer) d->min_rnr_timer = a.min_rnr_timer;
    if (mask & qa::kMaxQpRdAtomic) d->max_rd_atomic = a.max_rd_atomic;
    if (mask & qa::kMaxDestRdAtomic) d->max_dest_rd_atomic = a.max_dest_rd_atomic;
  }

  QpEntry* find_qp(ObjId id) {
    auto it = qp_ids_.find(id);
    return it == qp_ids_.end() ? nullptr : &qps_[it->second];
  }
  CqObj* find_cq(ObjId id) {
    auto it = cqs_.find(id);
    return it == cqs_.end() ? nullptr : it->second.get();
  }
  SrqObj* find_srq(ObjId id) {
    auto it = srqs_.find(id);
    return it == srqs_.end() ? nullptr : it->second.get();
  }

  // ---- Events ------------------------------------------------------------
  void post_async(int fd, std::uint64_t element, transport::AsyncEventType t) {
    switch (write_async_event(fd, element, static_cast<std::uint32_t>(t))) {
      case FdWrite::kOk: ++ctr_.async_events; break;
      case FdWrite::kNoFd: ++ctr_.async_events_lost; break;
      default: ++ctr_.async_event_errors; break;
    }
  }
  // A CQ_ERR names the CQ (raised by the QP that saw it refuse); the rest
  // name the QP.
  void deliver_qp_event(QpEntry& e, const transport::AsyncEvent& ev) {
    if (ev.element == transport::EventElement::kCq) {
      CqObj* cq = ev.cq == transport::CqRole::kSend ? e.scq : e.rcq;
      post_async(cq->async_fd, cq->sink.user_handle(), ev.type);
      return;
    }
    post_async(e.async_fd, e.user_handle, ev.type);
  }
  void drain_qp_events(QpEntry& e) {
    visit(e, [&](auto& q) {
      if (q.has_events()) {
        QpEventSink s{this, &e};
        q.drain_events(s);
      }
      return 0;
    });
    if (e.srq != nullptr && !e.srq->srq->events().empty()) {
      SrqEventSink s{this, e.srq};
      e.srq->srq->events().drain(s);
    }
  }

  // ---- Phase 1: RX ----------------------------------------------------------
  // One port burst, then the frames looped back since the last RX phase
  // (frames they cause to loop back wait for the next one). With PFC on
  // (pfc_endpoint.h): MAC Control frames go to the pause gate, frames of
  // lossless priorities are staged and processed after the burst within
  // the per-iteration budget. Loss injection (impairment.h) applies to the
  // port burst only.
  std::uint32_t rx_phase(TimeNs now) {
    PfcTx ptx{this};
    pfc_.poll(now, ptx);
    std::uint32_t n = io_.rx_burst([&](std::span<const std::uint8_t> f) {
      if (impair_.drop_rx(f)) {
        ++ctr_.rx_impair_drop;
        return;
      }
      if (pfc_.on_mac_control(f, now)) {
        ++ctr_.rx_frames;
        ctr_.rx_bytes += f.size();
        ++ctr_.rx_mac_control;
        return;
      }
      if (pfc_.staging() && pfc_.stage(f, now, ptx) != PfcEndpoint::Stage::kNotStaged) return;
      on_frame(f, now, true);
    });
    // Staged frames (lossless priorities), within the per-iteration budget.
    if (pfc_.staged() != 0) {
      n += pfc_.drain(now, ptx, [&](std::span<const std::uint8_t> f) { on_frame(f, now, true); });
    }
    const std::uint32_t looped = loop_.size();
    for (std::uint32_t i = 0; i < looped; ++i) {
      ++ctr_.rx_loopback;
      on_frame(loop_.front(), now, false);
      loop_.pop();
    }
    return n + looped;
  }

  // Straight to the port, counted as sent, bypassing the pause gate, the
  // hold queues and loss injection: the sink of held frames being released.
  struct HeldTx {
    Vnic* v;
    std::span<std::uint8_t> tx_alloc(std::size_t n) {
      if (v->io_.tx_room() == 0) v->ctr_.tx_flushed += v->io_.flush();
      return v->io_.tx().tx_alloc(n);
    }
    void tx_commit(std::size_t n) {
      v->io_.tx().tx_commit(n);
      ++v->ctr_.tx_frames;
      v->ctr_.tx_bytes += n;
    }
  };

  // The sink of the PFC frames we generate: HeldTx (MAC Control is never
  // paused, held or impaired), plus the endpoint's sent / refused counts.
  struct PfcTx {
    Vnic* v;
    std::span<std::uint8_t> tx_alloc(std::size_t n) {
      const std::span<std::uint8_t> b = HeldTx{v}.tx_alloc(n);
      if (b.size() < n) v->pfc_.count_pfc_tx(false);
      return b;
    }
    void tx_commit(std::size_t n) {
      HeldTx{v}.tx_commit(n);
      v->pfc_.count_pfc_tx(true);
    }
  };

  // A connected QP whose priority the peer has paused is not served (it
  // stays queued); UD QPs are (each WR has its own DSCP: frames of a paused
  // priority wait in the hold queue).
  bool pfc_paused(const QpEntry& e, TimeNs now) {
    return e.type != transport::QpType::kUd && pfc_.tx_paused_dscp(e.attr.av.dscp, now);
  }

  static std::uint32_t frame_slot_bytes(const VnicConfig& c) {
    return std::max<std::uint32_t>(c.eth_mtu + wire::EthHdr::kSize,
                                   static_cast<std::uint32_t>(wire::kMaxRoceFrame));
  }

  // `from_port`: false for looped-back frames (our own QPs' packets, which
  // the TTL monitor must not take for a loop).
  void on_frame(std::span<const std::uint8_t> f, TimeNs now, bool from_port) {
    using transport::QpType;
    ++ctr_.rx_frames;
    ctr_.rx_bytes += f.size();
    if (f.size() >= wire::EthHdr::kSize &&
        wire::load_be16(f.data() + 12) == wire::kEtherTypeArp) {
      ++ctr_.rx_arp;
      ArpTx sink{this};
      arp_.on_frame(f, now, sink);
      return;
    }
    const wire::ParseError err = wire::parse_roce(f, pkt_);
    if (err != wire::ParseError::kOk) {
      ++ctr_.rx_parse_errors;
      ++ctr_.parse_error[static_cast<std::size_t>(err)];
      return;
    }
    ++ctr_.rx_roce;
    if (from_port) pfc_.on_roce_rx(pkt_, now);
    if (!(pkt_.eth.dst() == cfg_.mac)) {
      ++ctr_.rx_not_our_mac;
      return;
    }
    if (pkt_.ip.dst() != cfg_.ip) {
      ++ctr_.rx_not_our_ip;
      return;
    }
    QpEntry* e = demux_.find(pkt_.bth.dest_qp());
    if (e == nullptr) {
      ++ctr_.rx_no_qp;
      return;
    }
    ++ctr_.rx_dispatched;
    ++e->ctr.rx_packets;
    e->ctr.rx_bytes += f.size();
    if (io_.tx_room() == 0) ctr_.tx_flushed += io_.flush();
    QpTx tx{this, e->ctr};
    switch (e->type) {
      case QpType::kRc: {
        RecvCq rcq{e};
        auto rio = transport::rc_io(tx, e->scq->sink, rcq, timers_);
        e->rc->on_packet(pkt_, now, rio);
        if (e->rc->has_output()) sched_.activate(e->slot);
        break;
      }
      case QpType::kUc:
        {
          RecvCq rcq{e};
          e->uc->on_packet(pkt_, rcq);
        }
        if (unreliable_needs_flush(e->uc->state())) sched_.activate(e->slot);
        break;
      case QpType::kUd:
        {
          RecvCq rcq{e};
          e->ud->on_packet(pkt_, rcq);
        }
        if (unreliable_needs_flush(e->ud->state())) sched_.activate(e->slot);
        break;
    }
    drain_qp_events(*e);
  }

  // A frame built in the port's staged TX buffer: committed to the port, or,
  // when addressed to our own MAC, copied to the loopback queue and the
  // buffer left uncommitted (the port reuses it for the next frame).
  void commit_frame(std::span<const std::uint8_t> f) {
    if (f.size() >= 6 && std::memcmp(f.data(), cfg_.mac.b.data(), 6) == 0) {
      if (loop_.push(f)) {
        ++ctr_.tx_loopback;
      } else {
        ++ctr_.tx_loopback_drop;
      }
      return;
    }
    // Left uncommitted, as a looped-back frame: the port reuses the buffer.
    if (impair_.drop_tx(f)) {
      ++ctr_.tx_impair_drop;
      return;
    }
    // A paused priority's frame is copied to its hold queue (or dropped
    // when stormed with action drop); the buffer is reused likewise.
    if (pfc_.on_tx(f, now_) != PfcEndpoint::Hold::kSend) return;
    io_.tx().tx_commit(f.size());
    ++ctr_.tx_frames;
    ctr_.tx_bytes += f.size();
  }

  void emit_arp(std::span<const std::uint8_t> f) {
    if (io_.tx_room() == 0) ctr_.tx_flushed += io_.flush();
    const std::span<std::uint8_t> b = io_.tx().tx_alloc(f.size());
    if (b.size() < f.size()) {
      ++ctr_.tx_arp_no_buffer;
      return;
    }
    std::memcpy(b.data(), f.data(), f.size());
    io_.tx().tx_commit(f.size());
    ++ctr_.tx_arp;
    ++ctr_.tx_frames;
    ctr_.tx_bytes += f.size();
  }

  // ---- Phase 2: doorbells ----------------------------------------------------
  // Runs every iteration over every QP, so an idle QP must cost little: each
  // ring is first checked by its indices alone (one acquire load of the
  // application's producer index), and the QP's state, queue depths and
  // pending errors are read only when the ring has something or an error
  // completion is owed.
  std::uint32_t doorbell_phase() {
    std::uint32_t work = 0;
    for (const std::uint32_t slot : live_) {
      QpEntry& e = qps_[slot];
      work += sq_doorbell(e);
      if (e.has_rq) work += rq_doorbell(e);
    }
    for (SrqObj* s : srq_list_) work += srq_doorbell(*s);
    return work;
  }

  // The AH a UD WQE names, checked against the QP's client and PD.
  transport::WcStatus resolve_ah(const QpEntry& e, std::uint32_t ah_num,
                                 transport::UdDest* d) {
    const AhEntry* a = ahs_.find(ah_num);
    if (a == nullptr) {
      ++ctr_.ah_missing;
      return transport::WcStatus::kLocQpOpErr;
    }
    if (a->client != e.client || a->pd != e.pd) {
      ++ctr_.ah_foreign;
      return transport::WcStatus::kLocQpOpErr;
    }
    d->dmac = a->dmac;
    d->dip = a->dip;
    d->dscp = a->dscp;
    d->ttl = a->ttl;
    return transport::WcStatus::kSuccess;
  }

  std::uint32_t sq_doorbell(QpEntry& e) {
    using transport::QpState;
    // Nothing new and nothing owed: nothing below would act.
    if (!e.sq_err.active && e.sq.ready() == 0) return 0;
    const QpState st = qp_state(e);
    if (st == QpState::kReset || st == QpState::kInit || st == QpState::kRtr) return 0;
    if (e.sq_err.active && !settle_error(e, &e.sq_err, true)) return 0;
    const std::uint32_t n = std::min(e.sq.ready(), kDoorbellBurst);
    std::uint32_t taken = 0;
    while (taken < n) {
      std::uint32_t ah = 0;
      const shm::WqeError err = shm::copy_send_wqe(e.sq.element(0), e.sq_lim, &swr_, &ah);
      transport::WcStatus bad = transport::WcStatus::kSuccess;
      if (err != shm::WqeError::kOk) {
        ++ctr_.wqe_error[static_cast<std::size_t>(err)];
        bad = shm::wc_status_for(err);
      } else if (e.type == transport::QpType::kUd) {
        bad = resolve_ah(e, ah, &swr_.ud);
      }
      if (bad == transport::WcStatus::kSuccess) {
        const int rc = visit(e, [&](auto& q) { return q.post_send(swr_); });
        if (rc == ENOMEM) {
          ++ctr_.sq_full;
          ++e.ctr.sq_full;
          break;
        }
        if (rc != 0) {
          ++ctr_.wqe_rejected;
          bad = transport::WcStatus::kLocQpOpErr;
        }
      }
      e.sq.release();
      ++taken;
      ++ctr_.sq_wqes;
      ++e.ctr.sq_wqes;
      if (bad != transport::WcStatus::kSuccess) {
        ++e.ctr.bad_wqes;
        e.sq_err = PendingError{true, swr_.wr_id, bad};
        settle_error(e, &e.sq_err, true);
        break;
      }
    }
    if (taken != 0) sched_.activate(e.slot);
    return taken;
  }

  std::uint32_t rq_doorbell(QpEntry& e) {
    // No new WQE, none held (so none to give back) and no error owed:
    // nothing below would act. With WQEs held, the slots the transport has
    // consumed are still given back here every iteration.
    if (e.rq_held == 0 && !e.rq_err.active && e.rq.ready() == 0) return 0;
    if (qp_state(e) == transport::QpState::kReset) {
      release_held(e.rq, &e.rq_held, 0);
      return 0;
    }
    release_held(e.rq, &e.rq_held, visit(e, [](auto& q) { return q.recv_queue_depth(); }));
    if (e.rq_err.active && !settle_error(e, &e.rq_err, false)) return 0;
    const std::uint32_t n = std::min(e.rq.ready() - e.rq_held, kDoorbellBurst);
    std::uint32_t taken = 0;
    while (taken < n) {
      const shm::WqeError err =
          shm::copy_recv_wqe(e.rq.element(e.rq_held), e.max_recv_sge, &rwr_);
      transport::WcStatus bad = transport::WcStatus::kSuccess;
      if (err != shm::WqeError::kOk) {
        ++ctr_.wqe_error[static_cast<std::size_t>(err)];
        bad = shm::wc_status_for(err);
      } else {
        const int rc = visit(e, [&](auto& q) { return q.post_recv(rwr_); });
        if (rc == ENOMEM) {
          ++ctr_.rq_full;
          ++e.ctr.rq_full;
          break;
        }
        if (rc != 0) {
          ++ctr_.wqe_rejected;
          bad = transport::WcStatus::kLocQpOpErr;
        }
      }
      ++taken;
      ++ctr_.rq_wqes;
      ++e.ctr.rq_wqes;
      if (bad != transport::WcStatus::kSuccess) {
        // Counted as held although the transport never has it, so the next
        // release_held gives its slot back.
        ++e.rq_held;
        ++e.ctr.bad_wqes;
        e.rq_err = PendingError{true, rwr_.wr_id, bad};
        settle_error(e, &e.rq_err, false);
        break;
      }
      ++e.rq_held;
    }
    // Receives posted in ERR are flushed by the pump.
    if (taken != 0 && qp_state(e) == transport::QpState::kErr) sched_.activate(e.slot);
    return taken;
  }

  // Releases the held ring slots whose WRs the transport has consumed: it
  // still holds `depth` of them, the oldest being consumed first (receive
  // queues are FIFO).
  static void release_held(shm::RqConsumer& ring, std::uint32_t* held, std::uint32_t depth) {
    if (*held > depth) {
      ring.release(*held - depth);
      *held = depth;
    }
  }

  // The receive CQ as the transport sees it while handling one QP. Before a
  // receive completion becomes visible, the ring slots whose WRs the
  // transport has consumed go back to the application, so one that refills
  // its receive queue on seeing a completion finds the room (rxe, too, frees
  // the slot before completing). One queue-depth read per receive CQE.
  struct RecvCq {
    QpEntry* e;
    bool push(const transport::Cqe& c) {
      if (e->has_rq) {
        release_held(e->rq, &e->rq_held, visit(*e, [](auto& q) { return q.recv_queue_depth(); }));
      } else if (e->srq != nullptr) {
        release_held(e->srq->ring, &e->srq->held, e->srq->srq->size());
      }
      return e->rcq->sink.push(c);
    }
  };

  // Writes the owed error completion once the transport queue it belongs
  // behind is empty, then moves the QP to ERR. True when nothing is owed
  // any more.
  bool settle_error(QpEntry& e, PendingError* pe, bool send) {
    const std::uint32_t depth =
        send ? visit(e, [](auto& q) { return q.send_queue_depth(); })
             : visit(e, [](auto& q) { return q.recv_queue_depth(); });
    if (depth != 0) return false;
    CqObj* cq = send ? e.scq : e.rcq;
    if (!cq->sink.push(transport::error_wc(pe->wr_id, e.qpn, pe->status))) {
      ++ctr_.error_cqe_deferred;
      return false;
    }
    pe->active = false;
    transport::QpAttrValues a;
    a.qp_state = transport::QpState::kErr;
    if (visit(e, [&](auto& q) { return q.modify(transport::qp_attr::kState, a); }) == 0) {
      e.attr.qp_state = transport::QpState::kErr;
    }
    sched_.activate(e.slot);
    drain_qp_events(e);
    return true;
  }

  std::uint32_t srq_doorbell(SrqObj& s) {
    release_held(s.ring, &s.held, s.srq->size());
    const std::uint32_t n = std::min(s.ring.ready() - s.held, kDoorbellBurst);
    std::uint32_t taken = 0;
    while (taken < n) {
      const shm::WqeError err = shm::copy_recv_wqe(s.ring.element(s.held), s.max_sge, &rwr_);
      bool bad = err != shm::WqeError::kOk;
      if (bad) {
        ++ctr_.wqe_error[static_cast<std::size_t>(err)];
      } else {
        const int rc = s.srq->post_recv(rwr_);
        if (rc == ENOMEM) {
          ++ctr_.srq_full;
          break;
        }
        if (rc != 0) {
          ++ctr_.wqe_rejected;
          bad = true;
        }
      }
      ++taken;
      ++ctr_.srq_wqes;
      if (bad) {
        // Dropped: no QP to complete it on. Its slot is counted as held
        // but the transport never has it, so the next release_held gives it
        // back (the application sees free slots, not which ones).
        ++ctr_.srq_bad_wqe;
        post_async(s.async_fd, s.user_handle, transport::AsyncEventType::kSrqErr);
      }
      ++s.held;
    }
    return taken;
  }

  // ---- Phase 3: timers -------------------------------------------------------
  std::uint32_t timer_phase(TimeNs now) {
    ArpTx sink{this};
    arp_.on_timer(now, sink);
    if (now < earliest_) return 0;
    ++ctr_.timer_scans;
    earliest_ = kNever;
    std::uint32_t fired = 0;
    for (const std::uint32_t slot : live_) {
      QpEntry& e = qps_[slot];
      if (e.deadline == 0) continue;
      if (e.deadline > now) {
        if (e.deadline < earliest_) earliest_ = e.deadline;
        continue;
      }
      e.deadline = 0;
      if (e.type != transport::QpType::kRc) continue;
      ++fired;
      ++ctr_.timer_fires;
      ++e.ctr.timer_fires;
      if (io_.tx_room() == 0) ctr_.tx_flushed += io_.flush();
      QpTx tx{this, e.ctr};
      RecvCq rcq{&e};
      auto rio = transport::rc_io(tx, e.scq->sink, rcq, timers_);
      // May re-arm through timers_, which lowers earliest_ as needed.
      e.rc->on_timer(now, rio);
      if (e.rc->has_output()) sched_.activate(slot);
      drain_qp_events(e);
    }
    return fired;
  }

  // ---- Phase 4: pump ---------------------------------------------------------
  std::uint32_t pump_phase(TimeNs now) {
    const std::uint32_t n = sched_.round([&](sched::FlowId f, std::uint32_t budget) {
      return serve(qps_[f], budget, now);
    });
    ctr_.tx_pumped += n;
    return n;
  }

  sched::ServeResult serve(QpEntry& e, std::uint32_t budget, TimeNs now) {
    using transport::QpType;
    sched::ServeResult r;
    if (!e.used) return r;
    if (pfc_paused(e, now)) return sched::ServeResult{0, true, false};
    std::uint32_t room = io_.tx_room();
    if (room == 0) {
      ctr_.tx_flushed += io_.flush();
      room = io_.tx_room();
      if (room == 0) {
        r.more = true;
        r.stop = true;
        return r;
      }
    }
    const std::uint32_t b = std::min(budget, room);
    QpTx tx{this, e.ctr};
    switch (e.type) {
      case QpType::kRc: {
        RecvCq rcq{&e};
      auto rio = transport::rc_io(tx, e.scq->sink, rcq, timers_);
        r.sent = e.rc->pump_tx(now, rio, b);
        r.more = e.rc->has_output();
        break;
      }
      case QpType::kUc:
        r = serve_unreliable(*e.uc, e, tx, b);
        break;
      case QpType::kUd:
        r = serve_unreliable(*e.ud, e, tx, b);
        break;
    }
    drain_qp_events(e);
    return r;
  }

  // UC/UD have no has_output(): the flow stays active while a turn used its
  // whole budget, ran out of TX buffers, or (SQE/ERR) a flush stopped at a
  // full CQ. A turn that does none of these found the queue empty or the QP
  // in a state that sends nothing; whatever changes that (a post, a modify,
  // a received packet moving it to ERR) activates it again.
  template <class Q>
  sched::ServeResult serve_unreliable(Q& q, QpEntry& e, QpTx& tx, std::uint32_t b) {
    sched::ServeResult r;
    const std::uint64_t no_buf = q.counters().tx_no_buffer;
    r.sent = q.process_send(tx, e.scq->sink, b);
    if (unreliable_needs_flush(q.state())) {
      const std::uint64_t ovf = q.counters().cq_overflow;
      RecvCq rcq{&e};
      q.flush(e.scq->sink, rcq);
      r.more = q.counters().cq_overflow != ovf;
    } else {
      r.more = r.sent == b || q.counters().tx_no_buffer != no_buf;
    }
    return r;
  }

  // ---- Phase 5: flush --------------------------------------------------------
  // Held frames of priorities whose pause ended go first, then the burst.
  void flush_phase() {
    if (pfc_.held() != 0) {
      HeldTx h{this};
      pfc_.release(now_, h);
    }
    ctr_.tx_flushed += io_.flush();
  }

  VnicConfig cfg_;
  PortIo& io_;
  port::ArpAgent arp_;
  transport::MrTable mrs_;
  AhTable ahs_;
  QpDemux<QpEntry> demux_;
  std::vector<QpEntry> qps_;          // slots, fixed at construction
  std::vector<std::uint32_t> free_;   // free slots (stack)
  std::vector<std::uint32_t> live_;   // used slots, for doorbells and timers
  Sched sched_;
  std::unordered_map<ObjId, std::uint32_t> qp_ids_;
  std::unordered_map<ObjId, std::unique_ptr<CqObj>> cqs_;
  std::unordered_map<ObjId, std::unique_ptr<SrqObj>> srqs_;
  std::vector<SrqObj*> srq_list_;
  LoopbackQueue loop_;
  PfcEndpoint pfc_;      // PFC generation/honouring and TTL, from cfg_.pfc
  Impairment impair_{};  // loss injection, from cfg_.impair
  Timers timers_{this};
  TimeNs earliest_ = kNever;
  TimeNs now_ = 0;
  std::uint32_t next_qpn_ = 0x11;
  // Scratch of the packet path (members: a SendWr is ~1 KiB).
  wire::ParsedPacket pkt_{};
  transport::SendWr swr_{};
  transport::RecvWr rwr_{};
  VnicCounters ctr_{};
};

}  // namespace uroce::engine
