// RC completer: what comes back to a requester (IBTA Vol1 9.7.5.2, 9.9.2;
// behaviour as Linux rxe_comp.c).
//
// ACK with PSN a: every WQE whose range ends at or before a completes in
// order (coalesced ACKs complete many; unsignalled WQEs retire without a
// CQE); the oldest unacknowledged PSN moves to a + 1. An ACK that covers a
// READ/atomic whose response has not arrived means the response was lost:
// go-back-N to it.
// READ response with PSN r: implicitly acknowledges the WQEs before the
// READ; must be the oldest unacknowledged PSN (an earlier one is a duplicate,
// a later one means responses were lost: go-back-N re-requests the READ from
// the first missing PSN); its payload is scattered at (r - first_psn) * MTU
// into the local SGEs; the last one completes the READ.
// Atomic ACK: implicitly acknowledges earlier WQEs; the original remote value
// (host order) is written to the local SGE and the atomic completes.
// NAK PSN sequence error with PSN p: acknowledges everything before p, then
// go-back-N from p (counted against retry_cnt, as rxe does); ignored while
// an RNR wait for p is under way (rxe's responder follows an RNR NAK with a
// NAK-seq for the same PSN when more packets were in flight). While a
// NAK- or gap-driven rewind is under way, further ones are ignored until
// the acknowledged PSN moves or the retransmission timer fires (rxe's
// comp.started_retry, cleared by reset_retry_counters).
// RNR NAK with PSN p: acknowledges everything before p; the requester pauses
// for the AETH's RNR timer (table 45) and resumes at p; rnr_retry counts
// down (7 = forever), exhausted -> IBV_WC_RNR_RETRY_EXC_ERR.
// NAK invalid request / remote access / remote operational error with PSN
// p: acknowledges everything before p; the WQE holding p fails with
// REM_INV_REQ_ERR / REM_ACCESS_ERR / REM_OP_ERR and the QP moves to ERR.
// Retransmission timer (4.096 us * 2^timeout, restarted on every
// acknowledgement that makes progress): go-back-N from the oldest
// unacknowledged PSN; after retry_cnt retries without progress the oldest
// WQE fails with IBV_WC_RETRY_EXC_ERR and the QP moves to ERR. Progress
// restores retry_cnt and rnr_retry.
//
// Selective repeat (docs/lossy.md "READ responses"), for every WQE started
// once the requester switched (rc_sr.h): a READ response anywhere in the
// PSNs its READ asked for is checked and placed at its offset on its own,
// and the scoreboard (rc_sr_tx.h) records it; the oldest unacknowledged PSN
// moves over responses only in order, and the READ completes once all of
// its responses are placed, in order with the other WQEs. A response
// placed already is dropped (sr_rd_dup), one never asked for too
// (sr_rd_drop_window). A gap is not a go-back-N: the scoreboard's loss
// signal decides what is missing and the requester asks for that alone. An
// acknowledgement beyond a READ still missing responses is kept
// (RcSendQueue::sr_acked) and applied once it completes.
//
// A failed WQE keeps its status in SendWqe::err; the QP's flush then
// completes it, in order, after the successful ones and before the flushed
// rest (RcQp::flush).
#pragma once

#include <cstdint>
#include <cstring>
#include <span>

#include "datapath/transport/rc_core.h"
#include "datapath/transport/rc_send_queue.h"
#include "datapath/transport/rc_sr.h"
#include "datapath/transport/rc_timers.h"
#include "datapath/transport/sge_copy.h"
#include "datapath/transport/sinks.h"
#include "datapath/wire/parser.h"

namespace uroce::transport {

class RcCompleter {
 public:
  RcCompleter(RcCore& core, RcSendQueue& sq) : c_(core), sq_(sq) {}

  // An ACK, atomic ACK or READ response addressed to this QP.
  template <CqSink Cq>
  void on_response(const wire::ParsedPacket& pkt, TimeNs now, Cq& cq);
  // Retransmission and RNR timers.
  void on_timer(TimeNs now);
  // Earliest instant on_timer has work, or 0.
  TimeNs next_deadline() const;
  // Completes WQEs at the head that are wholly acknowledged already: a
  // LOCAL_INV takes no PSN, so it is done as soon as everything before it
  // is (rc_requester.h).
  template <CqSink Cq>
  void retire_acknowledged(TimeNs now, Cq& cq) {
    if (c_.state != QpState::kErr) retire_before(sq_.comp_psn, now, cq);
  }

  // DC (docs/dc.md, "Why nothing runs twice"). The target retired the
  // connection after running every request before `ran` (GONE): the WQEs
  // that wholly ran complete; an atomic that ran but whose result never
  // came back fails IBV_WC_REM_ABORT_ERR (the QP moves to ERR); a READ is
  // asked again. Returns the PSN the next connection starts at: the first
  // PSN of the oldest WQE left, from which the requester goes again.
  template <CqSink Cq>
  Psn dc_gone(Psn ran, TimeNs now, Cq& cq);
  // Nothing of the connection ran (UNKNOWN before any response): every
  // unacknowledged WQE goes again in a new connection from the returned PSN.
  Psn dc_restart();
  // What ran is unknown (UNKNOWN after a response): the oldest WQE fails
  // IBV_WC_REM_ABORT_ERR and the QP moves to ERR.
  void dc_abort() {
    if (!sq_.q.empty()) fail_wqe(sq_.q.front(), WcStatus::kRemAbortErr);
  }

 private:
  // Completes, in order, the WQEs wholly before `upto` that need no
  // response; stops at a READ/atomic. Returns false when the CQ overflowed.
  template <CqSink Cq>
  bool retire_before(Psn upto, TimeNs now, Cq& cq);
  // Acknowledges every PSN before `upto`. False when that is not possible:
  // the CQ overflowed, or a READ/atomic in the range has no response yet
  // (it was lost: a go-back-N to it is started instead).
  template <CqSink Cq>
  bool ack_before(Psn upto, TimeNs now, Cq& cq);
  template <CqSink Cq>
  bool complete_front(Cq& cq, std::uint32_t byte_len);
  void progress(Psn new_comp, TimeNs now);
  // Go-back-N asked for by the peer (NAK or a response gap).
  void peer_rewind(Psn p);
  void fail_wqe(SendWqe& w, WcStatus st);
  template <CqSink Cq>
  void on_ack(const wire::ParsedPacket& pkt, Psn p, TimeNs now, Cq& cq);
  template <CqSink Cq>
  void on_read_response(const wire::ParsedPacket& pkt, Psn p, TimeNs now, Cq& cq);
  template <CqSink Cq>
  void on_atomic_ack(const wire::ParsedPacket& pkt, Psn p, TimeNs now, Cq& cq);
  // Selective repeat: a READ response, placed out of order.
  template <CqSink Cq>
  void sr_read_response(const wire::ParsedPacket& pkt, Psn p, TimeNs now, Cq& cq);
  // Selective repeat: the oldest unacknowledged PSN moves over the placed
  // responses of the READ at the front; a READ whose responses are all
  // placed completes, then an acknowledgement kept beyond it applies.
  template <CqSink Cq>
  void sr_read_drain(TimeNs now, Cq& cq);
  // A READ WQE started while selective repeat was on (rc_sr.h).
  bool sr_read(const SendWqe& w) const {
    return c_.sr != nullptr && c_.sr->tx_on && w.wr.opcode == WrOpcode::kRdmaRead;
  }

  RcCore& c_;
  RcSendQueue& sq_;
};

template <CqSink Cq>
bool RcCompleter::complete_front(Cq& cq, std::uint32_t byte_len) {
  const SendWqe& w = sq_.q.front();
  if (is_rd_atomic(w.wr.opcode)) --sq_.rd_atomic_out;
  const bool signalled = c_.cfg.sq_sig_all || (w.wr.flags & send_flag::kSignaled) != 0;
  if (signalled) {
    Cqe e{};
    e.wr_id = w.wr.wr_id;
    e.status = static_cast<std::uint32_t>(WcStatus::kSuccess);
    e.opcode = static_cast<std::uint32_t>(wc_opcode_for(w.wr.opcode));
    e.byte_len = byte_len;
    e.qp_num = c_.cfg.qpn;
    if (!c_.ev.post(cq, e, CqRole::kSend)) {
      ++c_.ctr.cq_overflow;
      c_.state = QpState::kErr;
      sq_.q.pop();
      return false;
    }
  }
  sq_.q.pop();
  return true;
}

inline void RcCompleter::progress(Psn new_comp, TimeNs now) {
  if (!sq_.comp_psn.before(new_comp)) return;
  sq_.comp_psn = new_comp;
  if (c_.sr != nullptr && c_.sr->tx_on) [[unlikely]]
    c_.sr->tx.on_ack(new_comp, nullptr, now);
  sq_.retry_left = c_.attr.retry_cnt;
  sq_.rnr_left = c_.attr.rnr_retry;
  sq_.rewind_pending = false;
  const TimeNs rto = local_ack_timeout_ns(c_.attr.timeout);
  sq_.rto_deadline = (sq_.outstanding() && rto != 0) ? now + rto : 0;
}

inline void RcCompleter::fail_wqe(SendWqe& w, WcStatus st) {
  w.err = st;
  c_.state = QpState::kErr;
}

inline void RcCompleter::peer_rewind(Psn p) {
  if (sq_.rewind_pending) {
    ++c_.ctr.drop_duplicate_nak;
    return;
  }
  if (sq_.retry_left == 0) {
    ++c_.ctr.retry_exceeded;
    if (!sq_.q.empty()) fail_wqe(sq_.q.front(), WcStatus::kRetryExcErr);
    return;
  }
  --sq_.retry_left;
  ++c_.ctr.go_back_n;
  sq_.rewind(p);
  sq_.rewind_pending = true;
}

template <CqSink Cq>
Psn RcCompleter::dc_gone(Psn ran, TimeNs now, Cq& cq) {
  if (!retire_before(ran, now, cq)) return sq_.comp_psn;
  if (!sq_.q.empty()) {
    SendWqe& w = sq_.q.front();
    if (w.started && is_atomic(w.wr.opcode) && w.first_psn.before(ran)) {
      fail_wqe(w, WcStatus::kRemAbortErr);
      return sq_.comp_psn;
    }
  }
  return dc_restart();
}

inline Psn RcCompleter::dc_restart() {
  const Psn from = !sq_.q.empty() && sq_.q.front().started ? sq_.q.front().first_psn : sq_.psn_high;
  // The new connection starts at the front WR's first packet: what the old
  // one acknowledged inside that WR is gone with its context, and a WR
  // cannot start at a middle packet. Without pulling the acknowledged PSN
  // back, the resend would skip to it (skip_acknowledged) and the target's
  // NAK at the first PSN would look stale: the stream stalled to retry
  // exceeded.
  if (from.before(sq_.comp_psn)) sq_.comp_psn = from;
  sq_.rewind(from);
  sq_.rewind_pending = false;
  sq_.rnr_wait = false;
  return from;
}

template <CqSink Cq>
bool RcCompleter::retire_before(Psn upto, TimeNs now, Cq& cq) {
  while (!sq_.q.empty()) {
    const SendWqe& w = sq_.q.front();
    if (!w.started || is_rd_atomic(w.wr.opcode) || w.err != WcStatus::kSuccess) {
      break;
    }
    if (!w.last_psn().before(upto)) break;
    const Psn next = w.last_psn() + 1;
    const auto len = static_cast<std::uint32_t>(w.wr.length());
    if (!complete_front(cq, len)) return false;
    progress(next, now);
  }
  return true;
}

template <CqSink Cq>
bool RcCompleter::ack_before(Psn upto, TimeNs now, Cq& cq) {
  if (!retire_before(upto, now, cq)) return false;
  if (!sq_.q.empty() && sq_.q.front().started && is_rd_atomic(sq_.q.front().wr.opcode) &&
      sq_.comp_psn.before(upto)) {
    if (sr_read(sq_.q.front())) [[unlikely]] {
      // The READ's missing responses are the loss signal's to find; what
      // the acknowledgement covers after the READ applies when it
      // completes.
      if (!sq_.sr_acked_valid || sq_.sr_acked.before(upto)) sq_.sr_acked = upto;
      sq_.sr_acked_valid = true;
      c_.sr->tx.on_ack_beyond(upto, now);
      return false;
    }
    peer_rewind(sq_.comp_psn);
    return false;
  }
  progress(upto, now);
  return true;
}

template <CqSink Cq>
void RcCompleter::on_response(const wire::ParsedPacket& pkt, TimeNs now, Cq& cq) {
  if (c_.state != QpState::kRts && c_.state != QpState::kSqd && c_.state != QpState::kSqe) {
    ++c_.ctr.drop_state;
    return;
  }
  const Psn p(pkt.bth.psn());
  // Everything a response may name lies in [comp_psn - 1, psn_high).
  if (!p.before(sq_.psn_high)) {
    ++c_.ctr.drop_ghost_ack;
    if (c_.sr != nullptr && c_.sr->tx_on && pkt.info->op == wire::OpClass::kReadResponse)
        [[unlikely]]
      ++c_.sr->ctr.sr_rd_drop_window;
    return;
  }
  switch (pkt.info->op) {
    case wire::OpClass::kAck: on_ack(pkt, p, now, cq); break;
    case wire::OpClass::kReadResponse:
      if (c_.sr != nullptr && c_.sr->tx_on) [[unlikely]] {
        sr_read_response(pkt, p, now, cq);
      } else {
        on_read_response(pkt, p, now, cq);
      }
      break;
    case wire::OpClass::kAtomicAck: on_atomic_ack(pkt, p, now, cq); break;
    default: ++c_.ctr.drop_bad_response; break;
  }
  // Selective repeat: what the SACK says is held beyond the ACK's PSN, and
  // the loss signal (rc_sr_tx.h).
  if (pkt.has(wire::ExtHdr::kSackEth)) [[unlikely]] {
    if (c_.sr != nullptr) {
      ++c_.sr->ctr.sr_rx_sacks;
      if (c_.sr->tx_on) c_.sr->tx.on_ack(p + 1, &pkt.sack_eth, now);
    }
  }
  retire_acknowledged(now, cq);
}

template <CqSink Cq>
void RcCompleter::on_ack(const wire::ParsedPacket& pkt, Psn p, TimeNs now, Cq& cq) {
  const wire::AethHdr& a = pkt.aeth;
  switch (a.type()) {
    case wire::AethType::kAck: {
      ++c_.ctr.rx_acks;
      if (p.before(sq_.comp_psn - 1)) {
        ++c_.ctr.drop_stale_ack;
        return;
      }
      // Completes what it covers; a partial acknowledgement of a
      // multi-packet SEND/WRITE only moves the window.
      ack_before(p + 1, now, cq);
      return;
    }
    case wire::AethType::kNak: {
      if (p.before(sq_.comp_psn)) {
        ++c_.ctr.drop_stale_ack;
        return;
      }
      if (a.nak_code() == wire::NakCode::kPsnSeqError) {
        ++c_.ctr.rx_seq_naks;
        // rxe's responder does not mark an RNR NAK as the NAK of its gap,
        // so the packets we pipelined after the RNR'd one draw a NAK-seq
        // for the same PSN. The RNR wait already resumes there: that NAK
        // asks for nothing new and must not cost a retry_cnt.
        if (sq_.rnr_wait && p == sq_.rnr_psn) {
          ++c_.ctr.drop_duplicate_nak;
          return;
        }
        if (ack_before(p, now, cq)) peer_rewind(p);
        return;
      }
      if (!ack_before(p, now, cq) && c_.state == QpState::kErr) return;
      ++c_.ctr.rx_error_naks;
      SendWqe* w = sq_.find(p);
      if (w == nullptr) {
        ++c_.ctr.drop_ghost_ack;
        return;
      }
      // As rxe's completer: a NAK code with no status of its own (invalid
      // RD request, the reserved codes) is a remote operational error.
      WcStatus st = WcStatus::kRemOpErr;
      switch (a.nak_code()) {
        case wire::NakCode::kInvalidRequest: st = WcStatus::kRemInvReqErr; break;
        case wire::NakCode::kRemoteAccessError: st = WcStatus::kRemAccessErr; break;
        case wire::NakCode::kRemoteOpError: break;
        default: ++c_.ctr.rx_reserved_naks; break;
      }
      fail_wqe(*w, st);
      return;
    }
    case wire::AethType::kRnrNak: {
      if (p.before(sq_.comp_psn)) {
        ++c_.ctr.drop_stale_ack;
        return;
      }
      ++c_.ctr.rx_rnr_naks;
      if (!ack_before(p, now, cq)) return;
      if (sq_.rnr_wait) return;  // a duplicate of the NAK we are waiting on
      if (sq_.rnr_left == 0) {
        ++c_.ctr.rnr_retry_exceeded;
        SendWqe* w = sq_.find(p);
        if (w != nullptr) fail_wqe(*w, WcStatus::kRnrRetryExcErr);
        return;
      }
      if (sq_.rnr_left != 7) --sq_.rnr_left;
      sq_.rnr_wait = true;
      sq_.rnr_deadline = now + rnr_timer_ns(a.rnr_timer());
      sq_.rnr_psn = p;
      sq_.rto_deadline = 0;
      return;
    }
    case wire::AethType::kReserved: ++c_.ctr.drop_reserved_aeth; return;
  }
}

template <CqSink Cq>
void RcCompleter::on_read_response(const wire::ParsedPacket& pkt, Psn p, TimeNs now, Cq& cq) {
  ++c_.ctr.rx_read_responses;
  if (p.before(sq_.comp_psn)) {
    ++c_.ctr.drop_stale_ack;
    return;
  }
  if (!retire_before(p, now, cq)) return;
  if (sq_.q.empty() || !sq_.q.front().started) {
    ++c_.ctr.drop_bad_response;
    return;
  }
  SendWqe& w = sq_.q.front();
  if (w.wr.opcode != WrOpcode::kRdmaRead || !w.contains(p)) {
    // A response for a later READ while the front READ/atomic is still
    // unanswered: the responder answers in PSN order, so the front's
    // response was lost (as on_atomic_ack treats it).
    if (is_rd_atomic(w.wr.opcode) && w.last_psn().before(p)) {
      ++c_.ctr.drop_response_gap;
      peer_rewind(sq_.comp_psn);
    } else {
      ++c_.ctr.drop_bad_response;
    }
    return;
  }
  if (sq_.comp_psn.before(w.first_psn)) progress(w.first_psn, now);
  if (p != sq_.comp_psn) {
    ++c_.ctr.drop_response_gap;
    peer_rewind(sq_.comp_psn);
    return;
  }
  // Only the packet at the end of the WQE's range may end a response stream,
  // and only it may be short (a stream restarted mid-READ begins with FIRST
  // at any PSN, so FIRST/MIDDLE are not told apart).
  const std::uint32_t idx = Psn::forward(w.first_psn, p);
  const bool at_end = idx + 1 == w.npkts;
  const wire::Position pos = pkt.info->pos;
  // The READ's first packet must start a response (FIRST or ONLY), and ONLY
  // is the whole of a one-packet READ: a lone MIDDLE or LAST there, or an
  // ONLY inside a longer READ, is a response the READ cannot have. rxe's
  // completer fails the WQE and the QP on it (check_ack); its status is the
  // verbs' "unexpected opcode from the responder".
  const bool starts = pos == wire::Position::kFirst || pos == wire::Position::kOnly;
  if ((idx == 0 && !starts) || (pos == wire::Position::kOnly && w.npkts != 1)) {
    ++c_.ctr.rx_bad_response_opcode;
    fail_wqe(w, WcStatus::kBadRespErr);
    return;
  }
  const bool ends = pos == wire::Position::kLast || pos == wire::Position::kOnly;
  const std::uint64_t total = w.wr.length();
  const std::uint64_t offset = static_cast<std::uint64_t>(idx) * c_.mtu();
  const std::uint64_t expect = at_end ? total - offset : static_cast<std::uint64_t>(c_.mtu());
  if (ends != at_end || pkt.payload.size() != expect) {
    ++c_.ctr.drop_bad_response;
    return;
  }
  if (!pkt.payload.empty()) {
    const SgeCopyResult r =
        scatter(c_.mrs, c_.cfg.pd, w.wr.sge(), w.wr.num_sge, offset, pkt.payload);
    if (r.err != MrError::kOk || r.too_long) {
      ++c_.ctr.local_errors;
      fail_wqe(w, r.too_long ? WcStatus::kLocLenErr : WcStatus::kLocProtErr);
      return;
    }
  }
  if (at_end) {
    if (!complete_front(cq, static_cast<std::uint32_t>(total))) return;
  }
  progress(p + 1, now);
}

template <CqSink Cq>
void RcCompleter::on_atomic_ack(const wire::ParsedPacket& pkt, Psn p, TimeNs now, Cq& cq) {
  ++c_.ctr.rx_atomic_acks;
  if (p.before(sq_.comp_psn)) {
    ++c_.ctr.drop_stale_ack;
    return;
  }
  if (!retire_before(p, now, cq)) return;
  if (sq_.q.empty() || !sq_.q.front().started) {
    ++c_.ctr.drop_bad_response;
    return;
  }
  SendWqe& w = sq_.q.front();
  if ((w.wr.opcode != WrOpcode::kCmpSwap && w.wr.opcode != WrOpcode::kFetchAdd) ||
      w.first_psn != p) {
    if (is_rd_atomic(w.wr.opcode) && w.first_psn.before(p)) {
      ++c_.ctr.drop_response_gap;
      peer_rewind(sq_.comp_psn);
    } else {
      ++c_.ctr.drop_bad_response;
    }
    return;
  }
  if (sq_.comp_psn.before(p)) progress(p, now);
  const std::uint64_t orig = pkt.atomic_ack_eth.orig_remote_data();
  std::uint8_t bytes[8];
  std::memcpy(bytes, &orig, sizeof orig);
  const SgeCopyResult r = scatter(c_.mrs, c_.cfg.pd, w.wr.sge(), w.wr.num_sge, 0, std::span(bytes));
  if (r.err != MrError::kOk || r.too_long) {
    ++c_.ctr.local_errors;
    fail_wqe(w, r.too_long ? WcStatus::kLocLenErr : WcStatus::kLocProtErr);
    return;
  }
  if (!complete_front(cq, 8)) return;
  progress(p + 1, now);
}

template <CqSink Cq>
void RcCompleter::sr_read_response(const wire::ParsedPacket& pkt, Psn p, TimeNs now, Cq& cq) {
  ++c_.ctr.rx_read_responses;
  RcSr& sr = *c_.sr;
  if (p.before(sq_.comp_psn)) {
    ++c_.ctr.drop_stale_ack;
    ++sr.ctr.sr_rd_dup;
    return;
  }
  SendWqe* w = sq_.find(p);
  if (w == nullptr || w->wr.opcode != WrOpcode::kRdmaRead) {
    ++c_.ctr.drop_bad_response;
    return;
  }
  // The responder ran this READ, so every request before it too.
  if (sq_.comp_psn.before(w->first_psn) && !ack_before(w->first_psn, now, cq)) {
    if (c_.state == QpState::kErr) return;
  }
  if (sr.tx.held(p)) {
    ++sr.ctr.sr_rd_dup;
    sr.tx.on_dup_response(p);
    return;
  }
  if (!sr.tx.outstanding(p)) {
    ++sr.ctr.sr_rd_drop_window;
    return;
  }
  // A READ's parts, re-requests and re-executions start and end their
  // streams at any PSN, so only the READ's own ends are checked: its first
  // response starts one (FIRST or ONLY), its last ends one (LAST or ONLY)
  // and alone may be short; every other carries exactly one path MTU.
  const std::uint32_t idx = Psn::forward(w->first_psn, p);
  const bool at_end = idx + 1 == w->npkts;
  const wire::Position pos = pkt.info->pos;
  const bool starts = pos == wire::Position::kFirst || pos == wire::Position::kOnly;
  const bool ends = pos == wire::Position::kLast || pos == wire::Position::kOnly;
  if ((idx == 0 && !starts) || (at_end && !ends)) {
    ++c_.ctr.rx_bad_response_opcode;
    fail_wqe(*w, WcStatus::kBadRespErr);
    return;
  }
  const std::uint64_t total = w->wr.length();
  const std::uint64_t offset = static_cast<std::uint64_t>(idx) * c_.mtu();
  const std::uint64_t expect = at_end ? total - offset : static_cast<std::uint64_t>(c_.mtu());
  if (pkt.payload.size() != expect) {
    ++c_.ctr.drop_bad_response;
    return;
  }
  if (!pkt.payload.empty()) {
    const SgeCopyResult r =
        scatter(c_.mrs, c_.cfg.pd, w->wr.sge(), w->wr.num_sge, offset, pkt.payload);
    if (r.err != MrError::kOk || r.too_long) {
      ++c_.ctr.local_errors;
      fail_wqe(*w, r.too_long ? WcStatus::kLocLenErr : WcStatus::kLocProtErr);
      return;
    }
  }
  sr.tx.on_response(p, now);
  if (p != sq_.comp_psn) ++sr.ctr.sr_rd_placed;
  sr_read_drain(now, cq);
}

template <CqSink Cq>
void RcCompleter::sr_read_drain(TimeNs now, Cq& cq) {
  while (!sq_.q.empty() && c_.state != QpState::kErr) {
    const SendWqe& w = sq_.q.front();
    if (!w.started || !sr_read(w) || w.err != WcStatus::kSuccess) return;
    const Psn end = w.first_psn + w.npkts;
    Psn q = sq_.comp_psn.before(w.first_psn) ? w.first_psn : sq_.comp_psn;
    while (q != end && c_.sr->tx.held(q)) ++q;
    if (q != end) {
      progress(q, now);
      return;
    }
    if (!complete_front(cq, static_cast<std::uint32_t>(w.wr.length()))) return;
    progress(end, now);
    // The acknowledgement kept beyond it applies now; where it stops at a
    // READ still missing responses it is kept again, and a READ whose
    // responses are all placed already completes in the next round.
    if (sq_.sr_acked_valid) {
      const Psn a = sq_.sr_acked;
      sq_.sr_acked_valid = false;
      if (sq_.comp_psn.before(a)) ack_before(a, now, cq);
    }
  }
}

}  // namespace uroce::transport
