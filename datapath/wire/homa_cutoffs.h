// CUTOFFS: a receiver's unscheduled priorities, published to its peers
// (uroce extension, between uroce peers only; docs/homa.md). Our BTH
// opcode 0xC1 (the extensions' range 0xC0-0xC7, homa_grant.h); DestQP the
// peer's QP of the connection it is sent on, PSN 0; the header where a
// payload would be (opcodes.h). It is also how two uroce devices find that
// both run the scheduler: a device with it on sends CUTOFFS with PROBE set
// to the peer of each connected QP; a peer with it on answers with its own
// (PROBE clear), and from then on each side schedules that connection. A
// peer without it (rxe, an RNIC, uroce with it off) drops the packet and
// the connection stays plain RC. Sent again to a peer holding an older
// generation once the receiver recomputed them (sched/unsched_cutoffs.h).
//
//   0                   1                   2                   3
//   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                          Generation                           |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |    Levels     |  Top Priority |     Flags     |   Reserved    |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                 Max Length of level 0 (bytes)                 |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                              ...                              |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                 Max Length of level 7 (bytes)                 |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// Levels: how many unscheduled levels are used (1-8); the fields of the
// others are zero. Flags: bit 0 PROBE (answer with yours); others zero. A message of length L goes to the first level whose Max
// Length is >= L (0xFFFFFFFF: any length), level j at network priority Top
// Priority - j.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/byteorder.h"
#include "datapath/wire/opcodes.h"

namespace uroce::wire {

inline constexpr std::uint8_t kHomaCutoffsOpcode = op::kHomaCutoffs;

struct HomaCutoffsHdr {
  static constexpr std::size_t kSize = 40;
  static constexpr std::uint8_t kFlagProbe = 0x01;
  static constexpr std::uint32_t kMaxLevels = 8;
  static constexpr std::uint32_t kAnyLength = 0xFFFFFFFFu;
  std::uint8_t raw[kSize]{};

  static HomaCutoffsHdr read(const std::uint8_t* p) {
    HomaCutoffsHdr h;
    std::memcpy(h.raw, p, kSize);
    return h;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }

  std::uint32_t generation() const { return load_be32(raw); }
  std::uint8_t levels() const { return raw[4]; }
  std::uint8_t top_priority() const { return raw[5]; }
  std::uint8_t flags() const { return raw[6]; }
  // Level j's max length (j < kMaxLevels).
  std::uint32_t max_length(std::uint32_t j) const { return load_be32(raw + 8 + 4 * j); }

  void set_generation(std::uint32_t v) { store_be32(raw, v); }
  void set_levels(std::uint8_t v) { raw[4] = v; }
  void set_top_priority(std::uint8_t v) { raw[5] = v; }
  void set_flags(std::uint8_t v) { raw[6] = v; }
  void set_max_length(std::uint32_t j, std::uint32_t v) { store_be32(raw + 8 + 4 * j, v); }
  // A header well formed for the receiver: 1..8 levels, the unused levels
  // zero, lengths increasing and the last used one kAnyLength, and the top
  // priority at least levels - 1.
  bool valid() const {
    const std::uint32_t n = levels();
    if (n == 0 || n > kMaxLevels || top_priority() + 1u < n || top_priority() > 7) return false;
    for (std::uint32_t j = 0; j < n; ++j) {
      if (j > 0 && max_length(j) <= max_length(j - 1)) return false;
    }
    if (max_length(n - 1) != kAnyLength) return false;
    for (std::uint32_t j = n; j < kMaxLevels; ++j) {
      if (max_length(j) != 0) return false;
    }
    return true;
  }
};
static_assert(sizeof(HomaCutoffsHdr) == HomaCutoffsHdr::kSize);
static_assert(alignof(HomaCutoffsHdr) == 1);

// What a CUTOFFS header says, as the receiver computes it
// (sched/unsched_cutoffs.h) and a sender applies it (PeerCutoffs,
// transport/grant_gate.h): level j's largest length, j < levels; the last
// is UINT64_MAX (everything longer). With no data every cutoff is
// UINT64_MAX (all at level 0).
struct HomaCutoffs {
  std::array<std::uint64_t, HomaCutoffsHdr::kMaxLevels> max_length{};
  std::uint32_t levels = 1;

  // The level (0 = highest priority) of a message of `length` bytes.
  std::uint32_t level_of(std::uint64_t length) const {
    for (std::uint32_t j = 0; j + 1 < levels; ++j) {
      if (length <= max_length[j]) return j;
    }
    return levels - 1;
  }
};

}  // namespace uroce::wire
