// Atomic Acknowledge Extended Transport Header (IBTA Vol.1 section 9.3.2.2).
// Follows the AETH in an ATOMIC ACKNOWLEDGE: the value the target held
// before the atomic operation.
//
//   0                   1                   2                   3
//   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |             Original Remote Data (bits 63..32)                |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |             Original Remote Data (bits 31..0)                 |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/byteorder.h"

namespace uroce::wire {

struct AtomicAckEthHdr {
  static constexpr std::size_t kSize = 8;
  std::uint8_t raw[kSize]{};

  static AtomicAckEthHdr read(const std::uint8_t* p) {
    AtomicAckEthHdr h;
    std::memcpy(h.raw, p, kSize);
    return h;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }
  static AtomicAckEthHdr make(std::uint64_t orig) {
    AtomicAckEthHdr h;
    h.set_orig_remote_data(orig);
    return h;
  }

  std::uint64_t orig_remote_data() const { return load_be64(raw); }
  void set_orig_remote_data(std::uint64_t v) { store_be64(raw, v); }
};
static_assert(sizeof(AtomicAckEthHdr) == AtomicAckEthHdr::kSize);
static_assert(alignof(AtomicAckEthHdr) == 1);

}  // namespace uroce::wire
