// Source/Target Link-Layer Address option of neighbour discovery (RFC 4861
// section 4.6.1) for Ethernet (RFC 2464 section 6): 8 bytes.
//
//   0                   1                   2                   3
//   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |     Type      |    Length     |    Link-Layer Address ...
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// Type 1 (source, in a solicitation) or 2 (target, in an advertisement);
// Length in units of 8 bytes (1 for Ethernet). Every option starts with type
// and length; a length of 0 is invalid and makes the whole message invalid
// (RFC 4861 4.6).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/addr.h"

namespace uroce::wire {

inline constexpr std::uint8_t kNdOptSourceLla = 1;
inline constexpr std::uint8_t kNdOptTargetLla = 2;

struct NdLlaOption {
  static constexpr std::size_t kSize = 8;
  std::uint8_t raw[kSize]{};

  static NdLlaOption read(const std::uint8_t* p) {
    NdLlaOption o;
    std::memcpy(o.raw, p, kSize);
    return o;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }

  std::uint8_t type() const { return raw[0]; }
  std::uint8_t length() const { return raw[1]; }  // in 8-byte units
  MacAddr mac() const {
    MacAddr m;
    std::memcpy(m.b.data(), raw + 2, 6);
    return m;
  }

  static NdLlaOption make(std::uint8_t type, const MacAddr& mac) {
    NdLlaOption o;
    o.raw[0] = type;
    o.raw[1] = 1;
    std::memcpy(o.raw + 2, mac.b.data(), 6);
    return o;
  }
};
static_assert(sizeof(NdLlaOption) == NdLlaOption::kSize);
static_assert(alignof(NdLlaOption) == 1);

}  // namespace uroce::wire
