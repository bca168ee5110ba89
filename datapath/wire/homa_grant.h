// GRANT: the Homa-like scheduler's permission to send (uroce extension,
// between uroce peers only; docs/homa.md). Our BTH opcode 0xC0, from the
// manufacturer-specific range 0xC0-0xFF (IBTA Vol.1 9.2.3: opcode bits
// 7..5 = 110); the uroce extensions use 0xC0-0xC7 (0xC1 CUTOFFS,
// homa_cutoffs.h; 0xC2 MLEN, homa_mlen.h; opcodes.h has the table).
//
// BTH: DestQP is the QP that sends the message's data (the requester of a
// SEND or WRITE); PSN is the PSN of the message's first packet, which
// names the message within that QP. Then this header where a payload would
// be (opcodes.h), and the ICRC. Sent at the highest network priority.
//
//   0                   1                   2                   3
//   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                  Granted Offset (bits 63..32)                 |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                  Granted Offset (bits 31..0)                  |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |   Priority    |     Flags     |            Reserved           |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                      Cutoffs Generation                       |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// Granted Offset: the sender may send the message's bytes below it
// (cumulative: a repeated or reordered GRANT never takes back what an
// earlier one gave). Priority: the network priority (0-7, mapped to DSCP
// and PCP through the device's PFC tables) for the scheduled bytes.
// Flags: bit 0 RESEND (the same offset again after silence), bit 1 FIFO
// (given to the oldest message, not by SRPT); others zero. Cutoffs
// Generation: the receiver's current unscheduled cutoffs (CUTOFFS); a
// sender holding an older generation asks for them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/byteorder.h"
#include "datapath/wire/opcodes.h"

namespace uroce::wire {

inline constexpr std::uint8_t kHomaGrantOpcode = op::kHomaGrant;

struct HomaGrantHdr {
  static constexpr std::size_t kSize = 16;
  static constexpr std::uint8_t kFlagResend = 0x01;
  static constexpr std::uint8_t kFlagFifo = 0x02;
  std::uint8_t raw[kSize]{};

  static HomaGrantHdr read(const std::uint8_t* p) {
    HomaGrantHdr h;
    std::memcpy(h.raw, p, kSize);
    return h;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }
  static HomaGrantHdr make(std::uint64_t offset, std::uint8_t priority, std::uint8_t flags,
                           std::uint32_t generation) {
    HomaGrantHdr h;
    h.set_offset(offset);
    h.set_priority(priority);
    h.set_flags(flags);
    h.set_generation(generation);
    return h;
  }

  std::uint64_t offset() const { return load_be64(raw); }
  std::uint8_t priority() const { return raw[8]; }
  std::uint8_t flags() const { return raw[9]; }
  std::uint32_t generation() const { return load_be32(raw + 12); }

  void set_offset(std::uint64_t v) { store_be64(raw, v); }
  void set_priority(std::uint8_t v) { raw[8] = v; }
  void set_flags(std::uint8_t v) { raw[9] = v; }
  void set_generation(std::uint32_t v) { store_be32(raw + 12, v); }
};
static_assert(sizeof(HomaGrantHdr) == HomaGrantHdr::kSize);
static_assert(alignof(HomaGrantHdr) == 1);

}  // namespace uroce::wire
