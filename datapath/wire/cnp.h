// Congestion Notification Packet body (IBTA Annex A17.9.2). A CNP is a BTH
// with opcode 0x81 (its DestQP is the QP whose traffic was marked, BECN set
// by convention, PSN 0), followed by these 16 reserved bytes and the ICRC.
//
//   0                   1                   2                   3
//   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                                                               |
//  +                    Reserved (16 bytes, zero)                  +
//  |                                                               |
//  +                                                               +
//  |                                                               |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// Receivers ignore the reserved bytes' value (they are still covered by the
// ICRC).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace uroce::wire {

inline constexpr std::uint8_t kCnpOpcode = 0x81;

struct CnpHdr {
  static constexpr std::size_t kSize = 16;
  std::uint8_t raw[kSize]{};

  static CnpHdr read(const std::uint8_t* p) {
    CnpHdr h;
    std::memcpy(h.raw, p, kSize);
    return h;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }
};
static_assert(sizeof(CnpHdr) == CnpHdr::kSize);
static_assert(alignof(CnpHdr) == 1);

}  // namespace uroce::wire
