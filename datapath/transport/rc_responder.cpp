#include "datapath/transport/rc_responder.h"

namespace uroce::transport {

namespace {

std::uint32_t read_packets(std::uint64_t len, std::uint32_t mtu) {
  return len == 0 ? 1 : static_cast<std::uint32_t>((len + mtu - 1) / mtu);
}

}  // namespace

void RcResponder::reset(Psn epsn) {
  epsn_ = epsn;
  ack_psn_ = epsn;
  msn_ = Msn{};
  in_msg_ = InMsg::kNone;
  recv_off_ = 0;
  wr_va_ = 0;
  wr_rkey_ = 0;
  wr_len_ = 0;
  wr_off_ = 0;
  nak_sent_ = false;
  unacked_ = 0;
  pending_ = {};
  head_err_ = WcStatus::kWrFlushErr;
  res_.clear();
  if (c_.sr != nullptr) c_.sr->rx.reset(epsn);
}

void RcResponder::nak_class_c(wire::NakCode code, WcStatus recv_status, bool head_in_use) {
  // The affiliated error events (async_event.h); a remote operational error
  // is a bad receive WR, which its own completion reports.
  switch (code) {
    case wire::NakCode::kRemoteAccessError:
      ++c_.ctr.tx_nak_remote_access;
      c_.ev.qp_error(AsyncEventType::kQpAccessErr);
      break;
    case wire::NakCode::kRemoteOpError: ++c_.ctr.tx_nak_remote_op; break;
    default:
      ++c_.ctr.tx_nak_invalid_request;
      c_.ev.qp_error(AsyncEventType::kQpReqErr);
      break;
  }
  // A receive WR in use by the failed SEND completes with the error.
  if (head_in_use && recv_status != WcStatus::kWrFlushErr) {
    head_err_ = recv_status;
  }
  set_response(wire::aeth_nak_syndrome(code), cur_psn_);
  res_.clear();
  c_.state = QpState::kErr;
}

bool RcResponder::length_ok(const wire::ParsedPacket& pkt) const {
  const std::size_t n = pkt.payload.size();
  const std::uint32_t mtu = c_.mtu();
  switch (pkt.info->op) {
    case wire::OpClass::kSend:
    case wire::OpClass::kWrite:
      switch (pkt.info->pos) {
        case wire::Position::kFirst:
        case wire::Position::kMiddle: return n == mtu;
        case wire::Position::kLast: return n >= 1 && n <= mtu;
        case wire::Position::kOnly: return n <= mtu;
      }
      return false;
    case wire::OpClass::kReadRequest:
      // One request may ask for at most 2^22 response packets so the whole
      // range stays far inside the 2^23 PSN half-space.
      return read_packets(pkt.reth.dma_len(), mtu) <= (1u << 22);
    default: return true;
  }
}

void RcResponder::advance(const wire::ParsedPacket& pkt, bool ends_message) {
  ++epsn_;
  ack_psn_ = epsn_;
  ++c_.ctr.rx_requests;
  if (ends_message) ++msn_;
  ++unacked_;
  const std::uint32_t every = c_.cfg.tuning.ack_every;
  if (pkt.bth.ack_req() || (every != 0 && unacked_ >= every)) {
    unacked_ = 0;
    set_response(wire::aeth_ack_syndrome(), epsn_ - 1);
  }
}

void RcResponder::exec_read(const wire::ParsedPacket& pkt) {
  const std::uint64_t len = pkt.reth.dma_len();
  std::uint8_t* host = nullptr;
  if (c_.mrs.resolve_remote(pkt.reth.rkey(), c_.cfg.pd, c_.cfg.qpn, pkt.reth.va(), len,
                            access::kRemoteRead, &host) != MrError::kOk) {
    nak_class_c(wire::NakCode::kRemoteAccessError, WcStatus::kWrFlushErr);
    return;
  }
  if (res_.limit() == 0) {
    nak_class_c(wire::NakCode::kInvalidRequest, WcStatus::kWrFlushErr);
    return;
  }
  RdAtomicRes* r = res_.alloc();
  if (r == nullptr) {
    ++c_.ctr.drop_no_resource;
    return;
  }
  const std::uint32_t npkts = read_packets(len, c_.mtu());
  r->kind = RdAtomicRes::Kind::kRead;
  r->first_psn = cur_psn_;
  r->last_psn = cur_psn_ + (npkts - 1);
  r->rkey = pkt.reth.rkey();
  r->va = pkt.reth.va();
  r->resid = len;
  r->cur_psn = cur_psn_;
  r->end_psn = r->last_psn;
  epsn_ += npkts;
  ++msn_;
  ++c_.ctr.rx_requests;
  unacked_ = 0;
  // The responses acknowledge everything before them.
  pending_.valid = false;
}

void RcResponder::exec_atomic(const wire::ParsedPacket& pkt) {
  const wire::AtomicEthHdr& a = pkt.atomic_eth;
  std::uint8_t* host = nullptr;
  const MrError e = c_.mrs.resolve_remote(a.rkey(), c_.cfg.pd, c_.cfg.qpn, a.va(), 8,
                                          access::kRemoteAtomic, &host);
  if (e == MrError::kMisaligned) {
    nak_class_c(wire::NakCode::kInvalidRequest, WcStatus::kWrFlushErr);
    return;
  }
  if (e != MrError::kOk) {
    nak_class_c(wire::NakCode::kRemoteAccessError, WcStatus::kWrFlushErr);
    return;
  }
  if (res_.limit() == 0) {
    nak_class_c(wire::NakCode::kInvalidRequest, WcStatus::kWrFlushErr);
    return;
  }
  RdAtomicRes* r = res_.alloc();
  if (r == nullptr) {
    ++c_.ctr.drop_no_resource;
    return;
  }
  // The engine lcore owns this memory's remote accesses, so a plain
  // read-modify-write is atomic with respect to every other RDMA access.
  std::uint64_t orig = 0;
  std::memcpy(&orig, host, 8);
  std::uint64_t next = orig;
  if (pkt.bth.opcode() == wire::op::kRcCompareSwap ||
      pkt.bth.opcode() == wire::op::kDcCompareSwap ||
      pkt.bth.opcode() == wire::op::kSrCompareSwap) {
    if (orig == a.compare()) next = a.swap_add();
  } else {
    next = orig + a.swap_add();
  }
  std::memcpy(host, &next, 8);
  ++c_.ctr.atomics_executed;
  r->kind = RdAtomicRes::Kind::kAtomic;
  r->first_psn = r->last_psn = cur_psn_;
  r->orig = orig;
  ++epsn_;
  ack_psn_ = epsn_;
  ++msn_;
  ++c_.ctr.rx_requests;
  unacked_ = 0;
  pending_.valid = false;
}

void RcResponder::on_duplicate(const wire::ParsedPacket& pkt, Psn p) {
  switch (pkt.info->op) {
    case wire::OpClass::kReadRequest: {
      RdAtomicRes* r = res_.find(p);
      const std::uint64_t len = pkt.reth.dma_len();
      const std::uint32_t npkts = read_packets(len, c_.mtu());
      Psn end = p + (npkts - 1);
      std::uint64_t resid = len;
      std::uint8_t* host = nullptr;
      // RC asks again for the tail of a READ. A selective-repeat requester
      // may ask for a range inside it (docs/lossy.md "READ responses"):
      // whole packets, unless it reaches the READ's last PSN. A range
      // reaching past it (this READ ran for part of what the requester
      // asked as one READ) is served up to its end; the requester asks
      // for the rest again.
      bool range_ok = r != nullptr && end == r->last_psn;
      if (r != nullptr && !range_ok && pkt.info->sr) [[unlikely]] {
        const std::uint32_t in_r = Psn::forward(p, r->last_psn);
        if (Psn::forward(p, end) < in_r) {
          range_ok = len == static_cast<std::uint64_t>(npkts) * c_.mtu();
        } else {
          end = r->last_psn;
          resid = static_cast<std::uint64_t>(in_r + 1) * c_.mtu();
          range_ok = resid < len;
        }
      }
      if (r == nullptr || r->kind != RdAtomicRes::Kind::kRead || !range_ok ||
          c_.mrs.resolve_remote(pkt.reth.rkey(), c_.cfg.pd, c_.cfg.qpn, pkt.reth.va(), len,
                                access::kRemoteRead, &host) != MrError::kOk) {
        ++c_.ctr.drop_dup_unknown;
        return;
      }
      // Selective repeat: a range the stream under way has still to send
      // is served by it. Otherwise the range is sent after every stream
      // already waiting, none cancelled: the requester asked again for
      // what it misses, not for everything after it, and its loss signal
      // reads responses as leaving in the order it asked (docs/lossy.md
      // "READ responses"). RC replays from the duplicate at once.
      const bool sr = pkt.info->sr;
      if (sr && r->pending && !p.before(r->cur_psn) &&
          Psn::forward(r->cur_psn, end) <= Psn::forward(r->cur_psn, r->end_psn)) [[unlikely]] {
        return;
      }
      r->rkey = pkt.reth.rkey();
      r->va = pkt.reth.va();
      r->resid = resid;
      r->cur_psn = p;
      r->end_psn = end;
      if (sr) [[unlikely]] {
        res_.requeue(r);
      } else {
        replay_from(r);
      }
      ++c_.ctr.reads_replayed;
      return;
    }
    case wire::OpClass::kAtomic: {
      RdAtomicRes* r = res_.find(p);
      if (r == nullptr || r->kind != RdAtomicRes::Kind::kAtomic) {
        ++c_.ctr.drop_dup_unknown;
        return;
      }
      replay_from(r);
      ++c_.ctr.atomics_replayed;
      return;
    }
    default:
      // C9-105: acknowledge again, execute nothing.
      set_response(wire::aeth_ack_syndrome(), ack_psn_ - 1);
      return;
  }
}

void RcResponder::replay_from(RdAtomicRes* r) {
  r->pending = true;
  if (res_.cancel_after(r) && pending_.valid && pending_.syndrome == wire::aeth_ack_syndrome() &&
      r->last_psn.before(pending_.psn)) {
    pending_.valid = false;
  }
}

}  // namespace uroce::transport
