// DC Extended Transport Header (uroce extension, between uroce peers only;
// docs/dc.md, "The protocol"). Right after the BTH of every DC request
// (opcodes 0xE0 + an RC request opcode) and of DC_DISCONNECT (0xF8), ahead
// of the RC extension headers the opcode carries (opcodes.h). BTH DestQP is
// the DCT number; BTH PSN is the stream's PSN, as RC's.
//
//   0                   1                   2                   3
//   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                DC Access Key (bits 63..32)                    |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                DC Access Key (bits 31..0)                     |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |S|R| Reserved  |                DCI QPN (24 bits)              |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |             Lane              |           Reserved            |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                       Connection Number                       |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |   Reserved    |                First PSN (24 bits)            |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |   Reserved    |               Acked PSN (24 bits)             |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// DC Access Key: the key the WR named; the target answers KEY_VIOLATION
// (dc_aeth.h) when it differs from the DCT's. S (SYN): set on every request
// of a connection until the initiator has received the connection's first
// response; a SYN request may open a context on the target, others never
// do. DC_DISCONNECT never opens one, so its SYN is not looked at. R (SR):
// the connection runs selective repeat (docs/lossy.md "DC"): its SEND and
// WRITE requests carry an SRETH after every other header and each WRITE
// packet a RETH, as SR's opcodes do (opcodes.h, dc_sr_opcode_info); set on
// every request of such a connection, from its first, and on none of a
// go-back-N one (DC_DISCONNECT: not looked at). DCI QPN
// and Lane: with the source IP address, the identity of the initiator's
// stream (lane i is stream i); responses go to this QPN. Connection Number
// (`conn`): the connection's number from the initiator device's counter,
// compared with 32-bit serial arithmetic; in DC_DISCONNECT the connection
// to retire. First PSN: the PSN the connection started at, the expected
// PSN of a context a SYN request opens. Acked PSN: the stream's oldest
// PSN without a response when the packet left (every request before it is
// answered, as far as the initiator knows): the target retires a context
// under pressure only once this reaches its expected PSN, so no response
// the initiator still waits for (an atomic's result) is lost with it.
// Reserved bits are sent as zero and ignored on receipt.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/byteorder.h"

namespace uroce::wire {

struct DcEthHdr {
  static constexpr std::size_t kSize = 28;
  static constexpr std::uint8_t kFlagSyn = 0x80;
  static constexpr std::uint8_t kFlagSr = 0x40;
  std::uint8_t raw[kSize]{};

  static DcEthHdr read(const std::uint8_t* p) {
    DcEthHdr h;
    std::memcpy(h.raw, p, kSize);
    return h;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }
  static DcEthHdr make(std::uint64_t key, bool syn, std::uint32_t dci_qpn, std::uint16_t lane,
                       std::uint32_t conn, std::uint32_t first_psn, std::uint32_t acked_psn = 0) {
    DcEthHdr h;
    h.set_key(key);
    h.set_syn(syn);
    h.set_dci_qpn(dci_qpn);
    h.set_lane(lane);
    h.set_conn(conn);
    h.set_first_psn(first_psn);
    h.set_acked_psn(acked_psn);
    return h;
  }

  std::uint64_t key() const { return load_be64(raw); }
  // The whole flags byte, reserved bits included (a receiver ignores them).
  std::uint8_t flags() const { return raw[8]; }
  bool syn() const { return (raw[8] & kFlagSyn) != 0; }
  bool sr() const { return (raw[8] & kFlagSr) != 0; }
  std::uint32_t dci_qpn() const { return load_be24(raw + 9); }
  std::uint16_t lane() const { return load_be16(raw + 12); }
  std::uint32_t conn() const { return load_be32(raw + 16); }
  std::uint32_t first_psn() const { return load_be24(raw + 21); }
  std::uint32_t acked_psn() const { return load_be24(raw + 25); }

  void set_key(std::uint64_t v) { store_be64(raw, v); }
  void set_flags(std::uint8_t v) { raw[8] = v; }
  // Leaves the reserved flag bits as they are.
  void set_syn(bool v) {
    raw[8] = static_cast<std::uint8_t>(v ? (raw[8] | kFlagSyn) : (raw[8] & ~kFlagSyn));
  }
  void set_sr(bool v) {
    raw[8] = static_cast<std::uint8_t>(v ? (raw[8] | kFlagSr) : (raw[8] & ~kFlagSr));
  }
  // Stores the low 24 bits.
  void set_dci_qpn(std::uint32_t v) { store_be24(raw + 9, v); }
  void set_lane(std::uint16_t v) { store_be16(raw + 12, v); }
  void set_conn(std::uint32_t v) { store_be32(raw + 16, v); }
  // Stores the low 24 bits; the reserved byte before it stays zero.
  void set_first_psn(std::uint32_t v) { store_be24(raw + 21, v); }
  // Stores the low 24 bits; the reserved byte before it stays zero.
  void set_acked_psn(std::uint32_t v) { store_be24(raw + 25, v); }
};
static_assert(sizeof(DcEthHdr) == DcEthHdr::kSize);
static_assert(alignof(DcEthHdr) == 1);

}  // namespace uroce::wire
