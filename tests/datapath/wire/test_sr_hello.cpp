#include "datapath/wire/sr_hello.h"

#include <gtest/gtest.h>

#include <vector>

#include "datapath/wire/builder.h"
#include "datapath/wire/parser.h"
#include "tests/datapath/wire/sample_packets.h"

namespace uroce::wire {
namespace {

TEST(SrHelloHdr_Make, BigEndianLayout) {
  const SrHelloHdr h = SrHelloHdr::make(true, 0x0102, 0x0304);
  const std::uint8_t want[SrHelloHdr::kSize] = {1, 1, 1, 2, 3, 4, 0, 0};
  for (std::size_t i = 0; i < SrHelloHdr::kSize; ++i) EXPECT_EQ(h.raw[i], want[i]) << i;
  EXPECT_EQ(kSrHelloOpcode >> 5, 0b110);  // manufacturer-specific range
}

TEST(SrHelloHdr_FromPayload, RoundTripAndShortPayload) {
  std::uint8_t buf[SrHelloHdr::kSize + 1]{};
  SrHelloHdr::make(false, 256, 64).write(buf);
  const auto r = SrHelloHdr::from_payload(buf);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->version(), SrHelloHdr::kVersion);
  EXPECT_FALSE(r->answer());
  EXPECT_EQ(r->window(), 256);
  EXPECT_EQ(r->recv_held(), 64);
  EXPECT_FALSE(SrHelloHdr::from_payload(std::span(buf, SrHelloHdr::kSize - 1)).has_value());
}

// A HELLO parses as a uroce control packet with itself as the payload.
TEST(SrHelloHdr_Parse, RidesWherePayloadWouldBe) {
  const SrHelloHdr h = SrHelloHdr::make(true, 256, 64);
  const PacketSpec s = testing::sample_spec(op::kSrHello, std::span(h.raw, sizeof h.raw));
  std::vector<std::uint8_t> f(roce_frame_size(s));
  ASSERT_GT(build_roce(s, f), 0);
  ParsedPacket p;
  ASSERT_EQ(parse_roce(f, p), ParseError::kOk);
  EXPECT_EQ(p.info->transport, Transport::kExt);
  const auto r = SrHelloHdr::from_payload(p.payload.head());
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->answer());
  EXPECT_EQ(r->window(), 256);
}

}  // namespace
}  // namespace uroce::wire
