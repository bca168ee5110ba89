// Priority-based Flow Control frame (IEEE 802.1Qbb clause 36, a MAC Control
// frame per IEEE 802.3 Annex 31D). The body that follows the Ethernet header:
//
//   0                   1                   2                   3
//   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |     MAC Control Opcode 0x0101 |   Reserved    |e7 ........ e0 |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |            Time[0]            |            Time[1]            |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |            Time[2]            |            Time[3]            |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |            Time[4]            |            Time[5]            |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |            Time[6]            |            Time[7]            |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// The Ethernet header carries destination 01:80:C2:00:00:01 and EtherType
// 0x8808; the frame is zero-padded to the 60-byte Ethernet minimum (without
// FCS). e[n] = 1 means Time[n] is valid for priority n. A time is in quanta
// of 512 bit times at the link speed; 0 means "resume now" (XON).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "datapath/wire/addr.h"
#include "datapath/wire/byteorder.h"
#include "datapath/wire/eth.h"

namespace uroce::wire {

inline constexpr std::uint16_t kMacControlOpcodePfc = 0x0101;
inline constexpr MacAddr kPfcDstMac{{0x01, 0x80, 0xc2, 0x00, 0x00, 0x01}};
inline constexpr std::size_t kPfcPriorities = 8;
inline constexpr std::uint32_t kPfcBitsPerQuantum = 512;
// Ethernet minimum frame length without the 4-byte FCS.
inline constexpr std::size_t kEthMinFrame = 60;

struct PfcHdr {
  static constexpr std::size_t kSize = 20;
  std::uint8_t raw[kSize]{};

  static PfcHdr read(const std::uint8_t* p) {
    PfcHdr h;
    std::memcpy(h.raw, p, kSize);
    return h;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }

  std::uint16_t opcode() const { return load_be16(raw); }
  // Bit n set: Time[n] is valid. The reserved high octet is ignored.
  std::uint8_t class_enable() const { return raw[3]; }
  bool enabled(std::size_t prio) const {
    return prio < kPfcPriorities && ((raw[3] >> prio) & 1) != 0;
  }
  // Quanta for priority `prio` (< 8).
  std::uint16_t pause_time(std::size_t prio) const { return load_be16(raw + 4 + 2 * prio); }

  void set_opcode(std::uint16_t v) { store_be16(raw, v); }
  void set_class_enable(std::uint8_t mask) {
    raw[2] = 0;
    raw[3] = mask;
  }
  // `prio` < 8.
  void set_pause_time(std::size_t prio, std::uint16_t quanta) {
    store_be16(raw + 4 + 2 * prio, quanta);
  }
};
static_assert(sizeof(PfcHdr) == PfcHdr::kSize);
static_assert(alignof(PfcHdr) == 1);

// Length of a complete PFC frame as built here (padded to the minimum).
inline constexpr std::size_t kPfcFrameSize = kEthMinFrame;
static_assert(EthHdr::kSize + PfcHdr::kSize <= kPfcFrameSize);

// Pause duration of `quanta` at a link of `link_bps` bits per second, in ns,
// rounded up (a pause must never end early).
constexpr std::uint64_t pfc_quanta_to_ns(std::uint16_t quanta, std::uint64_t link_bps) {
  const std::uint64_t bits = std::uint64_t{quanta} * kPfcBitsPerQuantum;
  return link_bps == 0 ? 0 : (bits * 1'000'000'000ull + link_bps - 1) / link_bps;
}

enum class PfcParseError : std::uint8_t {
  kOk = 0,
  kTruncated,      // shorter than Ethernet header + PFC body
  kNotMacControl,  // EtherType is not 0x8808
  kNotPfcOpcode,   // a MAC Control frame but not opcode 0x0101 (e.g. PAUSE)
  kBadDstMac,      // not addressed to 01:80:C2:00:00:01
};
std::string_view pfc_parse_error_name(PfcParseError e);

struct PfcFrame {
  EthHdr eth;
  PfcHdr pfc;
};

// Decodes a PFC frame; reads only inside `frame`. Trailing padding is
// ignored.
PfcParseError parse_pfc(std::span<const std::uint8_t> frame, PfcFrame& out);

// Writes a complete padded PFC frame (kPfcFrameSize bytes) into `buf`:
// priorities in `class_mask` get `quanta[prio]`, others 0 and disabled.
// Returns the frame length, or 0 if `buf` is too small.
std::size_t build_pfc(std::span<std::uint8_t> buf, const MacAddr& src, std::uint8_t class_mask,
                      const std::uint16_t (&quanta)[kPfcPriorities]);
// XOFF: pause every priority in `class_mask` for `quanta`.
std::size_t build_pfc_pause(std::span<std::uint8_t> buf, const MacAddr& src,
                            std::uint8_t class_mask, std::uint16_t quanta);
// XON: zero quanta for every priority in `class_mask`.
std::size_t build_pfc_resume(std::span<std::uint8_t> buf, const MacAddr& src,
                             std::uint8_t class_mask);

}  // namespace uroce::wire
