// parse_roce over a chained frame (a first segment and a tail, payload.h):
// the same result as over the frame in one buffer, wherever the segments
// end, and the chained frame's own checks.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "datapath/wire/builder.h"
#include "datapath/wire/parser.h"
#include "tests/datapath/wire/sample_packets.h"

namespace uroce::wire {

void PrintTo(ParseError e, std::ostream* os);

namespace {

using testing::sample_spec;
using testing::sample_spec_ipv6;
using Frame = std::vector<std::uint8_t>;

Frame build(const PacketSpec& s) {
  Frame f(kMaxRoceFrame);
  const int n = build_roce(s, f);
  EXPECT_GT(n, 0) << build_error_name(static_cast<BuildError>(n));
  f.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return f;
}

std::vector<std::uint8_t> payload_bytes(std::size_t n) {
  std::vector<std::uint8_t> b(n);
  std::iota(b.begin(), b.end(), std::uint8_t{7});
  return b;
}

// A frame cut into a head of `head` bytes and tail segments of `seg` bytes.
struct Chain {
  std::span<const std::uint8_t> head;
  std::vector<std::span<const std::uint8_t>> tail;
};
Chain cut(const Frame& f, std::size_t head, std::size_t seg) {
  Chain c;
  c.head = cut_frame(f, head, seg, c.tail);
  return c;
}

ParseError parse_chain(const Chain& c, ParsedPacket& p) { return parse_roce(c.head, c.tail, p); }

std::vector<std::uint8_t> copy_of(const Payload& p) {
  std::vector<std::uint8_t> out(p.size());
  p.copy_out(0, out.data(), out.size());
  return out;
}

// Every cut of `f` parses as `f` does, with the same fields and payload.
void expect_cuts_parse_alike(const Frame& f) {
  ParsedPacket whole;
  ASSERT_EQ(parse_roce(f, whole), ParseError::kOk);
  const std::vector<std::uint8_t> want(whole.payload.begin(), whole.payload.end());
  for (std::size_t head = kChainedHeadMin; head < f.size(); head += 37) {
    for (std::size_t seg : {1u, 2u, 3u, 5u, 64u, 1000u, 2048u}) {
      const Chain c = cut(f, head, seg);
      ParsedPacket p;
      ASSERT_EQ(parse_chain(c, p), ParseError::kOk) << "head " << head << " seg " << seg;
      EXPECT_EQ(p.bth.opcode(), whole.bth.opcode());
      EXPECT_EQ(p.bth.psn(), whole.bth.psn());
      EXPECT_EQ(p.reth.va(), whole.reth.va());
      EXPECT_EQ(p.icrc, whole.icrc);
      EXPECT_EQ(p.frame_len, whole.frame_len);
      EXPECT_EQ(p.payload_offset, whole.payload_offset);
      EXPECT_EQ(p.icrc_offset, whole.icrc_offset);
      EXPECT_EQ(p.payload.size(), whole.payload.size());
      EXPECT_EQ(copy_of(p.payload), want) << "head " << head << " seg " << seg;
    }
  }
}

TEST(ParseRoceChained_Ipv4, EveryCutParsesAsTheWholeFrame) {
  const std::vector<std::uint8_t> pl = payload_bytes(3001);  // pad 3
  expect_cuts_parse_alike(build(sample_spec(op::kRcWriteOnly, pl)));
}

TEST(ParseRoceChained_Ipv6, EveryCutParsesAsTheWholeFrame) {
  const std::vector<std::uint8_t> pl = payload_bytes(3000);
  expect_cuts_parse_alike(build(sample_spec_ipv6(op::kRcSendOnlyImm, pl)));
}

TEST(ParseRoceChained_UdpChecksum, VerifiedOverOddPieces) {
  const std::vector<std::uint8_t> pl = payload_bytes(1999);
  for (bool v6 : {false, true}) {
    PacketSpec s = v6 ? sample_spec_ipv6(op::kUdSendOnly, pl) : sample_spec(op::kUdSendOnly, pl);
    s.udp_checksum = true;
    expect_cuts_parse_alike(build(s));
  }
}

TEST(ParseRoceChained_UdpChecksum, AFlippedTailByteIsBadUdpChecksum) {
  const std::vector<std::uint8_t> pl = payload_bytes(1999);
  PacketSpec s = sample_spec(op::kUdSendOnly, pl);
  s.udp_checksum = true;
  Frame f = build(s);
  f[1500] ^= 0x04;
  ParsedPacket p;
  EXPECT_EQ(parse_chain(cut(f, 1024, 333), p), ParseError::kBadUdpChecksum);
}

TEST(ParseRoceChained_Icrc, AFlippedTailByteIsBadIcrc) {
  const std::vector<std::uint8_t> pl = payload_bytes(4096);
  Frame f = build(sample_spec(op::kRcWriteOnly, pl));
  for (std::size_t at : {std::size_t{2000}, f.size() - 5, f.size() - 1}) {
    Frame g = f;
    g[at] ^= 0x01;
    ParsedPacket p;
    EXPECT_EQ(parse_chain(cut(g, 2048, 2048), p), ParseError::kBadIcrc) << at;
  }
}

TEST(ParseRoceChained_Icrc, StraddlingTwoSegmentsIsRead) {
  const std::vector<std::uint8_t> pl = payload_bytes(2500);
  const Frame f = build(sample_spec(op::kRcWriteOnly, pl));
  ParsedPacket whole;
  ASSERT_EQ(parse_roce(f, whole), ParseError::kOk);
  for (std::size_t in_last = 1; in_last < kIcrcSize; ++in_last) {
    const std::size_t head = f.size() - in_last - 300;
    const Chain c = cut(f, head, 300);  // the last segment holds in_last ICRC bytes
    ParsedPacket p;
    ASSERT_EQ(parse_chain(c, p), ParseError::kOk) << in_last;
    EXPECT_EQ(c.tail.back().size(), in_last);
    EXPECT_EQ(p.icrc, whole.icrc);
  }
}

TEST(ParseRoceChained_Head, ShorterThanTheLongestHeadersIsSplitHeaders) {
  const std::vector<std::uint8_t> pl = payload_bytes(1000);
  const Frame f = build(sample_spec(op::kRcWriteOnly, pl));
  ParsedPacket p;
  EXPECT_EQ(parse_chain(cut(f, kChainedHeadMin - 1, 512), p), ParseError::kSplitHeaders);
  EXPECT_EQ(p.info, nullptr);
  EXPECT_TRUE(p.payload.empty());
  EXPECT_EQ(parse_chain(cut(f, kChainedHeadMin, 512), p), ParseError::kOk);
}

TEST(ParseRoceChained_Tail, EmptyTailIsTheOneBufferParse) {
  const Frame f = build(sample_spec(op::kRcAck));
  ParsedPacket p;
  EXPECT_EQ(parse_roce(f, FrameTail{}, p), ParseError::kOk);
  EXPECT_TRUE(p.payload.contiguous());
}

TEST(ParseRoceChained_Length, IpLengthPastTheTailIsBadIpTotalLength) {
  const std::vector<std::uint8_t> pl = payload_bytes(3000);
  const Frame f = build(sample_spec(op::kRcWriteOnly, pl));
  Chain c = cut(f, 2048, 2048);
  c.tail.back() = c.tail.back().first(c.tail.back().size() - 1);
  ParsedPacket p;
  EXPECT_EQ(parse_chain(c, p), ParseError::kBadIpTotalLength);
}

TEST(KChainedHeadMin, HoldsTheLongestHeaderStack) {
  // Every opcode's headers over IPv6 end within kChainedHeadMin bytes.
  for (int o = 0; o < 256; ++o) {
    const OpcodeInfo& info = opcode_info(static_cast<std::uint8_t>(o));
    if (!info.valid) continue;
    const Frame f = build(sample_spec_ipv6(static_cast<std::uint8_t>(o)));
    ParsedPacket p;
    ASSERT_EQ(parse_roce(f, p), ParseError::kOk) << o;
    EXPECT_LE(p.payload_offset, kChainedHeadMin) << o;
  }
}

}  // namespace
}  // namespace uroce::wire
