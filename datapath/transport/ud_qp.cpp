#include "datapath/transport/ud_qp.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "datapath/transport/sge_copy.h"
#include "datapath/wire/builder.h"

namespace uroce::transport {

namespace {

// Q_Keys with the high bit set are "controlled": a send WR naming one sends
// the QP's own Q_Key instead (IBTA C10-15).
constexpr std::uint32_t kControlledQkeyBit = 0x80000000u;

std::uint8_t ud_opcode(const SendWr& wr) {
  return wr.opcode == WrOpcode::kSendImm ? wire::op::kUdSendOnlyImm
                                         : wire::op::kUdSendOnly;
}

bool signaled(const SendWr& wr, bool sig_all) {
  return sig_all || (wr.flags & send_flag::kSignaled) != 0;
}

}  // namespace

const char* ud_rx_name(UdRx r) {
  switch (r) {
    case UdRx::kDelivered: return "Delivered";
    case UdRx::kLenErr: return "LenErr";
    case UdRx::kProtErr: return "ProtErr";
    case UdRx::kDropState: return "DropState";
    case UdRx::kDropOpcode: return "DropOpcode";
    case UdRx::kDropQpn: return "DropQpn";
    case UdRx::kDropPkey: return "DropPkey";
    case UdRx::kDropQkey: return "DropQkey";
    case UdRx::kDropNoRecvWqe: return "DropNoRecvWqe";
    case UdRx::kCqOverflow: return "CqOverflow";
  }
  return "?";
}

UdQp::UdQp(const UdQpConfig& cfg, const MrTable& mrs)
    : cfg_(cfg), mrs_(mrs), sq_(cfg.max_send_wr), rq_(cfg.max_recv_wr) {
  cfg_.max_send_sge = std::min(cfg_.max_send_sge, kMaxSge);
  cfg_.max_recv_sge = std::min(cfg_.max_recv_sge, kMaxSge);
  cfg_.max_inline = std::min(cfg_.max_inline, kMaxInline);
}

int UdQp::modify(std::uint32_t mask, const QpAttrValues& a) {
  if (int rc = check_modify_values(QpType::kUd, state_, mask, a); rc != 0) {
    return rc;
  }
  if ((mask & qp_attr::kQkey) != 0) qkey_ = a.qkey;
  if ((mask & qp_attr::kPkeyIndex) != 0) pkey_index_ = a.pkey_index;
  if ((mask & qp_attr::kSqPsn) != 0) psn_ = Psn(a.sq_psn);
  if ((mask & qp_attr::kState) != 0) {
    if (a.qp_state == QpState::kReset) {
      sq_.clear();
      rq_.clear();
      qkey_ = 0;
      pkey_index_ = 0;
      psn_ = Psn(0);
      ev_.reset();
    }
    state_ = a.qp_state;
  }
  return 0;
}

int UdQp::post_send(const SendWr& wr) {
  if (state_ == QpState::kReset || state_ == QpState::kInit ||
      state_ == QpState::kRtr) {
    return EINVAL;
  }
  if (wr.opcode != WrOpcode::kSend && wr.opcode != WrOpcode::kSendImm) {
    return EINVAL;
  }
  if ((wr.flags & send_flag::kInline) != 0) {
    if (wr.inline_len > cfg_.max_inline) return EINVAL;
  } else if (wr.num_sge > cfg_.max_send_sge) {
    return EINVAL;
  }
  return sq_.push(wr) ? 0 : ENOMEM;
}

int UdQp::post_recv(const RecvWr& wr) {
  if (state_ == QpState::kReset) return EINVAL;
  // With an SRQ, receives are posted to the SRQ (rxe: EINVAL).
  if (cfg_.srq != nullptr) return EINVAL;
  if (wr.num_sge > cfg_.max_recv_sge) return EINVAL;
  return rq_.push(wr) ? 0 : ENOMEM;
}

std::size_t UdQp::front_frame_len() const {
  const SendWr& wr = sq_.front();
  const std::uint64_t len = wr.length();
  if (len > wire::path_mtu_bytes(cfg_.port_mtu)) return 0;
  return wire::kRoceFrameOverhead + wire::opcode_info(ud_opcode(wr)).ext_len +
         len + wire::pad_count(len);
}

UdQp::SendStep UdQp::send_front(std::span<std::uint8_t> frame, Cqe* wc) {
  const SendWr& wr = sq_.front();
  const std::uint64_t len = wr.length();
  const std::uint64_t wr_id = wr.wr_id;
  SendStep step;
  step.has_wc = signaled(wr, cfg_.sq_sig_all);

  if (len > wire::path_mtu_bytes(cfg_.port_mtu)) {
    // C10-93.1.1: no packet and no error. rxe also consumes a PSN.
    ++counters_.tx_too_long;
    ++psn_;
    sq_.pop();
    if (step.has_wc) {
      *wc = Cqe{};
      wc->wr_id = wr_id;
      wc->opcode = static_cast<std::uint32_t>(WcOpcode::kSend);
      wc->byte_len = static_cast<std::uint32_t>(len);
      wc->qp_num = cfg_.qpn;
    }
    return step;
  }

  wire::PacketSpec spec;
  spec.eth_src = cfg_.local.mac;
  spec.eth_dst = wr.ud.dmac;
  spec.ip_src = cfg_.local.ip;
  spec.ip_dst = wr.ud.dip;
  spec.dscp = wr.ud.dscp & 0x3f;
  spec.ttl = wr.ud.ttl;
  spec.udp_src = rxe_udp_src_port(cfg_.qpn);
  spec.opcode = ud_opcode(wr);
  spec.se = (wr.flags & send_flag::kSolicited) != 0;
  spec.pkey = wire::kDefaultPKey;
  spec.dest_qp = wr.ud.remote_qpn & wire::kQpnMask;
  spec.psn = psn_.value();
  spec.pmtu = cfg_.port_mtu;
  const std::uint32_t qkey = (wr.ud.remote_qkey & kControlledQkeyBit) != 0
                                 ? qkey_
                                 : wr.ud.remote_qkey;
  spec.deth = wire::DethHdr::make(qkey, cfg_.qpn);
  if (wr.opcode == WrOpcode::kSendImm) spec.immdt = immdt_from_wr(wr.imm_or_inv);

  // The one copy: straight from the MR into the frame's payload area.
  const std::span<std::uint8_t> payload =
      frame.subspan(wire::roce_payload_offset(spec), len);
  const SgeCopyResult g = gather_wr(mrs_, cfg_.pd, wr, 0, payload);
  int built = -1;
  if (g.err == MrError::kOk && !g.too_long) {
    spec.payload = payload;
    built = wire::build_roce(spec, frame);
  }
  if (built <= 0) {
    // An SGE that does not resolve is a local protection error; the send
    // queue stops (SQE) and flush() retires the rest.
    ++counters_.tx_local_err;
    sq_.pop();
    state_ = QpState::kSqe;
    *wc = error_wc(wr_id, cfg_.qpn, WcStatus::kLocProtErr);
    step.has_wc = true;
    return step;
  }
  ++psn_;
  ++counters_.tx_packets;
  counters_.tx_payload_bytes += len;
  sq_.pop();
  step.frame_len = static_cast<std::size_t>(built);
  if (step.has_wc) {
    *wc = Cqe{};
    wc->wr_id = wr_id;
    wc->opcode = static_cast<std::uint32_t>(WcOpcode::kSend);
    wc->byte_len = static_cast<std::uint32_t>(len);
    wc->qp_num = cfg_.qpn;
  }
  return step;
}

UdRx UdQp::receive(const wire::ParsedPacket& p, Cqe* wc) {
  if (!receive_enabled(state_)) return UdRx::kDropState;
  if (p.info == nullptr || p.info->transport != wire::Transport::kUd) {
    return UdRx::kDropOpcode;
  }
  if (p.bth.dest_qp() != cfg_.qpn) return UdRx::kDropQpn;
  // The P_Key table has one entry, the default full-membership key.
  if (!pkey_match(p.bth.pkey(), wire::kDefaultPKey)) return UdRx::kDropPkey;
  if (p.deth.qkey() != qkey_) return UdRx::kDropQkey;
  if (!ensure_recv_wr(rq_, cfg_.srq)) return UdRx::kDropNoRecvWqe;

  const RecvWr& r = rq_.front();
  const std::uint64_t wr_id = r.wr_id;
  const std::uint64_t need = kUdGrhSize + p.payload.size();
  if (need > r.length()) {
    rq_.pop();
    *wc = error_wc(wr_id, cfg_.qpn, WcStatus::kLocLenErr);
    return UdRx::kLenErr;
  }

  // RoCEv2 over IPv4: the IPv4 header sits in the last 20 bytes of the
  // 40-byte GRH area, the first 20 are zero (rxe's rdma_network_hdr).
  std::uint8_t grh[kUdGrhSize] = {};
  std::memcpy(grh + kUdGrhSize - wire::Ipv4Hdr::kSize, p.ip.raw,
              wire::Ipv4Hdr::kSize);
  const std::uint32_t nsge = std::min(r.num_sge, kMaxSge);
  SgeCopyResult s = scatter(mrs_, cfg_.pd, r.sge.data(), nsge, 0, grh);
  if (s.err == MrError::kOk) {
    s = scatter(mrs_, cfg_.pd, r.sge.data(), nsge, kUdGrhSize, p.payload);
  }
  rq_.pop();
  if (s.err != MrError::kOk || s.too_long) {
    state_ = QpState::kErr;
    *wc = error_wc(wr_id, cfg_.qpn, WcStatus::kLocProtErr);
    return UdRx::kProtErr;
  }

  *wc = Cqe{};
  wc->wr_id = wr_id;
  wc->status = static_cast<std::uint32_t>(WcStatus::kSuccess);
  wc->opcode = static_cast<std::uint32_t>(WcOpcode::kRecv);
  wc->byte_len = static_cast<std::uint32_t>(need);
  wc->qp_num = cfg_.qpn;
  wc->src_qp = p.deth.src_qp();
  wc->wc_flags = wc_flag::kGrh;
  if (p.has(wire::ExtHdr::kImmDt)) {
    wc->wc_flags |= wc_flag::kWithImm;
    wc->ex.imm_data = imm_to_wc(p.immdt);
  }
  wc->pkey_index = pkey_index_;
  wc->port_num = kPortNum;
  return UdRx::kDelivered;
}

}  // namespace uroce::transport
