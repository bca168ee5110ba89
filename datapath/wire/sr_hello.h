// HELLO: the selective-repeat handshake (uroce extension, between uroce
// peers only; docs/lossy.md "Negotiation"). Opcode 0xC4 (opcodes.h), a
// uroce control packet: the header rides where a payload would, and its
// reader checks the length (as the Homa-like scheduler's, homa_grant.h).
// BTH DestQP: the peer's QP; PSN 0.
//
//   0                   1                   2                   3
//   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |    Version    |     Flags     |         Window (PSNs)         |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |    Receive messages held      |           Reserved            |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// Version: 1. Flags: bit 0 ANSWER (this HELLO answers the peer's probe);
// the others are sent as zero and ignored. Window: the PSNs the sender's
// responder accepts beyond its expected PSN; 0 declines (the connection
// stays go-back-N). Receive messages held: how many messages that consume
// a receive WQE its responder holds beyond the one at its RQ head.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>

#include "datapath/wire/byteorder.h"
#include "datapath/wire/opcodes.h"

namespace uroce::wire {

inline constexpr std::uint8_t kSrHelloOpcode = op::kSrHello;

struct SrHelloHdr {
  static constexpr std::size_t kSize = 8;
  static constexpr std::uint8_t kVersion = 1;
  static constexpr std::uint8_t kFlagAnswer = 0x01;
  std::uint8_t raw[kSize]{};

  static SrHelloHdr read(const std::uint8_t* p) {
    SrHelloHdr h;
    std::memcpy(h.raw, p, kSize);
    return h;
  }
  // The HELLO in a packet's payload; nullopt when it is too short.
  static std::optional<SrHelloHdr> from_payload(std::span<const std::uint8_t> payload) {
    if (payload.size() < kSize) return std::nullopt;
    return read(payload.data());
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }
  static SrHelloHdr make(bool answer, std::uint16_t window, std::uint16_t recv_held) {
    SrHelloHdr h;
    h.set_version(kVersion);
    h.set_flags(answer ? kFlagAnswer : 0);
    h.set_window(window);
    h.set_recv_held(recv_held);
    return h;
  }

  std::uint8_t version() const { return raw[0]; }
  std::uint8_t flags() const { return raw[1]; }
  bool answer() const { return (raw[1] & kFlagAnswer) != 0; }
  std::uint16_t window() const { return load_be16(raw + 2); }
  std::uint16_t recv_held() const { return load_be16(raw + 4); }

  void set_version(std::uint8_t v) { raw[0] = v; }
  void set_flags(std::uint8_t v) { raw[1] = v; }
  void set_window(std::uint16_t v) { store_be16(raw + 2, v); }
  void set_recv_held(std::uint16_t v) { store_be16(raw + 4, v); }
};
static_assert(sizeof(SrHelloHdr) == SrHelloHdr::kSize);
static_assert(alignof(SrHelloHdr) == 1);

}  // namespace uroce::wire
