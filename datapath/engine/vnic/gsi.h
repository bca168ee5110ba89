// Vnic definitions (vnic.h): QP1, the GSI, for the connection manager.
// RX checks a datagram to QP1 the way IBTA 13.5.1 and rxe do (UD SEND_ONLY,
// Q_Key 0x80010000, one 256-byte MAD) and parks it in the GsiQueue; TX
// builds one UD SEND_ONLY from QP1 to the peer's QP1.
#pragma once

#include "datapath/engine/vnic/entries.h"
#include "datapath/wire/builder.h"

namespace uroce::engine {

template <class PortIo, sched::TxScheduler Sched>
inline void Vnic<PortIo, Sched>::gsi_rx() {
  if (pkt_.bth.opcode() != wire::op::kUdSendOnly) {
    ++ctr_.rx_gsi_bad_opcode;
    return;
  }
  if (pkt_.deth.qkey() != wire::kGsiQkey) {
    ++ctr_.rx_gsi_bad_qkey;
    return;
  }
  // A MAD frame is far shorter than any port's RX buffer (never chained);
  // a chained one would be malformed.
  if (pkt_.payload.size() != wire::kMadBytes || !pkt_.payload.contiguous()) {
    ++ctr_.rx_gsi_bad_length;
    return;
  }
  if (!gsi_.push(pkt_.ip.src(), pkt_.eth.src(), pkt_.deth.src_qp(),
                 std::span<const std::uint8_t, wire::kMadBytes>(pkt_.payload.data(),
                                                                wire::kMadBytes))) {
    ++ctr_.rx_gsi_full;
    return;
  }
  ++ctr_.rx_gsi;
}

template <class PortIo, sched::TxScheduler Sched>
int Vnic<PortIo, Sched>::gsi_send(wire::Ipv4Addr ip, wire::MacAddr mac,
                                  std::span<const std::uint8_t, wire::kMadBytes> mad) {
  assert(owner_.here());
  wire::PacketSpec spec;
  spec.eth_src = cfg_.mac;
  spec.eth_dst = mac;
  spec.ip_src = cfg_.ip;
  spec.ip_dst = ip;
  spec.ttl = pfc_.tx_ttl();
  spec.udp_src = static_cast<std::uint16_t>(0xc000 | wire::kGsiQpn);
  spec.opcode = wire::op::kUdSendOnly;
  spec.pkey = wire::kDefaultPKey;
  spec.dest_qp = wire::kGsiQpn;
  spec.psn = gsi_psn_;
  spec.pmtu = active_mtu();
  spec.deth = wire::DethHdr::make(wire::kGsiQkey, wire::kGsiQpn);
  spec.payload = std::span<const std::uint8_t>(mad.data(), mad.size());
  if (io_.tx_room() == 0) ctr_.tx_flushed += io_.flush();
  const std::span<std::uint8_t> b = io_.tx().tx_alloc(wire::roce_frame_size(spec));
  const int n = b.empty() ? -1 : wire::build_roce(spec, b);
  if (n <= 0) {
    ++ctr_.tx_gsi_no_buffer;
    return ENOBUFS;
  }
  gsi_psn_ = (gsi_psn_ + 1) & wire::kPsnMask;
  ++ctr_.tx_gsi;
  commit_frame(b.first(static_cast<std::size_t>(n)));
  return 0;
}

}  // namespace uroce::engine
