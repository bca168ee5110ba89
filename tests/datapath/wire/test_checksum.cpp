#include "datapath/wire/checksum.h"

#include <gtest/gtest.h>

#include <vector>

namespace uroce::wire {
namespace {

TEST(CsumAdd, Rfc1071Example) {
  // RFC 1071 section 3 example: sum of these words is ddf2.
  const std::uint8_t d[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
  EXPECT_EQ(csum_fold(csum_add(0, d)), 0xddf2);
}

TEST(CsumAdd, OddLengthPadsWithZero) {
  const std::uint8_t d[] = {0x12, 0x34, 0x56};
  EXPECT_EQ(csum_fold(csum_add(0, d)), 0x1234 + 0x5600);
}

TEST(UdpIpv4Checksum, KnownDatagram) {
  // 10.0.0.1:1000 -> 10.0.0.2:2000, payload "abcd"; worked by hand:
  // pseudo 0a00+0001+0a00+0002+0011+000c, header 03e8+07d0+000c, data
  // 6162+6364 -> sum 0xe4aa -> ~ = 0x1b55.
  std::vector<std::uint8_t> seg = {0x03, 0xe8, 0x07, 0xd0, 0x00, 0x0c,
                                   0x00, 0x00, 'a',  'b',  'c',  'd'};
  const Ipv4Addr s{0x0a000001}, d{0x0a000002};
  EXPECT_EQ(udp_ipv4_checksum(s, d, seg), 0x1b55);
  seg[6] = 0x1b;
  seg[7] = 0x55;
  EXPECT_TRUE(udp_ipv4_checksum_ok(s, d, seg));
  seg[9] ^= 1;
  EXPECT_FALSE(udp_ipv4_checksum_ok(s, d, seg));
}

TEST(Ipv6Checksum, KnownDatagram) {
  // fe80::1 -> fe80::2, UDP 1000 -> 2000, payload "abcd"; worked by hand:
  // pseudo fe80+0001+fe80+0002 + length 000c + next header 0011, header
  // 03e8+07d0+000c, data 6162+6364 -> sum 0x2cdaa -> fold 0xcdac -> ~ 0x3253.
  std::vector<std::uint8_t> seg = {0x03, 0xe8, 0x07, 0xd0, 0x00, 0x0c,
                                   0x00, 0x00, 'a',  'b',  'c',  'd'};
  const Ipv6Addr s = *Ipv6Addr::parse("fe80::1"), d = *Ipv6Addr::parse("fe80::2");
  EXPECT_EQ(ipv6_checksum(s, d, kIpProtoUdp, seg), 0x3253);
  EXPECT_EQ(udp_ipv6_checksum(s, d, seg), 0x3253);
  seg[6] = 0x32;
  seg[7] = 0x53;
  EXPECT_TRUE(ipv6_checksum_ok(s, d, kIpProtoUdp, seg));
  EXPECT_FALSE(ipv6_checksum_ok(s, d, kIpProtoIcmpv6, seg));  // next header is summed
  seg[9] ^= 1;
  EXPECT_FALSE(ipv6_checksum_ok(s, d, kIpProtoUdp, seg));
}

}  // namespace
}  // namespace uroce::wire
