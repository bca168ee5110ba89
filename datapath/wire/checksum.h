// Internet checksum (RFC 1071), the UDP-over-IPv4 checksum (RFC 768):
// ones'-complement sum of 16-bit big-endian words over the pseudo header
// (source, destination, zero, protocol 17, UDP length) and the UDP segment,
// and the IPv6 upper-layer checksum (RFC 8200 section 8.1: pseudo header of
// source, destination, 32-bit length, 24 zero bits and the next header) that
// UDP and ICMPv6 (RFC 4443 2.3) use over IPv6.
//
// RoCEv2 senders put 0 in the UDP checksum ("not computed"), over IPv6 as
// over IPv4 (Linux rxe does both, and its IPv6 receive socket accepts a zero
// checksum); a receiver must verify a non-zero one. A computed UDP value of
// 0 is sent as 0xffff.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "datapath/wire/addr.h"
#include "datapath/wire/byteorder.h"
#include "datapath/wire/ipv4.h"
#include "datapath/wire/ipv6.h"

namespace uroce::wire {

// Adds `data` to a running sum. Only the last piece of a chain may have odd
// length (it is padded with a zero byte, RFC 1071).
inline std::uint64_t csum_add(std::uint64_t sum, std::span<const std::uint8_t> data) {
  const std::uint8_t* p = data.data();
  std::size_t n = data.size();
  for (; n >= 2; p += 2, n -= 2) sum += load_be16(p);
  if (n == 1) sum += std::uint64_t{p[0]} << 8;
  return sum;
}

inline std::uint16_t csum_fold(std::uint64_t sum) {
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<std::uint16_t>(sum);
}

inline std::uint64_t udp_pseudo_sum(Ipv4Addr src, Ipv4Addr dst, std::uint16_t udp_len) {
  return std::uint64_t{src.v >> 16} + (src.v & 0xffff) + (dst.v >> 16) + (dst.v & 0xffff) +
         kIpProtoUdp + udp_len;
}

// Checksum to store for `udp_segment` (UDP header with checksum field 0,
// followed by the data).
inline std::uint16_t udp_ipv4_checksum(Ipv4Addr src, Ipv4Addr dst,
                                       std::span<const std::uint8_t> udp_segment) {
  const std::uint64_t sum =
      csum_add(udp_pseudo_sum(src, dst, static_cast<std::uint16_t>(udp_segment.size())),
               udp_segment);
  const std::uint16_t c = static_cast<std::uint16_t>(~csum_fold(sum));
  return c == 0 ? 0xffff : c;
}

// True when the segment, checksum field included, sums to all ones.
inline bool udp_ipv4_checksum_ok(Ipv4Addr src, Ipv4Addr dst,
                                 std::span<const std::uint8_t> udp_segment) {
  const std::uint64_t sum =
      csum_add(udp_pseudo_sum(src, dst, static_cast<std::uint16_t>(udp_segment.size())),
               udp_segment);
  return csum_fold(sum) == 0xffff;
}

inline std::uint64_t ipv6_pseudo_sum(const Ipv6Addr& src, const Ipv6Addr& dst, std::uint32_t len,
                                     std::uint8_t next_header) {
  std::uint64_t sum = csum_add(0, src.b);
  sum = csum_add(sum, dst.b);
  return sum + (len >> 16) + (len & 0xffff) + next_header;
}

// Ones'-complement checksum of `segment` (its checksum field zero) under the
// IPv6 pseudo header; 0 is returned as is.
inline std::uint16_t ipv6_checksum(const Ipv6Addr& src, const Ipv6Addr& dst,
                                   std::uint8_t next_header,
                                   std::span<const std::uint8_t> segment) {
  const std::uint64_t sum =
      csum_add(ipv6_pseudo_sum(src, dst, static_cast<std::uint32_t>(segment.size()), next_header),
               segment);
  return static_cast<std::uint16_t>(~csum_fold(sum));
}

// True when `segment`, checksum field included, sums to all ones.
inline bool ipv6_checksum_ok(const Ipv6Addr& src, const Ipv6Addr& dst, std::uint8_t next_header,
                             std::span<const std::uint8_t> segment) {
  const std::uint64_t sum =
      csum_add(ipv6_pseudo_sum(src, dst, static_cast<std::uint32_t>(segment.size()), next_header),
               segment);
  return csum_fold(sum) == 0xffff;
}

// UDP over IPv6: a computed 0 is sent as 0xffff (0 means "none").
inline std::uint16_t udp_ipv6_checksum(const Ipv6Addr& src, const Ipv6Addr& dst,
                                       std::span<const std::uint8_t> udp_segment) {
  const std::uint16_t c = ipv6_checksum(src, dst, kIpProtoUdp, udp_segment);
  return c == 0 ? 0xffff : c;
}

}  // namespace uroce::wire
