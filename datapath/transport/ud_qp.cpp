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

std::uint8_t ud_opcode(const SendWrFields& wr) {
  return wr.opcode == WrOpcode::kSendImm ? wire::op::kUdSendOnlyImm : wire::op::kUdSendOnly;
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

UdQp::UdQp(const UdQpConfig& cfg, MrTable& mrs) : UnreliableQp(cfg, mrs) {}

int UdQp::modify(std::uint32_t mask, const QpAttrValues& a) {
  if (int rc = check_modify_values(QpType::kUd, core_.state, mask, a); rc != 0) {
    return rc;
  }
  if ((mask & qp_attr::kQkey) != 0) qkey_ = a.qkey;
  core_.apply_common_attrs(mask, a);
  if ((mask & qp_attr::kState) != 0) {
    if (a.qp_state == QpState::kReset) {
      core_.reset();
      qkey_ = 0;
    }
    core_.state = a.qp_state;
  }
  return 0;
}

int UdQp::post_send(const SendWr& wr) {
  if (int rc = core_.check_post_send(wr); rc != 0) return rc;
  if (wr.opcode != WrOpcode::kSend && wr.opcode != WrOpcode::kSendImm) {
    return EINVAL;
  }
  return core_.enqueue_send(wr);
}

int UdQp::post_recv(const RecvWr& wr) { return core_.post_recv(wr); }

std::size_t UdQp::front_frame_len() const {
  const QueuedSendWr& wr = core_.sq.front();
  const std::uint64_t len = wr.length();
  if (len > wire::path_mtu_bytes(core_.cfg.port_mtu)) return 0;
  return wire::kRoceFrameOverhead + (wr.ud.ipv6 ? wire::kIpv6ExtraBytes : 0) +
         wire::opcode_info(ud_opcode(wr)).ext_len + len + wire::pad_count(len);
}

UdQp::SendStep UdQp::send_front(std::span<std::uint8_t> frame, Cqe* wc) {
  const QueuedSendWr& wr = core_.sq.front();
  const std::uint64_t len = wr.length();
  const std::uint64_t wr_id = wr.wr_id;
  SendStep step;
  step.has_wc = core_.signaled(wr);

  if (len > wire::path_mtu_bytes(core_.cfg.port_mtu)) {
    // C10-93.1.1: no packet and no error. rxe also consumes a PSN.
    ++core_.counters.tx_too_long;
    ++core_.psn;
    core_.sq.pop();
    if (step.has_wc) {
      *wc = send_success_wc(wr_id, WcOpcode::kSend, len, core_.cfg.qpn);
    }
    return step;
  }

  wire::PacketSpec spec;
  spec.eth_src = core_.cfg.local.mac;
  spec.eth_dst = wr.ud.dmac;
  spec.ip_src = core_.cfg.local.ip;
  spec.ip_dst = wr.ud.dip;
  // The AH names the destination and which of our addresses sends.
  const wire::Ipv6Route route6{core_.cfg.local.ip6(wr.ud.global_src), wr.ud.dip6, 0};
  if (wr.ud.ipv6) spec.ip6 = &route6;
  spec.dscp = wr.ud.dscp & 0x3f;
  spec.ttl = wr.ud.ttl;
  spec.udp_src = rxe_udp_src_port(core_.cfg.qpn);
  spec.opcode = ud_opcode(wr);
  spec.se = (wr.flags & send_flag::kSolicited) != 0;
  spec.pkey = wire::kDefaultPKey;
  spec.dest_qp = wr.ud.remote_qpn & wire::kQpnMask;
  spec.psn = core_.psn.value();
  spec.pmtu = core_.cfg.port_mtu;
  const std::uint32_t qkey =
      (wr.ud.remote_qkey & kControlledQkeyBit) != 0 ? qkey_ : wr.ud.remote_qkey;
  spec.deth = wire::DethHdr::make(qkey, core_.cfg.qpn);
  if (wr.opcode == WrOpcode::kSendImm) spec.immdt = immdt_from_wr(wr.imm_or_inv);

  // The one copy: straight from the MR into the frame's payload area.
  const std::span<std::uint8_t> payload = frame.subspan(wire::roce_payload_offset(spec), len);
  const SgeCopyResult g = gather_wr(core_.mrs, core_.cfg.pd, wr, 0, payload);
  int built = -1;
  if (g.err == MrError::kOk && !g.too_long) {
    spec.payload = payload;
    built = wire::build_roce(spec, frame);
  }
  if (built <= 0) {
    // An SGE that does not resolve is a local protection error; the send
    // queue stops (SQE) and flush() retires the rest.
    return core_.fail_front_send(wc);
  }
  core_.count_tx_packet(len);
  core_.sq.pop();
  step.frame_len = static_cast<std::size_t>(built);
  if (step.has_wc) {
    *wc = send_success_wc(wr_id, WcOpcode::kSend, len, core_.cfg.qpn);
  }
  return step;
}

UdRx UdQp::receive(const wire::ParsedPacket& p, Cqe* wc) {
  if (!receive_enabled(core_.state)) return UdRx::kDropState;
  if (p.info == nullptr || p.info->transport != wire::Transport::kUd) {
    return UdRx::kDropOpcode;
  }
  // A group's packet (DestQP 0xFFFFFF) reaches only the QPs attached to
  // the group (the Vnic's group table).
  if (p.bth.dest_qp() != core_.cfg.qpn && p.bth.dest_qp() != wire::kMulticastQpn) {
    return UdRx::kDropQpn;
  }
  // The P_Key table has one entry, the default full-membership key.
  if (!pkey_match(p.bth.pkey(), wire::kDefaultPKey)) return UdRx::kDropPkey;
  if (p.deth.qkey() != qkey_) return UdRx::kDropQkey;
  if (!ensure_recv_wr(core_.rq, core_.cfg.srq, core_.cfg.recv_refill)) return UdRx::kDropNoRecvWqe;

  const QueuedRecvWr& r = core_.rq.front();
  const std::uint64_t wr_id = r.wr_id;
  const std::uint64_t need = kUdGrhSize + p.payload.size();
  if (need > r.length()) {
    core_.rq.pop();
    *wc = error_wc(wr_id, core_.cfg.qpn, WcStatus::kLocLenErr);
    return UdRx::kLenErr;
  }

  // RoCEv2 over IPv4: the IPv4 header sits in the last 20 bytes of the
  // 40-byte GRH area, the first 20 are zero (rxe's rdma_network_hdr). Over
  // IPv6 the IPv6 header fills it: it has the GRH's layout.
  std::uint8_t grh[kUdGrhSize] = {};
  if (p.ipv6) {
    static_assert(wire::Ipv6Hdr::kSize == kUdGrhSize);
    std::memcpy(grh, p.ip6.raw, wire::Ipv6Hdr::kSize);
  } else {
    std::memcpy(grh + kUdGrhSize - wire::Ipv4Hdr::kSize, p.ip.raw, wire::Ipv4Hdr::kSize);
  }
  const std::uint32_t nsge = r.num_sge;
  SgeCopyResult s = scatter(core_.mrs, core_.cfg.pd, r.sge(), nsge, 0, grh);
  if (s.err == MrError::kOk) {
    s = scatter(core_.mrs, core_.cfg.pd, r.sge(), nsge, kUdGrhSize, p.payload);
  }
  core_.rq.pop();
  if (s.err != MrError::kOk || s.too_long) {
    core_.state = QpState::kErr;
    *wc = error_wc(wr_id, core_.cfg.qpn, WcStatus::kLocProtErr);
    return UdRx::kProtErr;
  }

  *wc = Cqe{};
  wc->wr_id = wr_id;
  wc->status = static_cast<std::uint32_t>(WcStatus::kSuccess);
  wc->opcode = static_cast<std::uint32_t>(WcOpcode::kRecv);
  wc->byte_len = static_cast<std::uint32_t>(need);
  wc->qp_num = core_.cfg.qpn;
  wc->src_qp = p.deth.src_qp();
  wc->wc_flags = wc_flag::kGrh;
  wc->sl = p.ipv6 ? kWcSlRoceIpv6 : kWcSlRoceIpv4;
  if (p.has(wire::ExtHdr::kImmDt)) {
    wc->wc_flags |= wc_flag::kWithImm;
    wc->ex.imm_data = imm_to_wc(p.immdt);
  }
  wc->pkey_index = core_.pkey_index;
  wc->port_num = kPortNum;
  set_solicited(*wc, p.bth.se());
  return UdRx::kDelivered;
}

}  // namespace uroce::transport
