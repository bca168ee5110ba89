#include "datapath/wire/icrc.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace uroce::wire {
namespace {

std::vector<std::uint8_t> from_hex(std::string_view hex) {
  std::vector<std::uint8_t> v;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    v.push_back(static_cast<std::uint8_t>(std::stoul(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return v;
}

// Built with scapy.contrib.roce (independent implementation): RC ACK and an
// RC SEND_ONLY with TOS 0x8a, BECN set and one pad byte.
constexpr std::string_view kScapyAck =
    "02000000000202000000000108004500003000004000401126bb0a0000010a000002c000"
    "12b7001c00001100ffff00000011000000071f0000059e141385";
constexpr std::string_view kScapySendOnly =
    "0200000000020200000000010800458a003812344000401113f50a0000010a000002c123"
    "12b7002400000410ffff4012345680000abc68656c6c6f20776f726c64006a564965";

// RC SEND_ONLY over IPv6 (fe80::ff:fe00:1 -> 2001:db8::2, traffic class
// 0x8a, flow label 0x12345, hop limit 64, one pad byte), built with scapy and
// its ICRC computed from scapy's fields with the annex's IPv6 masking (the
// same function check_scapy.py uses); the second has scapy's UDP checksum.
constexpr std::string_view kScapySendOnlyIpv6 =
    "02000000000202000000000186dd68a1234500241140fe80000000000000000000fffe0000"
    "0120010db8000000000000000000000002c12312b7002400000410ffff4012345680000abc"
    "68656c6c6f20776f726c6400d7eb40d7";
constexpr std::string_view kScapySendOnlyIpv6Csum =
    "02000000000202000000000186dd68a1234500241140fe80000000000000000000fffe0000"
    "0120010db8000000000000000000000002c12312b7002452c80410ffff4012345680000abc"
    "68656c6c6f20776f726c6400d7eb40d7";

std::span<const std::uint8_t> ip_part(const std::vector<std::uint8_t>& f) {
  return std::span<const std::uint8_t>(f).subspan(14);
}

TEST(Crc32Zlib, CheckValue) {
  const std::string_view s = "123456789";
  EXPECT_EQ(crc32_zlib(0, std::span(reinterpret_cast<const std::uint8_t*>(s.data()), s.size())),
            0xCBF43926u);
}

TEST(Crc32Zlib, ChainsAcrossPieces) {
  const std::string_view s = "123456789";
  const auto* p = reinterpret_cast<const std::uint8_t*>(s.data());
  for (std::size_t cut = 0; cut <= s.size(); ++cut) {
    const std::uint32_t a = crc32_zlib(0, std::span(p, cut));
    EXPECT_EQ(crc32_zlib(a, std::span(p + cut, s.size() - cut)), 0xCBF43926u) << cut;
  }
}

TEST(ComputeIcrc, MatchesScapyVectors) {
  for (std::string_view hex : {kScapyAck, kScapySendOnly}) {
    const auto f = from_hex(hex);
    const auto ip = ip_part(f);
    EXPECT_EQ(compute_icrc(ip.first(ip.size() - 4)), read_icrc(ip)) << hex;
    EXPECT_TRUE(icrc_ok(ip));
  }
  // Little-endian on the wire: the last byte is the CRC's top byte.
  const auto f = from_hex(kScapyAck);
  EXPECT_EQ(read_icrc(ip_part(f)), 0x8513149eu);
}

TEST(ComputeIcrc, MaskedFieldsDoNotMatter) {
  const auto orig = from_hex(kScapySendOnly);
  const std::size_t masked[] = {14 + 1, 14 + 8, 14 + 10, 14 + 11, 34 + 6, 34 + 7, 42 + 4};
  for (std::size_t off : masked) {
    auto f = orig;
    f[off] ^= 0x5a;
    EXPECT_TRUE(icrc_ok(ip_part(f))) << off;
  }
}

TEST(ComputeIcrc, EveryOtherByteMatters) {
  const auto orig = from_hex(kScapySendOnly);
  const std::size_t masked[] = {14 + 1, 14 + 8, 14 + 10, 14 + 11, 34 + 6, 34 + 7, 42 + 4};
  for (std::size_t off = 14; off < orig.size(); ++off) {
    if (std::find(std::begin(masked), std::end(masked), off) != std::end(masked)) {
      continue;
    }
    auto f = orig;
    f[off] ^= 0x01;
    EXPECT_FALSE(icrc_ok(ip_part(f))) << off;
  }
}

TEST(WriteIcrc, StoresLittleEndianIcrc) {
  auto f = from_hex(kScapySendOnly);
  const auto want = std::vector<std::uint8_t>(f.end() - 4, f.end());
  std::fill(f.end() - 4, f.end(), 0);
  write_icrc(std::span<std::uint8_t>(f).subspan(14));
  EXPECT_EQ(std::vector<std::uint8_t>(f.end() - 4, f.end()), want);
}

TEST(IcrcOk, ShortInputIsFalseNotACrash) {
  const auto f = from_hex(kScapyAck);
  for (std::size_t n = 0; n < kIcrcMaskedPrefix + kIcrcSize; ++n) {
    EXPECT_FALSE(icrc_ok(ip_part(f).first(n))) << n;
    (void)compute_icrc(ip_part(f).first(n));
  }
  EXPECT_EQ(read_icrc({}), 0u);
}

TEST(ComputeIcrcIpv6, MatchesScapyVectors) {
  for (std::string_view hex : {kScapySendOnlyIpv6, kScapySendOnlyIpv6Csum}) {
    const auto f = from_hex(hex);
    const auto ip = ip_part(f);
    EXPECT_EQ(compute_icrc_ipv6(ip.first(ip.size() - 4)), read_icrc(ip)) << hex;
    EXPECT_TRUE(icrc_ok(ip));
  }
  EXPECT_EQ(read_icrc(ip_part(from_hex(kScapySendOnlyIpv6))), 0xd740ebd7u);
}

// Traffic class (the low nibble of byte 0 and the high nibble of byte 1),
// flow label, hop limit, UDP checksum, BTH byte 4.
constexpr std::size_t kMaskedIpv6[] = {14 + 1, 14 + 2, 14 + 3, 14 + 7, 54 + 6, 54 + 7, 62 + 4};

TEST(ComputeIcrcIpv6, MaskedFieldsDoNotMatter) {
  const auto orig = from_hex(kScapySendOnlyIpv6);
  for (std::size_t off : kMaskedIpv6) {
    auto f = orig;
    f[off] ^= 0x5a;
    EXPECT_TRUE(icrc_ok(ip_part(f))) << off;
  }
  auto f = orig;
  f[14] ^= 0x0f;  // the traffic class's high nibble
  EXPECT_TRUE(icrc_ok(ip_part(f)));
}

TEST(ComputeIcrcIpv6, EveryOtherByteMatters) {
  const auto orig = from_hex(kScapySendOnlyIpv6);
  for (std::size_t off = 14; off < orig.size(); ++off) {
    if (std::find(std::begin(kMaskedIpv6), std::end(kMaskedIpv6), off) != std::end(kMaskedIpv6)) {
      continue;
    }
    auto f = orig;
    // Byte 0: flip the version nibble (its low nibble is masked).
    f[off] ^= off == 14 ? 0x10 : 0x01;
    EXPECT_FALSE(icrc_ok(ip_part(f))) << off;
  }
}

TEST(WriteIcrc, TellsIpv6FromTheVersionNibble) {
  auto f = from_hex(kScapySendOnlyIpv6);
  const auto want = std::vector<std::uint8_t>(f.end() - 4, f.end());
  std::fill(f.end() - 4, f.end(), 0);
  write_icrc(std::span<std::uint8_t>(f).subspan(14));
  EXPECT_EQ(std::vector<std::uint8_t>(f.end() - 4, f.end()), want);
}

TEST(IcrcOk, ShortIpv6InputIsFalse) {
  const auto f = from_hex(kScapySendOnlyIpv6);
  for (std::size_t n = 1; n < kIcrcMaskedPrefixIpv6 + kIcrcSize; ++n) {
    EXPECT_FALSE(icrc_ok(ip_part(f).first(n))) << n;
    (void)compute_icrc_ipv6(ip_part(f).first(n));
  }
}

// The ICRC as the annex defines it, the slow way: ISA-L's CRC over 8 bytes
// of 0xff and a masked copy of the whole packet.
std::uint32_t reference_icrc(std::vector<std::uint8_t> ip, bool ipv6) {
  const std::size_t l4 = ipv6 ? 40 : 20;
  if (ipv6) {
    ip[0] |= 0x0f;
    ip[1] = ip[2] = ip[3] = ip[7] = 0xff;
  } else {
    ip[1] = ip[8] = ip[10] = ip[11] = 0xff;
  }
  ip[l4 + 6] = ip[l4 + 7] = 0xff;
  ip[l4 + 8 + 4] = 0xff;
  std::vector<std::uint8_t> all(8 + ip.size(), 0xff);
  for (std::size_t i = 0; i < ip.size(); ++i) all[8 + i] = ip[i];
  return crc32_zlib(0, all);
}

TEST(ComputeIcrc, MatchesTheSlowDefinitionOnRandomPackets) {
  std::mt19937 rng(7);
  for (int i = 0; i < 500; ++i) {
    const bool v6 = (i & 1) != 0;
    std::vector<std::uint8_t> ip((v6 ? kIcrcMaskedPrefixIpv6 : kIcrcMaskedPrefix) + rng() % 4200);
    for (auto& b : ip) b = static_cast<std::uint8_t>(rng());
    ip[0] = static_cast<std::uint8_t>((v6 ? 0x60 : 0x40) | (ip[0] & 0x0f));
    const std::uint32_t want = reference_icrc(ip, v6);
    EXPECT_EQ(v6 ? compute_icrc_ipv6(ip) : compute_icrc(ip), want) << ip.size();
  }
}

// The old formula, two ISA-L calls: the masked headers (icrc_prefix), then
// the rest of the packet in place. Below the masked prefix: the LRH
// stand-in and a copy of what there is, masked where it reaches.
std::uint32_t two_call_icrc(std::span<const std::uint8_t> ip, bool ipv6) {
  const std::size_t prefix = ipv6 ? kIcrcMaskedPrefixIpv6 : kIcrcMaskedPrefix;
  if (ip.size() >= prefix) {
    return crc32_zlib(icrc_prefix(ip.data(), ipv6), ip.subspan(prefix));
  }
  std::vector<std::uint8_t> m(prefix, 0);  // room for every masked byte
  std::copy(ip.begin(), ip.end(), m.begin());
  if (ipv6) {
    m[0] |= 0x0f;
    m[1] = m[2] = m[3] = m[7] = 0xff;
  } else {
    m[1] = m[8] = m[10] = m[11] = 0xff;
  }
  const std::size_t l4 = ipv6 ? 40 : 20;
  m[l4 + 6] = m[l4 + 7] = m[l4 + 8 + 4] = 0xff;
  std::vector<std::uint8_t> all(8 + ip.size(), 0xff);
  for (std::size_t i = 0; i < ip.size(); ++i) all[8 + i] = m[i];
  return crc32_zlib(0, all);
}

// Every length from empty to past kIcrcOneCall (the one-call path, the
// short-input path and the two-call path on each side of its bound), over
// IPv4 and IPv6, from aligned and unaligned addresses: the same value as
// the old two-call formula, and as the slow definition once the headers
// are whole.
TEST(ComputeIcrc, EveryLengthMatchesTheTwoCallFormula) {
  std::mt19937 rng(23);
  std::vector<std::uint8_t> buf(kIcrcOneCall + 64);
  for (const bool v6 : {false, true}) {
    const std::size_t prefix = v6 ? kIcrcMaskedPrefixIpv6 : kIcrcMaskedPrefix;
    for (std::size_t n = 0; n <= kIcrcOneCall + 40; ++n) {
      for (const std::size_t at : {std::size_t{0}, std::size_t{5}}) {
        for (auto& b : buf) b = static_cast<std::uint8_t>(rng());
        buf[at] = static_cast<std::uint8_t>((v6 ? 0x60 : 0x40) | (buf[at] & 0x0f));
        const std::span<const std::uint8_t> ip(buf.data() + at, n);
        const std::uint32_t got = v6 ? compute_icrc_ipv6(ip) : compute_icrc(ip);
        EXPECT_EQ(got, two_call_icrc(ip, v6)) << v6 << " " << n << " " << at;
        if (n >= prefix) {
          EXPECT_EQ(got, reference_icrc(std::vector<std::uint8_t>(ip.begin(), ip.end()), v6))
              << v6 << " " << n << " " << at;
        }
      }
    }
  }
}

// icrc_ok and write_icrc over every length, IPv4 and IPv6: what write_icrc
// stores is the old formula's value, and icrc_ok accepts it.
TEST(IcrcOk, EveryLengthAcceptsWhatWriteIcrcStores) {
  std::mt19937 rng(29);
  for (const bool v6 : {false, true}) {
    const std::size_t prefix = v6 ? kIcrcMaskedPrefixIpv6 : kIcrcMaskedPrefix;
    for (std::size_t n = prefix + kIcrcSize; n <= 300; ++n) {
      std::vector<std::uint8_t> ip(n);
      for (auto& b : ip) b = static_cast<std::uint8_t>(rng());
      ip[0] = static_cast<std::uint8_t>((v6 ? 0x60 : 0x40) | (ip[0] & 0x0f));
      write_icrc(ip);
      const std::span<const std::uint8_t> body(ip.data(), n - kIcrcSize);
      EXPECT_EQ(read_icrc(ip), two_call_icrc(body, v6)) << v6 << " " << n;
      EXPECT_TRUE(icrc_ok(ip)) << v6 << " " << n;
      ip[n - kIcrcSize - 1] ^= 1;
      EXPECT_FALSE(icrc_ok(ip)) << v6 << " " << n;
    }
  }
}

// icrc_prefix continued over the rest in pieces gives compute_icrc's value.
TEST(IcrcPrefix, ContinuedInPiecesMatchesComputeIcrc) {
  std::mt19937 rng(11);
  for (int i = 0; i < 300; ++i) {
    const bool v6 = (i & 1) != 0;
    const std::size_t prefix = v6 ? kIcrcMaskedPrefixIpv6 : kIcrcMaskedPrefix;
    std::vector<std::uint8_t> ip(prefix + rng() % 4200);
    for (auto& b : ip) b = static_cast<std::uint8_t>(rng());
    std::uint32_t crc = icrc_prefix(ip.data(), v6);
    std::size_t at = prefix;
    while (at < ip.size()) {
      const std::size_t k = std::min<std::size_t>(rng() % 500, ip.size() - at);
      crc = crc32_zlib(crc, std::span<const std::uint8_t>(ip.data() + at, k));
      at += k;
    }
    EXPECT_EQ(crc, v6 ? compute_icrc_ipv6(ip) : compute_icrc(ip)) << ip.size();
  }
}

}  // namespace
}  // namespace uroce::wire
