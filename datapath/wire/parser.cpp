#include "datapath/wire/parser.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "datapath/wire/checksum.h"
#include "datapath/wire/icrc.h"

namespace uroce::wire {

namespace {

constexpr std::size_t kIpOff = EthHdr::kSize;

// Reads one extension header if the opcode carries it; `off` advances.
template <typename Hdr>
bool take_ext(const OpcodeInfo& info, ExtHdr which, const std::uint8_t* base, std::size_t end,
              std::size_t& off, Hdr& out) {
  if (!info.has(which)) return true;
  if (end - off < Hdr::kSize) return false;
  out = Hdr::read(base + off);
  off += Hdr::kSize;
  return true;
}

}  // namespace

std::string_view parse_error_name(ParseError e) {
  switch (e) {
    case ParseError::kOk: return "Ok";
    case ParseError::kTruncatedEth: return "TruncatedEth";
    case ParseError::kNotIp: return "NotIp";
    case ParseError::kTruncatedIpv4: return "TruncatedIpv4";
    case ParseError::kTruncatedIpv6: return "TruncatedIpv6";
    case ParseError::kBadIpVersion: return "BadIpVersion";
    case ParseError::kBadIpHeaderLength: return "BadIpHeaderLength";
    case ParseError::kBadIpChecksum: return "BadIpChecksum";
    case ParseError::kBadIpTotalLength: return "BadIpTotalLength";
    case ParseError::kIpFragment: return "IpFragment";
    case ParseError::kNotUdp: return "NotUdp";
    case ParseError::kTruncatedUdp: return "TruncatedUdp";
    case ParseError::kBadUdpLength: return "BadUdpLength";
    case ParseError::kNotRoceV2Port: return "NotRoceV2Port";
    case ParseError::kBadUdpChecksum: return "BadUdpChecksum";
    case ParseError::kTruncatedBth: return "TruncatedBth";
    case ParseError::kBadBthVersion: return "BadBthVersion";
    case ParseError::kUnsupportedOpcode: return "UnsupportedOpcode";
    case ParseError::kTruncatedDeth: return "TruncatedDeth";
    case ParseError::kTruncatedDcEth: return "TruncatedDcEth";
    case ParseError::kTruncatedDcAeth: return "TruncatedDcAeth";
    case ParseError::kTruncatedFeth: return "TruncatedFeth";
    case ParseError::kTruncatedReth: return "TruncatedReth";
    case ParseError::kTruncatedAtomicEth: return "TruncatedAtomicEth";
    case ParseError::kTruncatedAeth: return "TruncatedAeth";
    case ParseError::kTruncatedAtomicAckEth: return "TruncatedAtomicAckEth";
    case ParseError::kTruncatedImmDt: return "TruncatedImmDt";
    case ParseError::kTruncatedIeth: return "TruncatedIeth";
    case ParseError::kTruncatedCnp: return "TruncatedCnp";
    case ParseError::kTruncatedSrEth: return "TruncatedSrEth";
    case ParseError::kTruncatedSackEth: return "TruncatedSackEth";
    case ParseError::kTruncatedIcrc: return "TruncatedIcrc";
    case ParseError::kUnexpectedPayload: return "UnexpectedPayload";
    case ParseError::kPadExceedsPayload: return "PadExceedsPayload";
    case ParseError::kBadIcrc: return "BadIcrc";
    case ParseError::kSplitHeaders: return "SplitHeaders";
  }
  return "Unknown";
}

namespace {

// A chained frame's UDP checksum: the pieces of [udp_off, udp_off + len)
// summed in order. A piece that starts at an odd offset of the segment sums
// with its bytes swapped (RFC 1071 section 2(B)), so the sum is the
// contiguous one whatever the pieces' lengths.
template <bool kIpv6>
bool chained_udp_checksum_ok(std::span<const std::uint8_t> head, FrameTail tail,
                             std::size_t udp_off, std::size_t len, const ParsedPacket& out) {
  std::uint64_t sum =
      kIpv6 ? ipv6_pseudo_sum(out.ip6.src(), out.ip6.dst(), static_cast<std::uint32_t>(len),
                              kIpProtoUdp)
            : udp_pseudo_sum(out.ip.src(), out.ip.dst(), static_cast<std::uint16_t>(len));
  std::size_t at = 0;
  for_each_piece(head, tail, udp_off, len, [&](std::span<const std::uint8_t> p) {
    const std::uint16_t s = csum_fold(csum_add(0, p));
    sum += (at & 1) != 0 ? static_cast<std::uint16_t>((s >> 8) | (s << 8)) : s;
    at += p.size();
  });
  return csum_fold(sum) == 0xffff;
}

// A chained frame's payload, ICRC field and ICRC check: the ICRC's masked
// prefix comes from the first segment (it holds every header), the rest of
// the covered bytes from the pieces in order.
template <bool kIpv6>
ParseError chained_payload_and_icrc(std::span<const std::uint8_t> head, FrameTail tail,
                                    std::size_t off, std::size_t icrc_off, std::size_t len,
                                    ParsedPacket& out) {
  out.payload = Payload(head.subspan(off, std::min(len, head.size() - off)), tail, len);
  std::uint8_t icrc[kIcrcSize];
  copy_range(head, tail, icrc_off, kIcrcSize, icrc);
  out.icrc = load_le32(icrc);
  constexpr std::size_t kPrefix = kIpv6 ? kIcrcMaskedPrefixIpv6 : kIcrcMaskedPrefix;
  std::uint32_t crc = icrc_prefix(head.data() + kIpOff, kIpv6);
  for_each_piece(head, tail, kIpOff + kPrefix, icrc_off - kIpOff - kPrefix,
                 [&](std::span<const std::uint8_t> p) { crc = crc32_zlib(crc, p); });
  return crc == out.icrc ? ParseError::kOk : ParseError::kBadIcrc;
}

// Everything from the UDP header on, behind an IP header of kIpSize bytes.
// `end` (Ethernet header + IP packet length, checked against the frame)
// bounds every read. The IP version's checks are template parameters so
// that each version's path compiles to straight-line code.
template <std::size_t kIpSize, bool kIpv6, bool kChained>
ParseError parse_udp_on(std::span<const std::uint8_t> frame, FrameTail tail, std::size_t end,
                        ParsedPacket& out) {
  constexpr std::size_t kUdpOff = kIpOff + kIpSize;
  constexpr std::size_t kBthOff = kUdpOff + UdpHdr::kSize;
  constexpr std::size_t kExtOff = kBthOff + BthHdr::kSize;
  const std::uint8_t* const f = frame.data();
  out.frame_len = static_cast<std::uint32_t>(end);
  if (end < kUdpOff + UdpHdr::kSize) return ParseError::kTruncatedUdp;
  out.udp = UdpHdr::read(f + kUdpOff);
  out.udp_offset = kUdpOff;
  const std::size_t udp_len = end - kUdpOff;
  if (out.udp.length() != udp_len) return ParseError::kBadUdpLength;
  if (out.udp.dst_port() != kRoceV2Port) return ParseError::kNotRoceV2Port;
  if (out.udp.checksum() != 0) {
    if constexpr (kChained) {
      if (!chained_udp_checksum_ok<kIpv6>(frame, tail, kUdpOff, udp_len, out)) {
        return ParseError::kBadUdpChecksum;
      }
    } else {
      const std::span<const std::uint8_t> seg = frame.subspan(kUdpOff, udp_len);
      const bool ok = kIpv6 ? ipv6_checksum_ok(out.ip6.src(), out.ip6.dst(), kIpProtoUdp, seg)
                            : udp_ipv4_checksum_ok(out.ip.src(), out.ip.dst(), seg);
      if (!ok) return ParseError::kBadUdpChecksum;
    }
  }
  if (end < kExtOff) return ParseError::kTruncatedBth;
  out.bth = BthHdr::read(f + kBthOff);
  out.bth_offset = kBthOff;
  if (out.bth.tver() != 0) return ParseError::kBadBthVersion;
  const OpcodeInfo* infop = &opcode_info(out.bth.opcode());
  if (!infop->valid) return ParseError::kUnsupportedOpcode;
  out.info = infop;

  std::size_t off = kExtOff;
  // Most packets of a flow (SEND, WRITE middles, READ response middles)
  // carry no extension header: one test instead of thirteen.
  if (infop->ext != 0) {
    if (!take_ext(*infop, ExtHdr::kDeth, f, end, off, out.deth)) {
      return ParseError::kTruncatedDeth;
    }
    if (!take_ext(*infop, ExtHdr::kDcEth, f, end, off, out.dc_eth)) {
      return ParseError::kTruncatedDcEth;
    }
    if (!take_ext(*infop, ExtHdr::kDcAeth, f, end, off, out.dc_aeth)) {
      return ParseError::kTruncatedDcAeth;
    }
    // A DC packet of a selective-repeat connection (a flag in its DC
    // header) has its opcode's SR form (opcodes.h, dc_sr_opcode_info): the
    // headers after the DC header follow that.
    if (infop->transport == Transport::kDc) [[unlikely]] {
      const bool sr = infop->has(ExtHdr::kDcEth) ? out.dc_eth.sr() : out.dc_aeth.sack();
      infop = out.info = &dc_form_info(out.bth.opcode(), sr);
    }
    const OpcodeInfo& info = *infop;
    if (!take_ext(info, ExtHdr::kFeth, f, end, off, out.feth)) {
      return ParseError::kTruncatedFeth;
    }
    if (!take_ext(info, ExtHdr::kReth, f, end, off, out.reth)) {
      return ParseError::kTruncatedReth;
    }
    if (!take_ext(info, ExtHdr::kAtomicEth, f, end, off, out.atomic_eth)) {
      return ParseError::kTruncatedAtomicEth;
    }
    if (!take_ext(info, ExtHdr::kAeth, f, end, off, out.aeth)) {
      return ParseError::kTruncatedAeth;
    }
    if (!take_ext(info, ExtHdr::kAtomicAckEth, f, end, off, out.atomic_ack_eth)) {
      return ParseError::kTruncatedAtomicAckEth;
    }
    if (!take_ext(info, ExtHdr::kImmDt, f, end, off, out.immdt)) {
      return ParseError::kTruncatedImmDt;
    }
    if (!take_ext(info, ExtHdr::kIeth, f, end, off, out.ieth)) {
      return ParseError::kTruncatedIeth;
    }
    if (!take_ext(info, ExtHdr::kCnp, f, end, off, out.cnp)) {
      return ParseError::kTruncatedCnp;
    }
    if (!take_ext(info, ExtHdr::kSrEth, f, end, off, out.sr_eth)) {
      return ParseError::kTruncatedSrEth;
    }
    if (!take_ext(info, ExtHdr::kSackEth, f, end, off, out.sack_eth)) {
      return ParseError::kTruncatedSackEth;
    }
  }
  const OpcodeInfo& info = *infop;
  if (end - off < kIcrcSize) return ParseError::kTruncatedIcrc;

  const std::size_t icrc_off = end - kIcrcSize;
  const std::size_t padded = icrc_off - off;
  if (!info.payload && padded != 0) return ParseError::kUnexpectedPayload;
  const std::size_t pad = out.bth.pad_count();
  if (pad > padded) return ParseError::kPadExceedsPayload;

  out.payload_offset = static_cast<std::uint32_t>(off);
  out.icrc_offset = static_cast<std::uint32_t>(icrc_off);
  if constexpr (kChained) {
    return chained_payload_and_icrc<kIpv6>(frame, tail, off, icrc_off, padded - pad, out);
  } else {
    out.payload = frame.subspan(off, padded - pad);
    out.icrc = load_le32(f + icrc_off);
    const std::span<const std::uint8_t> covered = frame.subspan(kIpOff, end - kIpOff - kIcrcSize);
    if ((kIpv6 ? compute_icrc_ipv6(covered) : compute_icrc(covered)) != out.icrc) {
      return ParseError::kBadIcrc;
    }
    return ParseError::kOk;
  }
}

template <bool kChained>
ParseError parse_ipv6(std::span<const std::uint8_t> frame, FrameTail tail, std::size_t avail,
                      ParsedPacket& out) {
  out.ipv6 = true;
  // `ip` keeps no stale IPv4 addresses: 0.0.0.0 matches no IPv4 peer, so
  // the IPv4 address checks need not look at `ipv6` (parser.h).
  std::memset(out.ip.raw + 12, 0, 8);
  if (avail < kIpOff + Ipv6Hdr::kSize) return ParseError::kTruncatedIpv6;
  out.ip6 = Ipv6Hdr::read(frame.data() + kIpOff);
  out.ip_offset = kIpOff;
  if (out.ip6.version() != 6) return ParseError::kBadIpVersion;
  const std::size_t payload_len = out.ip6.payload_length();
  if (payload_len > avail - kIpOff - Ipv6Hdr::kSize) return ParseError::kBadIpTotalLength;
  if (out.ip6.next_header() != kIpProtoUdp) return ParseError::kNotUdp;
  return parse_udp_on<Ipv6Hdr::kSize, true, kChained>(frame, tail,
                                                      kIpOff + Ipv6Hdr::kSize + payload_len, out);
}

// `frame` is the first segment, `avail` the bytes of the whole frame; every
// header read lies in `frame` (the caller of the chained form checked that
// it holds kChainedHeadMin bytes).
template <bool kChained>
ParseError parse_frame(std::span<const std::uint8_t> frame, FrameTail tail, std::size_t avail,
                       ParsedPacket& out) {
  const std::uint8_t* const f = frame.data();
  if (avail < EthHdr::kSize) return ParseError::kTruncatedEth;
  out.eth = EthHdr::read(f);
  if (out.eth.ether_type() != kEtherTypeIpv4) {
    if (out.eth.ether_type() == kEtherTypeIpv6) {
      return parse_ipv6<kChained>(frame, tail, avail, out);
    }
    return ParseError::kNotIp;
  }
  out.ipv6 = false;
  if (avail < kIpOff + Ipv4Hdr::kSize) return ParseError::kTruncatedIpv4;
  out.ip = Ipv4Hdr::read(f + kIpOff);
  out.ip_offset = kIpOff;
  if (out.ip.version() != 4) return ParseError::kBadIpVersion;
  if (out.ip.ihl() != 5) return ParseError::kBadIpHeaderLength;
  if (!out.ip.checksum_ok()) return ParseError::kBadIpChecksum;
  const std::size_t ip_len = out.ip.total_length();
  if (ip_len < Ipv4Hdr::kSize || ip_len > avail - kIpOff) {
    return ParseError::kBadIpTotalLength;
  }
  if ((out.ip.flags_frag() & (kIpv4FlagMf | kIpv4FragOffsetMask)) != 0) {
    return ParseError::kIpFragment;
  }
  if (out.ip.protocol() != kIpProtoUdp) return ParseError::kNotUdp;
  return parse_udp_on<Ipv4Hdr::kSize, false, kChained>(frame, tail, kIpOff + ip_len, out);
}

}  // namespace

ParseError parse_roce(std::span<const std::uint8_t> frame, ParsedPacket& out) {
  out.info = nullptr;
  out.payload = {};
  return parse_frame<false>(frame, {}, frame.size(), out);
}

ParseError parse_roce_chained(std::span<const std::uint8_t> head, FrameTail tail,
                              ParsedPacket& out) {
  assert(!tail.empty());
  out.info = nullptr;
  out.payload = {};
  if (head.size() < kChainedHeadMin) return ParseError::kSplitHeaders;
  return parse_frame<true>(head, tail, head.size() + tail_bytes(tail), out);
}

}  // namespace uroce::wire
