// RDMA Extended Transport Header (IBTA Vol.1 section 9.3.1). Carried by
// RDMA WRITE First/Only (with or without immediate) and RDMA READ Request.
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
//  |                         DMA Length                            |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// DMA Length is the length of the whole message, not of this packet.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/byteorder.h"

namespace uroce::wire {

struct RethHdr {
  static constexpr std::size_t kSize = 16;
  std::uint8_t raw[kSize]{};

  static RethHdr read(const std::uint8_t* p) {
    RethHdr h;
    std::memcpy(h.raw, p, kSize);
    return h;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }
  static RethHdr make(std::uint64_t va, std::uint32_t rkey, std::uint32_t dma_len) {
    RethHdr h;
    h.set_va(va);
    h.set_rkey(rkey);
    h.set_dma_len(dma_len);
    return h;
  }

  std::uint64_t va() const { return load_be64(raw); }
  std::uint32_t rkey() const { return load_be32(raw + 8); }
  std::uint32_t dma_len() const { return load_be32(raw + 12); }

  void set_va(std::uint64_t v) { store_be64(raw, v); }
  void set_rkey(std::uint32_t v) { store_be32(raw + 8, v); }
  void set_dma_len(std::uint32_t v) { store_be32(raw + 12, v); }
};
static_assert(sizeof(RethHdr) == RethHdr::kSize);
static_assert(alignof(RethHdr) == 1);

}  // namespace uroce::wire
