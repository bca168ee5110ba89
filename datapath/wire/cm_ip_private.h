// The IP addressing header at the start of a REQ's private data, and the
// Service ID of an IP-addressed connection (IBTA Vol.1 Annex A11, "RDMA IP
// CM Service"): how an RDMA CM names its listener by IP address and port.
//
//  byte  field (bits, most significant first)
//     0  MajV (4) | MinV (4)          both 0
//     1  IPV (4) | reserved (4)       4 or 6
//     2  Source Port (16)
//     4  Source IP Address (128)      IPv4: 12 zero bytes, then a.b.c.d
//    20  Destination IP Address (128) likewise
//    36  Consumer Private Data (56 bytes of the REQ's 92)
//
// Service ID: 0x0000_0000_01 | protocol (8) | destination port (16); the
// protocol is 0x06 for RDMA_PS_TCP (RC) and 0x11 for RDMA_PS_UDP (UD).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/byteorder.h"
#include "datapath/wire/ipv4.h"

namespace uroce::wire {

inline constexpr std::uint64_t kIpServiceIdBase = 0x0000000001000000ull;
inline constexpr std::uint64_t kIpServiceIdMask = 0xffffffffff000000ull;
inline constexpr std::uint8_t kIpProtoTcp = 0x06;  // UDP: kIpProtoUdp (ipv4.h)

inline std::uint64_t ip_service_id(std::uint8_t proto, std::uint16_t port) {
  return kIpServiceIdBase | (std::uint64_t{proto} << 16) | port;
}
// True when `sid` is an IP-addressed Service ID; then *proto and *port.
inline bool parse_ip_service_id(std::uint64_t sid, std::uint8_t* proto, std::uint16_t* port) {
  if ((sid & kIpServiceIdMask) != kIpServiceIdBase) return false;
  *proto = static_cast<std::uint8_t>(sid >> 16);
  *port = static_cast<std::uint16_t>(sid);
  return true;
}

struct CmIpPrivate {
  static constexpr std::size_t kSize = 36;
  std::uint8_t raw[kSize]{};

  static CmIpPrivate read(const std::uint8_t* p) {
    CmIpPrivate h;
    std::memcpy(h.raw, p, kSize);
    return h;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }
  static CmIpPrivate make_v4(std::uint16_t src_port, std::uint32_t src, std::uint32_t dst) {
    CmIpPrivate h;
    h.raw[1] = 4 << 4;
    store_be16(h.raw + 2, src_port);
    store_be32(h.raw + 16, src);
    store_be32(h.raw + 32, dst);
    return h;
  }

  std::uint8_t major_version() const { return raw[0] >> 4; }
  std::uint8_t minor_version() const { return raw[0] & 0x0f; }
  std::uint8_t ip_version() const { return raw[1] >> 4; }
  std::uint16_t src_port() const { return load_be16(raw + 2); }
  // The IPv4 addresses: the last 4 bytes of each 16-byte field.
  std::uint32_t src_v4() const { return load_be32(raw + 16); }
  std::uint32_t dst_v4() const { return load_be32(raw + 32); }
};
static_assert(sizeof(CmIpPrivate) == CmIpPrivate::kSize);

}  // namespace uroce::wire
