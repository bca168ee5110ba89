// Base Transport Header (IBTA Vol.1 section 9.2), with the RoCEv2 meaning of
// byte 4 (IBTA Annex A17.9.3: FECN/BECN in what IB calls resv8a).
//
//   0                   1                   2                   3
//   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |    OpCode     |S|M|Pad| TVer  |        Partition Key          |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |F|B|  Resv6    |             Destination QP (24 bits)          |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |A|   Resv7     |         Packet Sequence Number (24 bits)      |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// S = solicited event, M = MigReq, Pad = pad count (bytes appended to the
// payload to reach a 4-byte multiple), TVer = transport header version (0),
// F/B = FECN/BECN, A = AckReq. Byte 4 (F/B/Resv6) is variant: routers and
// ECN marking may change it, so the ICRC covers it as all ones (icrc.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/byteorder.h"

namespace uroce::wire {

inline constexpr std::uint32_t kQpnMask = 0xffffff;
// The destination QP of a UD packet to a multicast group (IBTA: QP 0xFFFFFF):
// the receiver hands it to every QP attached to the group.
inline constexpr std::uint32_t kMulticastQpn = 0xffffff;
inline constexpr std::uint32_t kPsnMask = 0xffffff;
inline constexpr std::uint16_t kDefaultPKey = 0xffff;

struct BthHdr {
  static constexpr std::size_t kSize = 12;
  // Offset of the byte the ICRC computation replaces with 0xff.
  static constexpr std::size_t kIcrcMaskedByte = 4;
  std::uint8_t raw[kSize]{};

  static BthHdr read(const std::uint8_t* p) {
    BthHdr h;
    std::memcpy(h.raw, p, kSize);
    return h;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }

  std::uint8_t opcode() const { return raw[0]; }
  bool se() const { return (raw[1] & 0x80) != 0; }
  bool mig_req() const { return (raw[1] & 0x40) != 0; }
  std::uint8_t pad_count() const { return (raw[1] >> 4) & 0x03; }
  std::uint8_t tver() const { return raw[1] & 0x0f; }
  std::uint16_t pkey() const { return load_be16(raw + 2); }
  bool fecn() const { return (raw[4] & 0x80) != 0; }
  bool becn() const { return (raw[4] & 0x40) != 0; }
  std::uint8_t resv6() const { return raw[4] & 0x3f; }
  std::uint32_t dest_qp() const { return load_be24(raw + 5); }
  bool ack_req() const { return (raw[8] & 0x80) != 0; }
  std::uint8_t resv7() const { return raw[8] & 0x7f; }
  std::uint32_t psn() const { return load_be24(raw + 9); }

  void set_opcode(std::uint8_t v) { raw[0] = v; }
  void set_se(bool v) { set_bit(1, 0x80, v); }
  void set_mig_req(bool v) { set_bit(1, 0x40, v); }
  void set_pad_count(std::uint8_t v) {
    raw[1] = static_cast<std::uint8_t>((raw[1] & 0xcf) | ((v & 0x03) << 4));
  }
  void set_tver(std::uint8_t v) {
    raw[1] = static_cast<std::uint8_t>((raw[1] & 0xf0) | (v & 0x0f));
  }
  void set_pkey(std::uint16_t v) { store_be16(raw + 2, v); }
  void set_fecn(bool v) { set_bit(4, 0x80, v); }
  void set_becn(bool v) { set_bit(4, 0x40, v); }
  // Stores the low 24 bits.
  void set_dest_qp(std::uint32_t v) { store_be24(raw + 5, v); }
  void set_ack_req(bool v) { set_bit(8, 0x80, v); }
  // Stores the low 24 bits.
  void set_psn(std::uint32_t v) { store_be24(raw + 9, v); }

 private:
  void set_bit(std::size_t byte, std::uint8_t mask, bool v) {
    raw[byte] = static_cast<std::uint8_t>(v ? (raw[byte] | mask) : (raw[byte] & ~mask));
  }
};
static_assert(sizeof(BthHdr) == BthHdr::kSize);
static_assert(alignof(BthHdr) == 1);

}  // namespace uroce::wire
