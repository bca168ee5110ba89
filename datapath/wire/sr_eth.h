// Selective-Repeat Extended Transport Header, SRETH (uroce extension,
// between uroce peers only; docs/lossy.md "The wire extension"). On every
// packet of an SR SEND or WRITE (opcodes 0xC8 + the RC opcode, opcodes.h),
// after every IBTA header of the packet, right before the payload: where
// the payload goes, so that a responder places a packet that arrives before
// the rest of its message (an SR WRITE packet also carries its message's
// RETH, whatever its position).
//
//   0                   1                   2                   3
//   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |   Reserved    |        Receive Sequence Number (RSN)          |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                            Offset                             |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// RSN: the number of the message among the connection's messages that
// consume a receive WQE (SEND, WRITE with immediate), from 0 at the
// connection's start, 24 bits, wrapping; a SEND's RSN names its receive
// WQE. A WRITE without immediate carries the next RSN (unused). Offset:
// where this packet's payload starts in its message, in bytes (0 on a
// FIRST/ONLY packet; a non-zero multiple of the path MTU on MIDDLE/LAST).
// Reserved bits are sent as zero and ignored on receipt.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/byteorder.h"

namespace uroce::wire {

struct SrEthHdr {
  static constexpr std::size_t kSize = 8;
  std::uint8_t raw[kSize]{};

  static SrEthHdr read(const std::uint8_t* p) {
    SrEthHdr h;
    std::memcpy(h.raw, p, kSize);
    return h;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }
  static SrEthHdr make(std::uint32_t rsn, std::uint32_t offset) {
    SrEthHdr h;
    h.set_rsn(rsn);
    h.set_offset(offset);
    return h;
  }

  std::uint32_t rsn() const { return load_be24(raw + 1); }
  std::uint32_t offset() const { return load_be32(raw + 4); }

  // Stores the low 24 bits.
  void set_rsn(std::uint32_t v) { store_be24(raw + 1, v); }
  void set_offset(std::uint32_t v) { store_be32(raw + 4, v); }
};
static_assert(sizeof(SrEthHdr) == SrEthHdr::kSize);
static_assert(alignof(SrEthHdr) == 1);

}  // namespace uroce::wire
