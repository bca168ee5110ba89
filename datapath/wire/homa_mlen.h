// MLEN: the length of a SEND, in its first packet (uroce extension, between
// uroce peers only; docs/homa.md). A receiver's grant scheduler needs every
// incoming message's length from its first packet: RDMA WRITE First/Only
// carry it in RETH's DMA Length and a READ's requester asked for it, but
// RC SEND First has no length field. With the Homa-like scheduler on, RC
// SEND First becomes our BTH opcode 0xC2 (RC SEND First with MLEN; the
// extensions' range 0xC0-0xC7, homa_grant.h), this header after BTH, then
// the payload as in SEND First; SEND Middle/Last/Only are unchanged.
//
//   0                   1                   2                   3
//   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                        Message Length                         |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                      Unscheduled Length                       |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// Message Length: the SEND's total payload bytes (at most 2^31, IBTA's
// message limit). Unscheduled Length: the bytes the sender sends before
// any GRANT (its unsched_bytes, or the message length if smaller); the
// receiver grants from there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/byteorder.h"

namespace uroce::wire {

inline constexpr std::uint8_t kRcSendFirstMlenOpcode = 0xC2;

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
