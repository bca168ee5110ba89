// RoCEv2 Invariant CRC (IBTA Vol.1 section 7.8.1 and Annex A17.4.2).
//
// The ICRC is CRC-32 (the zlib/IEEE 802.3 polynomial, reflected, initial
// value and final XOR all ones) over:
//   8 bytes of 0xff                      (stands in for the IB LRH)
//   IPv4 header, TOS, TTL and header checksum replaced by all ones, or
//   IPv6 header, traffic class, flow label and hop limit replaced by all
//   ones (the version nibble and everything else kept)
//   UDP header, checksum replaced by all ones
//   BTH, byte 4 (FECN/BECN/resv6) replaced by all ones
//   everything after the BTH up to the ICRC (ext headers, payload, pad)
// and is appended after the pad bytes, least significant byte first.
// The masked fields are those a router or ECN marker may rewrite in flight.
//
// Computed by ISA-L's CRC-32 (crc32_zlib). A packet of up to kIcrcOneCall
// bytes is copied, masked, onto the stack and taken in one call (a call's
// fixed cost, not the bytes, dominates a small packet's CRC); a longer one
// as a masked stack copy of the first 40 bytes (60 over IPv6) and then the
// rest of the packet in place: no copy of the payload, no allocation. A
// sender can take it in pieces (icrc_prefix, then crc32_copy.h's crc32_copy
// as it gathers the payload into the frame).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "datapath/wire/bth.h"
#include "datapath/wire/ipv4.h"
#include "datapath/wire/ipv6.h"
#include "datapath/wire/udp.h"

namespace uroce::wire {

inline constexpr std::size_t kIcrcSize = 4;
// Bytes at the start of the IP packet that the ICRC masks: IPv4 + UDP + BTH.
inline constexpr std::size_t kIcrcMaskedPrefix = Ipv4Hdr::kSize + UdpHdr::kSize + BthHdr::kSize;
// The same over IPv6: IPv6 + UDP + BTH.
inline constexpr std::size_t kIcrcMaskedPrefixIpv6 = Ipv6Hdr::kSize + UdpHdr::kSize + BthHdr::kSize;

// Packets of up to this many bytes (from the IP header to the ICRC) have
// their ICRC taken in one ISA-L call over a masked copy; it covers every
// frame whose payload is below kCrc32CopyFuseMin (crc32_copy.h), which
// write_roce and finish_roce (builder.h) checksum whole.
inline constexpr std::size_t kIcrcOneCall = 384;

// CRC-32 as zlib's crc32(): `crc` is the value returned for the data before
// (0 to start), so calls chain over consecutive pieces.
std::uint32_t crc32_zlib(std::uint32_t crc, std::span<const std::uint8_t> data);

// ICRC of an IPv4 (IHL 5) RoCEv2 packet. `ip_packet` starts at the IPv4
// header and ends right before the ICRC. Should be at least kIcrcMaskedPrefix
// long; shorter input is accepted (the result is then meaningless) so that a
// caller can never make it read outside the span.
std::uint32_t compute_icrc(std::span<const std::uint8_t> ip_packet);

// The same for an IPv6 RoCEv2 packet (no extension headers): `ip_packet`
// starts at the IPv6 header; shorter than kIcrcMaskedPrefixIpv6 gives a
// meaningless result, never an out-of-bounds read.
std::uint32_t compute_icrc_ipv6(std::span<const std::uint8_t> ip_packet);

// The ICRC's running value over the LRH stand-in and the masked IP, UDP and
// BTH headers at the start of `ip_packet`, which must hold at least
// kIcrcMaskedPrefix bytes (kIcrcMaskedPrefixIpv6 when ipv6). Continued with
// crc32_zlib or crc32_copy (crc32_copy.h) over the rest of the packet up to
// the ICRC, in order, it gives compute_icrc's or compute_icrc_ipv6's value.
std::uint32_t icrc_prefix(const std::uint8_t* ip_packet, bool ipv6);

// The next three take IPv4 or IPv6 packets, told apart by the version
// nibble of the first byte (6: IPv6, anything else: IPv4).
// `ip_packet` includes the 4 trailing ICRC bytes.
std::uint32_t read_icrc(std::span<const std::uint8_t> ip_packet);
bool icrc_ok(std::span<const std::uint8_t> ip_packet);
// Computes and stores the ICRC into the last 4 bytes of `ip_packet`.
void write_icrc(std::span<std::uint8_t> ip_packet);

}  // namespace uroce::wire
