// Vnic definitions (vnic.h): phase 2, doorbells. The rings visited are those
// whose doorbell a client rang (datapath/shm/doorbell.h) and those the engine
// queued itself: a visit that left work behind (burst limit, transport queue
// full, an error completion still owed), a modify_qp (WQEs may have waited
// for the new state), a new SRQ. Nothing else is looked at, so an idle QP
// costs nothing here.
//
// Doorbell numbers: QP slot s has SQ doorbell 2s and RQ doorbell 2s+1; SRQ
// slot k has 2 * qps_.size() + k. A visit target is a QP slot (the rings
// named in db_queued_) or qps_.size() + an SRQ slot; db_queued_ keeps each
// target queued at most once. The phase visits the queued targets first,
// then the rings whose doorbell rang, at once; targets queued during the
// phase wait for the next iteration.
#pragma once

#include "datapath/engine/vnic/entries.h"

namespace uroce::engine {

template <class PortIo, sched::TxScheduler Sched>
inline void Vnic<PortIo, Sched>::queue_doorbell(std::uint32_t target, std::uint8_t rings) {
  assert(target < db_queued_.size() && rings != 0);
  const std::uint8_t was = db_queued_[target];
  db_queued_[target] = was | rings;
  if (was == 0) db_next_.push_back(target);
}

// A doorbell a client rang: its ring is visited now if the ring is that
// client's (another client's bits are only counted); a ring already queued
// for the next iteration (it had work left) just adds this ring to the visit.
template <class PortIo, sched::TxScheduler Sched>
[[gnu::always_inline]] inline std::uint32_t Vnic<PortIo, Sched>::on_doorbell(std::uint32_t client,
                                                                             std::uint32_t db) {
  ++ctr_.doorbells;
  if (db < qp_bells_) {
    const std::uint32_t t = db >> 1;
    const std::uint8_t ring = (db & 1) != 0 ? kVisitRq : kVisitSq;
    QpEntry& e = qps_[t];
    if (!e.used || e.client != client) {
      ++ctr_.doorbell_foreign;
      return 0;
    }
    if (db_queued_[t] != 0) {
      db_queued_[t] |= ring;
      return 0;
    }
    return visit_qp_rings(e, ring);
  }
  const std::uint32_t k = db - qp_bells_;
  SrqObj* s = k < srq_slots_.size() ? srq_slots_[k] : nullptr;
  if (s == nullptr || s->client != client) {
    ++ctr_.doorbell_foreign;
    return 0;
  }
  const std::uint32_t t = static_cast<std::uint32_t>(qps_.size()) + k;
  if (db_queued_[t] != 0) return 0;
  return visit_srq_ring(*s, t);
}

// The rings queued by the last iteration first (each visited once; what is
// queued again waits for the next iteration), then every open client's page.
template <class PortIo, sched::TxScheduler Sched>
[[gnu::always_inline]] inline std::uint32_t Vnic<PortIo, Sched>::doorbell_phase() {
  std::uint32_t work = 0;
  if (!db_next_.empty()) {
    db_now_.swap(db_next_);
    const auto nqp = static_cast<std::uint32_t>(qps_.size());
    for (const std::uint32_t t : db_now_) {
      const std::uint8_t rings = db_queued_[t];
      db_queued_[t] = 0;
      if (t < nqp) {
        QpEntry& e = qps_[t];
        if (e.used) work += visit_qp_rings(e, rings);
      } else if (SrqObj* s = srq_slots_[t - nqp]; s != nullptr) {
        work += visit_srq_ring(*s, t);
      }
    }
    db_now_.clear();
  }
  for (const auto& c : clients_) {
    const std::uint32_t client = c->client;
    c->bells.collect([&](std::uint32_t db) { work += on_doorbell(client, db); });
  }
  return work;
}

// An SRQ's ring, queued again (target t) while WQEs are left in it.
template <class PortIo, sched::TxScheduler Sched>
inline std::uint32_t Vnic<PortIo, Sched>::visit_srq_ring(SrqObj& s, std::uint32_t t) {
  const std::uint32_t work = srq_ring(s);
  if (s.ring.ready() > s.held) queue_doorbell(t);
  return work;
}

// The named rings of a QP; each is queued again when it still has work the
// engine can take later without a new doorbell.
template <class PortIo, sched::TxScheduler Sched>
inline std::uint32_t Vnic<PortIo, Sched>::visit_qp_rings(QpEntry& e, std::uint8_t rings) {
  ++ctr_.ring_visits;
  std::uint32_t work = 0;
  std::uint8_t again = 0;
  bool more = false;
  if ((rings & kVisitSq) != 0 && e.has_sq) {
    work += sq_doorbell(e, &more);
    if (more) again |= kVisitSq;
  }
  if ((rings & kVisitRq) != 0 && e.has_rq) {
    more = false;
    work += rq_doorbell(e, &more);
    if (more) again |= kVisitRq;
  }
  if (again != 0) queue_doorbell(e.slot, again);
  return work;
}

// *more: the ring still holds WQEs this state takes, or an error completion
// is still owed (WQEs that wait for RTS are looked at again by the modify).
template <class PortIo, sched::TxScheduler Sched>
inline std::uint32_t Vnic<PortIo, Sched>::sq_doorbell(QpEntry& e, bool* more) {
  using transport::QpState;
  // Nothing new and nothing owed: nothing below would act.
  if (!e.sq_err.active && e.sq.ready() == 0) return 0;
  const QpState st = qp_state(e);
  if (st == QpState::kReset || st == QpState::kInit || st == QpState::kRtr) return 0;
  if (e.sq_err.active && !settle_error(e, &e.sq_err, true)) {
    *more = true;
    return 0;
  }
  const std::uint32_t n = std::min(e.sq.ready(), kDoorbellBurst);
  std::uint32_t taken = 0;
  while (taken < n) {
    std::uint32_t ah = 0;
    const shm::WqeError err = shm::copy_send_wqe(e.sq.element(0), e.sq_lim, &swr_, &ah);
    transport::WcStatus bad = transport::WcStatus::kSuccess;
    if (err != shm::WqeError::kOk) {
      ++ctr_.wqe_error[static_cast<std::size_t>(err)];
      bad = shm::wc_status_for(err);
    } else if (e.addressing() == transport::QpAddressing::kPerWr &&
               !transport::is_local_op(swr_.opcode)) {
      // Each WR names its AH but a DCI's LOCAL_INV, which has no target (ah
      // 0, wqe_copy.h; UD takes no local operation).
      bad = resolve_ah(e, ah, &swr_.ud);
    }
    if (bad == transport::WcStatus::kSuccess) {
      const bool trackable = stages_ != nullptr && stage_trackable(e);
      const int rc = visit(e, [&](auto& q) { return q.post_send(swr_); });
      if (rc == ENOMEM) {
        ++ctr_.sq_full;
        ++e.ctr.sq_full;
        break;
      }
      if (rc != 0) {
        ++ctr_.wqe_rejected;
        bad = transport::WcStatus::kLocQpOpErr;
      } else {
        if ((hooks_ & policy::hook::kPost) != 0) [[unlikely]]
          policy_post(e);
        if (stages_ != nullptr) [[unlikely]]
          stage_post(e, trackable);
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
  *more = e.sq_err.active || e.sq.ready() != 0;
  return taken;
}

// *more: the ring still holds new WQEs (the transport queue was full or the
// burst ended), or an error completion is still owed.
template <class PortIo, sched::TxScheduler Sched>
inline std::uint32_t Vnic<PortIo, Sched>::rq_doorbell(QpEntry& e, bool* more) {
  // Nothing new, nothing owed; held slots go back at their completions
  // (RecvCq) or at a move to RESET (modify_qp).
  if (!e.rq_err.active && e.rq.ready() == e.rq_held) return 0;
  // In RESET, WQEs wait in the ring (modify_qp looks again).
  if (qp_state(e) == transport::QpState::kReset) return 0;
  if (e.rq_err.active && !settle_error(e, &e.rq_err, false)) {
    *more = true;
    return 0;
  }
  const std::uint32_t n = std::min(e.rq.ready() - e.rq_held, kDoorbellBurst);
  std::uint32_t taken = 0;
  while (taken < n) {
    const shm::WqeError err = shm::copy_recv_wqe(e.rq.element(e.rq_held), e.max_recv_sge, &rwr_);
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
  *more = e.rq_err.active || e.rq.ready() > e.rq_held;
  return taken;
}

// Writes the owed error completion once the transport queue it belongs
// behind is empty, then moves the QP to ERR. True when nothing is owed any
// more.
template <class PortIo, sched::TxScheduler Sched>
bool Vnic<PortIo, Sched>::settle_error(QpEntry& e, PendingError* pe, bool send) {
  const std::uint32_t depth = send ? visit(e, [](auto& q) { return q.send_queue_depth(); })
                                   : visit(e, [](auto& q) { return q.recv_queue_depth(); });
  if (depth != 0) return false;
  CqObj* cq = send ? e.scq : e.rcq;
  if (!cq->sink.push(transport::error_wc(pe->wr_id, e.qpn, pe->status))) {
    ++ctr_.error_cqe_deferred;
    return false;
  }
  pe->active = false;
  // The rejected WQE's slot (counted as held) goes back with its completion.
  if (!send && e.has_rq) release_held(e.rq, &e.rq_held, 0);
  transport::QpAttrValues a;
  a.qp_state = transport::QpState::kErr;
  if (visit(e, [&](auto& q) { return q.modify(transport::qp_attr::kState, a); }) == 0) {
    e.attr.qp_state = transport::QpState::kErr;
  }
  sched_.activate(e.slot);
  drain_qp_events(e);
  return true;
}

// The RX path's refills (transport/recv_refill.h). The RX phase runs before
// the doorbell phase, so a packet can arrive for a receive the application
// posted after the last doorbell phase: its WQE is in the ring but not in
// the transport's queue. When a packet that needs a receive WR finds the
// QP's queue (or its SRQ) empty, the transport calls these, and the WQEs
// published so far are taken now, as the doorbell phase takes them (same
// burst, same held-slot accounting), so that only a ring that is really
// empty gives RNR or a drop. Ordering: the provider writes the WQE, then
// store-releases the producer index (shm/ring.h); ready() load-acquires it,
// so every WQE it counts is fully visible. The doorbell bit the provider
// rings after publishing still leads the doorbell phase to the ring, which
// then finds those WQEs taken (ready() == held) and does nothing.
template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::refill_rq_hook(void* vnic, std::uint32_t slot) {
  static_cast<Vnic*>(vnic)->rx_refill_rq(slot);
}

template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::refill_srq_hook(void* vnic, std::uint32_t slot) {
  static_cast<Vnic*>(vnic)->rx_refill_srq(slot);
}

// Only called with the QP's receive queue empty, so the transport has room
// for a whole burst. A WQE that fails the copy or that the transport
// refuses is left in the ring and the ring queued for the doorbell phase:
// its error completion and the move to ERR happen there (rq_doorbell), not
// from inside the transport's packet handling. Likewise nothing is taken
// while an error completion is owed (the WQEs behind it wait for it).
template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::rx_refill_rq(std::uint32_t slot) {
  QpEntry& e = qps_[slot];
  assert(e.used && e.has_rq);
  if (e.rq_err.active) return;
  const std::uint32_t n = std::min(e.rq.ready() - e.rq_held, kDoorbellBurst);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (shm::copy_recv_wqe(e.rq.element(e.rq_held), e.max_recv_sge, &rwr_) != shm::WqeError::kOk ||
        visit(e, [&](auto& q) { return q.post_recv(rwr_); }) != 0) {
      queue_doorbell(slot, kVisitRq);
      return;
    }
    ++e.rq_held;
    ++ctr_.rq_wqes;
    ++e.ctr.rq_wqes;
    ++ctr_.rx_recv_refills;
  }
}

// The SRQ's ring as its doorbell would visit it (srq_ring drops a bad WQE
// and raises SRQ_ERR, which changes no QP), queued again when WQEs remain.
template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::rx_refill_srq(std::uint32_t slot) {
  SrqObj* s = srq_slots_[slot];
  assert(s != nullptr);
  const std::uint64_t before = s->srq->counters().posted;
  visit_srq_ring(*s, static_cast<std::uint32_t>(qps_.size()) + slot);
  ctr_.rx_recv_refills += s->srq->counters().posted - before;
}

template <class PortIo, sched::TxScheduler Sched>
inline std::uint32_t Vnic<PortIo, Sched>::srq_ring(SrqObj& s) {
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
      // Dropped: no QP to complete it on. Its slot is counted as held but
      // the transport never has it, so the next release_held gives it back
      // (the application sees free slots, not which ones).
      ++ctr_.srq_bad_wqe;
      post_async(s.async_fd, s.user_handle, transport::AsyncEventType::kSrqErr);
    }
    ++s.held;
  }
  // Dropped WQEs hold no transport WR: their slots go back now.
  release_held(s.ring, &s.held, s.srq->size());
  return taken;
}

}  // namespace uroce::engine
