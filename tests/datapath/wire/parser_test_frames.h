// Test support (not a source mirror): frames for the parser's tests, built
// by the builder, and what a consistent sender would have put in the
// lengths and checksums of a frame a test cut or changed.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <vector>

#include "datapath/wire/builder.h"
#include "datapath/wire/byteorder.h"
#include "datapath/wire/icrc.h"
#include "datapath/wire/ipv4.h"
#include "datapath/wire/parser.h"

namespace uroce::wire::testing {

using Frame = std::vector<std::uint8_t>;

// Offsets in an IPv4 RoCEv2 frame: IP, UDP, BTH, the first extension header.
inline constexpr std::size_t kIp = 14, kUdp = 34, kBth = 42, kExt = 54;

inline Frame build(const PacketSpec& s) {
  Frame f(kMaxRoceFrame);
  const int n = build_roce(s, f);
  EXPECT_GT(n, 0);
  f.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return f;
}

inline const std::uint8_t kPayload[7] = {0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70};

inline ParseError parse(const Frame& f) {
  ParsedPacket p;
  return parse_roce(f, p);
}

// Recompute what a consistent sender would have: IP header checksum and ICRC
// over the IP total length.
inline void fix_ip_checksum(Frame& f) {
  Ipv4Hdr ip = Ipv4Hdr::read(f.data() + kIp);
  ip.fill_checksum();
  ip.write(f.data() + kIp);
}
inline void fix_icrc(Frame& f) {
  const std::size_t ip_len = load_be16(f.data() + kIp + 2);
  write_icrc(std::span(f.data() + kIp, ip_len));
}
inline void set_lengths(Frame& f, std::size_t ip_len) {
  store_be16(f.data() + kIp + 2, static_cast<std::uint16_t>(ip_len));
  fix_ip_checksum(f);
  if (f.size() >= kBth) {
    store_be16(f.data() + kUdp + 4, static_cast<std::uint16_t>(ip_len - 20));
  }
}

}  // namespace uroce::wire::testing
