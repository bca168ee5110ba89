// Immediate Data Extended Transport Header (IBTA Vol.1 section 9.3.6).
// Carried by the SEND and RDMA WRITE Last/Only "with immediate" opcodes.
//
//   0                   1                   2                   3
//   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                       Immediate Data                          |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// The value is opaque to the transport; verbs hand it to the application
// in network order (ibv_wc.imm_data is __be32), so imm() returns the 4 bytes
// read big-endian and callers convert as they need.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/byteorder.h"

namespace uroce::wire {

struct ImmDtHdr {
  static constexpr std::size_t kSize = 4;
  std::uint8_t raw[kSize]{};

  static ImmDtHdr read(const std::uint8_t* p) {
    ImmDtHdr h;
    std::memcpy(h.raw, p, kSize);
    return h;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }
  static ImmDtHdr make(std::uint32_t imm) {
    ImmDtHdr h;
    h.set_imm(imm);
    return h;
  }

  std::uint32_t imm() const { return load_be32(raw); }
  void set_imm(std::uint32_t v) { store_be32(raw, v); }
};
static_assert(sizeof(ImmDtHdr) == ImmDtHdr::kSize);
static_assert(alignof(ImmDtHdr) == 1);

}  // namespace uroce::wire
