// The RC responder's selective-repeat rules (docs/lossy.md "Responder"):
// the templates of RcResponder's SR half, included by rc_responder.h (the
// rest is rc_sr_responder.cpp). Only a QP with RcSr attached (rc_sr.h)
// gets SR opcodes; with none attached nothing here runs.
//
// An SR packet at PSN p, against the expected PSN (ePSN) and the window
// W = kSrWindow (rc_sr_rx.h):
//   p before ePSN     a duplicate, answered as RC answers one (re-ACK,
//                     READ replay, atomic replay); the SACK marks DUP
//   p >= ePSN + W     dropped, counted (sr_drop_window), no answer
//   held already      not placed again (sr_rx_dup), SACK with DUP
//   READ / atomic     at ePSN executed as RC's; later dropped unheld
//                     (sr_drop_rd_atomic) and shown missing
//   SEND / WRITE      checked on its own and placed (sr_place); out of
//                     order a failed check leaves it unplaced
//                     (sr_drop_unplaced) for the requester to send again,
//                     at ePSN the same failure NAKs as RC would
// A placed packet is held; at ePSN the drain (sr_drain) moves ePSN over
// every held PSN in a row with RC's in-order checks (opcode sequence) and
// completions (MSN; receive completions from their RSN's slot, in order;
// SEND_WITH_INV's invalidation here). An acknowledgement is due at once for
// a packet held out of order, a duplicate, an unplaced one and a filled
// hole, and by RC's rules (AckReq, ack_every) for a packet that only moved
// ePSN by itself; send() makes it a SACK while anything is held.
#pragma once

#include <cstring>

#include "datapath/transport/rc_responder.h"

namespace uroce::transport {

inline void RcResponder::sr_ack_now() {
  // A NAK or RNR NAK waiting to leave is not replaced by an ACK.
  if (pending_.valid && pending_.syndrome != wire::aeth_ack_syndrome()) return;
  unacked_ = 0;
  set_response(wire::aeth_ack_syndrome(), epsn_ - 1);
}

inline void RcResponder::sr_ack_due(Psn p, bool dup) {
  c_.sr->rx.set_trigger(p, dup);
  sr_ack_now();
}

inline void RcResponder::sr_ce(Psn p) {
  ++c_.sr->ctr.sr_rx_ce;
  // Far from ePSN (a stray duplicate) it could not be named in 16 bits,
  // and names no path still in the requester's window anyway.
  const std::int32_t d = Psn::diff(p, epsn_);
  if (c_.state == QpState::kErr || d <= -static_cast<std::int32_t>(kSrWindow) ||
      d >= static_cast<std::int32_t>(kSrWindow)) {
    return;
  }
  c_.sr->rx.set_ce(p);
  sr_ack_now();
}

template <CqSink Cq>
void RcResponder::sr_request(const wire::ParsedPacket& pkt, Cq& rcq) {
  SrRx& w = c_.sr->rx;
  w.sync(epsn_);
  const Psn p(pkt.bth.psn());
  if (p.before(epsn_)) {
    ++c_.ctr.rx_duplicates;
    on_duplicate(pkt, p);
    // A READ request below ePSN asks for responses again: the requester
    // tells a needless one by its responses coming twice (docs/lossy.md
    // "READ responses"), so it is no DUP for a SACK to report.
    if (pkt.info->op == wire::OpClass::kReadRequest) return;
    w.set_trigger(p, true);
    return;
  }
  if (Psn::forward(epsn_, p) >= kSrWindow) {
    ++c_.sr->ctr.sr_drop_window;
    return;
  }
  if (w.held(p)) {
    ++c_.sr->ctr.sr_rx_dup;
    sr_ack_due(p, true);
    return;
  }
  const bool in_order = p == epsn_;
  const wire::OpClass op = pkt.info->op;
  if (op != wire::OpClass::kSend && op != wire::OpClass::kWrite) {
    // READ and atomics run in order only: a READ must see every earlier
    // WRITE, an atomic runs once.
    if (!in_order) {
      ++c_.sr->ctr.sr_drop_rd_atomic;
      sr_ack_due(p, false);
      return;
    }
    nak_sent_ = false;
    cur_psn_ = p;
    execute(pkt, rcq);
    sr_after_in_order(rcq);
    return;
  }
  cur_psn_ = p;
  const SrPlace r = sr_place(pkt, in_order);
  if (r == SrPlace::kNaked) return;
  if (r == SrPlace::kUnplaced) {
    ++c_.sr->ctr.sr_drop_unplaced;
    sr_ack_due(p, false);
    return;
  }
  w.hold(p, wire::rc_opcode_of(pkt.bth.opcode()));
  if (!in_order) {
    ++c_.sr->ctr.sr_rx_held;
    sr_ack_due(p, false);
    return;
  }
  nak_sent_ = false;
  const std::uint32_t n = sr_drain(rcq);
  if (c_.state == QpState::kErr) return;
  if (n > 1 || w.any()) {
    sr_ack_due(p, false);
    return;
  }
  // Only this packet moved ePSN: RC's coalescing.
  const std::uint32_t every = c_.cfg.tuning.ack_every;
  if (pkt.bth.ack_req() || (every != 0 && unacked_ >= every)) sr_ack_due(p, false);
}

template <CqSink Cq>
void RcResponder::sr_after_in_order(Cq& rcq) {
  SrRx& w = c_.sr->rx;
  w.sync(epsn_);
  if (c_.state == QpState::kErr || !w.any()) return;
  const Psn p = cur_psn_;
  if (sr_drain(rcq) != 0 && c_.state != QpState::kErr) sr_ack_due(p, false);
}

template <CqSink Cq>
std::uint32_t RcResponder::sr_drain(Cq& rcq) {
  SrRx& w = c_.sr->rx;
  std::uint32_t n = 0;
  while (c_.state != QpState::kErr && w.held(epsn_)) {
    const Psn p = epsn_;
    const wire::OpcodeInfo& info = wire::opcode_info(w.opcode(p));
    w.release(p);
    cur_psn_ = p;
    const bool first = info.pos == wire::Position::kFirst || info.pos == wire::Position::kOnly;
    const bool last = info.pos == wire::Position::kLast || info.pos == wire::Position::kOnly;
    const bool send = info.op == wire::OpClass::kSend;
    if (!sr_sequence_ok(first, send)) {
      nak_class_c(wire::NakCode::kInvalidRequest, WcStatus::kRemInvReqErr);
      break;
    }
    Cqe e{};
    const bool consumes = last && (send || info.has(wire::ExtHdr::kImmDt));
    if (consumes) {
      SrRecvDone& r = w.recv(w.rsn_head);
      const bool write_imm = (r.flags & SrRecvDone::kWriteImm) != 0;
      // The slot must be this RSN's, filled by a message of this kind (a
      // peer that numbered its messages wrongly fails here, in order).
      if ((r.flags & SrRecvDone::kFilled) == 0 || r.rsn != w.rsn_head || write_imm == send ||
          rq_.empty()) {
        nak_class_c(wire::NakCode::kInvalidRequest, WcStatus::kRemInvReqErr, send);
        break;
      }
      e.wr_id = rq_.front().wr_id;
      e.status = static_cast<std::uint32_t>(WcStatus::kSuccess);
      e.opcode = static_cast<std::uint32_t>(send ? WcOpcode::kRecv : WcOpcode::kRecvRdmaWithImm);
      e.byte_len = r.byte_len;
      e.qp_num = c_.cfg.qpn;
      e.port_num = kPortNum;
      set_solicited(e, (r.flags & SrRecvDone::kSolicited) != 0);
      if ((r.flags & SrRecvDone::kImm) != 0) {
        std::memcpy(&e.ex.imm_data, &r.imm_or_inv, 4);
        e.wc_flags |= wc_flag::kWithImm;
      }
      if ((r.flags & SrRecvDone::kInv) != 0) {
        // In order, as RC runs it: a bound type-2 window of this QP's PD.
        if (c_.mrs.invalidate(r.imm_or_inv, c_.cfg.pd) != MrError::kOk) {
          ++c_.ctr.rx_inv_refused;
          nak_class_c(wire::NakCode::kInvalidRequest, WcStatus::kRemInvReqErr, true);
          break;
        }
        ++c_.ctr.rx_invalidates;
        e.ex.invalidate_rkey = r.imm_or_inv;
        e.wc_flags |= wc_flag::kWithInv;
      }
      r.flags = 0;
    }
    if (first) in_msg_ = send ? InMsg::kSrSend : InMsg::kSrWrite;
    if (last) in_msg_ = InMsg::kNone;
    ++epsn_;
    ack_psn_ = epsn_;
    ++c_.ctr.rx_requests;
    ++unacked_;
    ++n;
    if (last) ++msn_;
    w.sync(epsn_);
    if (consumes) {
      w.rsn_head = (w.rsn_head + 1) & kRsnMask;
      if (!complete_recv(rcq, e)) break;
    }
  }
  return n;
}

}  // namespace uroce::transport
