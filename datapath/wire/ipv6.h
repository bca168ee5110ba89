// IPv6 fixed header (RFC 8200 section 3). RoCEv2 over IPv6 (IBTA Annex
// A17.4) carries UDP right after it: the datapath never sends extension
// headers, and the parser takes a Next Header other than UDP (17) for a
// packet that is not RoCEv2.
//
//   0                   1                   2                   3
//   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |Version| Traffic Class |           Flow Label                  |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |         Payload Length        |  Next Header  |   Hop Limit   |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                                                               |
//  +                  Source Address (16 bytes)                    +
//  |                                                               |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                                                               |
//  +               Destination Address (16 bytes)                  +
//  |                                                               |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// The traffic class is DSCP (6 bits) and ECN (2 bits), as IPv4's TOS byte
// (RFC 2474, RFC 3168). Payload Length counts everything after these 40
// bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/addr.h"
#include "datapath/wire/byteorder.h"
#include "datapath/wire/ipv4.h"  // kIpProtoUdp: Next Header values are IP protocol numbers

namespace uroce::wire {

inline constexpr std::uint8_t kIpProtoIcmpv6 = 58;
inline constexpr std::uint32_t kFlowLabelMask = 0xfffff;  // 20 bits

struct Ipv6Hdr {
  static constexpr std::size_t kSize = 40;
  std::uint8_t raw[kSize]{};

  static Ipv6Hdr read(const std::uint8_t* p) {
    Ipv6Hdr h;
    std::memcpy(h.raw, p, kSize);
    return h;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }

  std::uint8_t version() const { return raw[0] >> 4; }
  std::uint8_t traffic_class() const {
    return static_cast<std::uint8_t>((raw[0] << 4) | (raw[1] >> 4));
  }
  std::uint8_t dscp() const { return traffic_class() >> 2; }
  std::uint8_t ecn() const { return traffic_class() & 0x03; }
  std::uint32_t flow_label() const { return load_be32(raw) & kFlowLabelMask; }
  std::uint16_t payload_length() const { return load_be16(raw + 4); }
  std::uint8_t next_header() const { return raw[6]; }
  std::uint8_t hop_limit() const { return raw[7]; }
  Ipv6Addr src() const { return addr_at(8); }
  Ipv6Addr dst() const { return addr_at(24); }

  // Version, traffic class and flow label share the first word.
  void set_version_tc_flow(std::uint8_t version, std::uint8_t tc, std::uint32_t flow) {
    store_be32(raw,
               std::uint32_t{version} << 28 | std::uint32_t{tc} << 20 | (flow & kFlowLabelMask));
  }
  void set_payload_length(std::uint16_t v) { store_be16(raw + 4, v); }
  void set_next_header(std::uint8_t v) { raw[6] = v; }
  void set_hop_limit(std::uint8_t v) { raw[7] = v; }
  void set_src(const Ipv6Addr& a) { std::memcpy(raw + 8, a.b.data(), 16); }
  void set_dst(const Ipv6Addr& a) { std::memcpy(raw + 24, a.b.data(), 16); }

 private:
  Ipv6Addr addr_at(std::size_t off) const {
    Ipv6Addr a;
    std::memcpy(a.b.data(), raw + off, 16);
    return a;
  }
};
static_assert(sizeof(Ipv6Hdr) == Ipv6Hdr::kSize);
static_assert(alignof(Ipv6Hdr) == 1);

}  // namespace uroce::wire
