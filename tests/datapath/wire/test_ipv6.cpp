#include "datapath/wire/ipv6.h"

#include <gtest/gtest.h>

namespace uroce::wire {
namespace {

// RFC 8200 section 3 layout, byte by byte.
TEST(Ipv6Hdr_Accessors, FieldsLandWhereRfc8200PutsThem) {
  Ipv6Hdr h;
  h.set_version_tc_flow(6, 0xa5, 0xbcdef);
  h.set_payload_length(0x1234);
  h.set_next_header(kIpProtoUdp);
  h.set_hop_limit(63);
  h.set_src(*Ipv6Addr::parse("fe80::1"));
  h.set_dst(*Ipv6Addr::parse("2001:db8::ff"));
  EXPECT_EQ(h.raw[0], 0x6a);
  EXPECT_EQ(h.raw[1], 0x5b);
  EXPECT_EQ(h.raw[2], 0xcd);
  EXPECT_EQ(h.raw[3], 0xef);
  EXPECT_EQ(h.raw[4], 0x12);
  EXPECT_EQ(h.raw[5], 0x34);
  EXPECT_EQ(h.raw[6], 17);
  EXPECT_EQ(h.raw[7], 63);
  EXPECT_EQ(h.raw[8], 0xfe);
  EXPECT_EQ(h.raw[23], 0x01);
  EXPECT_EQ(h.raw[24], 0x20);
  EXPECT_EQ(h.raw[39], 0xff);
  EXPECT_EQ(h.version(), 6);
  EXPECT_EQ(h.traffic_class(), 0xa5);
  EXPECT_EQ(h.dscp(), 0xa5 >> 2);
  EXPECT_EQ(h.ecn(), 1);
  EXPECT_EQ(h.flow_label(), 0xbcdefu);
  EXPECT_EQ(h.payload_length(), 0x1234);
  EXPECT_EQ(h.next_header(), kIpProtoUdp);
  EXPECT_EQ(h.hop_limit(), 63);
  EXPECT_EQ(h.src().to_string(), "fe80::1");
  EXPECT_EQ(h.dst().to_string(), "2001:db8::ff");
}

TEST(Ipv6Hdr_Accessors, FlowLabelIsMaskedTo20Bits) {
  Ipv6Hdr h;
  h.set_version_tc_flow(6, 0, 0xfffffff);
  EXPECT_EQ(h.flow_label(), kFlowLabelMask);
  EXPECT_EQ(h.traffic_class(), 0);
  EXPECT_EQ(h.version(), 6);
}

TEST(Ipv6Hdr_ReadWrite, RoundTrips) {
  std::uint8_t buf[Ipv6Hdr::kSize + 2]{};
  Ipv6Hdr h;
  h.set_version_tc_flow(6, 0x10, 7);
  h.set_hop_limit(1);
  h.write(buf + 1);
  EXPECT_EQ(buf[0], 0);
  EXPECT_EQ(buf[Ipv6Hdr::kSize + 1], 0);
  const Ipv6Hdr r = Ipv6Hdr::read(buf + 1);
  EXPECT_EQ(r.flow_label(), 7u);
  EXPECT_EQ(r.hop_limit(), 1);
  EXPECT_EQ(r.traffic_class(), 0x10);
}

}  // namespace
}  // namespace uroce::wire
