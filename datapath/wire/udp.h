// UDP header (RFC 768). RoCEv2 runs on destination port 4791 (IBTA Annex
// A17.4.2); senders put 0 in the checksum, receivers verify it when non-zero.
//
//   0                   1                   2                   3
//   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |          Source Port          |       Destination Port        |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |            Length             |           Checksum            |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/byteorder.h"

namespace uroce::wire {

inline constexpr std::uint16_t kRoceV2Port = 4791;

struct UdpHdr {
  static constexpr std::size_t kSize = 8;
  std::uint8_t raw[kSize]{};

  static UdpHdr read(const std::uint8_t* p) {
    UdpHdr h;
    std::memcpy(h.raw, p, kSize);
    return h;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }

  std::uint16_t src_port() const { return load_be16(raw); }
  std::uint16_t dst_port() const { return load_be16(raw + 2); }
  std::uint16_t length() const { return load_be16(raw + 4); }
  std::uint16_t checksum() const { return load_be16(raw + 6); }

  void set_src_port(std::uint16_t v) { store_be16(raw, v); }
  void set_dst_port(std::uint16_t v) { store_be16(raw + 2, v); }
  void set_length(std::uint16_t v) { store_be16(raw + 4, v); }
  void set_checksum(std::uint16_t v) { store_be16(raw + 6, v); }
};
static_assert(sizeof(UdpHdr) == UdpHdr::kSize);
static_assert(alignof(UdpHdr) == 1);

}  // namespace uroce::wire
