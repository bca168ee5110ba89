// The first bytes of every UDP payload the raw baseline benchmark sends: a
// private header (not a standard: only uroce-raw-bench reads it) that lets a
// receiver tell benchmark frames from stray traffic, tell data from control,
// and spot gaps in the sequence.
//
//   0                   1                   2                   3
//   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                     Magic (0x5552424E "URBN")                 |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |     Kind      |                  Reserved (0)                 |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                                                               |
//  +                     Sequence number (64 bits)                 +
//  |                                                               |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// The rest of the payload is filler up to the requested size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/byteorder.h"

namespace uroce::bench {

inline constexpr std::uint32_t kBenchMagic = 0x5552424e;

enum class BenchKind : std::uint8_t {
  kData = 1,  // a streamed or ping frame: count it / echo it
  kStop = 2,  // the peer is done: stop sending / echoing
};

struct BenchPayloadHdr {
  static constexpr std::size_t kSize = 16;
  std::uint8_t raw[kSize]{};

  static BenchPayloadHdr read(const std::uint8_t* p) {
    BenchPayloadHdr h;
    std::memcpy(h.raw, p, kSize);
    return h;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }

  std::uint32_t magic() const { return wire::load_be32(raw); }
  std::uint8_t kind() const { return raw[4]; }
  std::uint64_t seq() const { return wire::load_be64(raw + 8); }

  void set_magic(std::uint32_t v) { wire::store_be32(raw, v); }
  void set_kind(BenchKind k) { raw[4] = static_cast<std::uint8_t>(k); }
  void set_seq(std::uint64_t v) { wire::store_be64(raw + 8, v); }
};
static_assert(sizeof(BenchPayloadHdr) == BenchPayloadHdr::kSize);
static_assert(alignof(BenchPayloadHdr) == 1);

}  // namespace uroce::bench
