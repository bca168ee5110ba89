// Invalidate Extended Transport Header (IBTA Vol.1 section 9.3.7). Carried by
// SEND Last/Only with Invalidate: the R_Key the responder invalidates.
//
//   0                   1                   2                   3
//   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                           R_Key                               |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/byteorder.h"

namespace uroce::wire {

struct IethHdr {
  static constexpr std::size_t kSize = 4;
  std::uint8_t raw[kSize]{};

  static IethHdr read(const std::uint8_t* p) {
    IethHdr h;
    std::memcpy(h.raw, p, kSize);
    return h;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }
  static IethHdr make(std::uint32_t rkey) {
    IethHdr h;
    h.set_rkey(rkey);
    return h;
  }

  std::uint32_t rkey() const { return load_be32(raw); }
  void set_rkey(std::uint32_t v) { store_be32(raw, v); }
};
static_assert(sizeof(IethHdr) == IethHdr::kSize);
static_assert(alignof(IethHdr) == 1);

}  // namespace uroce::wire
