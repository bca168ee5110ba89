#include "datapath/transport/uc_qp.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>

#include "datapath/transport/sge_copy.h"
#include "datapath/wire/builder.h"

namespace uroce::transport {

namespace {

bool is_write(WrOpcode op) { return op == WrOpcode::kRdmaWrite || op == WrOpcode::kRdmaWriteImm; }
bool has_imm(WrOpcode op) { return op == WrOpcode::kSendImm || op == WrOpcode::kRdmaWriteImm; }

// UC opcode for one packet of a message (IBTA 9.2, table 38).
std::uint8_t uc_opcode(WrOpcode op, bool first, bool last) {
  namespace o = wire::op;
  const bool imm = has_imm(op);
  if (is_write(op)) {
    if (first && last) return imm ? o::kUcWriteOnlyImm : o::kUcWriteOnly;
    if (first) return o::kUcWriteFirst;
    if (!last) return o::kUcWriteMiddle;
    return imm ? o::kUcWriteLastImm : o::kUcWriteLast;
  }
  if (first && last) return imm ? o::kUcSendOnlyImm : o::kUcSendOnly;
  if (first) return o::kUcSendFirst;
  if (!last) return o::kUcSendMiddle;
  return imm ? o::kUcSendLastImm : o::kUcSendLast;
}

}  // namespace

const char* uc_rx_name(UcRx r) {
  switch (r) {
    case UcRx::kAccepted: return "Accepted";
    case UcRx::kCompleted: return "Completed";
    case UcRx::kLenErr: return "LenErr";
    case UcRx::kProtErr: return "ProtErr";
    case UcRx::kDropState: return "DropState";
    case UcRx::kDropOpcode: return "DropOpcode";
    case UcRx::kDropQpn: return "DropQpn";
    case UcRx::kDropPkey: return "DropPkey";
    case UcRx::kDropAddr: return "DropAddr";
    case UcRx::kDropPsnGap: return "DropPsnGap";
    case UcRx::kDropRestOfMessage: return "DropRestOfMessage";
    case UcRx::kDropOpSequence: return "DropOpSequence";
    case UcRx::kDropBadLength: return "DropBadLength";
    case UcRx::kDropNoRecvWqe: return "DropNoRecvWqe";
    case UcRx::kDropAccess: return "DropAccess";
    case UcRx::kDropRkey: return "DropRkey";
    case UcRx::kCqOverflow: return "CqOverflow";
  }
  return "?";
}

UcQp::UcQp(const UcQpConfig& cfg, MrTable& mrs)
    : UnreliableQp(cfg, mrs), src_port_(rxe_udp_src_port(cfg.qpn)) {}

void UcQp::reset_state() {
  core_.reset();
  access_ = 0;
  path_ = PathAddr{};
  mtu_ = wire::PathMtu::k1024;
  dest_qpn_ = 0;
  tx_in_msg_ = false;
  tx_offset_ = 0;
  epsn_ = Psn(0);
  drop_msg_ = false;
  rx_op_ = RxOp::kNone;
  rx_offset_ = 0;
  w_va_ = 0;
  w_rkey_ = 0;
  w_left_ = 0;
  w_len_ = 0;
}

int UcQp::modify(std::uint32_t mask, const QpAttrValues& a) {
  if (int rc = check_modify_values(QpType::kUc, core_.state, mask, a); rc != 0) {
    return rc;
  }
  if ((mask & qp_attr::kState) != 0 && a.qp_state == QpState::kReset) {
    reset_state();
    core_.state = QpState::kReset;
    return 0;
  }
  core_.apply_common_attrs(mask, a);
  if ((mask & qp_attr::kAccessFlags) != 0) access_ = a.qp_access_flags;
  if ((mask & qp_attr::kAv) != 0) path_ = a.av;
  if ((mask & qp_attr::kPathMtu) != 0) mtu_ = a.path_mtu;
  if ((mask & qp_attr::kDestQpn) != 0) dest_qpn_ = a.dest_qp_num;
  if ((mask & qp_attr::kRqPsn) != 0) epsn_ = Psn(a.rq_psn);
  if ((mask & qp_attr::kState) != 0) core_.state = a.qp_state;
  return 0;
}

int UcQp::post_send(const SendWr& wr) {
  if (int rc = core_.check_post_send(wr); rc != 0) return rc;
  switch (wr.opcode) {
    case WrOpcode::kSend:
    case WrOpcode::kSendImm:
    case WrOpcode::kRdmaWrite:
    case WrOpcode::kRdmaWriteImm:
    case WrOpcode::kBindMw: break;
    default: return EINVAL;
  }
  if (wr.length() > kUcMaxMessage) return EINVAL;
  return core_.enqueue_send(wr);
}

int UcQp::post_recv(const RecvWr& wr) { return core_.post_recv(wr); }

bool UcQp::may_send() const {
  if (core_.sq.empty()) return false;
  if (core_.state == QpState::kRts) return true;
  // SQD: the message on the wire is finished, no new one is started.
  return core_.state == QpState::kSqd && tx_in_msg_;
}

UcQp::Segment UcQp::next_segment() const {
  const QueuedSendWr& wr = core_.sq.front();
  const std::uint64_t mtu = wire::path_mtu_bytes(mtu_);
  const std::uint64_t left = wr.length() - tx_offset_;
  Segment s;
  s.first = tx_offset_ == 0;
  s.last = left <= mtu;
  s.len = static_cast<std::uint32_t>(std::min(left, mtu));
  s.opcode = uc_opcode(wr.opcode, s.first, s.last);
  return s;
}

std::size_t UcQp::segment_frame_len(const Segment& s) const {
  return wire::kRoceFrameOverhead + (path_.ipv6 ? wire::kIpv6ExtraBytes : 0) +
         wire::opcode_info(s.opcode).ext_len + s.len + wire::pad_count(s.len);
}

UcQp::SendStep UcQp::send_segment(const Segment& seg, std::span<std::uint8_t> frame, Cqe* wc) {
  const QueuedSendWr& wr = core_.sq.front();
  const std::uint64_t wr_id = wr.wr_id;
  const std::uint64_t total = wr.length();
  SendStep step;

  if (seg.first && check_send_sges(core_.mrs, core_.cfg.pd, wr) != MrError::kOk) {
    return core_.fail_front_send(wc);
  }

  wire::PacketSpec spec;
  spec.eth_src = core_.cfg.local.mac;
  spec.eth_dst = path_.dmac;
  spec.ip_src = core_.cfg.local.ip;
  spec.ip_dst = path_.dip;
  if (path_.ipv6) spec.ip6 = &path_.route6;
  spec.dscp = path_.dscp & 0x3f;
  spec.ecn = path_.ecn & 0x03;
  spec.ttl = path_.ttl;
  spec.udp_src = src_port_;
  spec.opcode = seg.opcode;
  spec.pkey = wire::kDefaultPKey;
  spec.dest_qp = dest_qpn_;
  spec.psn = core_.psn.value();
  spec.pmtu = mtu_;
  // Solicited events are asked for on the packet that ends a SEND or a
  // WRITE_WITH_IMM, the ones that consume a receive WR.
  spec.se =
      seg.last && (wr.flags & send_flag::kSolicited) != 0 && wr.opcode != WrOpcode::kRdmaWrite;
  if (seg.first && is_write(wr.opcode)) {
    spec.reth = wire::RethHdr::make(wr.remote_addr, wr.rkey, static_cast<std::uint32_t>(total));
  }
  if (seg.last && has_imm(wr.opcode)) spec.immdt = immdt_from_wr(wr.imm_or_inv);

  const std::span<std::uint8_t> payload = frame.subspan(wire::roce_payload_offset(spec), seg.len);
  const SgeCopyResult g = gather_wr(core_.mrs, core_.cfg.pd, wr, tx_offset_, payload);
  int built = -1;
  if (g.err == MrError::kOk && !g.too_long) {
    spec.payload = payload;
    built = wire::build_roce(spec, frame);
  }
  if (built <= 0) {
    // The MR went away mid-message: the receiver drops the partial message
    // when the next one starts.
    tx_in_msg_ = false;
    tx_offset_ = 0;
    return core_.fail_front_send(wc);
  }

  core_.count_tx_packet(seg.len);
  step.frame_len = static_cast<std::size_t>(built);
  if (!seg.last) {
    tx_in_msg_ = true;
    tx_offset_ += seg.len;
    return step;
  }
  const bool sig = core_.signaled(wr);
  const WcOpcode op = is_write(wr.opcode) ? WcOpcode::kRdmaWrite : WcOpcode::kSend;
  core_.sq.pop();
  tx_in_msg_ = false;
  tx_offset_ = 0;
  ++core_.counters.tx_messages;
  if (sig) {
    *wc = send_success_wc(wr_id, op, total, core_.cfg.qpn);
    step.has_wc = true;
  }
  return step;
}

bool UcQp::bind_front(Cqe* wc) {
  const QueuedSendWr& wr = core_.sq.front();
  assert(wr.opcode == WrOpcode::kBindMw && !tx_in_msg_);
  const std::uint64_t wr_id = wr.wr_id;
  const bool sig = core_.signaled(wr);
  std::uint32_t key = 0;
  const MrError e = core_.mrs.bind_mw(mw_bind_of(wr), core_.cfg.pd, core_.cfg.qpn, &key);
  core_.sq.pop();
  if (e != MrError::kOk) {
    ++core_.counters.mw_bind_errors;
    core_.state = QpState::kErr;
    *wc = error_wc(wr_id, core_.cfg.qpn, WcStatus::kMwBindErr);
    return true;
  }
  ++core_.counters.mw_binds;
  if (!sig) return false;
  *wc = send_success_wc(wr_id, WcOpcode::kBindMw, 0, core_.cfg.qpn);
  return true;
}

void UcQp::abandon_message() {
  if (rx_op_ != RxOp::kNone) ++core_.counters.rx_abandoned;
  rx_op_ = RxOp::kNone;
  rx_offset_ = 0;
  w_left_ = 0;
}

UcRx UcQp::drop_message(UcRx why) {
  abandon_message();
  drop_msg_ = true;
  return why;
}

UcRx UcQp::receive(const wire::ParsedPacket& p, Cqe* wc) {
  if (!receive_enabled(core_.state)) return UcRx::kDropState;
  if (p.info == nullptr || p.info->transport != wire::Transport::kUc) {
    return UcRx::kDropOpcode;
  }
  if (p.bth.dest_qp() != core_.cfg.qpn) return UcRx::kDropQpn;
  if (!pkey_match(p.bth.pkey(), wire::kDefaultPKey)) return UcRx::kDropPkey;
  // rxe's check_addr: only from the connected peer's address to ours.
  if (!from_peer(p, path_, core_.cfg.local)) return UcRx::kDropAddr;

  const Psn psn(p.bth.psn());
  const wire::Position pos = p.info->pos;
  const bool starts = pos == wire::Position::kFirst || pos == wire::Position::kOnly;
  const bool ends = pos == wire::Position::kLast || pos == wire::Position::kOnly;

  if (psn != epsn_ || drop_msg_) {
    if (!starts) {
      return drop_message(drop_msg_ ? UcRx::kDropRestOfMessage : UcRx::kDropPsnGap);
    }
    // Resynchronise: whatever was in progress is lost, this packet starts
    // the next message.
    abandon_message();
    drop_msg_ = false;
    epsn_ = psn;
  }

  const bool is_send = p.info->op == wire::OpClass::kSend;
  if (rx_op_ != RxOp::kNone) {
    if (starts) {
      // Missing LAST: the message in progress is dropped, this one starts.
      abandon_message();
    } else if ((rx_op_ == RxOp::kSend) != is_send) {
      return drop_message(UcRx::kDropOpSequence);
    }
  } else if (!starts) {
    return drop_message(UcRx::kDropOpSequence);
  }

  // Segment sizes (IBTA C9-84..): FIRST and MIDDLE carry exactly the path
  // MTU, LAST 1..MTU, ONLY 0..MTU.
  const std::size_t n = p.payload.size();
  const std::size_t mtu = wire::path_mtu_bytes(mtu_);
  bool size_ok = false;
  switch (pos) {
    case wire::Position::kOnly: size_ok = n <= mtu; break;
    case wire::Position::kFirst:
    case wire::Position::kMiddle: size_ok = n == mtu; break;
    case wire::Position::kLast: size_ok = n >= 1 && n <= mtu; break;
  }
  if (!size_ok) return drop_message(UcRx::kDropBadLength);

  return is_send ? receive_send(p, starts, ends, wc) : receive_write(p, starts, ends, wc);
}

UcRx UcQp::receive_send(const wire::ParsedPacket& p, bool starts, bool ends, Cqe* wc) {
  if (starts) {
    if (!ensure_recv_wr(core_.rq, core_.cfg.srq, core_.cfg.recv_refill)) {
      return drop_message(UcRx::kDropNoRecvWqe);
    }
    rx_op_ = RxOp::kSend;
    rx_offset_ = 0;
  }
  const QueuedRecvWr& r = core_.rq.front();
  const std::uint64_t wr_id = r.wr_id;
  const Psn psn(p.bth.psn());
  if (rx_offset_ + p.payload.size() > r.length()) {
    core_.rq.pop();
    rx_op_ = RxOp::kNone;
    rx_offset_ = 0;
    drop_msg_ = !ends;
    epsn_ = psn + 1;
    *wc = error_wc(wr_id, core_.cfg.qpn, WcStatus::kLocLenErr);
    return UcRx::kLenErr;
  }
  const SgeCopyResult s =
      scatter(core_.mrs, core_.cfg.pd, r.sge(), r.num_sge, rx_offset_, p.payload);
  if (s.err != MrError::kOk || s.too_long) {
    core_.rq.pop();
    rx_op_ = RxOp::kNone;
    rx_offset_ = 0;
    core_.state = QpState::kErr;
    *wc = error_wc(wr_id, core_.cfg.qpn, WcStatus::kLocProtErr);
    return UcRx::kProtErr;
  }
  rx_offset_ += p.payload.size();
  epsn_ = psn + 1;
  if (!ends) return UcRx::kAccepted;

  *wc = Cqe{};
  wc->wr_id = wr_id;
  wc->opcode = static_cast<std::uint32_t>(WcOpcode::kRecv);
  wc->byte_len = static_cast<std::uint32_t>(rx_offset_);
  wc->qp_num = core_.cfg.qpn;
  if (p.has(wire::ExtHdr::kImmDt)) {
    wc->wc_flags = wc_flag::kWithImm;
    wc->ex.imm_data = imm_to_wc(p.immdt);
  }
  wc->pkey_index = core_.pkey_index;
  wc->port_num = kPortNum;
  set_solicited(*wc, p.bth.se());
  core_.rq.pop();
  rx_op_ = RxOp::kNone;
  rx_offset_ = 0;
  return UcRx::kCompleted;
}

UcRx UcQp::receive_write(const wire::ParsedPacket& p, bool starts, bool ends, Cqe* wc) {
  if (starts) {
    if ((access_ & access::kRemoteWrite) == 0) {
      return drop_message(UcRx::kDropAccess);
    }
    w_va_ = p.reth.va();
    w_rkey_ = p.reth.rkey();
    w_len_ = p.reth.dma_len();
    w_left_ = w_len_;
    // The whole target range is checked up front; a zero-length WRITE
    // names no memory and is not checked (IBTA 9.4.1.1).
    std::uint8_t* host = nullptr;
    if (w_len_ != 0 && core_.mrs.resolve_remote(w_rkey_, core_.cfg.pd, core_.cfg.qpn, w_va_, w_len_,
                                                access::kRemoteWrite, &host) != MrError::kOk) {
      return drop_message(UcRx::kDropRkey);
    }
    rx_op_ = RxOp::kWrite;
  }
  const std::size_t n = p.payload.size();
  if (n > w_left_ || (ends && n != w_left_)) {
    return drop_message(UcRx::kDropBadLength);
  }
  const bool imm = p.has(wire::ExtHdr::kImmDt);
  // The receive WR is taken before the last packet's data lands, as rxe.
  if (ends && imm && !ensure_recv_wr(core_.rq, core_.cfg.srq, core_.cfg.recv_refill)) {
    return drop_message(UcRx::kDropNoRecvWqe);
  }
  if (n != 0) {
    // Checked again per packet: the MR may have been deregistered since.
    std::uint8_t* host = nullptr;
    if (core_.mrs.resolve_remote(w_rkey_, core_.cfg.pd, core_.cfg.qpn, w_va_, n,
                                 access::kRemoteWrite, &host) != MrError::kOk) {
      return drop_message(UcRx::kDropRkey);
    }
    p.payload.copy_out(0, host, n);
  }
  w_va_ += n;
  w_left_ -= n;
  epsn_ = Psn(p.bth.psn()) + 1;
  if (!ends) return UcRx::kAccepted;
  rx_op_ = RxOp::kNone;
  if (!imm) return UcRx::kAccepted;

  *wc = Cqe{};
  wc->wr_id = core_.rq.front().wr_id;
  wc->opcode = static_cast<std::uint32_t>(WcOpcode::kRecvRdmaWithImm);
  wc->byte_len = w_len_;
  wc->qp_num = core_.cfg.qpn;
  wc->wc_flags = wc_flag::kWithImm;
  wc->ex.imm_data = imm_to_wc(p.immdt);
  wc->pkey_index = core_.pkey_index;
  wc->port_num = kPortNum;
  set_solicited(*wc, p.bth.se());
  core_.rq.pop();
  return UcRx::kCompleted;
}

}  // namespace uroce::transport
