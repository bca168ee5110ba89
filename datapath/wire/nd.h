// Neighbor Solicitation and Neighbor Advertisement (RFC 4861 sections 4.3
// and 4.4), the ICMPv6 messages of IPv6 neighbour discovery: ARP's
// counterpart. They share one layout; the flags word is reserved (zero) in a
// solicitation and carries R, S, O in an advertisement.
//
//   0                   1                   2                   3
//   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |     Type      |     Code      |          Checksum             |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |R|S|O|                     Reserved                            |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                                                               |
//  +                   Target Address (16 bytes)                   +
//  |                                                               |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |   Options ...
//  +-+-+-+-+-+-+-+-+-+-+-+-+-
//
// Type 135 solicitation, 136 advertisement; code 0. The checksum is the
// ICMPv6 one (RFC 4443 2.3, checksum.h: ipv6_checksum with next header 58).
// Both are sent with hop limit 255 and accepted only with it (RFC 4861
// 7.1.1), so that they cannot come from off-link.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/addr.h"
#include "datapath/wire/byteorder.h"

namespace uroce::wire {

inline constexpr std::uint8_t kIcmpv6NeighborSolicit = 135;
inline constexpr std::uint8_t kIcmpv6NeighborAdvert = 136;
inline constexpr std::uint8_t kNdHopLimit = 255;
inline constexpr std::uint32_t kNdFlagRouter = 0x80000000u;
inline constexpr std::uint32_t kNdFlagSolicited = 0x40000000u;
inline constexpr std::uint32_t kNdFlagOverride = 0x20000000u;

struct NdHdr {
  static constexpr std::size_t kSize = 24;
  std::uint8_t raw[kSize]{};

  static NdHdr read(const std::uint8_t* p) {
    NdHdr h;
    std::memcpy(h.raw, p, kSize);
    return h;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }

  std::uint8_t type() const { return raw[0]; }
  std::uint8_t code() const { return raw[1]; }
  std::uint16_t checksum() const { return load_be16(raw + 2); }
  std::uint32_t flags() const { return load_be32(raw + 4); }
  bool solicited() const { return (flags() & kNdFlagSolicited) != 0; }
  bool override_flag() const { return (flags() & kNdFlagOverride) != 0; }
  Ipv6Addr target() const {
    Ipv6Addr a;
    std::memcpy(a.b.data(), raw + 8, 16);
    return a;
  }

  void set_type(std::uint8_t v) { raw[0] = v; }
  void set_code(std::uint8_t v) { raw[1] = v; }
  void set_checksum(std::uint16_t v) { store_be16(raw + 2, v); }
  void set_flags(std::uint32_t v) { store_be32(raw + 4, v); }
  void set_target(const Ipv6Addr& a) { std::memcpy(raw + 8, a.b.data(), 16); }
};
static_assert(sizeof(NdHdr) == NdHdr::kSize);
static_assert(alignof(NdHdr) == 1);

}  // namespace uroce::wire
