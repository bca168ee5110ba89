// RC responder (IBTA Vol1 9.7.4-9.7.5.1, 9.9.3; behaviour as Linux
// rxe_resp.c where the spec leaves room).
//
// Each request packet is classified by its PSN against the expected PSN
// (ePSN):
//   PSN == ePSN  executed in order (below), ePSN advances: by 1, or for a
//                READ by the number of response packets it asks for.
//   PSN after    a gap: one NAK PSN sequence error carrying ePSN, then
//                silent drops until ePSN arrives (also after an RNR NAK).
//   PSN before   a duplicate: SEND/WRITE is acknowledged again (ACK with
//                the PSN of the last SEND/WRITE/atomic packet executed,
//                never a READ's, as rxe) and not executed; a READ is served again from its
//                resource with the duplicate's RETH, from its PSN (MIDDLE or
//                LAST first unless that is the READ's first PSN); an atomic
//                is answered from its resource (never executed twice).
// In-order execution:
//   opcode sequence (MIDDLE/LAST only inside a message of the same kind,
//   FIRST/ONLY only outside one), QP access flags (remote write/read/atomic)
//   and packet lengths (FIRST/MIDDLE exactly one MTU, LAST 1..MTU, ONLY up
//   to the MTU; a WRITE's packets add up to its RETH length) -> else NAK
//   invalid request;
//   SEND: uses the receive WR at the head of the RQ (none: RNR NAK with the
//   QP's min_rnr_timer), scatters the payload into it; the last packet
//   completes it IBV_WC_RECV with byte_len, WITH_IMM + imm_data or WITH_INV +
//   invalidate_rkey (a bound type-2 memory window of the QP's PD is
//   invalidated; any other key: the receive completes IBV_WC_REM_INV_REQ_ERR,
//   NAK invalid request, nothing is invalidated); more data than the WR holds
//   -> the WR completes IBV_WC_LOC_LEN_ERR and NAK invalid request (rxe
//   reports REM_INV_REQ_ERR on its side here; we follow the verbs text); a
//   bad receive SGE -> LOC_PROT_ERR and NAK remote operational error;
//   WRITE: rkey, PD, bounds and access checked over the whole RETH range on
//   the first packet (NAK remote access error), each packet written at its
//   offset; WRITE_WITH_IMM's last packet consumes a receive WR (RNR NAK when
//   none) and completes it IBV_WC_RECV_RDMA_WITH_IMM with the RETH length;
//   READ: rkey/bounds/remote-read checked (NAK remote access error), a
//   resource taken (responder_resources.h); the responses (FIRST/MIDDLE/
//   LAST or ONLY, AETH on FIRST/LAST/ONLY) are sent by send();
//   atomics: 8-byte aligned (else NAK invalid request), rkey/bounds/
//   remote-atomic checked (NAK remote access error), executed on the MR at
//   once, the original value kept in a resource and returned in the atomic
//   ACK.
// ACKs: coalesced; one is due when a packet has AckReq set or after
// RcTuning::ack_every packets without one, and carries ePSN - 1 and the MSN
// (messages completed). A due ACK is one pending response: until it leaves,
// later in-order packets only move its PSN and MSN (an ACK acknowledges
// every PSN up to its own, IBTA 9.7.5.1.1), so a caller that sends it once
// per burst of packets (RcQp::on_packet's AckTiming::kPump) sends one ACK
// for the burst. Responses leave in PSN order: pending READ/atomic
// responses first, then the one pending ACK/NAK (a newer READ/atomic
// response implicitly acknowledges what an older pending ACK would have).
// Errors of class C (invalid request, remote access, remote operational)
// send their NAK and move the QP to ERR; in ERR requests are dropped and
// counted.
// With selective repeat attached (rc_sr.h, docs/lossy.md), SR opcodes take
// the rules of rc_sr_responder.h: out-of-order SEND/WRITE packets are placed
// and held, completions stay in order, acknowledgements carry a SACK while
// something is held; plain RC opcodes keep the rules above.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>

#include "datapath/transport/rc_core.h"
#include "datapath/transport/rc_homa.h"
#include "datapath/transport/rc_packet.h"
#include "datapath/transport/rc_sr.h"
#include "datapath/transport/responder_resources.h"
#include "datapath/transport/sge_copy.h"
#include "datapath/transport/sinks.h"
#include "datapath/transport/wr_queue.h"
#include "datapath/wire/parser.h"

namespace uroce::transport {

class RcResponder {
 public:
  // The READ/atomic resources get storage when the QP's max_dest_rd_atomic
  // is set (modify), sized to it rather than to the configured maximum.
  // The RQ's slots hold as many SGEs as the QP's max_recv_sge, or with an
  // SRQ as the SRQ's max_sge (its WRs move into this RQ one at a time).
  explicit RcResponder(RcCore& core)
      : c_(core),
        rq_(core.cfg.max_recv_wr, core.cfg.srq != nullptr
                                      ? core.cfg.srq->max_sge()
                                      : std::min(core.cfg.max_recv_sge, kMaxSge)),
        res_(0) {}

  // Fresh state expecting `epsn` (entering RTR; RESET).
  void reset(Psn epsn);
  // Control path (modify): may allocate.
  void set_rd_atomic_limit(std::uint32_t n) {
    res_.reserve(n);
    res_.set_limit(n);
  }

  WrQueue<QueuedRecvWr>& rq() { return rq_; }
  const WrQueue<QueuedRecvWr>& rq() const { return rq_; }
  // Status the flush gives the receive WR at the RQ head (it failed while
  // in use) or kWrFlushErr.
  WcStatus head_status() const { return head_err_; }
  void clear_head_status() { head_err_ = WcStatus::kWrFlushErr; }

  Psn epsn() const { return epsn_; }
  Msn msn() const { return msn_; }
  // A SEND or WRITE is half received (a DC context is not quiescent).
  bool mid_message() const { return in_msg_ != InMsg::kNone; }
  bool has_output() const {
    return pending_.valid || (c_.state != QpState::kErr && res_.any_pending());
  }
  // The only output is a plain ACK (no NAK, no READ/atomic response to
  // send): it may wait for a later send(), and the packets that arrive
  // meanwhile move it forward instead of adding ACKs (RcQp::on_packet).
  bool only_ack_pending() const {
    return pending_.valid && pending_.syndrome == wire::aeth_ack_syndrome() && !res_.any_pending();
  }

  template <CqSink Cq>
  void on_request(const wire::ParsedPacket& pkt, Cq& rcq);
  // Emits up to `budget` response packets; returns how many.
  template <TxSink Tx>
  std::uint32_t send(Tx& tx, std::uint32_t budget);

 private:
  // kSrSend/kSrWrite: a message begun by an SR packet (rc_sr_responder.h),
  // which a plain MIDDLE/LAST may not continue.
  enum class InMsg : std::uint8_t { kNone, kSend, kWrite, kSrSend, kSrWrite };
  // What placing an SR packet did (rc_sr_responder.h).
  enum class SrPlace : std::uint8_t { kPlaced, kUnplaced, kNaked };
  struct Pending {
    bool valid = false;
    std::uint8_t syndrome = 0;
    Psn psn{};
  };

  void set_response(std::uint8_t syndrome, Psn psn) { pending_ = {true, syndrome, psn}; }
  void nak_class_c(wire::NakCode code, WcStatus recv_status) {
    nak_class_c(code, recv_status, in_msg_ == InMsg::kSend || in_msg_ == InMsg::kSrSend);
  }
  // `head_in_use`: the receive WR at the RQ head belongs to the failing
  // message and completes with `recv_status`.
  void nak_class_c(wire::NakCode code, WcStatus recv_status, bool head_in_use);
  // The checks and execution of a request at ePSN (IBTA's in-order rules).
  template <CqSink Cq>
  void execute(const wire::ParsedPacket& pkt, Cq& rcq);
  void on_duplicate(const wire::ParsedPacket& pkt, Psn p);
  // A duplicate READ/atomic restarts the responses at `r`: newer responses
  // not sent yet are cancelled, and so is a pending ACK beyond r (it would
  // acknowledge READ/atomic requests whose responses never left).
  void replay_from(RdAtomicRes* r);
  bool length_ok(const wire::ParsedPacket& pkt) const;
  template <CqSink Cq>
  void exec_send(const wire::ParsedPacket& pkt, Cq& rcq);
  template <CqSink Cq>
  void exec_write(const wire::ParsedPacket& pkt, Cq& rcq);
  void exec_read(const wire::ParsedPacket& pkt);
  void exec_atomic(const wire::ParsedPacket& pkt);
  // The packet was executed: ePSN, MSN and ACK coalescing.
  void advance(const wire::ParsedPacket& pkt, bool ends_message);
  template <CqSink Cq>
  bool complete_recv(Cq& rcq, const Cqe& e);
  // A receive WR is at the RQ head, taken from the SRQ if the QP has one,
  // or from the owner's refill when the RQ is empty (recv_refill.h).
  bool recv_ready() { return ensure_recv_wr(rq_, c_.cfg.srq, c_.cfg.recv_refill); }
  template <TxSink Tx>
  RcEmit send_resource(Tx& tx, RdAtomicRes& r);

  // Selective repeat (rc_sr_responder.h).
  template <CqSink Cq>
  void sr_request(const wire::ParsedPacket& pkt, Cq& rcq);
  // Request packet p of a spraying connection arrived marked CE: an
  // acknowledgement is due, a SACK with ECE naming p.
  void sr_ce(Psn p);
  // Checks an SR SEND/WRITE packet and places its payload. Out of order a
  // failed check leaves it unplaced; in order (at ePSN) it NAKs as RC would.
  SrPlace sr_place(const wire::ParsedPacket& pkt, bool in_order);
  SrPlace sr_place_send(const wire::ParsedPacket& pkt, bool in_order);
  SrPlace sr_place_write(const wire::ParsedPacket& pkt, bool in_order);
  // The receive WR `idx` behind the RQ head, taking WRs from the SRQ or the
  // refill as needed; null when there is none yet.
  const QueuedRecvWr* sr_recv_wr(std::uint32_t idx);
  // RC's opcode sequence rule for an SR packet of a SEND (`send`) or WRITE
  // at ePSN: FIRST/ONLY only outside a message, MIDDLE/LAST only inside an
  // SR message of its kind.
  bool sr_sequence_ok(bool first, bool send) const;
  // A held packet's completion facts go to its RSN's slot.
  void sr_fill_recv(const wire::ParsedPacket& pkt, std::uint32_t rsn, std::uint32_t byte_len,
                    bool write_imm);
  // ePSN advances over the held PSNs in a row, with RC's in-order checks
  // and completions; returns how many it passed.
  template <CqSink Cq>
  std::uint32_t sr_drain(Cq& rcq);
  // After an in-order packet: drain what became in order, acknowledge it.
  template <CqSink Cq>
  void sr_after_in_order(Cq& rcq);
  // An acknowledgement is due, answering packet `p`.
  void sr_ack_due(Psn p, bool dup);
  // An acknowledgement is due (unless a NAK is waiting to leave), its
  // trigger left as it is.
  void sr_ack_now();

  RcCore& c_;
  WrQueue<QueuedRecvWr> rq_;
  ResponderResources res_;
  Psn epsn_{};
  // rxe's resp.ack_psn: one past the last SEND/WRITE/atomic executed (READs
  // do not move it). A duplicate SEND/WRITE is acknowledged with
  // ack_psn_ - 1, so that ACK never names a READ's PSN: rxe's completer
  // moves its QP to ERR on an ACK at a READ's last PSN while that READ's
  // responses are still arriving.
  Psn ack_psn_{};
  Msn msn_{};
  InMsg in_msg_ = InMsg::kNone;
  // Bytes of the current SEND placed into the RQ head.
  std::uint64_t recv_off_ = 0;
  // Current WRITE: RETH values and bytes written so far.
  std::uint64_t wr_va_ = 0;
  std::uint32_t wr_rkey_ = 0;
  std::uint32_t wr_len_ = 0;
  std::uint64_t wr_off_ = 0;
  // A NAK (sequence or RNR) was sent for the current gap.
  bool nak_sent_ = false;
  std::uint32_t unacked_ = 0;
  Pending pending_{};
  WcStatus head_err_ = WcStatus::kWrFlushErr;
  // The packet being executed (its PSN names error NAKs).
  Psn cur_psn_{};
};

template <CqSink Cq>
bool RcResponder::complete_recv(Cq& rcq, const Cqe& e) {
  rq_.pop();
  if (c_.ev.post(rcq, e, CqRole::kRecv)) return true;
  ++c_.ctr.cq_overflow;
  c_.state = QpState::kErr;
  return false;
}

template <CqSink Cq>
void RcResponder::on_request(const wire::ParsedPacket& pkt, Cq& rcq) {
  if (!receive_enabled(c_.state)) {
    ++c_.ctr.drop_state;
    return;
  }
  if (pkt.info->sr) [[unlikely]] {
    sr_request(pkt, rcq);
    if (pkt.ecn() == wire::kEcnCe && c_.sr->spray.on()) [[unlikely]]
      sr_ce(Psn(pkt.bth.psn()));
    return;
  }
  const Psn p(pkt.bth.psn());
  if (p != epsn_) {
    if (epsn_.before(p)) {
      if (nak_sent_) {
        ++c_.ctr.drop_out_of_sequence;
        return;
      }
      nak_sent_ = true;
      ++c_.ctr.tx_seq_naks;
      set_response(wire::aeth_nak_syndrome(wire::NakCode::kPsnSeqError), epsn_);
      return;
    }
    ++c_.ctr.rx_duplicates;
    on_duplicate(pkt, p);
    return;
  }
  nak_sent_ = false;
  cur_psn_ = p;
  execute(pkt, rcq);
  if (c_.sr != nullptr) [[unlikely]]
    sr_after_in_order(rcq);
}

template <CqSink Cq>
[[gnu::always_inline]] inline void RcResponder::execute(const wire::ParsedPacket& pkt, Cq& rcq) {
  const wire::OpcodeInfo& info = *pkt.info;
  const bool first = info.pos == wire::Position::kFirst || info.pos == wire::Position::kOnly;
  // Opcode sequence (IBTA 9.7.5.1.1 / C9-84).
  bool seq_ok = false;
  switch (in_msg_) {
    case InMsg::kNone: seq_ok = first; break;
    case InMsg::kSend: seq_ok = info.op == wire::OpClass::kSend && !first; break;
    case InMsg::kWrite: seq_ok = info.op == wire::OpClass::kWrite && !first; break;
    // An SR message is continued only by SR packets (rc_sr_responder.h).
    case InMsg::kSrSend:
    case InMsg::kSrWrite: break;
  }
  if (!seq_ok) {
    nak_class_c(wire::NakCode::kInvalidRequest, WcStatus::kRemInvReqErr);
    return;
  }
  std::uint32_t need = 0;
  if (info.op == wire::OpClass::kWrite) need = access::kRemoteWrite;
  if (info.op == wire::OpClass::kReadRequest) need = access::kRemoteRead;
  if (info.op == wire::OpClass::kAtomic) need = access::kRemoteAtomic;
  if ((c_.attr.qp_access_flags & need) != need || !length_ok(pkt)) {
    nak_class_c(wire::NakCode::kInvalidRequest, WcStatus::kRemInvReqErr);
    return;
  }
  switch (info.op) {
    case wire::OpClass::kSend: exec_send(pkt, rcq); break;
    case wire::OpClass::kWrite: exec_write(pkt, rcq); break;
    case wire::OpClass::kReadRequest: exec_read(pkt); break;
    case wire::OpClass::kAtomic: exec_atomic(pkt); break;
    case wire::OpClass::kFlush:
    case wire::OpClass::kAtomicWrite:
      // Not implemented, and not advertised (device_attr.h): NAKed at once
      // as an invalid request, so the peer's WR fails with
      // REM_INV_REQ_ERR instead of retrying into RETRY_EXC_ERR.
      ++c_.ctr.rx_unsupported_ops;
      nak_class_c(wire::NakCode::kInvalidRequest, WcStatus::kWrFlushErr);
      break;
    default: nak_class_c(wire::NakCode::kInvalidRequest, WcStatus::kRemInvReqErr); break;
  }
}

template <CqSink Cq>
void RcResponder::exec_send(const wire::ParsedPacket& pkt, Cq& rcq) {
  const wire::Position pos = pkt.info->pos;
  const bool first = pos == wire::Position::kFirst || pos == wire::Position::kOnly;
  const bool last = pos == wire::Position::kLast || pos == wire::Position::kOnly;
  if (first) {
    if (!recv_ready()) {
      nak_sent_ = true;
      ++c_.ctr.tx_rnr_naks;
      set_response(wire::aeth_rnr_nak_syndrome(c_.attr.min_rnr_timer), cur_psn_);
      return;
    }
    recv_off_ = 0;
    in_msg_ = InMsg::kSend;
  }
  const QueuedRecvWr& r = rq_.front();
  if (!pkt.payload.empty()) {
    const SgeCopyResult s = scatter(c_.mrs, c_.cfg.pd, r.sge(), r.num_sge, recv_off_, pkt.payload);
    if (s.too_long) {
      nak_class_c(wire::NakCode::kInvalidRequest, WcStatus::kLocLenErr);
      return;
    }
    if (s.err != MrError::kOk) {
      nak_class_c(wire::NakCode::kRemoteOpError, WcStatus::kLocProtErr);
      return;
    }
    recv_off_ += pkt.payload.size();
  }
  if (!last) {
    advance(pkt, false);
    return;
  }
  Cqe e{};
  e.wr_id = r.wr_id;
  e.status = static_cast<std::uint32_t>(WcStatus::kSuccess);
  e.opcode = static_cast<std::uint32_t>(WcOpcode::kRecv);
  e.byte_len = static_cast<std::uint32_t>(recv_off_);
  e.qp_num = c_.cfg.qpn;
  e.port_num = kPortNum;
  set_solicited(e, pkt.bth.se());
  if (pkt.has(wire::ExtHdr::kImmDt)) {
    std::memcpy(&e.ex.imm_data, pkt.immdt.raw, 4);
    e.wc_flags |= wc_flag::kWithImm;
  }
  if (pkt.has(wire::ExtHdr::kIeth)) {
    const std::uint32_t key = pkt.ieth.rkey();
    // Only a bound type-2 window of this QP's PD (mr_table.h); anything
    // else changes nothing, and the receive fails as rxe's (class J)
    // REM_INV_REQ_ERR with a NAK invalid request so the sender learns.
    if (c_.mrs.invalidate(key, c_.cfg.pd) != MrError::kOk) {
      ++c_.ctr.rx_inv_refused;
      nak_class_c(wire::NakCode::kInvalidRequest, WcStatus::kRemInvReqErr);
      return;
    }
    ++c_.ctr.rx_invalidates;
    e.ex.invalidate_rkey = key;
    e.wc_flags |= wc_flag::kWithInv;
  }
  in_msg_ = InMsg::kNone;
  advance(pkt, true);
  complete_recv(rcq, e);
}

template <CqSink Cq>
void RcResponder::exec_write(const wire::ParsedPacket& pkt, Cq& rcq) {
  const wire::Position pos = pkt.info->pos;
  const bool first = pos == wire::Position::kFirst || pos == wire::Position::kOnly;
  const bool last = pos == wire::Position::kLast || pos == wire::Position::kOnly;
  const bool imm = pkt.has(wire::ExtHdr::kImmDt);
  if (imm && !recv_ready()) {
    nak_sent_ = true;
    ++c_.ctr.tx_rnr_naks;
    set_response(wire::aeth_rnr_nak_syndrome(c_.attr.min_rnr_timer), cur_psn_);
    return;
  }
  if (first) {
    wr_va_ = pkt.reth.va();
    wr_rkey_ = pkt.reth.rkey();
    wr_len_ = pkt.reth.dma_len();
    wr_off_ = 0;
    std::uint8_t* host = nullptr;
    if (c_.mrs.resolve_remote(wr_rkey_, c_.cfg.pd, c_.cfg.qpn, wr_va_, wr_len_,
                              access::kRemoteWrite, &host) != MrError::kOk) {
      nak_class_c(wire::NakCode::kRemoteAccessError, WcStatus::kWrFlushErr);
      return;
    }
  }
  // Packet lengths must add up to the RETH length exactly.
  const std::uint64_t n = pkt.payload.size();
  const std::uint64_t left = wr_len_ - wr_off_;
  if (last ? n != left : n >= left) {
    nak_class_c(wire::NakCode::kInvalidRequest, WcStatus::kWrFlushErr);
    return;
  }
  if (n != 0) {
    std::uint8_t* host = nullptr;
    if (c_.mrs.resolve_remote(wr_rkey_, c_.cfg.pd, c_.cfg.qpn, wr_va_ + wr_off_, n,
                              access::kRemoteWrite, &host) != MrError::kOk) {
      nak_class_c(wire::NakCode::kRemoteAccessError, WcStatus::kWrFlushErr);
      return;
    }
    pkt.payload.copy_out(0, host, n);
    wr_off_ += n;
  }
  if (!last) {
    in_msg_ = InMsg::kWrite;
    advance(pkt, false);
    return;
  }
  in_msg_ = InMsg::kNone;
  advance(pkt, true);
  if (imm) {
    Cqe e{};
    e.wr_id = rq_.front().wr_id;
    e.status = static_cast<std::uint32_t>(WcStatus::kSuccess);
    e.opcode = static_cast<std::uint32_t>(WcOpcode::kRecvRdmaWithImm);
    e.byte_len = wr_len_;
    e.qp_num = c_.cfg.qpn;
    e.port_num = kPortNum;
    std::memcpy(&e.ex.imm_data, pkt.immdt.raw, 4);
    e.wc_flags = wc_flag::kWithImm;
    set_solicited(e, pkt.bth.se());
    complete_recv(rcq, e);
  }
}

template <TxSink Tx>
RcEmit RcResponder::send_resource(Tx& tx, RdAtomicRes& r) {
  namespace o = wire::op;
  if (r.kind == RdAtomicRes::Kind::kAtomic) {
    wire::PacketSpec s = rc_spec(c_, o::kRcAtomicAck, r.first_psn);
    s.aeth = wire::AethHdr::make(wire::aeth_ack_syndrome(), msn_.value());
    s.atomic_ack_eth = wire::AtomicAckEthHdr::make(r.orig);
    const RcEmit e = rc_emit(c_, tx, s);
    if (e == RcEmit::kSent) {
      r.pending = false;
      ++c_.ctr.tx_atomic_acks;
    }
    return e;
  }
  // The opcode follows the READ's original range, not where this stream
  // (re)started: a replay from mid-range begins with MIDDLE (or LAST), as
  // rxe's read_reply does; rxe's completer fails the QP on a FIRST/ONLY at
  // any PSN but the READ's first.
  const bool first = r.cur_psn == r.first_psn;
  const bool last = r.cur_psn == r.last_psn;
  std::uint8_t op = o::kRcReadResponseMiddle;
  if (first && last) {
    op = o::kRcReadResponseOnly;
  } else if (first) {
    op = o::kRcReadResponseFirst;
  } else if (last) {
    op = o::kRcReadResponseLast;
  }
  wire::PacketSpec s = rc_spec(c_, op, r.cur_psn);
  if (op != o::kRcReadResponseMiddle) {
    s.aeth = wire::AethHdr::make(wire::aeth_ack_syndrome(), msn_.value());
  }
  const std::uint64_t n = last ? r.resid : std::min<std::uint64_t>(r.resid, c_.mtu());
  std::uint8_t* host = nullptr;
  if (n > c_.mtu() || c_.mrs.resolve_remote(r.rkey, c_.cfg.pd, c_.cfg.qpn, r.va, n,
                                            access::kRemoteRead, &host) != MrError::kOk) {
    // The region went away (or the request was inconsistent) while the
    // stream was under way: stop it; the requester times out and asks again.
    r.pending = false;
    ++c_.ctr.drop_bad_response;
    return RcEmit::kSent;
  }
  const RcEmit e = rc_emit(c_, tx, s, n, [&](wire::PayloadWriter& w) {
    w.put(host, n);
    return true;
  });
  if (e != RcEmit::kSent) return e;
  ++c_.ctr.tx_read_responses;
  r.va += n;
  r.resid -= n;
  if (r.cur_psn == r.end_psn) {
    r.pending = false;
  } else {
    ++r.cur_psn;
  }
  return e;
}

template <TxSink Tx>
std::uint32_t RcResponder::send(Tx& tx, std::uint32_t budget) {
  std::uint32_t n = 0;
  while (n < budget) {
    if (c_.state != QpState::kErr) {
      if (RdAtomicRes* r = res_.next_pending(); r != nullptr) {
        if (send_resource(tx, *r) == RcEmit::kNoBuffer) break;
        ++n;
        continue;
      }
    }
    if (!pending_.valid) break;
    // Selective repeat: an ACK while something is held beyond ePSN, or
    // answering a duplicate, carries the bitmap and DUP (SR_SACK,
    // docs/lossy.md); only SR packets are ever held. DUP tells the
    // requester its resend was not needed even when the resend filled the
    // hole first and its original came after (a slower path).
    const bool sack = c_.sr != nullptr && pending_.syndrome == wire::aeth_ack_syndrome() &&
                      (c_.sr->rx.any() || c_.sr->rx.dup() || c_.sr->rx.ce());
    wire::PacketSpec s = rc_spec(c_, sack ? wire::op::kSrSack : wire::op::kRcAck, pending_.psn);
    const bool dup = sack && c_.sr->rx.dup();
    if (sack) [[unlikely]] {
      s.sack_eth = c_.sr->rx.sack(pending_.psn, epsn_);
      c_.sr->rx.dup_sent();
      c_.sr->rx.ce_sent();
    }
    // ACKs and NAKs are not ECN-capable: a CE mark on one would slow this
    // QP's own sending (DCQCN reacts per QP), which the ACKs do not cause.
    s.ecn = 0;
    // Scheduled by the Homa-like scheduler (rc_homa.h): ACKs go at the top
    // priority, with its control packets, not behind the data they pace.
    if (c_.homa != nullptr) [[unlikely]]
      s.dscp = homa_ctl_dscp(c_);
    // A spraying connection's answers rotate over its paths (rc_sr_spray.h).
    if (c_.sr != nullptr && c_.sr->spray.on()) [[unlikely]]
      s.udp_src = c_.sr->spray.ack_port();
    s.aeth = wire::AethHdr::make(pending_.syndrome, msn_.value());
    const RcEmit e = rc_emit(c_, tx, s);
    if (e == RcEmit::kNoBuffer) break;
    if (wire::AethHdr::make(pending_.syndrome, 0).is_ack()) ++c_.ctr.tx_acks;
    if (sack) ++c_.sr->ctr.tx_sacks;
    // A duplicate (a probe, or a resend) says an answer may have been lost
    // on its way back: a spraying connection sends this one on the next
    // paths too (rc_sr_spray.h, "Answers to duplicates").
    if (dup && c_.sr->spray.on()) [[unlikely]] {
      for (std::uint32_t k = 1; k < SrSpray::kDupAnswerPaths; ++k) {
        s.udp_src = c_.sr->spray.ack_port();
        if (rc_emit(c_, tx, s) == RcEmit::kNoBuffer) break;
        ++c_.sr->ctr.sr_spray_ack_copies;
      }
    }
    pending_.valid = false;
    ++n;
  }
  return n;
}

}  // namespace uroce::transport

// The selective-repeat half of the responder's templates.
#include "datapath/transport/rc_sr_responder.h"
