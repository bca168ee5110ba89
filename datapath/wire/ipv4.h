// IPv4 header (RFC 791 section 3.1), without options: RoCEv2 (IBTA Annex A17.4)
// never sends options, and the parser rejects IHL != 5.
//
//   0                   1                   2                   3
//   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |Version|  IHL  |    DSCP   |ECN|          Total Length         |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |         Identification        |Flags|      Fragment Offset    |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |  Time to Live |    Protocol   |         Header Checksum       |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                       Source Address                          |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                    Destination Address                        |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/addr.h"
#include "datapath/wire/byteorder.h"

namespace uroce::wire {

inline constexpr std::uint8_t kIpProtoUdp = 17;
inline constexpr std::uint16_t kIpv4FlagDf = 0x4000;
inline constexpr std::uint16_t kIpv4FlagMf = 0x2000;
inline constexpr std::uint16_t kIpv4FragOffsetMask = 0x1fff;
// ECN codepoints (RFC 3168 section 5), the low two bits of the IPv4 TOS and
// of the IPv6 traffic class.
inline constexpr std::uint8_t kEcnNotEct = 0;
inline constexpr std::uint8_t kEcnEct1 = 1;
inline constexpr std::uint8_t kEcnEct0 = 2;
inline constexpr std::uint8_t kEcnCe = 3;

struct Ipv4Hdr {
  static constexpr std::size_t kSize = 20;
  std::uint8_t raw[kSize]{};

  static Ipv4Hdr read(const std::uint8_t* p) {
    Ipv4Hdr h;
    std::memcpy(h.raw, p, kSize);
    return h;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }

  std::uint8_t version() const { return raw[0] >> 4; }
  std::uint8_t ihl() const { return raw[0] & 0x0f; }  // in 32-bit words
  std::uint8_t tos() const { return raw[1]; }
  std::uint8_t dscp() const { return raw[1] >> 2; }
  std::uint8_t ecn() const { return raw[1] & 0x03; }
  std::uint16_t total_length() const { return load_be16(raw + 2); }
  std::uint16_t id() const { return load_be16(raw + 4); }
  std::uint16_t flags_frag() const { return load_be16(raw + 6); }
  std::uint8_t ttl() const { return raw[8]; }
  std::uint8_t protocol() const { return raw[9]; }
  std::uint16_t checksum() const { return load_be16(raw + 10); }
  Ipv4Addr src() const { return Ipv4Addr{load_be32(raw + 12)}; }
  Ipv4Addr dst() const { return Ipv4Addr{load_be32(raw + 16)}; }

  void set_version_ihl(std::uint8_t version, std::uint8_t ihl) {
    raw[0] = static_cast<std::uint8_t>(version << 4 | (ihl & 0x0f));
  }
  void set_tos(std::uint8_t v) { raw[1] = v; }
  void set_dscp_ecn(std::uint8_t dscp, std::uint8_t ecn) {
    raw[1] = static_cast<std::uint8_t>((dscp << 2) | (ecn & 0x03));
  }
  void set_total_length(std::uint16_t v) { store_be16(raw + 2, v); }
  void set_id(std::uint16_t v) { store_be16(raw + 4, v); }
  void set_flags_frag(std::uint16_t v) { store_be16(raw + 6, v); }
  void set_ttl(std::uint8_t v) { raw[8] = v; }
  void set_protocol(std::uint8_t v) { raw[9] = v; }
  void set_checksum(std::uint16_t v) { store_be16(raw + 10, v); }
  void set_src(Ipv4Addr a) { store_be32(raw + 12, a.v); }
  void set_dst(Ipv4Addr a) { store_be32(raw + 16, a.v); }

  // RFC 1071 ones'-complement sum over the 20 header bytes with the checksum
  // field taken as zero. Summed as five 32-bit words and folded: 2^16 is 1
  // modulo 0xffff, so this is the sum of the ten 16-bit words.
  std::uint16_t compute_checksum() const {
    const std::uint64_t sum = std::uint64_t{load_be32(raw)} + load_be32(raw + 4) +
                              (load_be32(raw + 8) & 0xffff0000u) + load_be32(raw + 12) +
                              load_be32(raw + 16);
    return static_cast<std::uint16_t>(~fold_ones_complement(sum));
  }
  // Folds a sum of at most 2^35 to 16 bits with end-around carries.
  static std::uint16_t fold_ones_complement(std::uint64_t sum) {
    sum = (sum & 0xffff) + (sum >> 16);  // < 2^20
    sum = (sum & 0xffff) + (sum >> 16);  // < 2^17
    sum = (sum & 0xffff) + (sum >> 16);  // <= 0xffff
    return static_cast<std::uint16_t>(sum);
  }
  void fill_checksum() { set_checksum(compute_checksum()); }
  bool checksum_ok() const { return checksum() == compute_checksum(); }
};
static_assert(sizeof(Ipv4Hdr) == Ipv4Hdr::kSize);
static_assert(alignof(Ipv4Hdr) == 1);

}  // namespace uroce::wire
