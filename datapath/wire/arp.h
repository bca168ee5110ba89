// ARP packet for Ethernet/IPv4 (RFC 826), the only form the datapath speaks.
//
//   0                   1                   2                   3
//   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |     Hardware type (1)         |     Protocol type (0x0800)    |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |  HLEN (6)     |   PLEN (4)    |          Operation            |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                 Sender hardware address (6)                   |
//  +                               +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                               |  Sender protocol address (4)  |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+                               +
//  |                               |                               |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+                               +
//  |                 Target hardware address (6)                   |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                  Target protocol address (4)                  |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/addr.h"
#include "datapath/wire/byteorder.h"

namespace uroce::wire {

inline constexpr std::uint16_t kArpHwEthernet = 1;
inline constexpr std::uint16_t kArpOpRequest = 1;
inline constexpr std::uint16_t kArpOpReply = 2;

struct ArpHdr {
  static constexpr std::size_t kSize = 28;
  std::uint8_t raw[kSize]{};

  static ArpHdr read(const std::uint8_t* p) {
    ArpHdr h;
    std::memcpy(h.raw, p, kSize);
    return h;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }

  std::uint16_t hw_type() const { return load_be16(raw); }
  std::uint16_t proto_type() const { return load_be16(raw + 2); }
  std::uint8_t hw_len() const { return raw[4]; }
  std::uint8_t proto_len() const { return raw[5]; }
  std::uint16_t op() const { return load_be16(raw + 6); }
  MacAddr sender_mac() const { return mac_at(8); }
  Ipv4Addr sender_ip() const { return Ipv4Addr{load_be32(raw + 14)}; }
  MacAddr target_mac() const { return mac_at(18); }
  Ipv4Addr target_ip() const { return Ipv4Addr{load_be32(raw + 24)}; }

  // True for the Ethernet/IPv4 form (htype 1, ptype 0x0800, 6/4 lengths).
  bool is_eth_ipv4() const {
    return hw_type() == kArpHwEthernet && proto_type() == 0x0800 && hw_len() == 6 &&
           proto_len() == 4;
  }

  // Fills the fixed Ethernet/IPv4 part and the given operation.
  void init_eth_ipv4(std::uint16_t op) {
    store_be16(raw, kArpHwEthernet);
    store_be16(raw + 2, 0x0800);
    raw[4] = 6;
    raw[5] = 4;
    store_be16(raw + 6, op);
  }
  void set_sender(const MacAddr& m, Ipv4Addr ip) {
    std::memcpy(raw + 8, m.b.data(), 6);
    store_be32(raw + 14, ip.v);
  }
  void set_target(const MacAddr& m, Ipv4Addr ip) {
    std::memcpy(raw + 18, m.b.data(), 6);
    store_be32(raw + 24, ip.v);
  }

 private:
  MacAddr mac_at(std::size_t off) const {
    MacAddr m;
    std::memcpy(m.b.data(), raw + off, 6);
    return m;
  }
};
static_assert(sizeof(ArpHdr) == ArpHdr::kSize);
static_assert(alignof(ArpHdr) == 1);

}  // namespace uroce::wire
