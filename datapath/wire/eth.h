// Ethernet II header (IEEE 802.3 clause 3.2, DIX framing).
//
//   0                   1                   2                   3
//   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                 Destination MAC (6 bytes)                     |
//  +                               +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                               |                               |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+                               +
//  |                   Source MAC (6 bytes)                        |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |          EtherType            |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// No VLAN tag: the datapath sends untagged frames (priority rides in DSCP).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/addr.h"
#include "datapath/wire/byteorder.h"

namespace uroce::wire {

inline constexpr std::uint16_t kEtherTypeIpv4 = 0x0800;
inline constexpr std::uint16_t kEtherTypeArp = 0x0806;
inline constexpr std::uint16_t kEtherTypeIpv6 = 0x86dd;
inline constexpr std::uint16_t kEtherTypeMacControl = 0x8808;  // PAUSE, PFC
// What an Ethernet link carries per frame beyond the frame the port is
// handed: preamble (7) and start delimiter (1), FCS (4), the minimum
// inter-frame gap (12). Time on the wire is (frame + this) x 8 / rate.
inline constexpr std::uint32_t kEthWireOverheadBytes = 24;

struct EthHdr {
  static constexpr std::size_t kSize = 14;
  std::uint8_t raw[kSize]{};

  static EthHdr read(const std::uint8_t* p) {
    EthHdr h;
    std::memcpy(h.raw, p, kSize);
    return h;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }

  MacAddr dst() const { return mac_at(0); }
  MacAddr src() const { return mac_at(6); }
  std::uint16_t ether_type() const { return load_be16(raw + 12); }

  void set_dst(const MacAddr& m) { std::memcpy(raw, m.b.data(), 6); }
  void set_src(const MacAddr& m) { std::memcpy(raw + 6, m.b.data(), 6); }
  void set_ether_type(std::uint16_t t) { store_be16(raw + 12, t); }

 private:
  MacAddr mac_at(std::size_t off) const {
    MacAddr m;
    std::memcpy(m.b.data(), raw + off, 6);
    return m;
  }
};
static_assert(sizeof(EthHdr) == EthHdr::kSize);
static_assert(alignof(EthHdr) == 1);

}  // namespace uroce::wire
