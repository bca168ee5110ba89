// What the two unacknowledged QPs, UdQp (ud_qp.h) and UcQp (uc_qp.h), share:
// the clamped creation-time configuration, the QP state, the send and
// receive queues, the async-event state, the counters, and the bookkeeping
// around them that the two transports do identically: the parts of
// post_send/post_recv that do not depend on the opcode, the attributes and
// RESET handling of modify() both apply, posting completions (a refused one
// is parked, async_event.h), a local send error, per-packet receive
// accounting, and flush() with IBV_WC_WR_FLUSH_ERR.
//
// Each QP holds one UnreliableQpCore by value (composition, like RcCore for
// RC). Everything is a plain or template member call: no virtual function
// and no allocation after construction. Config is UdQpConfig or UcQpConfig;
// Counters is UdCounters or UcCounters (both have tx_packets,
// tx_payload_bytes, tx_local_err, cq_overflow and an rx array indexed by the
// transport's Rx enum, whose last value is kCqOverflow).
//
// Header-only and I/O-free; owned by one engine lcore, not thread-safe.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "datapath/transport/async_event.h"
#include "datapath/transport/cqe.h"
#include "datapath/transport/mr_table.h"
#include "datapath/transport/qp_attr.h"
#include "datapath/transport/qp_common.h"
#include "datapath/transport/qp_concept.h"
#include "datapath/transport/seq24.h"
#include "datapath/transport/sinks.h"
#include "datapath/transport/srq.h"
#include "datapath/transport/wr.h"
#include "datapath/transport/wr_queue.h"

namespace uroce::transport {

// The outcome of building one send frame.
struct UnreliableSendStep {
  std::size_t frame_len = 0;  // bytes to commit; 0 when no frame
  bool has_wc = false;
};

// The successful send completion of a UD or UC WR (rxe: byte_len is the
// message length).
inline Cqe send_success_wc(std::uint64_t wr_id, WcOpcode op, std::uint64_t len, std::uint32_t qpn) {
  Cqe c{};
  c.wr_id = wr_id;
  c.opcode = static_cast<std::uint32_t>(op);
  c.byte_len = static_cast<std::uint32_t>(len);
  c.qp_num = qpn;
  return c;
}

template <class Config, class Counters>
class UnreliableQpCore {
 public:
  // The queues take their depth from the config as given; the SGE and
  // inline limits are clamped to what a posted WR can hold, and size the
  // queues' slots (wr_queue.h; with an SRQ the RQ's slots hold the SRQ's
  // max_sge).
  UnreliableQpCore(const Config& c, MrTable& m)
      : cfg(clamped(c)),
        mrs(m),
        sq(c.max_send_wr, send_area_sges(cfg.max_send_sge, cfg.max_inline)),
        rq(c.max_recv_wr, cfg.srq != nullptr ? cfg.srq->max_sge() : cfg.max_recv_sge) {}

  // The opcode-independent checks of ibv_post_send: EINVAL in RESET, INIT
  // and RTR, for inline data over max_inline and for too many SGEs.
  int check_post_send(const SendWr& wr) const {
    if (state == QpState::kReset || state == QpState::kInit || state == QpState::kRtr) {
      return EINVAL;
    }
    if ((wr.flags & send_flag::kInline) != 0) {
      if (wr.inline_len > cfg.max_inline) return EINVAL;
    } else if (wr.num_sge > cfg.max_send_sge) {
      return EINVAL;
    }
    return 0;
  }
  // A send WR completes successfully only when signalled, or when the QP
  // signals every WR (sq_sig_all).
  bool signaled(const SendWrFields& wr) const {
    return cfg.sq_sig_all || (wr.flags & send_flag::kSignaled) != 0;
  }
  // Queues an accepted send WR: 0 or ENOMEM (send queue full).
  // In place, copying only what the WR uses (wr.h, assign_used).
  int enqueue_send(const SendWr& wr) {
    QueuedSendWr* slot = sq.push_slot();
    if (slot == nullptr) return ENOMEM;
    assign_used(slot, wr);
    return 0;
  }

  // ibv_post_recv for one WR: 0, EINVAL (RESET, SRQ attached, too many
  // SGEs) or ENOMEM.
  int post_recv(const RecvWr& wr) {
    if (state == QpState::kReset) return EINVAL;
    // With an SRQ, receives are posted to the SRQ (rxe: EINVAL).
    if (cfg.srq != nullptr) return EINVAL;
    if (wr.num_sge > cfg.max_recv_sge) return EINVAL;
    QueuedRecvWr* slot = rq.push_slot();
    if (slot == nullptr) return ENOMEM;
    assign_used(slot, wr);
    return 0;
  }

  // The attributes of an (already checked) modify that both transports use.
  void apply_common_attrs(std::uint32_t mask, const QpAttrValues& a) {
    if ((mask & qp_attr::kPkeyIndex) != 0) pkey_index = a.pkey_index;
    if ((mask & qp_attr::kSqPsn) != 0) psn = Psn(a.sq_psn);
  }
  // Moving to RESET: WRs are discarded without completions, the shared
  // attributes return to their creation values and the event state starts
  // afresh. The caller sets the state.
  void reset() {
    sq.clear();
    rq.clear();
    pkey_index = 0;
    psn = Psn(0);
    ev.reset();
  }

  // A finished WR's completion: a refused one is parked (async_event.h),
  // counted and moves the QP to ERR.
  template <CqSink Cq>
  bool push(Cq& cq, const Cqe& c, CqRole role) {
    if (ev.post(cq, c, role)) return true;
    ++counters.cq_overflow;
    state = QpState::kErr;
    return false;
  }
  // A flush completion: when refused, the WR stays queued.
  template <CqSink Cq>
  bool push_flush(Cq& cq, const Cqe& c, CqRole role) {
    if (cq.push(c)) return true;
    ++counters.cq_overflow;
    ev.cq_refused(role);
    state = QpState::kErr;
    return false;
  }

  // The front send WR failed locally (an SGE that does not resolve): it
  // completes IBV_WC_LOC_PROT_ERR, the send queue stops (SQE) and flush()
  // retires the rest.
  UnreliableSendStep fail_front_send(Cqe* wc) {
    const std::uint64_t wr_id = sq.front().wr_id;
    ++counters.tx_local_err;
    sq.pop();
    state = QpState::kSqe;
    *wc = error_wc(wr_id, cfg.qpn, WcStatus::kLocProtErr);
    UnreliableSendStep step;
    step.has_wc = true;
    return step;
  }
  // One frame of `payload_len` bytes went out.
  void count_tx_packet(std::uint64_t payload_len) {
    ++psn;
    ++counters.tx_packets;
    counters.tx_payload_bytes += payload_len;
  }

  // The end of on_packet: posts the receive completion when `r` carries one
  // (a refusal turns `r` into kCqOverflow) and counts `r`.
  template <class Rx, CqSink Cq>
  Rx finish_rx(Rx r, bool has_wc, const Cqe& wc, Cq& recv_cq) {
    if (has_wc && !push(recv_cq, wc, CqRole::kRecv)) r = Rx::kCqOverflow;
    ++counters.rx[static_cast<std::size_t>(r)];
    return r;
  }

  // In SQE flushes the send queue, in ERR both queues, with
  // IBV_WC_WR_FLUSH_ERR, each after the completion that role's CQ refused
  // earlier, if one is parked. Stops at a full CQ (the rest stays queued for
  // the next call). An SRQ-attached QP whose receive queue is flushed in ERR
  // raises LAST_WQE_REACHED. on_send_pop / on_recv_pop run after each WR
  // leaves its queue (a transport's per-message progress). Returns
  // completions posted.
  template <CqSink SendCq, CqSink RecvCq, class OnSendPop, class OnRecvPop>
  std::uint32_t flush(SendCq& send_cq, RecvCq& recv_cq, OnSendPop on_send_pop,
                      OnRecvPop on_recv_pop) {
    std::uint32_t n = 0;
    if (state != QpState::kErr && state != QpState::kSqe) return n;
    if (!flush_queue(sq, send_cq, CqRole::kSend, on_send_pop, &n)) return n;
    if (state != QpState::kErr) return n;
    if (!flush_queue(rq, recv_cq, CqRole::kRecv, on_recv_pop, &n)) return n;
    if (cfg.srq != nullptr) ev.last_wqe_reached();
    return n;
  }

  Config cfg;
  MrTable& mrs;  // UC binds windows through it (BIND_MW)
  QpState state = QpState::kReset;
  std::uint16_t pkey_index = 0;
  Psn psn{};  // next send PSN
  WrQueue<QueuedSendWr> sq;
  WrQueue<QueuedRecvWr> rq;
  Counters counters{};
  QpEventState ev{cfg.qpn};

 private:
  static Config clamped(Config c) {
    c.max_send_sge = std::min(c.max_send_sge, kMaxSge);
    c.max_recv_sge = std::min(c.max_recv_sge, kMaxSge);
    c.max_inline = std::min(c.max_inline, kMaxInline);
    return c;
  }

  // One queue of flush(): the parked completion of `role` first, then every
  // WR. False when the CQ filled up before the queue emptied.
  template <class Wr, CqSink Cq, class OnPop>
  bool flush_queue(WrQueue<Wr>& q, Cq& cq, CqRole role, OnPop& on_pop, std::uint32_t* n) {
    if (!ev.repost(cq, role)) return false;
    while (!q.empty()) {
      if (!push_flush(cq, error_wc(q.front().wr_id, cfg.qpn, WcStatus::kWrFlushErr), role)) {
        return false;
      }
      q.pop();
      on_pop();
      ++*n;
    }
    return true;
  }
};

// UC and UD have no send-side state beyond their queues: in SQE and ERR
// their queues must be flushed, which their pump does.
inline bool unreliable_needs_flush(QpState s) { return s == QpState::kSqe || s == QpState::kErr; }

// The pump of UC and UD (qp_concept.h): up to `budget` WRs sent, or in SQE
// and ERR a flush. More turns are wanted while a turn used its whole budget,
// ran out of TX buffers, or a flush stopped at a full CQ; a turn that does
// none of these found the queue empty or the QP in a state that sends
// nothing, and whatever changes that (a post, a modify, a packet moving it
// to ERR) makes has_output() true.
template <class Q, class Io>
PumpResult unreliable_pump(Q& q, Io& io, std::uint32_t budget) {
  PumpResult r;
  const std::uint64_t no_buf = q.counters().tx_no_buffer;
  r.sent = q.process_send(io.tx, io.send_cq, budget);
  if (unreliable_needs_flush(q.state())) {
    const std::uint64_t ovf = q.counters().cq_overflow;
    q.flush(io.send_cq, io.recv_cq);
    r.more = q.counters().cq_overflow != ovf;
  } else {
    r.more = r.sent == budget || q.counters().tx_no_buffer != no_buf;
  }
  return r;
}

// What UdQp and UcQp show of the Qp shape (qp_concept.h) in the same way:
// the accessors over their core, their async events, and the packet, timer
// and pump entry points. Derived is the QP itself (CRTP): its
// on_packet(pkt, recv_cq), process_send and flush are plain calls, no
// virtual function. A derived class that declares its own on_packet brings
// these in with `using UnreliableQp::on_packet`.
template <class Derived, class Config, class Counters>
class UnreliableQp {
 public:
  std::uint32_t qpn() const { return core_.cfg.qpn; }
  QpState state() const { return core_.state; }
  Psn next_psn() const { return core_.psn; }
  // WRs the send and receive queues hold (the engine completes a WQE it
  // rejects only once every earlier WR has left, to keep order).
  std::uint32_t send_queue_depth() const { return core_.sq.size(); }
  std::uint32_t recv_queue_depth() const { return core_.rq.size(); }
  const Counters& counters() const { return core_.counters; }
  // Async events this QP raised and the refused-completion accounting
  // (async_event.h).
  bool has_events() const { return !core_.ev.pending().empty(); }
  template <EventSink S>
  std::uint32_t drain_events(S& sink) {
    return core_.ev.pending().drain(sink);
  }
  const QpEventState& event_state() const { return core_.ev; }

  // The shape every QP kind has (qp_concept.h); the derived QP adds kType,
  // kAddressing, has_output() and query_own().
  static constexpr bool kSendCq = true;
  static constexpr bool kRecvCq = true;
  template <class Io>
  void on_packet(const wire::ParsedPacket& pkt, TimeNs /*now*/, Io& io,
                 AckTiming /*acks*/ = AckTiming::kNow) {
    self().on_packet(pkt, io.recv_cq);
  }
  template <class Io>
  void on_timer(TimeNs /*now*/, Io& /*io*/) {}
  template <class Io>
  PumpResult pump(TimeNs /*now*/, Io& io, std::uint32_t budget) {
    return unreliable_pump(self(), io, budget);
  }

 protected:
  UnreliableQp(const Config& c, MrTable& m) : core_(c, m) {}
  Derived& self() { return static_cast<Derived&>(*this); }

  // Configuration, state, queues, counters and events.
  UnreliableQpCore<Config, Counters> core_;
};

}  // namespace uroce::transport
