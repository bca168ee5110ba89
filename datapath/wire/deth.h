// Datagram Extended Transport Header (IBTA Vol.1 section 9.3.4). Carried by
// every UD packet.
//
//   0                   1                   2                   3
//   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                          Queue Key                            |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |   Reserved    |            Source QP (24 bits)                |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/byteorder.h"

namespace uroce::wire {

struct DethHdr {
  static constexpr std::size_t kSize = 8;
  std::uint8_t raw[kSize]{};

  static DethHdr read(const std::uint8_t* p) {
    DethHdr h;
    std::memcpy(h.raw, p, kSize);
    return h;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }
  static DethHdr make(std::uint32_t qkey, std::uint32_t src_qp) {
    DethHdr h;
    h.set_qkey(qkey);
    h.set_src_qp(src_qp);
    return h;
  }

  std::uint32_t qkey() const { return load_be32(raw); }
  std::uint32_t src_qp() const { return load_be24(raw + 5); }

  void set_qkey(std::uint32_t v) { store_be32(raw, v); }
  // Stores the low 24 bits; the reserved byte stays zero.
  void set_src_qp(std::uint32_t v) { store_be24(raw + 5, v); }
};
static_assert(sizeof(DethHdr) == DethHdr::kSize);
static_assert(alignof(DethHdr) == 1);

}  // namespace uroce::wire
