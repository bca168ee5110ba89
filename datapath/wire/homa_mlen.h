// MLEN: a scheduled message's length, announced by its sender (uroce
// extension, between uroce peers only; docs/homa.md). A receiver's grant
// scheduler needs the length of every message it must grant. RC SEND has no
// length field, and RETH's (WRITE) is on a packet the receiver's QP must
// first accept; so the sender of a message longer than its unscheduled
// bytes sends this control packet, then the data. It is not a data packet:
// the QP's PSN sequence, the responder and rxe-compatible packets are
// untouched. A lost MLEN costs the sender a grant timeout, after which it
// sends MLEN again (datapath/transport/grant_gate.h); the receiver counts the bytes
// from the QP's expected PSN, so an MLEN that arrives after data is fine.
//
// Our BTH opcode 0xC2 (the extensions' range 0xC0-0xC7, homa_grant.h).
// BTH: DestQP the receiver's QP, PSN the PSN of the message's first packet
// (which names the message within the QP, as in GRANT). Then this header
// where a payload would be (opcodes.h), and the ICRC.
//
//   0                   1                   2                   3
//   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                        Message Length                         |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                      Unscheduled Length                       |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// Message Length: the SEND's or WRITE's total payload bytes (at most 2^31,
// IBTA's message limit). Unscheduled Length: the bytes the sender sends
// before any GRANT (its unsched_bytes); the receiver grants from there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/byteorder.h"
#include "datapath/wire/opcodes.h"

namespace uroce::wire {

inline constexpr std::uint8_t kHomaMlenOpcode = op::kHomaMlen;

struct HomaMlenHdr {
  static constexpr std::size_t kSize = 8;
  std::uint8_t raw[kSize]{};

  static HomaMlenHdr read(const std::uint8_t* p) {
    HomaMlenHdr h;
    std::memcpy(h.raw, p, kSize);
    return h;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }
  static HomaMlenHdr make(std::uint32_t length, std::uint32_t unscheduled) {
    HomaMlenHdr h;
    h.set_length(length);
    h.set_unscheduled(unscheduled);
    return h;
  }

  std::uint32_t length() const { return load_be32(raw); }
  std::uint32_t unscheduled() const { return load_be32(raw + 4); }

  void set_length(std::uint32_t v) { store_be32(raw, v); }
  void set_unscheduled(std::uint32_t v) { store_be32(raw + 4, v); }
};
static_assert(sizeof(HomaMlenHdr) == HomaMlenHdr::kSize);
static_assert(alignof(HomaMlenHdr) == 1);

}  // namespace uroce::wire
