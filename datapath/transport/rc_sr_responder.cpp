// The RC responder's selective-repeat placement (docs/lossy.md
// "Responder"; the rules are in rc_sr_responder.h).
#include <cstring>

#include "datapath/transport/rc_responder.h"

namespace uroce::transport {

bool RcResponder::sr_sequence_ok(bool first, bool send) const {
  switch (in_msg_) {
    case InMsg::kNone: return first;
    case InMsg::kSrSend: return send && !first;
    case InMsg::kSrWrite: return !send && !first;
    // A plain RC message is not continued by SR packets.
    case InMsg::kSend:
    case InMsg::kWrite: return false;
  }
  return false;
}

const QueuedRecvWr* RcResponder::sr_recv_wr(std::uint32_t idx) {
  while (rq_.size() <= idx) {
    const std::uint32_t before = rq_.size();
    if (c_.cfg.srq != nullptr) {
      // With an SRQ, as many as the QP's own queue holds.
      if (!c_.cfg.srq->take(rq_)) return nullptr;
    } else {
      c_.cfg.recv_refill();
    }
    if (rq_.size() == before) return nullptr;
  }
  return &rq_.at(rq_.head() + idx);
}

void RcResponder::sr_fill_recv(const wire::ParsedPacket& pkt, std::uint32_t rsn,
                               std::uint32_t byte_len, bool write_imm) {
  SrRecvDone& r = c_.sr->rx.recv(rsn);
  r.rsn = rsn;
  r.byte_len = byte_len;
  r.imm_or_inv = 0;
  r.flags = SrRecvDone::kFilled;
  if (write_imm) r.flags |= SrRecvDone::kWriteImm;
  if (pkt.bth.se()) r.flags |= SrRecvDone::kSolicited;
  if (pkt.has(wire::ExtHdr::kImmDt)) {
    std::memcpy(&r.imm_or_inv, pkt.immdt.raw, 4);
    r.flags |= SrRecvDone::kImm;
  }
  if (pkt.has(wire::ExtHdr::kIeth)) {
    r.imm_or_inv = pkt.ieth.rkey();
    r.flags |= SrRecvDone::kInv;
  }
}

RcResponder::SrPlace RcResponder::sr_place(const wire::ParsedPacket& pkt, bool in_order) {
  const wire::OpcodeInfo& info = *pkt.info;
  const bool first = info.pos == wire::Position::kFirst || info.pos == wire::Position::kOnly;
  const bool write = info.op == wire::OpClass::kWrite;
  if (in_order && !sr_sequence_ok(first, !write)) {
    // As RC: nothing of a packet out of sequence is placed.
    nak_class_c(wire::NakCode::kInvalidRequest, WcStatus::kRemInvReqErr);
    return SrPlace::kNaked;
  }
  // Every packet before a message's last carries exactly one MTU
  // (length_ok), so a MIDDLE/LAST starts at a non-zero multiple of it.
  const std::uint64_t off = pkt.sr_eth.offset();
  const bool off_ok = first ? off == 0 : off != 0 && off % c_.mtu() == 0;
  const std::uint32_t need = write ? access::kRemoteWrite : 0;
  if ((c_.attr.qp_access_flags & need) != need || !length_ok(pkt) || !off_ok ||
      off + pkt.payload.size() > kSrMaxMessage) {
    if (!in_order) return SrPlace::kUnplaced;
    nak_class_c(wire::NakCode::kInvalidRequest, WcStatus::kRemInvReqErr);
    return SrPlace::kNaked;
  }
  return write ? sr_place_write(pkt, in_order) : sr_place_send(pkt, in_order);
}

RcResponder::SrPlace RcResponder::sr_place_send(const wire::ParsedPacket& pkt, bool in_order) {
  const wire::Position pos = pkt.info->pos;
  const bool last = pos == wire::Position::kLast || pos == wire::Position::kOnly;
  const std::uint32_t rsn = pkt.sr_eth.rsn();
  const std::uint32_t idx = (rsn - rsn_head_) & kRsnMask;
  if (in_order && idx != 0) {
    // Every earlier message has completed: this one's receive WR is the head.
    nak_class_c(wire::NakCode::kInvalidRequest, WcStatus::kRemInvReqErr);
    return SrPlace::kNaked;
  }
  if (idx >= kSrRecvHeld) return SrPlace::kUnplaced;
  const QueuedRecvWr* r = sr_recv_wr(idx);
  if (r == nullptr) {
    if (!in_order) return SrPlace::kUnplaced;
    nak_sent_ = true;
    ++c_.ctr.tx_rnr_naks;
    set_response(wire::aeth_rnr_nak_syndrome(c_.attr.min_rnr_timer), cur_psn_);
    return SrPlace::kNaked;
  }
  const std::uint64_t off = pkt.sr_eth.offset();
  if (!pkt.payload.empty()) {
    const SgeCopyResult s = scatter(c_.mrs, c_.cfg.pd, r->sge(), r->num_sge, off, pkt.payload);
    if (s.too_long || s.err != MrError::kOk) {
      if (!in_order) return SrPlace::kUnplaced;
      if (s.too_long) {
        nak_class_c(wire::NakCode::kInvalidRequest, WcStatus::kLocLenErr, true);
      } else {
        nak_class_c(wire::NakCode::kRemoteOpError, WcStatus::kLocProtErr, true);
      }
      return SrPlace::kNaked;
    }
  }
  if (last) {
    sr_fill_recv(pkt, rsn, static_cast<std::uint32_t>(off + pkt.payload.size()), false);
  }
  return SrPlace::kPlaced;
}

RcResponder::SrPlace RcResponder::sr_place_write(const wire::ParsedPacket& pkt, bool in_order) {
  const wire::Position pos = pkt.info->pos;
  const bool last = pos == wire::Position::kLast || pos == wire::Position::kOnly;
  const std::uint64_t va = pkt.reth.va();
  const std::uint32_t rkey = pkt.reth.rkey();
  const std::uint64_t len = pkt.reth.dma_len();
  const std::uint64_t off = pkt.sr_eth.offset();
  const std::uint64_t n = pkt.payload.size();
  // The whole message's range, as RC checks it on the first packet.
  std::uint8_t* host = nullptr;
  if (c_.mrs.resolve_remote(rkey, c_.cfg.pd, c_.cfg.qpn, va, len, access::kRemoteWrite, &host) !=
      MrError::kOk) {
    if (!in_order) return SrPlace::kUnplaced;
    nak_class_c(wire::NakCode::kRemoteAccessError, WcStatus::kWrFlushErr);
    return SrPlace::kNaked;
  }
  // The packet lies inside it; only the last reaches its end.
  if (last ? off + n != len : off + n >= len) {
    if (!in_order) return SrPlace::kUnplaced;
    nak_class_c(wire::NakCode::kInvalidRequest, WcStatus::kWrFlushErr);
    return SrPlace::kNaked;
  }
  const bool imm = pkt.has(wire::ExtHdr::kImmDt);
  const std::uint32_t rsn = pkt.sr_eth.rsn();
  if (imm) {
    const std::uint32_t idx = (rsn - rsn_head_) & kRsnMask;
    if (in_order && idx != 0) {
      nak_class_c(wire::NakCode::kInvalidRequest, WcStatus::kWrFlushErr);
      return SrPlace::kNaked;
    }
    // Its completion needs its receive WR; taken now, so that it is there
    // when the message completes in order.
    if (idx >= kSrRecvHeld || sr_recv_wr(idx) == nullptr) {
      if (!in_order) return SrPlace::kUnplaced;
      nak_sent_ = true;
      ++c_.ctr.tx_rnr_naks;
      set_response(wire::aeth_rnr_nak_syndrome(c_.attr.min_rnr_timer), cur_psn_);
      return SrPlace::kNaked;
    }
  }
  if (n != 0) {
    if (c_.mrs.resolve_remote(rkey, c_.cfg.pd, c_.cfg.qpn, va + off, n, access::kRemoteWrite,
                              &host) != MrError::kOk) {
      if (!in_order) return SrPlace::kUnplaced;
      nak_class_c(wire::NakCode::kRemoteAccessError, WcStatus::kWrFlushErr);
      return SrPlace::kNaked;
    }
    pkt.payload.copy_out(0, host, n);
  }
  if (imm) sr_fill_recv(pkt, rsn, static_cast<std::uint32_t>(len), true);
  return SrPlace::kPlaced;
}

}  // namespace uroce::transport
