// ACK Extended Transport Header (IBTA Vol.1 section 9.3.5). Carried by
// ACKNOWLEDGE, ATOMIC ACKNOWLEDGE and RDMA READ Response First/Last/Only.
//
//   0                   1                   2                   3
//   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |R| T |  Value  |       Message Sequence Number (24 bits)       |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// Syndrome byte (IBTA 9.3.5.1, table 44): R = reserved (0), T = type,
//   T = 00 ACK      Value = credit count (encoded, 0x1f = invalid/none)
//   T = 01 RNR NAK  Value = minimum RNR NAK timer code (IBTA table 45)
//   T = 10 reserved
//   T = 11 NAK      Value = NAK code (table 46): 0 PSN sequence error,
//                   1 invalid request, 2 remote access error,
//                   3 remote operational error, 4 invalid RD request.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/byteorder.h"

namespace uroce::wire {

enum class AethType : std::uint8_t {
  kAck = 0,
  kRnrNak = 1,
  kReserved = 2,
  kNak = 3,
};

enum class NakCode : std::uint8_t {
  kPsnSeqError = 0,
  kInvalidRequest = 1,
  kRemoteAccessError = 2,
  kRemoteOpError = 3,
  kInvalidRdRequest = 4,
};

// Credit count 0x1f means "no end-to-end credits advertised" (what rxe and
// most RNICs send: syndrome 0x1f).
inline constexpr std::uint8_t kAethCreditInvalid = 0x1f;

constexpr std::uint8_t aeth_syndrome(AethType t, std::uint8_t value) {
  return static_cast<std::uint8_t>((static_cast<std::uint8_t>(t) << 5) | (value & 0x1f));
}
constexpr std::uint8_t aeth_ack_syndrome(std::uint8_t credits = kAethCreditInvalid) {
  return aeth_syndrome(AethType::kAck, credits);
}
constexpr std::uint8_t aeth_rnr_nak_syndrome(std::uint8_t timer_code) {
  return aeth_syndrome(AethType::kRnrNak, timer_code);
}
constexpr std::uint8_t aeth_nak_syndrome(NakCode code) {
  return aeth_syndrome(AethType::kNak, static_cast<std::uint8_t>(code));
}

struct AethHdr {
  static constexpr std::size_t kSize = 4;
  std::uint8_t raw[kSize]{};

  static AethHdr read(const std::uint8_t* p) {
    AethHdr h;
    std::memcpy(h.raw, p, kSize);
    return h;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }
  static AethHdr make(std::uint8_t syndrome, std::uint32_t msn) {
    AethHdr h;
    h.set_syndrome(syndrome);
    h.set_msn(msn);
    return h;
  }

  std::uint8_t syndrome() const { return raw[0]; }
  std::uint32_t msn() const { return load_be24(raw + 1); }
  AethType type() const { return static_cast<AethType>((raw[0] >> 5) & 0x03); }
  // The 5-bit value whose meaning depends on type(): credit count, RNR timer
  // code or NAK code.
  std::uint8_t value() const { return raw[0] & 0x1f; }
  bool is_ack() const { return type() == AethType::kAck; }
  bool is_rnr_nak() const { return type() == AethType::kRnrNak; }
  bool is_nak() const { return type() == AethType::kNak; }
  std::uint8_t credit_count() const { return value(); }
  std::uint8_t rnr_timer() const { return value(); }
  NakCode nak_code() const { return static_cast<NakCode>(value()); }

  void set_syndrome(std::uint8_t v) { raw[0] = v; }
  // Stores the low 24 bits.
  void set_msn(std::uint32_t v) { store_be24(raw + 1, v); }
};
static_assert(sizeof(AethHdr) == AethHdr::kSize);
static_assert(alignof(AethHdr) == 1);

}  // namespace uroce::wire
