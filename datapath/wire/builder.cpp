#include "datapath/wire/builder.h"

#include <cstring>

#include "datapath/wire/checksum.h"
#include "datapath/wire/cnp.h"

namespace uroce::wire {

namespace {

constexpr int err(BuildError e) { return static_cast<int>(e); }

ExtMask given_ext(const PacketSpec& s) {
  ExtMask m = 0;
  if (s.deth) m |= ext_bit(ExtHdr::kDeth);
  if (s.dc_eth) m |= ext_bit(ExtHdr::kDcEth);
  if (s.dc_aeth) m |= ext_bit(ExtHdr::kDcAeth);
  if (s.reth) m |= ext_bit(ExtHdr::kReth);
  if (s.atomic_eth) m |= ext_bit(ExtHdr::kAtomicEth);
  if (s.aeth) m |= ext_bit(ExtHdr::kAeth);
  if (s.atomic_ack_eth) m |= ext_bit(ExtHdr::kAtomicAckEth);
  if (s.immdt) m |= ext_bit(ExtHdr::kImmDt);
  if (s.ieth) m |= ext_bit(ExtHdr::kIeth);
  return m;
}

std::size_t payload_and_pad(const PacketSpec& s) {
  return s.payload.size() + pad_count(s.payload.size());
}

std::size_t ip_extra(const PacketSpec& s) { return s.ip6 != nullptr ? kIpv6ExtraBytes : 0; }

// Writes the IPv4 header at `p` for an IP packet of `ip_len` bytes.
void write_ipv4(const PacketSpec& s, std::size_t ip_len, std::uint8_t* p) {
  Ipv4Hdr ip;
  ip.set_version_ihl(4, 5);
  ip.set_dscp_ecn(s.dscp, s.ecn);
  ip.set_total_length(static_cast<std::uint16_t>(ip_len));
  ip.set_id(s.ip_id);
  ip.set_flags_frag(s.df ? kIpv4FlagDf : 0);
  ip.set_ttl(s.ttl);
  ip.set_protocol(kIpProtoUdp);
  ip.set_src(s.ip_src);
  ip.set_dst(s.ip_dst);
  ip.fill_checksum();
  ip.write(p);
}

void write_ipv6(const PacketSpec& s, std::size_t ip_len, std::uint8_t* p) {
  Ipv6Hdr ip;
  ip.set_version_tc_flow(6, static_cast<std::uint8_t>(s.dscp << 2 | s.ecn), s.ip6->flow_label);
  ip.set_payload_length(static_cast<std::uint16_t>(ip_len - Ipv6Hdr::kSize));
  ip.set_next_header(kIpProtoUdp);
  ip.set_hop_limit(s.ttl);
  ip.set_src(s.ip6->src);
  ip.set_dst(s.ip6->dst);
  ip.write(p);
}

}  // namespace

std::string_view build_error_name(BuildError e) {
  switch (e) {
    case BuildError::kBufferTooSmall: return "BufferTooSmall";
    case BuildError::kUnknownOpcode: return "UnknownOpcode";
    case BuildError::kMissingExtHeader: return "MissingExtHeader";
    case BuildError::kUnexpectedExtHeader: return "UnexpectedExtHeader";
    case BuildError::kPayloadNotAllowed: return "PayloadNotAllowed";
    case BuildError::kPayloadTooLarge: return "PayloadTooLarge";
    case BuildError::kFieldOutOfRange: return "FieldOutOfRange";
  }
  return "Unknown";
}

std::size_t roce_frame_size(const PacketSpec& spec) {
  return kRoceFrameOverhead + ip_extra(spec) + opcode_info(spec.opcode).ext_len +
         payload_and_pad(spec);
}

std::size_t roce_payload_offset(const PacketSpec& spec) {
  return EthHdr::kSize + Ipv4Hdr::kSize + ip_extra(spec) + UdpHdr::kSize + BthHdr::kSize +
         opcode_info(spec.opcode).ext_len;
}

int build_roce(const PacketSpec& s, std::span<std::uint8_t> out) {
  const OpcodeInfo& info = opcode_info(s.opcode);
  if (!info.valid) return err(BuildError::kUnknownOpcode);
  const ExtMask need = static_cast<ExtMask>(info.ext & ~ext_bit(ExtHdr::kCnp));
  const ExtMask have = given_ext(s);
  if ((need & ~have) != 0) return err(BuildError::kMissingExtHeader);
  if ((have & ~need) != 0) return err(BuildError::kUnexpectedExtHeader);
  if (!info.payload && !s.payload.empty()) {
    return err(BuildError::kPayloadNotAllowed);
  }
  if (s.dest_qp > kQpnMask || s.psn > kPsnMask || s.tver > 0x0f || s.dscp > 0x3f || s.ecn > 0x03 ||
      !path_mtu_valid(static_cast<std::uint8_t>(s.pmtu)) ||
      (s.ip6 != nullptr && s.ip6->flow_label > kFlowLabelMask)) {
    return err(BuildError::kFieldOutOfRange);
  }
  if (s.payload.size() > path_mtu_bytes(s.pmtu)) {
    return err(BuildError::kPayloadTooLarge);
  }
  const std::size_t frame_len = roce_frame_size(s);
  if (out.size() < frame_len) return err(BuildError::kBufferTooSmall);

  std::uint8_t* p = out.data();
  const std::size_t ip_len = frame_len - EthHdr::kSize;
  const bool v6 = s.ip6 != nullptr;
  const std::size_t ip_hdr_len = v6 ? Ipv6Hdr::kSize : Ipv4Hdr::kSize;
  const std::size_t udp_len = ip_len - ip_hdr_len;

  EthHdr eth;
  eth.set_dst(s.eth_dst);
  eth.set_src(s.eth_src);
  eth.set_ether_type(v6 ? kEtherTypeIpv6 : kEtherTypeIpv4);
  eth.write(p);
  p += EthHdr::kSize;
  std::uint8_t* const ip_start = p;

  if (v6) {
    write_ipv6(s, ip_len, p);
  } else {
    write_ipv4(s, ip_len, p);
  }
  p += ip_hdr_len;
  std::uint8_t* const udp_start = p;

  UdpHdr udp;
  udp.set_src_port(s.udp_src);
  udp.set_dst_port(s.udp_dst);
  udp.set_length(static_cast<std::uint16_t>(udp_len));
  udp.write(p);
  p += UdpHdr::kSize;

  const std::uint8_t pad = pad_count(s.payload.size());
  BthHdr bth;
  bth.set_opcode(s.opcode);
  bth.set_se(s.se);
  bth.set_mig_req(s.mig_req);
  bth.set_pad_count(pad);
  bth.set_tver(s.tver);
  bth.set_pkey(s.pkey);
  bth.set_fecn(s.fecn);
  bth.set_becn(s.becn);
  bth.set_dest_qp(s.dest_qp);
  bth.set_ack_req(s.ack_req);
  bth.set_psn(s.psn);
  bth.write(p);
  p += BthHdr::kSize;

  // Canonical extension header order (opcodes.h).
  if (s.deth) {
    s.deth->write(p);
    p += DethHdr::kSize;
  }
  if (s.dc_eth) {
    s.dc_eth->write(p);
    p += DcEthHdr::kSize;
  }
  if (s.dc_aeth) {
    s.dc_aeth->write(p);
    p += DcAethHdr::kSize;
  }
  if (s.reth) {
    s.reth->write(p);
    p += RethHdr::kSize;
  }
  if (s.atomic_eth) {
    s.atomic_eth->write(p);
    p += AtomicEthHdr::kSize;
  }
  if (s.aeth) {
    s.aeth->write(p);
    p += AethHdr::kSize;
  }
  if (s.atomic_ack_eth) {
    s.atomic_ack_eth->write(p);
    p += AtomicAckEthHdr::kSize;
  }
  if (s.immdt) {
    s.immdt->write(p);
    p += ImmDtHdr::kSize;
  }
  if (s.ieth) {
    s.ieth->write(p);
    p += IethHdr::kSize;
  }
  if (info.has(ExtHdr::kCnp)) {
    CnpHdr{}.write(p);
    p += CnpHdr::kSize;
  }

  if (!s.payload.empty()) {
    // A payload gathered straight into the frame (see roce_payload_offset)
    // is already in place: that is the send path's one copy.
    if (s.payload.data() != p) std::memcpy(p, s.payload.data(), s.payload.size());
    p += s.payload.size();
  }
  std::memset(p, 0, pad);
  p += pad;

  const std::span<const std::uint8_t> icrc_covers(ip_start, ip_len - kIcrcSize);
  store_le32(p, v6 ? compute_icrc_ipv6(icrc_covers) : compute_icrc(icrc_covers));
  if (s.udp_checksum) {
    // The UDP checksum covers the ICRC, so it is computed last; the ICRC
    // takes the UDP checksum as all ones and does not depend on it.
    const std::span<const std::uint8_t> seg(udp_start, udp_len);
    store_be16(udp_start + 6, v6 ? udp_ipv6_checksum(s.ip6->src, s.ip6->dst, seg)
                                 : udp_ipv4_checksum(s.ip_src, s.ip_dst, seg));
  }
  return static_cast<int>(frame_len);
}

}  // namespace uroce::wire
