// The one shape every QP kind has (RC, UC, UD, DCI, DCT), so that the engine
// drives them all through the same calls, resolved at compile time (a
// std::variant of the kinds, visited: no virtual call per packet):
//
//   packet in     on_packet(pkt, now, io, acks): a parsed packet for this QPN
//   pump out      pump(now, io, budget): up to `budget` frames; `more` says
//                 whether the QP wants another turn (PumpResult)
//   timer         on_timer(now, io), when the deadline the QP armed through
//                 io.timer passed (kinds that arm none do nothing)
//   flush         flush(send_cq, recv_cq): in ERR (UC/UD: SQE too) every
//                 queued WR completes with a flush error
//   state         state(), has_output() (the pump has something to do now)
//   depths        send_queue_depth(), recv_queue_depth()
//   status        qpn(), counters() (the kind's own counter set), and the
//                 async events it raised (has_events, drain_events)
//   verbs         modify, post_send, post_recv (errno; EINVAL for a queue the
//                 kind does not have)
//
// and static facts the engine asks instead of testing the kind: kType, which
// CQs it completes to (kSendCq, kRecvCq: a DCT has no send CQ, a DCI no
// receive CQ), and where its packets go (kAddressing).
//
// `io` is a QpIo bundle of sinks (sinks.h), the same for every kind.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>

#include "datapath/base/time.h"
#include "datapath/transport/async_event.h"
#include "datapath/transport/qp_attr.h"
#include "datapath/transport/qp_common.h"
#include "datapath/transport/sinks.h"
#include "datapath/transport/wr.h"
#include "datapath/wire/parser.h"

namespace uroce::transport {

// The sinks a QP's calls write to: TX frames, the send and receive CQs (a
// kind without one of them never writes there), and the QP's one timer.
template <TxSink Tx, CqSink SendCq, CqSink RecvCq, TimerSink Timer>
struct QpIo {
  Tx& tx;
  SendCq& send_cq;
  RecvCq& recv_cq;
  Timer& timer;
};

template <TxSink Tx, CqSink SendCq, CqSink RecvCq, TimerSink Timer>
QpIo<Tx, SendCq, RecvCq, Timer> qp_io(Tx& tx, SendCq& scq, RecvCq& rcq, Timer& timer) {
  return {tx, scq, rcq, timer};
}

// When on_packet emits a plain ACK that a request made due: at once, or
// at the next pump (the caller pumps this QP soon: has_output() is true
// while the ACK waits). Only the ACK's timing differs: it acknowledges the
// newest PSN executed when it leaves, so it covers every request that
// arrived before it. Kinds that send no plain ACKs (UC, UD, DC) ignore it.
enum class AckTiming : std::uint8_t { kNow, kPump };

// One pump turn: frames committed, and whether the QP wants another turn
// (it has output left, ran out of TX buffers, or a flush stopped at a full
// CQ). A turn with more = false is followed by none until something (a
// post, a modify, a packet, a timer) makes has_output() true again.
struct PumpResult {
  std::uint32_t sent = 0;
  bool more = false;
};

// Where a kind's packets go.
enum class QpAddressing : std::uint8_t {
  kConnected,  // the one peer of the QP's address vector (RC, UC)
  kPerWr,      // the AH each send WR names (UD, DCI): no AV of its own
  kReplies,    // back to whoever sent the request (DCT), with its AV's DSCP
};

// Archetypes of the sinks, to check a kind against the shape with no engine.
namespace qp_archetype {
struct Tx {
  std::span<std::uint8_t> tx_alloc(std::size_t n);
  void tx_commit(std::size_t n);
};
struct Cq {
  bool push(const Cqe& c);
};
struct Timer {
  void arm(std::uint32_t qpn, TimeNs at);
};
struct Events {
  void event(const AsyncEvent& e);
};
using Io = QpIo<Tx, Cq, Cq, Timer>;
}  // namespace qp_archetype

template <class Q, class Io>
concept QpDrivenBy = requires(Q& q, const Q& c, const wire::ParsedPacket& pkt, TimeNs now, Io& io,
                              std::uint32_t budget, AckTiming acks, qp_archetype::Events& ev,
                              std::uint32_t mask, const QpAttrValues& attr, const SendWr& swr,
                              const RecvWr& rwr) {
  { Q::kType } -> std::convertible_to<QpType>;
  { Q::kAddressing } -> std::convertible_to<QpAddressing>;
  { Q::kSendCq } -> std::convertible_to<bool>;
  { Q::kRecvCq } -> std::convertible_to<bool>;
  q.on_packet(pkt, now, io, acks);
  { q.on_timer(now, io) } -> std::same_as<void>;
  { q.pump(now, io, budget) } -> std::same_as<PumpResult>;
  { q.flush(io.send_cq, io.recv_cq) } -> std::same_as<std::uint32_t>;
  { c.has_output() } -> std::same_as<bool>;
  { c.state() } -> std::same_as<QpState>;
  { c.qpn() } -> std::same_as<std::uint32_t>;
  { c.send_queue_depth() } -> std::same_as<std::uint32_t>;
  { c.recv_queue_depth() } -> std::same_as<std::uint32_t>;
  c.counters();
  { c.has_events() } -> std::same_as<bool>;
  { q.drain_events(ev) } -> std::same_as<std::uint32_t>;
  { q.modify(mask, attr) } -> std::same_as<int>;
  { q.post_send(swr) } -> std::same_as<int>;
  { q.post_recv(rwr) } -> std::same_as<int>;
};

// A QP kind: meets the shape with any sinks (checked with the archetypes).
template <class Q>
concept Qp = QpDrivenBy<Q, qp_archetype::Io>;

}  // namespace uroce::transport
