// Vnic definitions (vnic.h): async events, written to the async pipe of the
// object's owner as ib_uverbs_async_event_desc records. Drained right after
// the call that raised them (packet, timer, pump, modify, doorbell).
#pragma once

#include "datapath/engine/event_fd.h"
#include "datapath/engine/vnic/entries.h"

namespace uroce::engine {

template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::post_async(int fd, std::uint64_t element, transport::AsyncEventType t) {
  switch (write_async_event(fd, element, static_cast<std::uint32_t>(t))) {
    case FdWrite::kOk: ++ctr_.async_events; break;
    case FdWrite::kNoFd: ++ctr_.async_events_lost; break;
    default: ++ctr_.async_event_errors; break;
  }
}

// A CQ_ERR names the CQ (raised by the QP that saw it refuse); the rest name
// the QP.
template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::deliver_qp_event(QpEntry& e, const transport::AsyncEvent& ev) {
  if (ev.element == transport::EventElement::kCq) {
    CqObj* cq = ev.cq == transport::CqRole::kSend ? e.scq : e.rcq;
    // A DC QP's missing side (NoCq) never refuses; counted should it.
    if (cq == nullptr) {
      ++ctr_.async_events_lost;
      return;
    }
    post_async(cq->async_fd, cq->sink.user_handle(), ev.type);
    return;
  }
  post_async(e.async_fd, e.user_handle, ev.type);
}

template <class PortIo, sched::TxScheduler Sched>
inline void Vnic<PortIo, Sched>::drain_qp_events(QpEntry& e) {
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

}  // namespace uroce::engine
