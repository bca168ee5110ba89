#include "datapath/wire/builder.h"

#include <cassert>
#include <cstring>
#include <type_traits>

#include "datapath/wire/checksum.h"
#include "datapath/wire/cnp.h"
#include "datapath/wire/crc32_copy.h"

namespace uroce::wire {

namespace {

constexpr int err(BuildError e) { return static_cast<int>(e); }

ExtMask given_ext(const PacketSpec& s) {
  ExtMask m = 0;
  if (s.deth) m |= ext_bit(ExtHdr::kDeth);
  if (s.dc_eth) m |= ext_bit(ExtHdr::kDcEth);
  if (s.dc_aeth) m |= ext_bit(ExtHdr::kDcAeth);
  if (s.feth) m |= ext_bit(ExtHdr::kFeth);
  if (s.reth) m |= ext_bit(ExtHdr::kReth);
  if (s.atomic_eth) m |= ext_bit(ExtHdr::kAtomicEth);
  if (s.aeth) m |= ext_bit(ExtHdr::kAeth);
  if (s.atomic_ack_eth) m |= ext_bit(ExtHdr::kAtomicAckEth);
  if (s.immdt) m |= ext_bit(ExtHdr::kImmDt);
  if (s.ieth) m |= ext_bit(ExtHdr::kIeth);
  if (s.sr_eth) m |= ext_bit(ExtHdr::kSrEth);
  if (s.sack_eth) m |= ext_bit(ExtHdr::kSackEth);
  return m;
}

// The IPv4 header, straight from the spec's fields: its checksum is summed
// from the same words instead of read back from the written header.
void write_ipv4(const PacketSpec& s, std::uint8_t tc, std::uint16_t ip_len, std::uint8_t* p) {
  const std::uint16_t w0 = static_cast<std::uint16_t>(0x4500 | tc);
  const std::uint16_t frag = s.df ? kIpv4FlagDf : 0;
  const std::uint16_t ttl_proto = static_cast<std::uint16_t>(s.ttl << 8 | kIpProtoUdp);
  const std::uint64_t sum = std::uint64_t{w0} + ip_len + s.ip_id + frag + ttl_proto +
                            (s.ip_src.v >> 16) + (s.ip_src.v & 0xffff) + (s.ip_dst.v >> 16) +
                            (s.ip_dst.v & 0xffff);
  store_be16(p, w0);
  store_be16(p + 2, ip_len);
  store_be16(p + 4, s.ip_id);
  store_be16(p + 6, frag);
  store_be16(p + 8, ttl_proto);
  store_be16(p + 10, static_cast<std::uint16_t>(~Ipv4Hdr::fold_ones_complement(sum)));
  store_be32(p + 12, s.ip_src.v);
  store_be32(p + 16, s.ip_dst.v);
}

void write_ipv6(const PacketSpec& s, std::uint8_t tc, std::uint16_t ip_len, std::uint8_t* p) {
  store_be32(p, 6u << 28 | std::uint32_t{tc} << 20 | (s.ip6->flow_label & kFlowLabelMask));
  store_be16(p + 4, static_cast<std::uint16_t>(ip_len - Ipv6Hdr::kSize));
  p[6] = kIpProtoUdp;
  p[7] = s.ttl;
  std::memcpy(p + 8, s.ip6->src.b.data(), 16);
  std::memcpy(p + 24, s.ip6->dst.b.data(), 16);
}

// The extension headers the opcode carries, in canonical order (opcodes.h);
// returns the end of the last. The spec holds each of them (check_roce_spec).
std::uint8_t* write_ext(const PacketSpec& s, const OpcodeInfo& info, std::uint8_t* p) {
  const auto put = [&](ExtHdr h, const auto& hdr) {
    if (!info.has(h)) return;
    hdr->write(p);
    p += std::remove_cvref_t<decltype(*hdr)>::kSize;
  };
  put(ExtHdr::kDeth, s.deth);
  put(ExtHdr::kDcEth, s.dc_eth);
  put(ExtHdr::kDcAeth, s.dc_aeth);
  put(ExtHdr::kFeth, s.feth);
  put(ExtHdr::kReth, s.reth);
  put(ExtHdr::kAtomicEth, s.atomic_eth);
  put(ExtHdr::kAeth, s.aeth);
  put(ExtHdr::kAtomicAckEth, s.atomic_ack_eth);
  put(ExtHdr::kImmDt, s.immdt);
  put(ExtHdr::kIeth, s.ieth);
  if (info.has(ExtHdr::kCnp)) {
    CnpHdr{}.write(p);
    p += CnpHdr::kSize;
  }
  put(ExtHdr::kSrEth, s.sr_eth);
  put(ExtHdr::kSackEth, s.sack_eth);
  return p;
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

int check_roce_spec(const PacketSpec& s, std::size_t out_size) {
  const OpcodeInfo& info = spec_opcode_info(s);
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
  if (out_size < roce_frame_size(s)) return err(BuildError::kBufferTooSmall);
  return 0;
}

std::uint32_t write_roce_headers(const PacketSpec& s, std::span<std::uint8_t> buf) {
#ifdef UROCE_WIRE_CHECK_SPECS
  assert(check_roce_spec(s, buf.size()) == 0);
#endif
  const std::size_t payload_len = s.payload.size();
  std::uint8_t* const out = buf.data();
  const OpcodeInfo& info = spec_opcode_info(s);
  const bool v6 = s.ip6 != nullptr;
  const std::uint8_t pad = pad_count(payload_len);
  const std::size_t udp_len =
      UdpHdr::kSize + BthHdr::kSize + info.ext_len + payload_len + pad + kIcrcSize;
  const std::uint8_t tc = static_cast<std::uint8_t>((s.dscp & 0x3f) << 2 | (s.ecn & 0x03));
  std::uint8_t* p = out;

  std::memcpy(p, s.eth_dst.b.data(), 6);
  std::memcpy(p + 6, s.eth_src.b.data(), 6);
  store_be16(p + 12, v6 ? kEtherTypeIpv6 : kEtherTypeIpv4);
  p += EthHdr::kSize;
  std::uint8_t* const ip = p;
  if (v6) {
    write_ipv6(s, tc, static_cast<std::uint16_t>(Ipv6Hdr::kSize + udp_len), p);
    p += Ipv6Hdr::kSize;
  } else {
    write_ipv4(s, tc, static_cast<std::uint16_t>(Ipv4Hdr::kSize + udp_len), p);
    p += Ipv4Hdr::kSize;
  }
  // UDP, its checksum 0 (finish_roce fills it in when asked for).
  store_be32(p, std::uint32_t{s.udp_src} << 16 | s.udp_dst);
  store_be32(p + 4, static_cast<std::uint32_t>(udp_len) << 16);
  p += UdpHdr::kSize;
  // BTH, as three words (bth.h).
  store_be32(p, std::uint32_t{s.opcode} << 24 | std::uint32_t{s.se} << 23 |
                    std::uint32_t{s.mig_req} << 22 | std::uint32_t{pad} << 20 |
                    std::uint32_t{s.tver & 0x0fu} << 16 | s.pkey);
  store_be32(p + 4,
             std::uint32_t{s.fecn} << 31 | std::uint32_t{s.becn} << 30 | (s.dest_qp & kQpnMask));
  store_be32(p + 8, std::uint32_t{s.ack_req} << 31 | (s.psn & kPsnMask));
  p += BthHdr::kSize;
  std::uint8_t* const ext = p;
  if (info.ext != 0) p = write_ext(s, info, p);
  if (payload_len < kIcrcWholeFrameBelow) return 0;  // finish_roce takes the whole frame
  const std::uint32_t crc = icrc_prefix(ip, v6);
  return crc32_zlib(crc, std::span<const std::uint8_t>(ext, p));
}

int finish_roce(const PacketSpec& s, std::uint32_t crc, std::span<std::uint8_t> out) {
  const std::size_t payload_len = s.payload.size();
  const std::size_t frame_len = roce_frame_size(s);
  const std::uint8_t pad = pad_count(payload_len);
  std::uint8_t* const icrc = out.data() + frame_len - kIcrcSize;
  const bool v6 = s.ip6 != nullptr;
  if (pad != 0) std::memset(icrc - pad, 0, pad);
  if (payload_len < kIcrcWholeFrameBelow) {
    // write_roce_headers and the PayloadWriter left the CRC to here (`crc`
    // is not one): the frame is complete up to the ICRC.
    const std::span<const std::uint8_t> ip(out.data() + EthHdr::kSize, icrc);
    crc = v6 ? compute_icrc_ipv6(ip) : compute_icrc(ip);
  } else if (pad != 0) {
    crc = crc32_zlib(crc, std::span<const std::uint8_t>(icrc - pad, pad));
  }
  store_le32(icrc, crc);
  if (s.udp_checksum) {
    // The UDP checksum covers the ICRC, so it is computed last; the ICRC
    // takes the UDP checksum as all ones and does not depend on it.
    std::uint8_t* const udp = out.data() + EthHdr::kSize + (v6 ? Ipv6Hdr::kSize : Ipv4Hdr::kSize);
    const std::span<const std::uint8_t> seg(udp, out.data() + frame_len - udp);
    store_be16(udp + 6, v6 ? udp_ipv6_checksum(s.ip6->src, s.ip6->dst, seg)
                           : udp_ipv4_checksum(s.ip_src, s.ip_dst, seg));
  }
  return static_cast<int>(frame_len);
}

int write_roce(const PacketSpec& s, std::span<std::uint8_t> out) {
  const std::size_t n = s.payload.size();
  std::uint32_t crc = write_roce_headers(s, out);
  std::uint8_t* const payload = out.data() + roce_payload_offset(s);
  // A payload gathered straight into the frame (see roce_payload_offset)
  // is already in place: that is the send path's one copy.
  if (n < kIcrcWholeFrameBelow) {
    // finish_roce checksums the whole frame; only the copy is left.
    if (s.payload.data() != payload && n != 0) std::memcpy(payload, s.payload.data(), n);
  } else if (s.payload.data() == payload) {
    crc = crc32_zlib(crc, std::span<const std::uint8_t>(payload, n));
  } else {
    crc = crc32_copy(crc, payload, s.payload.data(), n);
  }
  return finish_roce(s, crc, out);
}

int build_roce(const PacketSpec& s, std::span<std::uint8_t> out) {
  if (const int e = check_roce_spec(s, out.size()); e != 0) return e;
  return write_roce(s, out);
}

}  // namespace uroce::wire
