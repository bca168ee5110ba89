// parse_roce over IPv6 (EtherType 0x86DD): the layer checks in front of UDP,
// and that the rest (UDP, BTH, extension headers, ICRC) behaves as over IPv4
// with every offset 20 bytes later.
#include <gtest/gtest.h>

#include <vector>

#include "datapath/wire/builder.h"
#include "datapath/wire/checksum.h"
#include "datapath/wire/icrc.h"
#include "datapath/wire/parser.h"
#include "tests/datapath/wire/sample_packets.h"

namespace uroce::wire {

void PrintTo(ParseError e, std::ostream* os);

namespace {

using testing::sample_spec_ipv6;
using Frame = std::vector<std::uint8_t>;

constexpr std::size_t kIp = 14, kUdp = 54, kBth = 62, kExt = 74;

const std::uint8_t kPayload[7] = {0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70};

Frame build(const PacketSpec& s) {
  Frame f(kMaxRoceFrame);
  const int n = build_roce(s, f);
  EXPECT_GT(n, 0) << build_error_name(static_cast<BuildError>(n));
  f.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return f;
}

Frame sample(std::uint8_t opcode, std::size_t payload_len = 5) {
  return build(sample_spec_ipv6(opcode, std::span(kPayload, payload_len)));
}

ParseError parse(const Frame& f) {
  ParsedPacket p;
  return parse_roce(f, p);
}

std::vector<std::uint8_t> valid_opcodes() {
  std::vector<std::uint8_t> v;
  for (int o = 0; o < 256; ++o) {
    if (opcode_info(static_cast<std::uint8_t>(o)).valid) v.push_back(static_cast<std::uint8_t>(o));
  }
  return v;
}

// The error one flipped bit must give in a frame with UDP checksum 0. What
// follows the BTH is checked by test_parser.cpp over IPv4 (the code is
// shared); here every bit up to the end of the BTH is.
ParseError expect_flip(const Frame& f, std::size_t byte, int bit) {
  if (byte < 12) return ParseError::kOk;  // MACs
  if (byte < kIp) return ParseError::kNotIp;
  if (byte == kIp) return bit >= 4 ? ParseError::kBadIpVersion : ParseError::kOk;  // TC masked
  if (byte < kIp + 4) return ParseError::kOk;  // traffic class, flow label: masked
  if (byte < kIp + 6) {
    const std::size_t plen =
        load_be16(f.data() + kIp + 4) ^ (byte == kIp + 4 ? 0x100u << bit : 1u << bit);
    if (plen > f.size() - kUdp) return ParseError::kBadIpTotalLength;
    return plen < UdpHdr::kSize ? ParseError::kTruncatedUdp : ParseError::kBadUdpLength;
  }
  if (byte == kIp + 6) return ParseError::kNotUdp;
  if (byte == kIp + 7) return ParseError::kOk;       // hop limit: masked
  if (byte < kUdp) return ParseError::kBadIcrc;      // addresses
  if (byte < kUdp + 2) return ParseError::kBadIcrc;  // source port
  if (byte < kUdp + 4) return ParseError::kNotRoceV2Port;
  if (byte < kUdp + 6) return ParseError::kBadUdpLength;
  if (byte < kBth) return ParseError::kBadUdpChecksum;  // 0 -> non-zero
  if (byte == kBth + BthHdr::kIcrcMaskedByte) return ParseError::kOk;
  return ParseError::kNotIp;  // not reached: the caller stops at the BTH
}

TEST(ParserIpv6_Parse, EveryOpcodeRoundTrips) {
  for (std::uint8_t o : valid_opcodes()) {
    const PacketSpec s = sample_spec_ipv6(o, std::span(kPayload, 5));
    const Frame f = build(s);
    ParsedPacket p;
    ASSERT_EQ(parse_roce(f, p), ParseError::kOk) << opcode_name(o);
    const OpcodeInfo& info = opcode_info(o);
    EXPECT_TRUE(p.ipv6);
    EXPECT_EQ(p.eth.ether_type(), kEtherTypeIpv6);
    EXPECT_EQ(p.ip6.version(), 6);
    EXPECT_EQ(p.ip6.src(), testing::kSampleIp6Src);
    EXPECT_EQ(p.ip6.dst(), testing::kSampleIp6Dst);
    EXPECT_EQ(p.ip6.dscp(), s.dscp);
    EXPECT_EQ(p.ip6.ecn(), s.ecn);
    EXPECT_EQ(p.dscp(), s.dscp);
    EXPECT_EQ(p.ip6.flow_label(), testing::kSampleFlowLabel);
    EXPECT_EQ(p.ip6.hop_limit(), s.ttl);
    EXPECT_EQ(p.ip6.next_header(), kIpProtoUdp);
    EXPECT_EQ(p.ip6.payload_length(), f.size() - kUdp);
    EXPECT_EQ(p.udp.src_port(), s.udp_src);
    EXPECT_EQ(p.udp.checksum(), 0);
    EXPECT_EQ(p.bth.dest_qp(), s.dest_qp);
    EXPECT_EQ(p.bth.psn(), s.psn);
    EXPECT_EQ(p.udp_offset, kUdp);
    EXPECT_EQ(p.bth_offset, kBth);
    EXPECT_EQ(p.payload_offset, kExt + info.ext_len);
    EXPECT_EQ(p.frame_len, f.size());
    EXPECT_EQ(p.icrc_offset, f.size() - 4);
    EXPECT_EQ(p.payload.size(), info.payload ? 5u : 0u) << opcode_name(o);
    if (info.has(ExtHdr::kReth)) {
      EXPECT_EQ(p.reth.rkey(), testing::kSampleRkey);
    }
    if (info.has(ExtHdr::kDeth)) {
      EXPECT_EQ(p.deth.src_qp(), testing::kSampleSrcQp);
    }
    if (info.has(ExtHdr::kDcEth)) {
      EXPECT_EQ(p.dc_eth.key(), testing::kSampleDcKey);
      EXPECT_EQ(p.dc_eth.first_psn(), testing::kSampleFirstPsn);
    }
    if (info.has(ExtHdr::kDcAeth)) {
      EXPECT_EQ(p.dc_aeth.conn(), testing::kSampleConn);
    }
  }
}

TEST(ParserIpv6_Parse, FrameCutAtEveryLengthGivesLayerError) {
  for (std::uint8_t o : valid_opcodes()) {
    const Frame full = sample(o);
    for (std::size_t n = 0; n < full.size(); ++n) {
      const Frame f(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
      const ParseError want = n < 14   ? ParseError::kTruncatedEth
                              : n < 54 ? ParseError::kTruncatedIpv6
                                       : ParseError::kBadIpTotalLength;
      EXPECT_EQ(parse(f), want) << opcode_name(o) << " len " << n;
    }
  }
}

TEST(ParserIpv6_Parse, ConsistentlyShortPacketGivesTruncation) {
  const Frame full = sample(op::kRcWriteOnly, 5);
  for (std::size_t n = kIp + Ipv6Hdr::kSize; n < kExt; ++n) {
    Frame f(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    store_be16(f.data() + kIp + 4, static_cast<std::uint16_t>(n - kUdp));
    if (n >= kBth) store_be16(f.data() + kUdp + 4, static_cast<std::uint16_t>(n - kUdp));
    const ParseError want = n < kBth ? ParseError::kTruncatedUdp : ParseError::kTruncatedBth;
    EXPECT_EQ(parse(f), want) << n;
  }
}

// As over IPv4 (test_parser.cpp): an IP packet ending inside the DC header
// gives exactly that header's truncation.
TEST(ParserIpv6_Parse, DcHeaderCutGivesItsTruncation) {
  struct Case {
    std::uint8_t opcode;
    ParseError cut;
    std::size_t hdr;
  };
  const Case cases[] = {
      {op::kDcWriteOnlyImm, ParseError::kTruncatedDcEth, DcEthHdr::kSize},
      {op::kDcDisconnect, ParseError::kTruncatedDcEth, DcEthHdr::kSize},
      {op::kDcAtomicAck, ParseError::kTruncatedDcAeth, DcAethHdr::kSize},
      {op::kDcReadResponseOnly, ParseError::kTruncatedDcAeth, DcAethHdr::kSize},
  };
  for (const Case& c : cases) {
    const Frame full = sample(c.opcode, 0);
    for (std::size_t n = kExt; n < kExt + c.hdr; ++n) {
      Frame f(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
      store_be16(f.data() + kIp + 4, static_cast<std::uint16_t>(n - kUdp));
      store_be16(f.data() + kUdp + 4, static_cast<std::uint16_t>(n - kUdp));
      EXPECT_EQ(parse(f), c.cut) << opcode_name(c.opcode) << " " << n;
    }
  }
}

TEST(ParserIpv6_Parse, EveryFlippedHeaderBitGivesItsError) {
  for (std::uint8_t o : valid_opcodes()) {
    const Frame orig = sample(o, 7);
    ASSERT_EQ(parse(orig), ParseError::kOk);
    for (std::size_t byte = 0; byte < kBth; ++byte) {
      for (int bit = 0; bit < 8; ++bit) {
        Frame f = orig;
        f[byte] ^= static_cast<std::uint8_t>(1u << bit);
        ASSERT_EQ(parse(f), expect_flip(orig, byte, bit))
            << opcode_name(o) << " byte " << byte << " bit " << bit;
      }
    }
    Frame f = orig;
    f[kBth + BthHdr::kIcrcMaskedByte] ^= 0x80;  // FECN
    EXPECT_EQ(parse(f), ParseError::kOk);
    f = orig;
    f[kBth + 5] ^= 0x01;  // destination QP: covered by the ICRC
    EXPECT_EQ(parse(f), ParseError::kBadIcrc);
  }
}

TEST(ParserIpv6_Parse, VariantFieldsMayChangeInFlight) {
  // A router lowers the hop limit and rewrites the traffic class, a host on
  // the path sets another flow label, a switch sets FECN: the ICRC holds.
  Frame f = sample(op::kRcSendOnly, 5);
  Ipv6Hdr ip = Ipv6Hdr::read(f.data() + kIp);
  ip.set_version_tc_flow(6, 0xbb, 0x12345);
  ip.set_hop_limit(3);
  ip.write(f.data() + kIp);
  f[kBth + 4] |= 0x80;
  ParsedPacket p;
  ASSERT_EQ(parse_roce(f, p), ParseError::kOk);
  EXPECT_EQ(p.ip6.hop_limit(), 3);
  EXPECT_EQ(p.ip6.traffic_class(), 0xbb);
  EXPECT_EQ(p.ip6.flow_label(), 0x12345u);
  EXPECT_TRUE(p.bth.fecn());
}

TEST(ParserIpv6_Parse, ExtensionHeaderIsNotUdp) {
  Frame f = sample(op::kRcAck);
  f[kIp + 6] = 0;  // Hop-by-Hop Options
  EXPECT_EQ(parse(f), ParseError::kNotUdp);
  f[kIp + 6] = 44;  // Fragment
  EXPECT_EQ(parse(f), ParseError::kNotUdp);
}

TEST(ParserIpv6_Parse, WrongVersionUnderIpv6EtherType) {
  Frame f = sample(op::kRcAck);
  f[kIp] = static_cast<std::uint8_t>(0x40 | (f[kIp] & 0x0f));
  EXPECT_EQ(parse(f), ParseError::kBadIpVersion);
}

TEST(ParserIpv6_Parse, UdpChecksumVerifiedWhenNonZero) {
  PacketSpec s = sample_spec_ipv6(op::kUdSendOnly, std::span(kPayload, 7));
  s.udp_checksum = true;
  Frame f = build(s);
  ParsedPacket p;
  ASSERT_EQ(parse_roce(f, p), ParseError::kOk);
  EXPECT_NE(p.udp.checksum(), 0);
  EXPECT_TRUE(ipv6_checksum_ok(testing::kSampleIp6Src, testing::kSampleIp6Dst, kIpProtoUdp,
                               std::span<const std::uint8_t>(f).subspan(kUdp)));
  Frame g = f;
  g[kUdp + 7] ^= 0x80;
  EXPECT_EQ(parse(g), ParseError::kBadUdpChecksum);
  g = f;
  g[kIp + 8 + 15] ^= 0x01;  // source address: in the pseudo header
  EXPECT_EQ(parse(g), ParseError::kBadUdpChecksum);
}

TEST(ParserIpv6_Parse, EthernetPaddingIsIgnored) {
  const Frame tiny = sample(op::kRcSendMiddle, 0);
  ASSERT_EQ(tiny.size(), 78u);
  Frame f = tiny;
  f.resize(120, 0xa5);
  ParsedPacket p;
  ASSERT_EQ(parse_roce(f, p), ParseError::kOk);
  EXPECT_EQ(p.frame_len, 78u);
}

TEST(ParserIpv6_Parse, Ipv4AfterIpv6ClearsTheFlag) {
  ParsedPacket p;
  ASSERT_EQ(parse_roce(sample(op::kRcAck), p), ParseError::kOk);
  EXPECT_TRUE(p.ipv6);
  Frame v4(kMaxRoceFrame);
  v4.resize(static_cast<std::size_t>(build_roce(testing::sample_spec(op::kRcAck), v4)));
  ASSERT_EQ(parse_roce(v4, p), ParseError::kOk);
  EXPECT_FALSE(p.ipv6);
  EXPECT_EQ(p.bth_offset, 42u);
}

}  // namespace
}  // namespace uroce::wire
