// Vnic definitions (vnic.h): construction and the control path: clients'
// doorbell pages, CQs, SRQs, QPs, MRs, AHs, neighbour lookup and status.
// Engine thread only (the control plane reaches these through Engine::call).
#pragma once

#include <algorithm>
#include <cassert>
#include <cerrno>

#include "datapath/engine/event_fd.h"
#include "datapath/engine/vnic/entries.h"

namespace uroce::engine {

template <class PortIo, sched::TxScheduler Sched>
Vnic<PortIo, Sched>::Vnic(const VnicConfig& cfg, PortIo& io)
    : cfg_(cfg),
      io_(io),
      arp_(arp_config(cfg)),
      nd_(nd_config(cfg)),
      // One slot more: slot 0 never holds a key, and the device reports
      // max_mrs registrations and max_mws windows (ibv_device_attr.max_mr,
      // max_mw) as reachable.
      mrs_(cfg.max_mrs + cfg.max_mws + 1, cfg.key_seed),
      ahs_(cfg.max_ahs),
      // A shard uses only the QPNs it owns, whose low bits (the demux
      // slot's) it shares with no other shard: room for max_qps of them.
      demux_(cfg.max_qps * std::max<std::uint32_t>(cfg.shards, 1)),
      qps_(cfg.max_qps == 0 ? 1 : cfg.max_qps),
      sched_(make_sched(cfg, static_cast<std::uint32_t>(qps_.size()))),
      pacer_(static_cast<std::uint32_t>(qps_.size()), cfg.pacer, 0),
      limit_(cfg.port_limit),
      policies_(make_policies(cfg)),
      srq_slots_(cfg.max_srqs == 0 ? 1 : cfg.max_srqs, nullptr),
      timers_(static_cast<std::uint32_t>(qps_.size())),
      loop_(kLoopbackSlots, frame_slot_bytes(cfg)),
      pfc_(cfg.pfc, cfg.mac, cfg.ip, frame_slot_bytes(cfg)),
      stages_(cfg.stage_stamps
                  ? std::make_unique<StageRecorder>(static_cast<std::uint32_t>(qps_.size()))
                  : nullptr) {
  assert(cfg.shards >= 1 && cfg.shard < cfg.shards && cfg.shards <= shard_of_low_.size());
  for (std::uint32_t i = 0; i < shard_of_low_.size(); ++i) {
    shard_of_low_[i] = static_cast<std::uint8_t>(port::shard_of_qpn(i, cfg.shards));
  }
  free_.reserve(qps_.size());
  for (std::size_t i = qps_.size(); i-- > 0;) free_.push_back(static_cast<std::uint32_t>(i));
  live_.reserve(qps_.size());
  srq_free_.reserve(srq_slots_.size());
  for (std::size_t i = srq_slots_.size(); i-- > 0;) {
    srq_free_.push_back(static_cast<std::uint32_t>(i));
  }
  // Doorbells: two per QP slot (SQ, RQ), then one per SRQ slot.
  const std::size_t targets = qps_.size() + srq_slots_.size();
  qp_bells_ = static_cast<std::uint32_t>(2 * qps_.size());
  [[maybe_unused]] const shm::DoorbellError dbe =
      shm::make_doorbell_geometry(static_cast<std::uint32_t>(2 * qps_.size() + srq_slots_.size()),
                                  &db_geo_);
  assert(dbe == shm::DoorbellError::kOk);
  db_queued_.assign(targets, 0);
  db_next_.reserve(targets);
  db_now_.reserve(targets);
  due_.reserve(qps_.size());
  impair_ = Impairment(cfg.impair);
  hooks_ = policy::enabled_hooks(policies_);
  {
    PolicyHost h{this};
    each_policy<~0u>([&](auto& p) { p.on_start(h); });
  }
  update_tx_plain();
}

template <class PortIo, sched::TxScheduler Sched>
Vnic<PortIo, Sched>::~Vnic() = default;

template <class PortIo, sched::TxScheduler Sched>
std::uint32_t Vnic<PortIo, Sched>::poll(TimeNs now, bool may_cut) {
  assert(owner_.here());
  now_ = now;
  ++ctr_.iterations;
  io_.begin(now);
  comp_batch_.open();
  const std::uint64_t cqes = ctr_.cq.cqes_peer_data;
  std::uint32_t work = rx_phase(now);
  // Only with acks_at_pump_: otherwise the RX phase already built ACKs and
  // responses, and their flush must not wait. Only for completions of data
  // from the peer: a SEND or WRITE that an ACK completed is what a
  // streaming sender gets all the time, and its iteration has WQEs to take
  // and data to pump (cut there too, six pairs of embedded ib_send_bw 64 B
  // gave 3.20 against 3.74 M msg/s uncut, median of runs).
  if (may_cut && cfg_.cut_on_completion && !cut_ && acks_at_pump_ &&
      ctr_.cq.cqes_peer_data != cqes) {
    cut_ = true;
    ++ctr_.iterations_cut;
    comp_batch_.close();
    return work;
  }
  cut_ = false;
  work += doorbell_phase();
  work += timer_phase(now);
  if ((hooks_ & policy::hook::kPoll) != 0) [[unlikely]]
    work += policy_poll(now);
  work += pump_phase(now);
  flush_phase();
  comp_batch_.close();
  return work;
}

template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::set_impairment(const ImpairConfig& c) {
  assert(owner_.here());
  cfg_.impair = c;
  impair_ = Impairment(c);
}

template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::set_pfc(const PfcEndpointConfig& c) {
  assert(owner_.here());
  cfg_.pfc = c;
  pfc_ = PfcEndpoint(c, cfg_.mac, cfg_.ip, frame_slot_bytes(cfg_));
}

template <class PortIo, sched::TxScheduler Sched>
port::ArpConfig Vnic<PortIo, Sched>::arp_config(const VnicConfig& c) {
  port::ArpConfig a = c.arp;
  a.mac = c.mac;
  a.ip = c.ip;
  return a;
}

template <class PortIo, sched::TxScheduler Sched>
port::NdConfig Vnic<PortIo, Sched>::nd_config(const VnicConfig& c) {
  port::NdConfig n = c.nd;
  n.mac = c.mac;
  n.link_local = wire::Ipv6Addr::link_local(c.mac);
  n.global = c.ip6;
  return n;
}

template <class PortIo, sched::TxScheduler Sched>
std::uint32_t Vnic<PortIo, Sched>::frame_slot_bytes(const VnicConfig& c) {
  return std::max<std::uint32_t>(c.eth_mtu + wire::EthHdr::kSize,
                                 static_cast<std::uint32_t>(wire::kMaxRoceFrame));
}

// The ring attach checks geometry, alignment and length; null memory is
// refused here.
template <class PortIo, sched::TxScheduler Sched>
template <class Ring>
bool Vnic<PortIo, Sched>::attach_ring(Ring* r, const RingMem& m) {
  return m.mem != nullptr && r->attach(m.mem, m.bytes, m.geo) == shm::RingError::kOk;
}

// ---- Clients' doorbell pages ---------------------------------------------

template <class PortIo, sched::TxScheduler Sched>
int Vnic<PortIo, Sched>::open_client(std::uint32_t client, void* mem, std::size_t bytes) {
  assert(owner_.here());
  for (const auto& c : clients_) {
    if (c->client == client) return EEXIST;
  }
  auto page = std::make_unique<ClientPage>();
  page->client = client;
  if (page->bells.attach(mem, bytes, db_geo_) != shm::DoorbellError::kOk) return EINVAL;
  clients_.push_back(std::move(page));
  return 0;
}

template <class PortIo, sched::TxScheduler Sched>
int Vnic<PortIo, Sched>::close_client(std::uint32_t client) {
  assert(owner_.here());
  for (std::size_t i = 0; i < clients_.size(); ++i) {
    if (clients_[i]->client != client) continue;
    clients_[i] = std::move(clients_.back());
    clients_.pop_back();
    return 0;
  }
  return ENOENT;
}

template <class PortIo, sched::TxScheduler Sched>
int Vnic<PortIo, Sched>::qp_doorbells(ObjId id, std::uint32_t* sq, std::uint32_t* rq) const {
  assert(owner_.here());
  const QpEntry* e = find_qp(id);
  if (e == nullptr) return ENOENT;
  *sq = 2 * e->slot;
  *rq = 2 * e->slot + 1;
  return 0;
}

template <class PortIo, sched::TxScheduler Sched>
int Vnic<PortIo, Sched>::srq_doorbell(ObjId id, std::uint32_t* db) const {
  assert(owner_.here());
  const SrqObj* s = find_srq(id);
  if (s == nullptr) return ENOENT;
  *db = qp_bells_ + s->slot;
  return 0;
}

// ---- QPNs and CQs ----------------------------------------------------------

template <class PortIo, sched::TxScheduler Sched>
int Vnic<PortIo, Sched>::alloc_qpn(std::uint32_t* qpn) {
  assert(owner_.here());
  if (free_.empty()) return ENOSPC;
  const std::uint32_t tries = demux_.capacity() + 2;
  for (std::uint32_t t = 0; t < tries; ++t) {
    const std::uint32_t q = next_qpn_;
    next_qpn_ = (next_qpn_ + 1) & wire::kQpnMask;
    if (q < 2) continue;
    if (cfg_.shards > 1 && shard_of_low_[q & (shard_of_low_.size() - 1)] != cfg_.shard) continue;
    if (demux_.slot_free(q)) {
      *qpn = q;
      return 0;
    }
  }
  return ENOSPC;
}

template <class PortIo, sched::TxScheduler Sched>
int Vnic<PortIo, Sched>::create_cq(const CqCreate& c) {
  assert(owner_.here());
  if (c.id == 0) return EINVAL;
  if (cqs_.count(c.id) != 0) return EEXIST;
  if (cqs_.size() >= cfg_.max_cqs) return ENOMEM;
  auto cq = std::make_unique<CqObj>(&ctr_.cq, &comp_batch_);
  if (int rc = cq->sink.attach(c.ring, c.notify, c.channel_fd, c.user_handle); rc != 0) {
    return rc;
  }
  cq->id = c.id;
  cq->async_fd = c.async_fd;
  set_nonblocking(c.channel_fd);
  set_nonblocking(c.async_fd);
  cqs_.emplace(c.id, std::move(cq));
  return 0;
}

template <class PortIo, sched::TxScheduler Sched>
int Vnic<PortIo, Sched>::destroy_cq(ObjId id) {
  assert(owner_.here());
  auto it = cqs_.find(id);
  if (it == cqs_.end()) return ENOENT;
  if (it->second->refs != 0) return EBUSY;
#ifndef NDEBUG
  // A QP never holds a destroyed CQ.
  for (const std::uint32_t slot : live_) {
    assert(qps_[slot].scq != it->second.get() && qps_[slot].rcq != it->second.get());
  }
#endif
  cqs_.erase(it);
  return 0;
}

template <class PortIo, sched::TxScheduler Sched>
int Vnic<PortIo, Sched>::resize_cq(ObjId id, const RingMem& ring, ctl::CqNotify* notify) {
  assert(owner_.here());
  CqObj* cq = find_cq(id);
  if (cq == nullptr) return ENOENT;
  return cq->sink.resize(ring, notify);
}

// ---- SRQs ------------------------------------------------------------------

template <class PortIo, sched::TxScheduler Sched>
int Vnic<PortIo, Sched>::create_srq(const SrqCreate& c) {
  assert(owner_.here());
  if (c.id == 0) return EINVAL;
  if (srqs_.count(c.id) != 0) return EEXIST;
  if (srqs_.size() >= cfg_.max_srqs || srq_free_.empty()) return ENOMEM;
  shm::RqConsumer ring;
  if (!attach_ring(&ring, c.ring)) return EINVAL;
  const std::uint32_t depth = ring.geometry().capacity();
  if (c.max_sge > transport::kMaxSge || depth > transport::kMaxSrqWr || c.srq_limit > depth) {
    return EINVAL;
  }
  transport::SrqConfig sc;
  sc.srq_num = c.srq_num;
  sc.pd = c.pd;
  sc.max_wr = depth;
  sc.max_sge = c.max_sge;
  sc.srq_limit = c.srq_limit;
  const std::uint32_t slot = srq_free_.back();
  sc.refill = transport::RecvRefill{&refill_srq_hook, this, slot};
  auto s = std::make_unique<SrqObj>();
  s->id = c.id;
  s->srq = std::make_unique<transport::Srq>(sc);
  s->ring = ring;
  s->max_sge = c.max_sge;
  s->user_handle = c.user_handle;
  s->client = c.client;
  s->async_fd = c.async_fd;
  s->slot = slot;
  srq_free_.pop_back();
  srq_slots_[s->slot] = s.get();
  set_nonblocking(c.async_fd);
  // WQEs posted before the SRQ existed for the engine are looked at once.
  queue_doorbell(static_cast<std::uint32_t>(qps_.size()) + s->slot);
  srqs_.emplace(c.id, std::move(s));
  return 0;
}

template <class PortIo, sched::TxScheduler Sched>
int Vnic<PortIo, Sched>::modify_srq(ObjId id, std::uint32_t mask, const transport::SrqAttr& a) {
  assert(owner_.here());
  SrqObj* s = find_srq(id);
  if (s == nullptr) return ENOENT;
  return s->srq->modify(mask, a);
}

template <class PortIo, sched::TxScheduler Sched>
int Vnic<PortIo, Sched>::query_srq(ObjId id, transport::SrqAttr* out) {
  assert(owner_.here());
  SrqObj* s = find_srq(id);
  if (s == nullptr) return ENOENT;
  *out = s->srq->query();
  return 0;
}

template <class PortIo, sched::TxScheduler Sched>
int Vnic<PortIo, Sched>::destroy_srq(ObjId id) {
  assert(owner_.here());
  auto it = srqs_.find(id);
  if (it == srqs_.end()) return ENOENT;
  SrqObj* s = it->second.get();
  if (s->refs != 0) return EBUSY;
  assert(srq_slots_[s->slot] == s);
  // A queued doorbell visit of this slot finds it empty and skips it.
  srq_slots_[s->slot] = nullptr;
  srq_free_.push_back(s->slot);
  srqs_.erase(it);
  return 0;
}

// ---- QPs -------------------------------------------------------------------

template <class PortIo, sched::TxScheduler Sched>
int Vnic<PortIo, Sched>::create_qp(const QpCreate& c) {
  assert(owner_.here());
  if (c.id == 0) return EINVAL;
  if (qp_ids_.count(c.id) != 0) return EEXIST;
  if (free_.empty()) return ENOMEM;
  // The kind's sides: a DCT only receives (no send CQ, no SQ ring), a DCI
  // only sends (no receive CQ, no RQ ring); docs/dc.md.
  bool sends = false;
  bool receives = false;
  if (!detail::with_kind(c.type, [&](auto k) {
        using Q = typename decltype(k)::type;
        sends = Q::kSendCq;
        receives = Q::kRecvCq;
      })) {
    return EINVAL;
  }
  if (c.qpn < 2 || c.qpn > wire::kQpnMask) return EINVAL;
  if (!demux_.slot_free(c.qpn)) return EEXIST;
  // A QP that only receives does so through an SRQ; one that only sends has none.
  if ((!sends && c.srq == 0) || (!receives && c.srq != 0)) return EINVAL;
  CqObj* scq = sends ? find_cq(c.send_cq) : nullptr;
  CqObj* rcq = receives ? find_cq(c.recv_cq) : nullptr;
  if ((sends && scq == nullptr) || (receives && rcq == nullptr)) return ENOENT;
  SrqObj* srq = nullptr;
  if (c.srq != 0) {
    srq = find_srq(c.srq);
    if (srq == nullptr) return ENOENT;
  }
  const bool has_sq = sends;
  shm::SqConsumer sq;
  if (has_sq && !attach_ring(&sq, c.sq)) return EINVAL;
  shm::RqConsumer rq;
  const bool has_rq = srq == nullptr && receives;
  if (has_rq && !attach_ring(&rq, c.rq)) return EINVAL;
  const std::uint32_t send_wr = has_sq ? sq.geometry().capacity() : 0;
  // With an SRQ the transport's own RQ holds only the WR taken for the
  // message in progress.
  const std::uint32_t recv_wr = has_rq ? rq.geometry().capacity() : 1;
  const std::uint32_t send_sge = std::min(c.max_send_sge, transport::kMaxSge);
  const std::uint32_t recv_sge = std::min(c.max_recv_sge, transport::kMaxSge);
  const std::uint32_t inl = std::min(c.max_inline, transport::kMaxInline);
  transport::Srq* tsrq = srq != nullptr ? srq->srq.get() : nullptr;
  const transport::LocalPort local{cfg_.mac, cfg_.ip, wire::Ipv6Addr::link_local(cfg_.mac),
                                   cfg_.ip6};

  const std::uint32_t slot = free_.back();
  QpEntry& e = qps_[slot];
  assert(!e.used);
  // The transports' configs share these fields; UD adds the port MTU.
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
    // A packet that finds the RQ empty takes the ring's pending WQEs
    // (doorbells.h, rx_refill_rq).
    if (has_rq) q.recv_refill = transport::RecvRefill{&refill_rq_hook, this, slot};
  };
  int made = 0;
  detail::with_kind(c.type, [&](auto k) {
    using Q = typename decltype(k)::type;
    if constexpr (std::is_same_v<Q, transport::RcQp>) {
      transport::RcQpConfig q;
      fill(q);
      e.qp = std::make_unique<transport::RcQp>(q, mrs_);
    } else if constexpr (std::is_same_v<Q, transport::UcQp>) {
      transport::UcQpConfig q;
      fill(q);
      e.qp = std::make_unique<transport::UcQp>(q, mrs_);
    } else if constexpr (std::is_same_v<Q, transport::UdQp>) {
      transport::UdQpConfig q;
      fill(q);
      q.port_mtu = active_mtu();
      e.qp = std::make_unique<transport::UdQp>(q, mrs_);
    } else {
      transport::RcQpConfig q;
      fill(q);
      made = make_dc_qp(c, q, e);
    }
  });
  if (made != 0) return made;
  free_.pop_back();
  e.used = true;
  e.qpn = c.qpn;
  e.slot = slot;
  e.scq = scq;
  e.rcq = rcq;
  e.srq = srq;
  e.sq = sq;
  e.rq = rq;
  e.has_sq = has_sq;
  e.has_rq = has_rq;
  e.sq_lim = shm::SqLimits{c.type, send_sge, inl, c.dci_log_streams};
  e.max_recv_sge = recv_sge;
  e.id = c.id;
  e.client = c.client;
  e.pd = c.pd;
  e.user_handle = c.user_handle;
  e.async_fd = c.async_fd;
  {
    PolicyHost h{this};
    each_policy<policy::hook::kSlots>([&](auto& p) { p.on_created(h, e); });
  }
  [[maybe_unused]] const int dm = demux_.insert(c.qpn, &e);
  assert(dm == 0);
  e.live_pos = static_cast<std::uint32_t>(live_.size());
  live_.push_back(slot);
  if (scq != nullptr) ++scq->refs;
  if (rcq != nullptr) ++rcq->refs;
  if (srq != nullptr) ++srq->refs;
  set_nonblocking(c.async_fd);
  qp_ids_.emplace(c.id, slot);
  return 0;
}

template <class PortIo, sched::TxScheduler Sched>
int Vnic<PortIo, Sched>::modify_qp(ObjId id, const QpModify& m) {
  assert(owner_.here());
  QpEntry* e = find_qp(id);
  if (e == nullptr) return ENOENT;
  const transport::QpState before = qp_state(*e);
  QpModify mm;
  const QpModify* mp = &m;
  // The extensions may rewrite the attributes (DCQCN makes a connected
  // path ECN-capable).
  if ((hooks_ & policy::hook::kModify) != 0) {
    mm = m;
    mp = &mm;
    PolicyHost h{this};
    each_policy<policy::hook::kModify>([&](auto& p) { p.on_modify(h, *e, &mm); });
  }
  // A DC packet carries a DCETH or DCAETH more than RC's: its path MTU is
  // the one that still fits the port (uroced checked against RC's).
  if (transport::is_dc(e->type()) && (m.mask & transport::qp_attr::kPathMtu) != 0) {
    if (mp != &mm) mm = m;
    mm.values.path_mtu = dc_mtu_clamp(m.values.path_mtu);
    mp = &mm;
  }
  // The device's floor under the local ACK timeout (the infinite timeout,
  // 0, is not raised).
  if (cfg_.min_ack_timeout != 0 && (m.mask & transport::qp_attr::kTimeout) != 0 &&
      mp->values.timeout != 0 && mp->values.timeout < cfg_.min_ack_timeout) {
    if (mp != &mm) mm = m;
    mm.values.timeout = cfg_.min_ack_timeout;
    mp = &mm;
  }
  const int rc = visit(*e, [&](auto& q) { return q.modify(mp->mask, mp->values); });
  if (rc != 0) return rc;
  merge_attrs(&e->attr, mp->mask, mp->values);
  if ((m.mask & transport::qp_attr::kAv) != 0) {
    class_from_av(*e);
    if (cfg_.steer_src_port) steer_src_port(*e);
  }
  if (qp_state(*e) == transport::QpState::kReset) {
    e->sq_err = PendingError{};
    e->rq_err = PendingError{};
    e->deadline = 0;
    timers_.cancel(e->slot);
    // RESET discarded the transport's WRs: every held RQ slot goes back.
    if (e->has_rq) release_held(e->rq, &e->rq_held, 0);
    if (stages_ != nullptr) stages_->on_reset(e->slot);
  }
  // A move to ERR needs a flush, to RTS may free waiting WRs: let the pump
  // look. WQEs that waited in the rings for this state are taken now.
  if ((hooks_ & policy::hook::kModified) != 0) {
    PolicyHost h{this};
    each_policy<policy::hook::kModified>([&](auto& p) { p.on_modified(h, *e, before); });
  }
  sched_.activate(e->slot);
  queue_doorbell(e->slot);
  drain_qp_events(*e);
  return 0;
}

// A connected QP's source port steered to its peer's lcore (VnicConfig::
// steer_src_port), from the address and destination QP just applied.
template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::steer_src_port(QpEntry& e) {
  visit(e, [&](auto& q) {
    using Q = std::remove_cvref_t<decltype(q)>;
    if constexpr (std::is_same_v<Q, transport::RcQp> || std::is_same_v<Q, transport::UcQp>) {
      const transport::PathAddr& a = e.attr.av;
      const std::uint32_t dqpn = e.attr.dest_qp_num;
      q.set_udp_src(a.ipv6 ? port::steered_src_port_v6(a.route6.src, a.route6.dst, q.qpn(), dqpn)
                           : port::steered_src_port_v4(cfg_.ip, a.dip, q.qpn(), dqpn));
    }
    return 0;
  });
}

template <class PortIo, sched::TxScheduler Sched>
int Vnic<PortIo, Sched>::query_qp(ObjId id, QpQuery* out) {
  assert(owner_.here());
  QpEntry* e = find_qp(id);
  if (e == nullptr) return ENOENT;
  // RC and DC QPs keep their attributes; UC and UD only the values they
  // change, over the ones modify_qp applied (QpEntry::attr).
  visit(*e, [&](auto& q) {
    if constexpr (requires { q.query(); }) {
      out->values = q.query();
    } else {
      out->values = e->attr;
      q.query_own(&out->values);
    }
  });
  out->state = qp_state(*e);
  out->values.qp_state = out->state;
  out->values.cur_qp_state = out->state;
  return 0;
}

template <class PortIo, sched::TxScheduler Sched>
std::uint32_t Vnic<PortIo, Sched>::ud_sends_queued(ObjId id) {
  assert(owner_.here());
  QpEntry* e = find_qp(id);
  if (e == nullptr || e->type() != transport::QpType::kUd) return 0;
  if (qp_state(*e) != transport::QpState::kRts) return 0;
  return e->sq.ready() +
         static_cast<std::uint32_t>(visit(*e, [](auto& q) { return q.send_queue_depth(); }));
}

template <class PortIo, sched::TxScheduler Sched>
int Vnic<PortIo, Sched>::destroy_qp(ObjId id) {
  assert(owner_.here());
  auto it = qp_ids_.find(id);
  if (it == qp_ids_.end()) return ENOENT;
  const std::uint32_t slot = it->second;
  QpEntry& e = qps_[slot];
  demux_.erase(e.qpn);
  if (e.type() == transport::QpType::kUd && !mcast_.empty()) mcast_.forget(e.qpn);
  sched_.remove(slot);
  pacer_.clear(slot, [](sched::FlowId) {});
  update_tx_plain();
  if constexpr (requires { sched_.set_class(slot, std::uint8_t{0}); }) {
    sched_.set_class(slot, 0);
  }
  if constexpr (requires { sched_.forget(slot); }) sched_.forget(slot);
  timers_.cancel(slot);
  if (stages_ != nullptr) stages_->on_reset(slot);
  // A queued doorbell visit of this slot finds it unused and skips it.
  const std::uint32_t last = live_.back();
  live_[e.live_pos] = last;
  qps_[last].live_pos = e.live_pos;
  live_.pop_back();
  if (e.scq != nullptr) --e.scq->refs;
  if (e.rcq != nullptr) --e.rcq->refs;
  if (e.srq != nullptr) --e.srq->refs;
  visit(e, [&](auto& q) {
    if constexpr (requires { q.sr_counters(); }) counters::add(dc_sr_gone_, q.sr_counters());
  });
  {
    PolicyHost h{this};
    each_policy<policy::hook::kSlots>([&](auto& p) { p.on_destroyed(h, e); });
  }
  e = QpEntry{};
  free_.push_back(slot);
  qp_ids_.erase(it);
  return 0;
}

template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::merge_attrs(transport::QpAttrValues* d, std::uint32_t mask,
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

// ---- MRs, AHs, neighbours ------------------------------------------------

template <class PortIo, sched::TxScheduler Sched>
std::uint32_t Vnic<PortIo, Sched>::reg_mr(const MrCreate& m, int* err) {
  assert(owner_.here());
  *err = 0;
  if (mrs_.live() >= cfg_.max_mrs) {
    *err = ENOMEM;
    return 0;
  }
  return mrs_.reg(m.desc, err);
}

template <class PortIo, sched::TxScheduler Sched>
std::uint32_t Vnic<PortIo, Sched>::alloc_mw(transport::PdHandle pd, transport::MwType type,
                                            int* err) {
  assert(owner_.here());
  *err = 0;
  if (mrs_.mws_live() >= cfg_.max_mws) {
    *err = ENOMEM;
    return 0;
  }
  return mrs_.alloc_mw(pd, type, err);
}

template <class PortIo, sched::TxScheduler Sched>
bool Vnic<PortIo, Sched>::resolve(wire::Ipv4Addr ip, TimeNs now, wire::MacAddr* mac) {
  assert(owner_.here());
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

template <class PortIo, sched::TxScheduler Sched>
bool Vnic<PortIo, Sched>::resolve6(const wire::Ipv6Addr& ip, TimeNs now, wire::MacAddr* mac) {
  assert(owner_.here());
  ArpTx sink{this};
  const port::Resolution r = nd_.resolve(ip, now, sink);
  if (r.status != port::ResolveStatus::kResolved) return false;
  *mac = r.mac;
  return true;
}

// ---- Status ------------------------------------------------------------------

template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::qp_status(std::vector<QpStatus>* out) const {
  assert(owner_.here());
  for (const std::uint32_t slot : live_) {
    const QpEntry& e = qps_[slot];
    QpStatus s;
    s.id = e.id;
    s.qpn = e.qpn;
    s.type = e.type();
    s.state = qp_state(e);
    s.client = e.client;
    s.engine = e.ctr;
    if constexpr (requires { sched_.class_of(slot); }) s.tx_class = sched_.class_of(slot);
    s.class_pinned = e.class_pinned;
    s.paced = pacer_.status(slot, &s.pace);
    {
      const PolicyHost h{const_cast<Vnic*>(this)};
      each_policy<policy::hook::kStatus>([&](const auto& p) { p.status(h, e, &s); });
    }
    // Depths alike; counters in the field of the kind's own set.
    visit(e, [&](auto& q) {
      using Q = std::remove_cvref_t<decltype(q)>;
      s.send_queue = q.send_queue_depth();
      s.recv_queue = q.recv_queue_depth();
      if constexpr (std::is_same_v<Q, transport::RcQp>) {
        s.rc = q.counters();
        s.dest_qpn = q.query().dest_qp_num;
      } else if constexpr (std::is_same_v<Q, transport::UcQp>) {
        s.uc = q.counters();
        s.dest_qpn = e.attr.dest_qp_num;
      } else if constexpr (std::is_same_v<Q, transport::UdQp>) {
        s.ud = q.counters();
      } else {
        dc_status(q, &s);
      }
    });
    out->push_back(s);
  }
}

template <class PortIo, sched::TxScheduler Sched>
TimeNs Vnic<PortIo, Sched>::deadline(std::uint32_t qpn) const {
  assert(owner_.here());
  const QpEntry* e = demux_.find(qpn);
  return e == nullptr ? 0 : e->deadline;
}

template <class PortIo, sched::TxScheduler Sched>
TimeNs Vnic<PortIo, Sched>::next_deadline() const {
  assert(owner_.here());
  if (loop_.size() != 0) return now_;
  TimeNs t = std::min(timers_.earliest(), pfc_next_deadline());
  // QPs with output held back by the port limit: when it opens again.
  if (!limit_.open() && sched_.size() != 0) t = std::min(t, limit_.open_at());
  // QPs of a class held back by its rate limit: when it may send again.
  if constexpr (requires { sched_.next_rate_due(); }) t = std::min(t, sched_.next_rate_due());
  // The extensions' own phase (the Homa-like scheduler's grants).
  {
    const PolicyHost h{const_cast<Vnic*>(this)};
    each_policy<policy::hook::kDeadline>(
        [&](const auto& p) { t = std::min(t, p.next_deadline(h)); });
  }
  return std::min(t, pacer_.next_due(t));
}

template <class PortIo, sched::TxScheduler Sched>
typename Vnic<PortIo, Sched>::QpEntry* Vnic<PortIo, Sched>::find_qp(ObjId id) {
  auto it = qp_ids_.find(id);
  return it == qp_ids_.end() ? nullptr : &qps_[it->second];
}
template <class PortIo, sched::TxScheduler Sched>
const typename Vnic<PortIo, Sched>::QpEntry* Vnic<PortIo, Sched>::find_qp(ObjId id) const {
  auto it = qp_ids_.find(id);
  return it == qp_ids_.end() ? nullptr : &qps_[it->second];
}
template <class PortIo, sched::TxScheduler Sched>
typename Vnic<PortIo, Sched>::CqObj* Vnic<PortIo, Sched>::find_cq(ObjId id) {
  auto it = cqs_.find(id);
  return it == cqs_.end() ? nullptr : it->second.get();
}
template <class PortIo, sched::TxScheduler Sched>
typename Vnic<PortIo, Sched>::SrqObj* Vnic<PortIo, Sched>::find_srq(ObjId id) {
  auto it = srqs_.find(id);
  return it == srqs_.end() ? nullptr : it->second.get();
}
template <class PortIo, sched::TxScheduler Sched>
const typename Vnic<PortIo, Sched>::SrqObj* Vnic<PortIo, Sched>::find_srq(ObjId id) const {
  auto it = srqs_.find(id);
  return it == srqs_.end() ? nullptr : it->second.get();
}

}  // namespace uroce::engine
