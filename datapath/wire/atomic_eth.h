// Atomic Extended Transport Header (IBTA Vol.1 section 9.3.2.1). Carried by
// COMPARE SWAP and FETCH ADD requests; the target is 8 bytes at VA.
//
//   0                   1                   2                   3
//   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                  Virtual Address (bits 63..32)                |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                  Virtual Address (bits 31..0)                 |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                           R_Key                               |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |              Swap (or Add) Data (bits 63..32)                 |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |              Swap (or Add) Data (bits 31..0)                  |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                 Compare Data (bits 63..32)                    |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                 Compare Data (bits 31..0)                     |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// FETCH ADD ignores Compare Data (senders put 0 there).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/byteorder.h"

namespace uroce::wire {

struct AtomicEthHdr {
  static constexpr std::size_t kSize = 28;
  std::uint8_t raw[kSize]{};

  static AtomicEthHdr read(const std::uint8_t* p) {
    AtomicEthHdr h;
    std::memcpy(h.raw, p, kSize);
    return h;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }
  static AtomicEthHdr make(std::uint64_t va, std::uint32_t rkey, std::uint64_t swap_add,
                           std::uint64_t compare) {
    AtomicEthHdr h;
    h.set_va(va);
    h.set_rkey(rkey);
    h.set_swap_add(swap_add);
    h.set_compare(compare);
    return h;
  }

  std::uint64_t va() const { return load_be64(raw); }
  std::uint32_t rkey() const { return load_be32(raw + 8); }
  std::uint64_t swap_add() const { return load_be64(raw + 12); }
  std::uint64_t compare() const { return load_be64(raw + 20); }

  void set_va(std::uint64_t v) { store_be64(raw, v); }
  void set_rkey(std::uint32_t v) { store_be32(raw + 8, v); }
  void set_swap_add(std::uint64_t v) { store_be64(raw + 12, v); }
  void set_compare(std::uint64_t v) { store_be64(raw + 20, v); }
};
static_assert(sizeof(AtomicEthHdr) == AtomicEthHdr::kSize);
static_assert(alignof(AtomicEthHdr) == 1);

}  // namespace uroce::wire
