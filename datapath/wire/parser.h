// Validating RoCEv2 (IPv4) frame parser. Checks every length and field the
// datapath relies on, layer by layer, and returns one distinct error code per
// reason; it never reads outside the given span and never allocates.
//
// Order of checks (the first failure is returned):
//   Ethernet: length, EtherType
//   IPv4: length, version, IHL, header checksum, total length vs frame,
//         fragment, protocol
//   UDP: length vs IP, destination port, non-zero checksum
//   BTH: length, TVer, opcode
//   extension headers in wire order, ICRC room
//   payload allowed, pad <= payload, ICRC
// Bytes after the IPv4 total length (Ethernet minimum-frame padding) are
// ignored. Not covered by anything: the MAC addresses, and BTH byte 4
// (FECN/BECN, masked out of the ICRC by design).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "datapath/wire/aeth.h"
#include "datapath/wire/atomic_ack_eth.h"
#include "datapath/wire/atomic_eth.h"
#include "datapath/wire/bth.h"
#include "datapath/wire/cnp.h"
#include "datapath/wire/deth.h"
#include "datapath/wire/eth.h"
#include "datapath/wire/ieth.h"
#include "datapath/wire/immdt.h"
#include "datapath/wire/ipv4.h"
#include "datapath/wire/opcodes.h"
#include "datapath/wire/reth.h"
#include "datapath/wire/udp.h"

namespace uroce::wire {

enum class ParseError : std::uint8_t {
  kOk = 0,
  kTruncatedEth,       // frame shorter than the Ethernet header
  kNotIpv4,            // EtherType != 0x0800
  kTruncatedIpv4,      // frame shorter than Ethernet + IPv4 header
  kBadIpVersion,       // version != 4
  kBadIpHeaderLength,  // IHL != 5 (options are never sent)
  kBadIpChecksum,
  kBadIpTotalLength,  // < 20, or beyond the end of the frame
  kIpFragment,        // MF set or fragment offset != 0
  kNotUdp,            // protocol != 17
  kTruncatedUdp,      // IP payload shorter than the UDP header
  kBadUdpLength,      // UDP length != IP total length - 20
  kNotRoceV2Port,     // UDP destination port != 4791
  kBadUdpChecksum,    // non-zero and wrong
  kTruncatedBth,
  kBadBthVersion,      // TVer != 0
  kUnsupportedOpcode,  // not in the opcode table (RD, reserved, ...)
  kTruncatedDeth,
  kTruncatedReth,
  kTruncatedAtomicEth,
  kTruncatedAeth,
  kTruncatedAtomicAckEth,
  kTruncatedImmDt,
  kTruncatedIeth,
  kTruncatedCnp,
  kTruncatedIcrc,      // no room for the 4-byte ICRC
  kUnexpectedPayload,  // payload bytes for an opcode that carries none
  kPadExceedsPayload,  // BTH pad count > bytes between headers and ICRC
  kBadIcrc,
};
inline constexpr std::size_t kNumParseErrors = static_cast<std::size_t>(ParseError::kBadIcrc) + 1;
std::string_view parse_error_name(ParseError e);

struct ParsedPacket {
  EthHdr eth;
  Ipv4Hdr ip;
  UdpHdr udp;
  BthHdr bth;
  const OpcodeInfo* info = nullptr;  // set once the opcode is known
  // Only the headers info->ext names are valid.
  DethHdr deth;
  RethHdr reth;
  AtomicEthHdr atomic_eth;
  AethHdr aeth;
  AtomicAckEthHdr atomic_ack_eth;
  ImmDtHdr immdt;
  IethHdr ieth;
  CnpHdr cnp;
  // Payload without pad and ICRC; points into the parsed frame.
  std::span<const std::uint8_t> payload;
  // Offsets from the start of the frame.
  std::uint32_t ip_offset = 0;
  std::uint32_t udp_offset = 0;
  std::uint32_t bth_offset = 0;
  std::uint32_t payload_offset = 0;
  std::uint32_t icrc_offset = 0;
  // Ethernet header + IP total length: the frame without Ethernet padding.
  std::uint32_t frame_len = 0;
  std::uint32_t icrc = 0;

  bool has(ExtHdr h) const { return info != nullptr && info->has(h); }
};

// Parses `frame` (starting at the Ethernet header, FCS stripped). On kOk
// every field of `out` is valid; on error, the layers before the failing one
// are.
ParseError parse_roce(std::span<const std::uint8_t> frame, ParsedPacket& out);

}  // namespace uroce::wire
