// A Reliable Connected QP: the verbs-facing object the engine drives. It
// owns the QP state and attributes (modify/query, validated against the
// IBTA transition table), the send and receive queues, and the three state
// machines of an RC QP:
//   requester (rc_requester.h)  send WQEs -> request packets
//   completer (rc_completer.h)  ACK/NAK/READ responses/timers -> send CQEs
//   responder (rc_responder.h)  request packets -> execution, receive CQEs,
//                               ACK/NAK/READ responses
//
// I/O-free: every call takes `now` and an RcIo bundle of sinks (TX frames,
// send CQ, receive CQ, timer), all template parameters, so there is no
// virtual call per packet. Queues and the responder's READ/atomic table are
// sized at construction; nothing allocates afterwards; no exceptions.
//
// Driving it (the engine's loop, or a test):
//   post_send / post_recv    queue WRs (errno: EINVAL bad WR or state,
//                            ENOMEM queue full)
//   on_packet                a parsed, ICRC-checked RoCEv2 packet for this
//                            QPN; may emit ACK/NAKs and completions. With
//                            AckTiming::kPump a plain ACK stays pending for
//                            the next pump_tx, so a burst of requests
//                            received before it gets one ACK (NAKs and
//                            READ/atomic responses still leave at once)
//   on_timer                 when the TimerSink's deadline for this QP passed
//   pump_tx                  emit up to `budget` packets: responder output
//                            first (ACKs, READ responses), then requests as
//                            the window, fence and max_rd_atomic allow
// Each of the three re-arms the QP's timer (TimerSink::arm, one deadline per
// QP: the earlier of the retransmission and RNR timers) and, in ERR, flushes
// both queues: every WR still queued completes IBV_WC_WR_FLUSH_ERR (a WR that
// failed completes with its own error first). A completion the CQ refuses is
// counted (cq_overflow), parked and posted first by the flush once the CQ
// has room, raises CQ_ERR and QP_FATAL, and moves the QP to ERR
// (async_event.h); drain_events hands raised events to the engine.
//
// Owned by one engine lcore; not thread-safe.
#pragma once

#include <cstdint>

#include "datapath/transport/dc_lane.h"
#include "datapath/transport/mr_table.h"
#include "datapath/transport/qp_common.h"
#include "datapath/transport/qp_concept.h"
#include "datapath/transport/rc_completer.h"
#include "datapath/transport/rc_core.h"
#include "datapath/transport/rc_requester.h"
#include "datapath/transport/rc_responder.h"
#include "datapath/transport/rc_send_queue.h"
#include "datapath/transport/sinks.h"
#include "datapath/wire/parser.h"

namespace uroce::transport {

// The I/O bundle RC took first; every kind's is the same (qp_concept.h).
template <TxSink Tx, CqSink SendCq, CqSink RecvCq, TimerSink Timer>
using RcIo = QpIo<Tx, SendCq, RecvCq, Timer>;

template <TxSink Tx, CqSink SendCq, CqSink RecvCq, TimerSink Timer>
RcIo<Tx, SendCq, RecvCq, Timer> rc_io(Tx& tx, SendCq& scq, RecvCq& rcq, Timer& timer) {
  return {tx, scq, rcq, timer};
}

// Longest message a WR may carry (ibv_query_device max_msg_sz).
inline constexpr std::uint64_t kRcMaxMessage = 1ull << 31;

class RcQp {
 public:
  static constexpr QpType kType = QpType::kRc;
  static constexpr QpAddressing kAddressing = QpAddressing::kConnected;
  static constexpr bool kSendCq = true;
  static constexpr bool kRecvCq = true;

  RcQp(const RcQpConfig& cfg, MrTable& mrs);
  RcQp(const RcQp&) = delete;
  RcQp& operator=(const RcQp&) = delete;

  std::uint32_t qpn() const { return core_.cfg.qpn; }
  QpState state() const { return core_.state; }
  const RcCounters& counters() const { return core_.ctr; }
  const RcQpConfig& config() const { return core_.cfg; }
  // The UDP source port of its packets (rc_core.h): rxe's until the engine
  // sets another after modify() set the AV (a port steered to the peer's
  // lcore, datapath/port/rss.h).
  std::uint16_t udp_src() const { return core_.udp_src(); }
  void set_udp_src(std::uint16_t port) { core_.src_port = port; }

  // ibv_modify_qp: 0 or EINVAL (illegal transition, missing or extra
  // attribute, value out of range). Moving to ERR flushes on the next
  // on_packet/on_timer/pump_tx/flush (has_output() reports the pending
  // flush); moving to RESET discards every WR without a completion.
  int modify(std::uint32_t mask, const QpAttrValues& attr);
  // ibv_query_qp: the current values; sq_psn is the next new PSN, rq_psn the
  // expected PSN.
  QpAttrValues query() const;

  int post_send(const SendWr& wr);
  int post_recv(const RecvWr& wr);

  template <class Io>
  void on_packet(const wire::ParsedPacket& pkt, TimeNs now, Io& io,
                 AckTiming acks = AckTiming::kNow);
  template <class Io>
  void on_timer(TimeNs now, Io& io);
  // Returns packets emitted.
  template <class Io>
  std::uint32_t pump_tx(TimeNs now, Io& io, std::uint32_t budget);
  // pump_tx, and whether output is left (qp_concept.h).
  template <class Io>
  PumpResult pump(TimeNs now, Io& io, std::uint32_t budget) {
    const std::uint32_t sent = pump_tx(now, io, budget);
    return PumpResult{sent, has_output()};
  }
  // In ERR completes every queued WR (FLUSH_ERR, or the WR's own error);
  // stops at a full CQ. Returns completions posted.
  template <CqSink SendCq, CqSink RecvCq>
  std::uint32_t flush(SendCq& send_cq, RecvCq& recv_cq);

  // For tests and uroce-ctl.
  Psn next_psn() const { return sq_.psn_high; }
  Psn unacked_psn() const { return sq_.comp_psn; }
  Psn expected_psn() const { return resp_.epsn(); }
  Msn msn() const { return resp_.msn(); }
  std::uint32_t rd_atomic_outstanding() const { return sq_.rd_atomic_out; }
  std::uint32_t send_queue_depth() const { return sq_.q.size(); }
  bool sq_sig_all() const { return core_.cfg.sq_sig_all; }
  std::uint32_t recv_queue_depth() const { return resp_.rq().size(); }
  // The QP's one timer: the completer's, the grant gate's and selective
  // repeat's, whichever comes first (0: none). The DCI arms its lanes' from
  // this; an RC QP arms it from after().
  TimeNs timer_deadline() const {
    TimeNs d = comp_.next_deadline();
    if (core_.state == QpState::kErr) return d;
    // The grant gate's timeout (rc_homa.h) shares the QP's one timer.
    if (core_.homa != nullptr) [[unlikely]] {
      const TimeNs g = core_.homa->deadline();
      if (g != 0 && (d == 0 || g < d)) d = g;
    }
    // Selective repeat's reorder timer and tail-loss probe (rc_sr_tx.h).
    if (core_.sr != nullptr && core_.sr->tx_on) [[unlikely]] {
      const TimeNs s = core_.sr->tx.deadline();
      if (s != 0 && (d == 0 || s < d)) d = s;
    }
    return d;
  }
  // True when nothing is queued to send and nothing is unacknowledged.
  bool send_idle() const { return sq_.q.empty(); }
  // pump_tx has something to do: responder output, a request packet (RTS:
  // any; SQD: of a WQE already started, retransmissions included), or in
  // ERR a flush to run.
  bool has_output() const;

  // The Homa-like scheduler's sender state (rc_homa.h; owned by the
  // engine, outliving the attachment), or null for plain RC.
  void set_homa(RcHomaTx* h) { core_.homa = h; }
  RcHomaTx* homa() const { return core_.homa; }
  // A GRANT for this QP's message at `psn`: true when it allowed more
  // bytes (has_output() may have become true).
  bool homa_grant(std::uint32_t psn, std::uint64_t offset, std::uint8_t prio, TimeNs now) {
    return core_.homa != nullptr && core_.homa->on_grant(psn, offset, prio, now);
  }

  // Selective repeat with a uroce peer (rc_sr.h, docs/lossy.md; owned by
  // the engine, outliving the attachment), or null for plain RC. Attaching
  // starts an empty window at the expected PSN; the QP then accepts SR
  // opcodes (without it they are dropped as drop_not_rc).
  void set_sr(RcSr* s) {
    core_.sr = s;
    if (s == nullptr) return;
    s->rx.reset(resp_.epsn());
    s->bind_counters();
    s->spray.reset();
    s->tx_on = s->tx_pending = false;
  }
  RcSr* sr() const { return core_.sr; }
  // The peer answered the handshake: the requester sends SR opcodes from
  // the first WQE it starts once every earlier one has completed
  // (rc_requester.h). Needs RcSr attached.
  void sr_tx_start() { core_.sr->tx_pending = true; }

  // A DC lane (dc_lane.h; owned by the DCI, outliving the attachment).
  void set_dc(DcLane* l) { core_.dc = l; }
  DcLane* dc() const { return core_.dc; }
  // A DC target's GONE or UNKNOWN answer for this lane's connection `conn`
  // (`value`: GONE's expected PSN, UNKNOWN's floor): completes what ran,
  // starts a new connection for the rest, or fails the oldest WR.
  template <class Io>
  void dc_answer(DcAnswer a, std::uint32_t conn, std::uint32_t value, TimeNs now, Io& io);
  // The lane drained and stays idle: DC_DISCONNECT to its target (false:
  // no TX room, try again).
  template <TxSink Tx>
  bool dc_disconnect(Tx& tx, TimeNs now) {
    return req_.dc_disconnect(tx, now);
  }
  // A DC target answered BUSY: it is alive, so the timeouts spent waiting
  // for a context are not the peer failing (retry_cnt starts over).
  void dc_peer_alive() { sq_.retry_left = core_.attr.retry_cnt; }
  // A closing connection's DC_DISCONNECT again once its timer passed.
  template <TxSink Tx>
  void dc_closing_timer(Tx& tx, TimeNs now) {
    req_.dc_closing_timer(tx, now);
  }

  // Async events this QP raised (async_event.h), for the engine to drain,
  // and the refused-completion accounting.
  bool has_events() const { return !core_.ev.pending().empty(); }
  template <EventSink S>
  std::uint32_t drain_events(S& sink) {
    return core_.ev.pending().drain(sink);
  }
  const QpEventState& event_state() const { return core_.ev; }

 private:
  template <class Io>
  void after(Io& io);

  RcCore core_;
  RcSendQueue sq_;
  RcRequester req_;
  RcCompleter comp_;
  RcResponder resp_;
  TimeNs armed_ = 0;
};

template <class Io>
[[gnu::always_inline]] inline void RcQp::on_packet(const wire::ParsedPacket& pkt, TimeNs now,
                                                   Io& io, AckTiming acks) {
  // SR's rules (an SR opcode, or a DC opcode's SR form) need SR's state.
  if (pkt.info == nullptr ||
      (pkt.info->transport != wire::Transport::kRc &&
       (pkt.info->transport != wire::Transport::kDc || core_.dc == nullptr) &&
       pkt.info->transport != wire::Transport::kSr) ||
      (pkt.info->sr && core_.sr == nullptr)) {
    ++core_.ctr.drop_not_rc;
  } else if (pkt.bth.dest_qp() != core_.cfg.qpn) {
    ++core_.ctr.drop_qpn;
  } else if (!pkey_match(pkt.bth.pkey(), wire::kDefaultPKey)) {
    ++core_.ctr.drop_pkey;
  } else if (receive_enabled(core_.state) && !from_peer(pkt, core_.attr.av, core_.cfg.local)) {
    // rxe's check_addr: a connected QP takes packets only from its peer's
    // address to its own (a stale peer of an earlier incarnation of this
    // QPN, or any host guessing the QPN, is dropped). In states that take
    // no packets the responder/completer count drop_state instead.
    ++core_.ctr.drop_addr;
  } else if (pkt.info->dir == wire::Direction::kRequest) {
    resp_.on_request(pkt, io.recv_cq);
    if (acks == AckTiming::kNow || !resp_.only_ack_pending()) {
      resp_.send(io.tx, core_.cfg.tuning.responder_burst);
    }
  } else {
    // A DC lane's connection has its answer: its requests stop carrying SYN.
    if (core_.dc != nullptr && pkt.dc_aeth.status() == wire::DcStatus::kOk) [[unlikely]]
      core_.dc->stream.on_response(pkt.dc_aeth.conn());
    comp_.on_response(pkt, now, io.send_cq);
  }
  after(io);
}

template <class Io>
void RcQp::dc_answer(DcAnswer a, std::uint32_t conn, std::uint32_t value, TimeNs now, Io& io) {
  DcLane& l = *core_.dc;
  const DcActionResult r = l.stream.on_answer(a, conn, value, sq_.comp_psn, sq_.psn_high, *l.clock);
  switch (r.action) {
    case DcAction::kAckedTo: {
      const Psn from = comp_.dc_gone(r.psn, now, io.send_cq);
      l.stream.restart(from, *l.clock, now);
      req_.dc_sr_begin(from);
      break;
    }
    case DcAction::kRestart: {
      // NO_SR: this target does not run selective repeat (dc_sr.h).
      if (a == DcAnswer::kNoSr && l.sr_declined != nullptr) l.sr_declined->add(l.stream.dest());
      const Psn from = comp_.dc_restart();
      l.stream.restart(from, *l.clock, now);
      req_.dc_sr_begin(from);
      break;
    }
    case DcAction::kAbort: comp_.dc_abort(); break;
    default: break;
  }
  after(io);
}

template <class Io>
void RcQp::on_timer(TimeNs now, Io& io) {
  comp_.on_timer(now);
  if (core_.homa != nullptr) core_.homa->on_timer(now);
  if (core_.sr != nullptr && core_.sr->tx_on) core_.sr->tx.on_timer(now);
  // The sink's timer for this QP has fired: whatever is still due must be
  // armed again.
  armed_ = 0;
  after(io);
}

template <class Io>
std::uint32_t RcQp::pump_tx(TimeNs now, Io& io, std::uint32_t budget) {
  std::uint32_t n = resp_.send(io.tx, budget);
  while (n < budget) {
    const ReqStep st = req_.send_one(now, io.tx);
    if (st == ReqStep::kSent) {
      ++n;
    } else if (st != ReqStep::kLocal) {
      break;
    }
  }
  comp_.retire_acknowledged(now, io.send_cq);
  after(io);
  return n;
}

template <class Io>
void RcQp::after(Io& io) {
  if (core_.state == QpState::kErr) {
    flush(io.send_cq, io.recv_cq);
    // The class C NAK that moved the QP to ERR still goes out.
    resp_.send(io.tx, 1);
  }
  const TimeNs d = core_.state == QpState::kErr ? 0 : timer_deadline();
  if (d != armed_) {
    armed_ = d;
    if (d != 0) io.timer.arm(core_.cfg.qpn, d);
  }
}

template <CqSink SendCq, CqSink RecvCq>
std::uint32_t RcQp::flush(SendCq& send_cq, RecvCq& recv_cq) {
  std::uint32_t n = 0;
  if (core_.state != QpState::kErr) return n;
  // A completion the CQ refused earlier goes first (async_event.h).
  if (!core_.ev.repost(send_cq, CqRole::kSend)) return n;
  while (!sq_.q.empty()) {
    const SendWqe& w = sq_.q.front();
    const WcStatus st = w.err != WcStatus::kSuccess ? w.err : WcStatus::kWrFlushErr;
    if (!send_cq.push(error_wc(w.wr.wr_id, core_.cfg.qpn, st))) {
      ++core_.ctr.cq_overflow;
      core_.ev.cq_refused(CqRole::kSend);
      return n;
    }
    sq_.q.pop();
    ++n;
  }
  sq_.req_idx = sq_.sent_idx = sq_.q.head();
  sq_.req_pkt = 0;
  sq_.rd_atomic_out = 0;
  if (!core_.ev.repost(recv_cq, CqRole::kRecv)) return n;
  while (!resp_.rq().empty()) {
    if (!recv_cq.push(error_wc(resp_.rq().front().wr_id, core_.cfg.qpn, resp_.head_status()))) {
      ++core_.ctr.cq_overflow;
      core_.ev.cq_refused(CqRole::kRecv);
      return n;
    }
    resp_.clear_head_status();
    resp_.rq().pop();
    ++n;
  }
  if (core_.cfg.srq != nullptr) core_.ev.last_wqe_reached();
  return n;
}

static_assert(Qp<RcQp>);

}  // namespace uroce::transport
