// Selective ACK Extended Transport Header, SACKETH (uroce extension, between
// uroce peers only; docs/lossy.md "The wire extension"). In SR_SACK (opcode
// 0xC3, opcodes.h) after the AETH. The BTH PSN and the AETH are those of an
// RC ACK (PSN = the responder's expected PSN - 1: everything up to it is
// acknowledged; syndrome ACK, MSN); this header says which PSNs beyond the
// responder already holds.
//
//   0                   1                   2                   3
//   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |     Flags     |             Trigger PSN                       |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |        Window (PSNs)          |     CE Offset (signed)        |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                                                               |
//  +                  Bitmap (256 bits, 32 bytes)                  +
//  |                                                               |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// Bitmap: bit i (byte i / 8, most significant bit first) set = PSN
// (BTH PSN + 1 + i) is held; bit 0 names the expected PSN, the one missing,
// so it is clear. Trigger PSN: the newest request packet this SACK answers.
// Flags: bit 0 DUP (the trigger was a duplicate: a retransmission whose
// first copy had arrived); bit 1 ECE (a request packet of a spraying
// connection arrived marked CE; it is PSN BTH PSN + CE Offset, a signed
// 16-bit two's complement number, so the requester can charge the path it
// took: docs/lossy.md "Spraying"); the others are sent as zero and
// ignored, as CE Offset is without ECE (a peer from before ECE sent zero
// there). Window: the PSNs the responder accepts beyond its expected PSN.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/byteorder.h"

namespace uroce::wire {

struct SrSackEthHdr {
  static constexpr std::size_t kBitmapBits = 256;
  static constexpr std::size_t kSize = 8 + kBitmapBits / 8;
  static constexpr std::uint8_t kFlagDup = 0x01;
  static constexpr std::uint8_t kFlagEce = 0x02;
  std::uint8_t raw[kSize]{};

  static SrSackEthHdr read(const std::uint8_t* p) {
    SrSackEthHdr h;
    std::memcpy(h.raw, p, kSize);
    return h;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }
  // The bitmap stays clear (set_bit).
  static SrSackEthHdr make(std::uint8_t flags, std::uint32_t trigger_psn, std::uint16_t window) {
    SrSackEthHdr h;
    h.set_flags(flags);
    h.set_trigger_psn(trigger_psn);
    h.set_window(window);
    return h;
  }

  std::uint8_t flags() const { return raw[0]; }
  bool dup() const { return (raw[0] & kFlagDup) != 0; }
  std::uint32_t trigger_psn() const { return load_be24(raw + 1); }
  std::uint16_t window() const { return load_be16(raw + 4); }
  bool ece() const { return (raw[0] & kFlagEce) != 0; }
  // Meaningful with ece().
  std::int16_t ce_offset() const { return static_cast<std::int16_t>(load_be16(raw + 6)); }
  // i < kBitmapBits.
  bool bit(std::size_t i) const { return (raw[8 + i / 8] >> (7 - i % 8)) & 1; }
  // The 64 bits i*64 .. i*64+63 of the bitmap, bit i*64 the most
  // significant (i < 4).
  std::uint64_t word(std::size_t i) const { return load_be64(raw + 8 + i * 8); }

  void set_flags(std::uint8_t v) { raw[0] = v; }
  // Stores the low 24 bits.
  void set_trigger_psn(std::uint32_t v) { store_be24(raw + 1, v); }
  void set_window(std::uint16_t v) { store_be16(raw + 4, v); }
  // Sets ECE and the offset of the CE-marked PSN from the BTH PSN.
  void set_ce(std::int16_t offset) {
    raw[0] |= kFlagEce;
    store_be16(raw + 6, static_cast<std::uint16_t>(offset));
  }
  void set_bit(std::size_t i) { raw[8 + i / 8] |= static_cast<std::uint8_t>(0x80 >> (i % 8)); }
  void set_word(std::size_t i, std::uint64_t v) { store_be64(raw + 8 + i * 8, v); }
};
static_assert(sizeof(SrSackEthHdr) == SrSackEthHdr::kSize);
static_assert(SrSackEthHdr::kSize == 40);
static_assert(alignof(SrSackEthHdr) == 1);

}  // namespace uroce::wire
