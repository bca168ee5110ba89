// Vnic definitions (vnic.h): the per-object state the engine keeps (CQ, SRQ,
// QP slot, client doorbell page) and the small sinks through which the
// transports reach the port, the CQs, the timers and the async pipes.
// Included only by the other vnic/ files.
#pragma once

#include <array>
#include <cassert>
#include <cstring>
#include <memory>
#include <span>
#include <type_traits>
#include <variant>

#include "datapath/engine/vnic.h"

namespace uroce::engine {

namespace detail {
// The QP a slot holds: one of the kinds (transport/qp_concept.h), or none
// while the slot is free. Behind pointers: a QP object is 0.3 to 1.3 KiB
// (RcQp 1344 bytes, UcQp 856, DctQp 1072, UdQp 672, DciQp 328 with
// GCC 12), and every one of the max_qps slots (1024 by default) would carry
// the largest, used or not; a slot's variant is 16 bytes.
using QpObject = std::variant<std::monostate, std::unique_ptr<transport::RcQp>,
                              std::unique_ptr<transport::UcQp>, std::unique_ptr<transport::UdQp>,
                              std::unique_ptr<transport::DciQp>, std::unique_ptr<transport::DctQp>>;

template <class P>
struct QpKindOf;
template <class Q>
struct QpKindOf<std::unique_ptr<Q>> {
  using type = Q;
};

// A static fact of each kind, indexed by the variant's index (none: the
// monostate's entry, never read for a used slot).
template <class T, class Fact, std::size_t... I>
constexpr std::array<T, sizeof...(I)> qp_facts(Fact fact, std::index_sequence<I...>) {
  return {fact(std::type_identity<std::variant_alternative_t<I, QpObject>>{})...};
}
template <class T, class Fact>
constexpr std::array<T, std::variant_size_v<QpObject>> qp_facts(T none, Fact fact) {
  return qp_facts<T>(
      [&](auto alt) {
        using P = typename decltype(alt)::type;
        if constexpr (std::is_same_v<P, std::monostate>) {
          return none;
        } else {
          return fact(std::type_identity<typename QpKindOf<P>::type>{});
        }
      },
      std::make_index_sequence<std::variant_size_v<QpObject>>{});
}
inline constexpr auto kQpTypes =
    qp_facts(transport::QpType{}, [](auto q) { return decltype(q)::type::kType; });
inline constexpr auto kQpAddressing = qp_facts(transport::QpAddressing::kConnected, [](auto q) {
  return decltype(q)::type::kAddressing;
});

// Calls f(std::type_identity<Q>{}) for the kind Q whose kType is `t`;
// false (f not called) when no kind has that type.
template <class F, std::size_t... I>
bool with_kind(transport::QpType t, F& f, std::index_sequence<I...>) {
  return ((kQpTypes[I + 1] == t
               ? (f(std::type_identity<
                      typename QpKindOf<std::variant_alternative_t<I + 1, QpObject>>::type>{}),
                  true)
               : false) ||
          ...);
}
template <class F>
bool with_kind(transport::QpType t, F&& f) {
  return with_kind(t, f, std::make_index_sequence<std::variant_size_v<QpObject> - 1>{});
}

// The dispatch of Vnic::visit, from alternative I on.
template <std::size_t I, class V, class F>
[[gnu::always_inline]] inline decltype(auto) visit_from(V& v, F& f) {
  if constexpr (I + 1 == std::variant_size_v<std::remove_const_t<V>>) {
    return f(**std::get_if<I>(&v));
  } else {
    if (v.index() == I) return f(**std::get_if<I>(&v));
    return visit_from<I + 1>(v, f);
  }
}

// The slot's QP if it is of kind Q, else null.
template <class Q, class E>
Q* qp_if(E& e) {
  const auto* p = std::get_if<std::unique_ptr<Q>>(&e.qp);
  return p != nullptr ? p->get() : nullptr;
}
}  // namespace detail

template <class PortIo, sched::TxScheduler Sched>
struct Vnic<PortIo, Sched>::CqObj {
  CqObj(CqSinkCounters* totals, CompEventBatch* events) : sink(totals, events) {}
  ObjId id = 0;
  CqRingSink sink;
  int async_fd = -1;
  std::uint32_t refs = 0;  // QPs using it (send or receive side, each)
};

template <class PortIo, sched::TxScheduler Sched>
struct Vnic<PortIo, Sched>::SrqObj {
  ObjId id = 0;
  std::unique_ptr<transport::Srq> srq;
  shm::RqConsumer ring{};
  // As QpEntry::rq_held, for the SRQ's ring and transport queue.
  std::uint32_t held = 0;
  std::uint32_t max_sge = 0;
  std::uint64_t user_handle = 0;
  std::uint32_t client = 0;
  int async_fd = -1;
  std::uint32_t refs = 0;  // QPs attached
  std::uint32_t slot = 0;  // index in srq_slots_
};

// An error completion the engine owes for a WQE it rejected, written once
// the transport has retired every earlier WR of that queue.
template <class PortIo, sched::TxScheduler Sched>
struct Vnic<PortIo, Sched>::PendingError {
  bool active = false;
  std::uint64_t wr_id = 0;
  transport::WcStatus status = transport::WcStatus::kSuccess;
};

// One QP slot. `qp` holds a QP while `used` (none otherwise); every path
// reaches it through visit(), which calls the same member of whichever kind
// it is (transport/qp_concept.h). A DCT has no send CQ and no SQ ring (scq
// null, has_sq false), a DCI no receive CQ and no RQ ring (rcq null, has_rq
// false, srq null).
template <class PortIo, sched::TxScheduler Sched>
struct Vnic<PortIo, Sched>::QpEntry {
  transport::QpType type() const { return detail::kQpTypes[qp.index()]; }
  // Where its packets go: DCQCN and the Homa-like scheduler act on one
  // connection's peer (kConnected), a QP whose WRs name their AH has no
  // address vector of its own (kPerWr).
  transport::QpAddressing addressing() const { return detail::kQpAddressing[qp.index()]; }

  bool used = false;
  bool has_sq = false;
  bool has_rq = false;
  // The TX class was set through set_qp_sched: a new address vector does
  // not change it.
  bool class_pinned = false;
  std::uint32_t qpn = 0;
  std::uint32_t slot = 0;
  std::uint32_t live_pos = 0;  // index in live_
  detail::QpObject qp;
  CqObj* scq = nullptr;
  CqObj* rcq = nullptr;
  SrqObj* srq = nullptr;
  // The RC timer's deadline (0: none). The TimerHeap holds this slot at this
  // deadline or earlier (Timers below).
  TimeNs deadline = 0;
  shm::SqConsumer sq{};
  shm::RqConsumer rq{};
  // RQ ring slots whose WR sits in the transport's receive queue: they are
  // released only once the transport has consumed the WR (RecvCq below), so
  // the application never has more receives outstanding than the ring
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

// The CQ side a DC QP lacks (a DCT's send CQ, a DCI's receive CQ), so that
// its transport's I/O has both sinks: nothing ever completes there, and
// anything that did would be dropped and counted (VnicCounters::dc_no_cq)
// rather than written to some other CQ.
template <class PortIo, sched::TxScheduler Sched>
struct Vnic<PortIo, Sched>::NoCq {
  Vnic* v;
  bool push(const transport::Cqe&) {
    ++v->ctr_.dc_no_cq;
    return true;
  }
};

// An open client's doorbell page.
template <class PortIo, sched::TxScheduler Sched>
struct Vnic<PortIo, Sched>::ClientPage {
  std::uint32_t client = 0;
  shm::DoorbellCollector bells;
};

// The TX sink QPs see: the port's, counting frames per QP, with frames to
// our own MAC diverted to the loopback queue.
template <class PortIo, sched::TxScheduler Sched>
struct Vnic<PortIo, Sched>::QpTx {
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

// The ARP and ND agents' frame sink.
template <class PortIo, sched::TxScheduler Sched>
struct Vnic<PortIo, Sched>::ArpTx {
  Vnic* v;
  void emit(std::span<const std::uint8_t> f) { v->emit_arp(f); }
};

// Straight to the port, counted as sent, bypassing the pause gate, the hold
// queues and loss injection: the sink of held frames being released.
template <class PortIo, sched::TxScheduler Sched>
struct Vnic<PortIo, Sched>::HeldTx {
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
template <class PortIo, sched::TxScheduler Sched>
struct Vnic<PortIo, Sched>::PfcTx {
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

// The TimerSink of every RC QP: one deadline per QP (QpEntry::deadline). A
// QP arms when its deadline changes, usually to a later one (the oldest
// unacknowledged packet moved on): then only the entry changes, and the heap
// keeps the earlier key, which fires early and is moved to the entry's
// deadline by the timer phase. A deadline that moves earlier, or a QP not in
// the heap, updates the heap. Invariant: a QP with a deadline is in the heap
// at that deadline or earlier.
template <class PortIo, sched::TxScheduler Sched>
struct Vnic<PortIo, Sched>::Timers {
  Vnic* v;
  void arm(std::uint32_t qpn, TimeNs at) {
    QpEntry* e = v->demux_.find(qpn);
    if (e == nullptr) return;
    e->deadline = at;
    if (at < v->timers_.key(e->slot)) v->timers_.set(e->slot, at);
  }
};

template <class PortIo, sched::TxScheduler Sched>
struct Vnic<PortIo, Sched>::QpEventSink {
  Vnic* v;
  QpEntry* e;
  void event(const transport::AsyncEvent& ev) { v->deliver_qp_event(*e, ev); }
};

template <class PortIo, sched::TxScheduler Sched>
struct Vnic<PortIo, Sched>::SrqEventSink {
  Vnic* v;
  SrqObj* s;
  void event(const transport::AsyncEvent& ev) {
    v->post_async(s->async_fd, s->user_handle, ev.type);
  }
};

// The receive CQ as the transport sees it while handling one QP. Before a
// receive completion becomes visible, the ring slots whose WRs the transport
// has consumed go back to the application, so one that refills its receive
// queue on seeing a completion finds the room (rxe, too, frees the slot
// before completing). One queue-depth read per receive CQE. This is the only
// place (with a move to RESET) where held RQ slots are given back: every WR
// the transport consumes leaves through a completion.
template <class PortIo, sched::TxScheduler Sched>
struct Vnic<PortIo, Sched>::RecvCq {
  Vnic* v;
  QpEntry* e;
  bool push(const transport::Cqe& c) {
    if (e->has_rq) {
      release_held(e->rq, &e->rq_held, visit(*e, [](auto& q) { return q.recv_queue_depth(); }));
    } else if (e->srq != nullptr) {
      release_held(e->srq->ring, &e->srq->held, e->srq->srq->size());
    }
    const bool ok = e->rcq->sink.push(c);
    if (ok && v->stages_ != nullptr) [[unlikely]]
      v->stage_cqe(*e, c, false);
    return ok;
  }
};

// The send CQ as a QP's transport sees it: the CQ's ring, and the stage
// stamps (stages.h) when the device keeps them.
template <class PortIo, sched::TxScheduler Sched>
struct Vnic<PortIo, Sched>::SendCq {
  Vnic* v;
  QpEntry* e;
  bool push(const transport::Cqe& c) {
    const bool ok = e->scq->sink.push(c);
    if (ok && v->stages_ != nullptr) [[unlikely]]
      v->stage_cqe(*e, c, true);
    return ok;
  }
};

// Calls f on the entry's QP, whichever kind it is: one test of the
// variant's index per kind, RC's first, the last kind's without a test (the
// entry must be used). f is instantiated once per kind, and every instance
// returns the same type. Inlined, as the tag switch it replaces was:
// std::visit leaves GCC 12 an out-of-line dispatch function per call site.
template <class PortIo, sched::TxScheduler Sched>
template <class E, class F>
[[gnu::always_inline]] inline auto Vnic<PortIo, Sched>::visit(E& e, F&& f) {
  return detail::visit_from<1>(e.qp, f);
}

// Calls f with the sinks a QP of kind Q in slot `e` writes to: the QP's TX
// sink `tx`, its send and receive CQs, or NoCq for the one its kind lacks (a
// DCT's send CQ, a DCI's receive CQ), and the RC timer sink.
template <class PortIo, sched::TxScheduler Sched>
template <class Q, class F>
[[gnu::always_inline]] inline decltype(auto) Vnic<PortIo, Sched>::with_io(QpEntry& e, QpTx& tx,
                                                                          F&& f) {
  Timers timers{this};
  if constexpr (!Q::kSendCq) {
    NoCq scq{this};
    RecvCq rcq{this, &e};
    auto io = transport::qp_io(tx, scq, rcq, timers);
    return f(io);
  } else if constexpr (!Q::kRecvCq) {
    NoCq rcq{this};
    SendCq scq{this, &e};
    auto io = transport::qp_io(tx, scq, rcq, timers);
    return f(io);
  } else {
    RecvCq rcq{this, &e};
    SendCq scq{this, &e};
    auto io = transport::qp_io(tx, scq, rcq, timers);
    return f(io);
  }
}

template <class PortIo, sched::TxScheduler Sched>
transport::QpState Vnic<PortIo, Sched>::qp_state(const QpEntry& e) {
  return visit(e, [](auto& q) { return q.state(); });
}

// Releases the held ring slots whose WRs the transport has consumed: it
// still holds `depth` of them, the oldest being consumed first (receive
// queues are FIFO).
template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::release_held(shm::RqConsumer& ring, std::uint32_t* held,
                                       std::uint32_t depth) {
  if (*held > depth) {
    ring.release(*held - depth);
    *held = depth;
  }
}

}  // namespace uroce::engine
