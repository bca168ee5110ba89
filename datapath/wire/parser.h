// Validating RoCEv2 frame parser, over IPv4 and IPv6. Checks every length and field the
// datapath relies on, layer by layer, and returns one distinct error code per
// reason; it never reads outside the given span and never allocates.
//
// Order of checks (the first failure is returned):
//   Ethernet: length, EtherType (0x0800 IPv4 or 0x86DD IPv6)
//   IPv4: length, version, IHL, header checksum, total length vs frame,
//         fragment, protocol
//   IPv6: length, version, payload length vs frame, next header (UDP only:
//         an extension header, a fragment header included, is NotUdp)
//   UDP: length vs IP, destination port, non-zero checksum
//   BTH: length, TVer, opcode
//   extension headers in wire order, ICRC room
//   payload allowed, pad <= payload, ICRC
// A chained frame (a first segment and a tail, payload.h) is checked the
// same way; its headers must all lie in the first segment, which holds at
// least kChainedHeadMin bytes (else kSplitHeaders, before anything else).
// Bytes after the IP packet's length (Ethernet minimum-frame padding) are
// ignored. Not covered by anything: the MAC addresses, and BTH byte 4
// (FECN/BECN, masked out of the ICRC by design).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "datapath/wire/aeth.h"
#include "datapath/wire/atomic_ack_eth.h"
#include "datapath/wire/atomic_eth.h"
#include "datapath/wire/bth.h"
#include "datapath/wire/cnp.h"
#include "datapath/wire/dc_aeth.h"
#include "datapath/wire/dc_eth.h"
#include "datapath/wire/deth.h"
#include "datapath/wire/eth.h"
#include "datapath/wire/feth.h"
#include "datapath/wire/ieth.h"
#include "datapath/wire/immdt.h"
#include "datapath/wire/ipv4.h"
#include "datapath/wire/ipv6.h"
#include "datapath/wire/opcodes.h"
#include "datapath/wire/payload.h"
#include "datapath/wire/reth.h"
#include "datapath/wire/sr_eth.h"
#include "datapath/wire/sr_sack_eth.h"
#include "datapath/wire/udp.h"

namespace uroce::wire {

enum class ParseError : std::uint8_t {
  kOk = 0,
  kTruncatedEth,       // frame shorter than the Ethernet header
  kNotIp,              // EtherType neither 0x0800 nor 0x86DD
  kTruncatedIpv4,      // frame shorter than Ethernet + IPv4 header
  kTruncatedIpv6,      // frame shorter than Ethernet + IPv6 header
  kBadIpVersion,       // version != 4 (IPv4 EtherType) or != 6 (IPv6)
  kBadIpHeaderLength,  // IHL != 5 (options are never sent)
  kBadIpChecksum,
  kBadIpTotalLength,  // IPv4 < 20, or the IP packet ends past the frame
  kIpFragment,        // MF set or fragment offset != 0
  kNotUdp,            // protocol (IPv4) or next header (IPv6) != 17
  kTruncatedUdp,      // IP payload shorter than the UDP header
  kBadUdpLength,      // UDP length != the IP payload's length
  kNotRoceV2Port,     // UDP destination port != 4791
  kBadUdpChecksum,    // non-zero and wrong
  kTruncatedBth,
  kBadBthVersion,      // TVer != 0
  kUnsupportedOpcode,  // not in the opcode table (RD, reserved, ...)
  kTruncatedDeth,
  kTruncatedDcEth,
  kTruncatedDcAeth,
  kTruncatedFeth,
  kTruncatedReth,
  kTruncatedAtomicEth,
  kTruncatedAeth,
  kTruncatedAtomicAckEth,
  kTruncatedImmDt,
  kTruncatedIeth,
  kTruncatedCnp,
  kTruncatedSrEth,
  kTruncatedSackEth,
  kTruncatedIcrc,      // no room for the 4-byte ICRC
  kUnexpectedPayload,  // payload bytes for an opcode that carries none
  kPadExceedsPayload,  // BTH pad count > bytes between headers and ICRC
  kBadIcrc,
  kSplitHeaders,  // a chained frame whose first segment is shorter than kChainedHeadMin
};
inline constexpr std::size_t kNumParseErrors =
    static_cast<std::size_t>(ParseError::kSplitHeaders) + 1;

// The longest header stack a RoCEv2 frame can carry: Ethernet, IPv6, UDP,
// BTH and every extension header at once (no opcode carries them all, so
// this bounds any). A chained frame's first segment must hold this much.
inline constexpr std::size_t kChainedHeadMin =
    EthHdr::kSize + Ipv6Hdr::kSize + UdpHdr::kSize + BthHdr::kSize + DethHdr::kSize +
    DcEthHdr::kSize + DcAethHdr::kSize + FethHdr::kSize + RethHdr::kSize + AtomicEthHdr::kSize +
    AethHdr::kSize + AtomicAckEthHdr::kSize + ImmDtHdr::kSize + IethHdr::kSize + CnpHdr::kSize +
    SrEthHdr::kSize + SrSackEthHdr::kSize;
std::string_view parse_error_name(ParseError e);

struct ParsedPacket {
  EthHdr eth;
  // `ip` is valid when !ipv6, `ip6` when ipv6. For an IPv6 packet the
  // addresses in `ip` are 0.0.0.0, so an IPv4 address check fails on it
  // without looking at `ipv6`.
  Ipv4Hdr ip;
  Ipv6Hdr ip6;
  bool ipv6 = false;
  UdpHdr udp;
  BthHdr bth;
  const OpcodeInfo* info = nullptr;  // set once the opcode is known
  // Only the headers info->ext names are valid.
  DethHdr deth;
  DcEthHdr dc_eth;
  DcAethHdr dc_aeth;
  FethHdr feth;
  RethHdr reth;
  AtomicEthHdr atomic_eth;
  AethHdr aeth;
  AtomicAckEthHdr atomic_ack_eth;
  ImmDtHdr immdt;
  IethHdr ieth;
  CnpHdr cnp;
  SrEthHdr sr_eth;
  SrSackEthHdr sack_eth;
  // Payload without pad and ICRC; points into the parsed frame (into its
  // segments when it was chained).
  Payload payload;
  // Offsets from the start of the frame (over all of a chained frame's
  // segments).
  std::uint32_t ip_offset = 0;
  std::uint32_t udp_offset = 0;
  std::uint32_t bth_offset = 0;
  std::uint32_t payload_offset = 0;
  std::uint32_t icrc_offset = 0;
  // Ethernet header + IP total length: the frame without Ethernet padding.
  std::uint32_t frame_len = 0;
  std::uint32_t icrc = 0;

  bool has(ExtHdr h) const { return info != nullptr && info->has(h); }
  // DSCP of the IPv4 TOS or the IPv6 traffic class.
  std::uint8_t dscp() const { return ipv6 ? ip6.dscp() : ip.dscp(); }
  // Its ECN codepoint (kEcnCe: a switch marked it).
  std::uint8_t ecn() const { return ipv6 ? ip6.ecn() : ip.ecn(); }
};

// Parses `frame` (starting at the Ethernet header, FCS stripped). On kOk
// every field of `out` is valid; on error, the layers before the failing one
// are.
ParseError parse_roce(std::span<const std::uint8_t> frame, ParsedPacket& out);
// The same for a frame whose first segment is `head` and whose later
// segments are `tail` (non-empty).
ParseError parse_roce_chained(std::span<const std::uint8_t> head, FrameTail tail,
                              ParsedPacket& out);
// Either of the two, by whether `tail` is empty (inline: a frame in one
// buffer costs one test more than the call above).
inline ParseError parse_roce(std::span<const std::uint8_t> head, FrameTail tail,
                             ParsedPacket& out) {
  if (tail.empty()) [[likely]]
    return parse_roce(head, out);
  return parse_roce_chained(head, tail, out);
}

// The offset of the BTH in a frame that looks like RoCEv2 (Ethernet, then
// IPv4 without options or IPv6 without extension headers, then UDP to
// 4791, with room for a BTH), read from the first segment `f` and nothing
// else checked; 0 when it does not look so (parse_roce then says why).
inline std::size_t peek_bth_offset(std::span<const std::uint8_t> f) {
  constexpr std::size_t e = EthHdr::kSize;
  std::size_t udp = 0;
  if (f.size() < e) return 0;
  const std::uint16_t type = load_be16(f.data() + 12);
  if (type == kEtherTypeIpv4) {
    // Version 4, IHL 5, protocol at byte 9.
    if (f.size() < e + Ipv4Hdr::kSize || f[e] != 0x45 || f[e + 9] != kIpProtoUdp) return 0;
    udp = e + Ipv4Hdr::kSize;
  } else if (type == kEtherTypeIpv6) {
    // Next Header at byte 6.
    if (f.size() < e + Ipv6Hdr::kSize || f[e + 6] != kIpProtoUdp) return 0;
    udp = e + Ipv6Hdr::kSize;
  } else {
    return 0;
  }
  if (f.size() < udp + UdpHdr::kSize + BthHdr::kSize ||
      load_be16(f.data() + udp + 2) != kRoceV2Port) {
    return 0;
  }
  return udp + UdpHdr::kSize;
}

// The BTH destination QP of a frame that looks like RoCEv2
// (peek_bth_offset); kNoDestQp when it does not look so. For sending a
// frame to the engine lcore that owns its QP before anything is checked:
// the owner parses it (docs/engine.md "Several lcores").
inline constexpr std::uint32_t kNoDestQp = 0xffffffffu;
inline std::uint32_t peek_dest_qp(std::span<const std::uint8_t> f) {
  const std::size_t bth = peek_bth_offset(f);
  if (bth == 0) return kNoDestQp;
  return load_be24(f.data() + bth + 5) & kQpnMask;
}

// Whether `f` looks like an RC ACKNOWLEDGE that is an ACK (not a NAK or an
// RNR NAK): BTH opcode RC_ACKNOWLEDGE and an AETH of type ACK after it,
// nothing else checked. For a sender deciding whether a frame may wait a
// little (engine/ack_hold.h).
inline bool peek_plain_ack(std::span<const std::uint8_t> f) {
  const std::size_t bth = peek_bth_offset(f);
  if (bth == 0 || f.size() < bth + BthHdr::kSize + AethHdr::kSize) return false;
  return f[bth] == op::kRcAck && AethHdr::read(f.data() + bth + BthHdr::kSize).is_ack();
}

// Whether RoCEv2 frames `a` and `b` (peek_bth_offset) go to the same QP:
// the same destination MAC, IP address and BTH destination QP. For
// replacing an ACK by a newer one of the same connection
// (engine/ack_hold.h).
inline bool same_destination_qp(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
  const std::size_t bth = peek_bth_offset(a);
  if (bth == 0 || peek_bth_offset(b) != bth) return false;
  // The IP destination: IPv4's at byte 16 of its header, IPv6's at 24.
  const bool v4 = bth == EthHdr::kSize + Ipv4Hdr::kSize + UdpHdr::kSize;
  const std::size_t ip = EthHdr::kSize + (v4 ? 16 : 24);
  const std::size_t ip_len = v4 ? 4 : 16;
  return std::memcmp(a.data(), b.data(), 6) == 0 &&
         std::memcmp(a.data() + ip, b.data() + ip, ip_len) == 0 &&
         (load_be24(a.data() + bth + 5) & kQpnMask) == (load_be24(b.data() + bth + 5) & kQpnMask);
}

// Whether `f` is IPv6 carrying ICMPv6 right after the fixed header, as
// neighbour discovery does (no extension headers: RFC 4861 section 7.1);
// nothing else checked. For sending ND to the engine lcore that resolves
// neighbours before anything is parsed.
inline bool peek_icmpv6(std::span<const std::uint8_t> f) {
  constexpr std::size_t e = EthHdr::kSize;
  return f.size() >= e + Ipv6Hdr::kSize && load_be16(f.data() + 12) == kEtherTypeIpv6 &&
         f[e + 6] == kIpProtoIcmpv6;
}

}  // namespace uroce::wire
