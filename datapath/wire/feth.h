// FLUSH Extended Transport Header (IBTA Vol.1 Annex A19 "Memory Placement
// Extensions", FLUSH; rxe's struct rxe_feth). Carried by RC FLUSH (opcode
// 0x1C) right after the BTH, ahead of the RETH that names the range.
//
//   0                   1                   2                   3
//   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                  Reserved                         |SEL|  PLT  |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// SEL (selectivity level): 0 = the RETH's range, 1 = the whole memory
// region of the RETH's R_Key. PLT (placement type, a bit set): bit 0 global
// visibility, bit 1 persistence.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/byteorder.h"

namespace uroce::wire {

inline constexpr std::uint8_t kFethSelRange = 0;
inline constexpr std::uint8_t kFethSelWholeMr = 1;
inline constexpr std::uint8_t kFethPltGlobalVisibility = 1u << 0;
inline constexpr std::uint8_t kFethPltPersistence = 1u << 1;

struct FethHdr {
  static constexpr std::size_t kSize = 4;
  std::uint8_t raw[kSize]{};

  static FethHdr read(const std::uint8_t* p) {
    FethHdr h;
    std::memcpy(h.raw, p, kSize);
    return h;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }
  static FethHdr make(std::uint8_t sel, std::uint8_t plt) {
    FethHdr h;
    h.set_sel(sel);
    h.set_plt(plt);
    return h;
  }

  std::uint8_t sel() const { return static_cast<std::uint8_t>((load_be32(raw) >> 4) & 0x3u); }
  std::uint8_t plt() const { return static_cast<std::uint8_t>(load_be32(raw) & 0xfu); }
  // Both keep the reserved bits as they are.
  void set_sel(std::uint8_t v) {
    store_be32(raw, (load_be32(raw) & ~0x30u) | ((std::uint32_t{v} & 0x3u) << 4));
  }
  void set_plt(std::uint8_t v) { store_be32(raw, (load_be32(raw) & ~0xfu) | (v & 0xfu)); }
};
static_assert(sizeof(FethHdr) == FethHdr::kSize);
static_assert(alignof(FethHdr) == 1);

}  // namespace uroce::wire
