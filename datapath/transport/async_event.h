// Asynchronous events (ibv_get_async_event) as the transport raises them, and
// the per-QP bookkeeping that keeps a refused completion from being lost.
//
// Delivery model: events are not pushed into a sink from inside the packet
// path. Each QP (and each SRQ, srq.h) owns a small fixed ring of pending
// events, PendingEvents; the engine drains it with drain(EventSink&) after it
// has driven the object (or whenever has_events() says so). This keeps every
// existing QP entry point and its sink bundle unchanged, costs one branch per
// raise, never allocates, and involves no virtual call. Raising is rare (an
// error, an SRQ limit); the ring holds kCapacity events, more than one QP can
// raise between two RESETs (see QpEventState), and an event that does not fit
// is counted in lost(), never dropped silently.
//
// Which events the transport raises (IBTA Vol1 11.6.3, behaviour of rxe where
// it has one):
//   CQ_ERR           a CQ refused a completion (rxe_cq_post raises it on the
//                    CQ when the queue is full). Raised by the QP that saw the
//                    refusal, once per QP and CQ, with element kCq, cq = the
//                    QP's send or receive CQ and id = the QPN: the engine maps
//                    (QPN, role) to its CQ handle.
//   QP_FATAL         the QP moved to ERR because a CQ refused a completion
//                    (IBTA: local catastrophic work queue error; rxe only
//                    moves the QP to ERR).
//   QP_REQ_ERR       an RC responder NAKed an invalid request and moved to ERR.
//   QP_ACCESS_ERR    an RC responder NAKed a remote access error and moved to
//                    ERR (rxe raises neither of these two; hardware does).
//   QP_LAST_WQE_REACHED  a QP attached to an SRQ is in ERR and the receive WR
//                    it held, if any, has been flushed (IBTA 10.2.9.5; rxe
//                    does not raise it).
//   SRQ_LIMIT_REACHED  raised by the SRQ (srq.h).
// At most one of QP_FATAL / QP_REQ_ERR / QP_ACCESS_ERR is raised per entry
// into ERR; moving the QP to RESET starts afresh.
#pragma once

#include <array>
#include <concepts>
#include <cstdint>

#include "datapath/transport/cqe.h"
#include "datapath/transport/sinks.h"

namespace uroce::transport {

// ibv_event_type values (verbs.h numbers them from 0 in this order).
enum class AsyncEventType : std::uint32_t {
  kCqErr = 0,
  kQpFatal = 1,
  kQpReqErr = 2,
  kQpAccessErr = 3,
  kCommEst = 4,
  kSqDrained = 5,
  kPathMig = 6,
  kPathMigErr = 7,
  kDeviceFatal = 8,
  kPortActive = 9,
  kPortErr = 10,
  kLidChange = 11,
  kPkeyChange = 12,
  kSmChange = 13,
  kSrqErr = 14,
  kSrqLimitReached = 15,
  kQpLastWqeReached = 16,
  kClientReregister = 17,
  kGidChange = 18,
  kWqFatal = 19,
};

// The object an event is about (ibv_async_event.element).
enum class EventElement : std::uint8_t { kQp, kCq, kSrq, kPort, kDevice };

// Which of a QP's two CQs a CQ event names.
enum class CqRole : std::uint8_t { kNone = 0, kSend = 1, kRecv = 2 };

struct AsyncEvent {
  AsyncEventType type = AsyncEventType::kDeviceFatal;
  EventElement element = EventElement::kDevice;
  CqRole cq = CqRole::kNone;
  // QPN (kQp, and kCq raised by a QP), SRQ number (kSrq), port (kPort).
  std::uint32_t id = 0;
};

// Receives drained events (the engine's async-event channel, a test's log).
template <class T>
concept EventSink = requires(T t, const AsyncEvent& e) {
  { t.event(e) } -> std::same_as<void>;
};

// A fixed ring of pending events, oldest first.
class PendingEvents {
 public:
  static constexpr std::uint32_t kCapacity = 8;

  // Queues `e`; false (and lost() + 1) when the ring is full.
  bool raise(const AsyncEvent& e) {
    if (tail_ - head_ == kCapacity) {
      ++lost_;
      return false;
    }
    ring_[tail_ % kCapacity] = e;
    ++tail_;
    return true;
  }
  bool empty() const { return head_ == tail_; }
  std::uint32_t size() const { return tail_ - head_; }
  const AsyncEvent& at(std::uint32_t i) const { return ring_[(head_ + i) % kCapacity]; }
  // Events that did not fit (should stay 0: see the header comment).
  std::uint64_t lost() const { return lost_; }

  // Hands every pending event to `sink`, oldest first; returns how many.
  template <EventSink S>
  std::uint32_t drain(S& sink) {
    std::uint32_t n = 0;
    while (head_ != tail_) {
      const AsyncEvent e = ring_[head_ % kCapacity];
      ++head_;
      sink.event(e);
      ++n;
    }
    return n;
  }

 private:
  std::array<AsyncEvent, kCapacity> ring_{};
  std::uint32_t head_ = 0;
  std::uint32_t tail_ = 0;
  std::uint64_t lost_ = 0;
};

// What a QP keeps for its events and for a completion its CQ refused.
//
// No silent loss: a completion that a CQ refuses on the normal path (a WR
// that finished) is parked here, one slot per CQ role, and the QP's flush
// posts it again before anything else once the CQ has room, so it is
// delivered late but in order. The invariant that one slot is enough: the
// refusal moves the QP to ERR, and in ERR the only completions are the
// flush's, which never park (the WR they flush stays queued instead).
// A second park while a slot is full would break that invariant; it is
// counted in cqe_lost.
class QpEventState {
 public:
  explicit QpEventState(std::uint32_t qpn) : qpn_(qpn) {}

  PendingEvents& pending() { return events_; }
  const PendingEvents& pending() const { return events_; }

  // Posts a completion of a finished WR. On refusal: parks it, raises CQ_ERR
  // (once per role) and QP_FATAL, and returns false; the caller moves the QP
  // to ERR and counts its cq_overflow.
  template <CqSink Cq>
  bool post(Cq& cq, const Cqe& c, CqRole role) {
    if (cq.push(c)) return true;
    Slot& s = slot(role);
    if (s.parked) {
      ++cqe_lost_;
    } else {
      s.parked = true;
      s.cqe = c;
      ++cqe_parked_;
    }
    cq_refused(role);
    return false;
  }
  // A flush completion was refused (the WR stays queued): the same events,
  // nothing parked.
  void cq_refused(CqRole role) {
    Slot& s = slot(role);
    if (!s.cq_err_raised) {
      s.cq_err_raised = true;
      events_.raise({AsyncEventType::kCqErr, EventElement::kCq, role, qpn_});
    }
    qp_error(AsyncEventType::kQpFatal);
  }
  // Posts the parked completion of `role`, if any. True when nothing is
  // parked any more (the flush may go on), false when the CQ is still full.
  template <CqSink Cq>
  bool repost(Cq& cq, CqRole role) {
    Slot& s = slot(role);
    if (!s.parked) return true;
    if (!cq.push(s.cqe)) return false;
    s.parked = false;
    ++cqe_reposted_;
    return true;
  }
  bool parked(CqRole role) const { return slot(role).parked; }

  // The QP entered ERR for `why` (QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR):
  // raised once per entry into ERR.
  void qp_error(AsyncEventType why) {
    if (error_raised_) return;
    error_raised_ = true;
    events_.raise({why, EventElement::kQp, CqRole::kNone, qpn_});
  }
  // An SRQ-attached QP is in ERR and its last receive WR is flushed.
  void last_wqe_reached() {
    if (last_wqe_raised_) return;
    last_wqe_raised_ = true;
    events_.raise({AsyncEventType::kQpLastWqeReached, EventElement::kQp, CqRole::kNone, qpn_});
  }
  // The QP moved to RESET: WRs are discarded without completions (a parked
  // one too) and the next entry into ERR raises its events again. Pending
  // events stay for the engine to drain.
  void reset() {
    send_ = Slot{};
    recv_ = Slot{};
    error_raised_ = false;
    last_wqe_raised_ = false;
  }

  // LAST_WQE_REACHED was raised since the last RESET.
  bool last_wqe_raised() const { return last_wqe_raised_; }
  std::uint64_t cqe_parked() const { return cqe_parked_; }
  std::uint64_t cqe_reposted() const { return cqe_reposted_; }
  std::uint64_t cqe_lost() const { return cqe_lost_; }

 private:
  struct Slot {
    bool parked = false;
    bool cq_err_raised = false;
    Cqe cqe{};
  };
  Slot& slot(CqRole r) { return r == CqRole::kSend ? send_ : recv_; }
  const Slot& slot(CqRole r) const { return r == CqRole::kSend ? send_ : recv_; }

  std::uint32_t qpn_;
  PendingEvents events_{};
  Slot send_{};
  Slot recv_{};
  bool error_raised_ = false;
  bool last_wqe_raised_ = false;
  std::uint64_t cqe_parked_ = 0;
  std::uint64_t cqe_reposted_ = 0;
  std::uint64_t cqe_lost_ = 0;
};

}  // namespace uroce::transport
