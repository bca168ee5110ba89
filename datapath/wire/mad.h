// MAD common header (IBTA Vol.1 section 13.4.2, "Management Datagram
// format"), as the Communication Manager class uses it (section 12.6). A MAD
// is exactly 256 bytes: this 24-byte header, then 232 bytes of class data
// (one CM message, cm_*.h). On RoCEv2 it travels as the payload of a UD
// SEND_ONLY to QP1 with Q_Key 0x80010000 (the GSI, section 13.5.1).
//
//   0                   1                   2                   3
//   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |  BaseVersion  |   MgmtClass   | ClassVersion  |R|   Method    |  0
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |            Status             |         ClassSpecific         |  4
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                     TransactionID (64 bits)                   |  8
//  +                                                               +
//  |                                                               |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |          AttributeID          |            Reserved           | 16
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                       AttributeModifier                       | 20
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/byteorder.h"

namespace uroce::wire {

// Size of every MAD and of its class data.
inline constexpr std::size_t kMadBytes = 256;
inline constexpr std::size_t kMadDataBytes = 232;
// The GSI's well-known QP and Q_Key (IBTA 13.5.1; Q_Key 0x80010000 is
// section 10.2.4.3's "well-known Q_Key" for QP1).
inline constexpr std::uint32_t kGsiQpn = 1;
inline constexpr std::uint32_t kGsiQkey = 0x80010000;

inline constexpr std::uint8_t kMadBaseVersion = 1;
inline constexpr std::uint8_t kMgmtClassCm = 0x07;
inline constexpr std::uint8_t kCmClassVersion = 2;
inline constexpr std::uint8_t kMadMethodSend = 0x03;

// CM attribute IDs (IBTA Table 218).
enum class CmAttr : std::uint16_t {
  kClassPortInfo = 0x0001,
  kReq = 0x0010,
  kMra = 0x0011,
  kRej = 0x0012,
  kRep = 0x0013,
  kRtu = 0x0014,
  kDreq = 0x0015,
  kDrep = 0x0016,
  kSidrReq = 0x0017,
  kSidrRep = 0x0018,
  kLap = 0x0019,
  kApr = 0x001a,
};

struct MadHdr {
  static constexpr std::size_t kSize = 24;
  std::uint8_t raw[kSize]{};

  static MadHdr read(const std::uint8_t* p) {
    MadHdr h;
    std::memcpy(h.raw, p, kSize);
    return h;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }
  // A CM Send MAD header: base version 1, class 0x07, class version 2.
  static MadHdr make_cm(CmAttr attr, std::uint64_t tid) {
    MadHdr h;
    h.raw[0] = kMadBaseVersion;
    h.raw[1] = kMgmtClassCm;
    h.raw[2] = kCmClassVersion;
    h.set_method(kMadMethodSend);
    h.set_tid(tid);
    h.set_attr_id(static_cast<std::uint16_t>(attr));
    return h;
  }

  std::uint8_t base_version() const { return raw[0]; }
  std::uint8_t mgmt_class() const { return raw[1]; }
  std::uint8_t class_version() const { return raw[2]; }
  bool response() const { return (raw[3] & 0x80) != 0; }
  std::uint8_t method() const { return raw[3] & 0x7f; }
  std::uint16_t status() const { return load_be16(raw + 4); }
  std::uint16_t class_specific() const { return load_be16(raw + 6); }
  std::uint64_t tid() const { return load_be64(raw + 8); }
  std::uint16_t attr_id() const { return load_be16(raw + 16); }
  std::uint32_t attr_mod() const { return load_be32(raw + 20); }

  // Keeps the R bit.
  void set_method(std::uint8_t m) {
    raw[3] = static_cast<std::uint8_t>((raw[3] & 0x80) | (m & 0x7f));
  }
  void set_response(bool r) {
    raw[3] = static_cast<std::uint8_t>((raw[3] & 0x7f) | (r ? 0x80 : 0));
  }
  void set_status(std::uint16_t v) { store_be16(raw + 4, v); }
  void set_tid(std::uint64_t v) { store_be64(raw + 8, v); }
  void set_attr_id(std::uint16_t v) { store_be16(raw + 16, v); }
  void set_attr_mod(std::uint32_t v) { store_be32(raw + 20, v); }
};
static_assert(sizeof(MadHdr) == MadHdr::kSize);
static_assert(MadHdr::kSize + kMadDataBytes == kMadBytes);

// Bit fields of the CM messages: IBTA numbers bits from the most
// significant, so the first field listed in a byte is its top bits.
inline std::uint8_t get_bits(std::uint8_t b, unsigned shift, unsigned width) {
  return static_cast<std::uint8_t>((b >> shift) & ((1u << width) - 1));
}
inline void set_bits(std::uint8_t* b, unsigned shift, unsigned width, unsigned v) {
  const unsigned mask = ((1u << width) - 1) << shift;
  *b = static_cast<std::uint8_t>((*b & ~mask) | ((v << shift) & mask));
}

}  // namespace uroce::wire
