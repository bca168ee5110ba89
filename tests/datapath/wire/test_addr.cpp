#include "datapath/wire/addr.h"

#include <gtest/gtest.h>

namespace uroce::wire {
namespace {

TEST(MacAddr_Parse, AcceptsColonHex) {
  const auto m = MacAddr::parse("02:AB:cd:00:10:ff");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->to_string(), "02:ab:cd:00:10:ff");
  EXPECT_FALSE(m->is_multicast());
}

TEST(MacAddr_Parse, RejectsMalformed) {
  EXPECT_FALSE(MacAddr::parse("02:ab:cd:00:10").has_value());
  EXPECT_FALSE(MacAddr::parse("02-ab-cd-00-10-ff").has_value());
  EXPECT_FALSE(MacAddr::parse("02:ab:cd:00:10:fg").has_value());
  EXPECT_FALSE(MacAddr::parse("").has_value());
}

TEST(MacAddr_Broadcast, IsMulticastToo) {
  EXPECT_TRUE(MacAddr::broadcast().is_broadcast());
  EXPECT_TRUE(MacAddr::broadcast().is_multicast());
}

TEST(Ipv4Addr_Parse, AcceptsDottedQuad) {
  const auto a = Ipv4Addr::parse("192.168.1.20");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->v, 0xC0A80114u);
  EXPECT_EQ(a->to_string(), "192.168.1.20");
}

TEST(Ipv4Addr_Parse, RejectsMalformed) {
  EXPECT_FALSE(Ipv4Addr::parse("1.2.3").has_value());
  EXPECT_FALSE(Ipv4Addr::parse("1.2.3.256").has_value());
  EXPECT_FALSE(Ipv4Addr::parse("1.2.3.4.5").has_value());
  EXPECT_FALSE(Ipv4Addr::parse("1..3.4").has_value());
  EXPECT_FALSE(Ipv4Addr::parse("1.2.3.0004").has_value());
  EXPECT_FALSE(Ipv4Addr::parse(" 1.2.3.4").has_value());
}

TEST(Ipv4Addr_MulticastMac, LowTwentyThreeBitsUnder01_00_5e) {
  const Ipv4Addr g = *Ipv4Addr::parse("239.129.2.3");
  EXPECT_TRUE(g.is_multicast());
  // 239.129.2.3 and 239.1.2.3 share a MAC: the top bit of the second octet goes.
  EXPECT_EQ(g.multicast_mac(), *MacAddr::parse("01:00:5e:01:02:03"));
  EXPECT_EQ(Ipv4Addr::parse("224.0.0.251")->multicast_mac(), *MacAddr::parse("01:00:5e:00:00:fb"));
  EXPECT_TRUE(Ipv4Addr::parse("224.0.0.0")->is_multicast());
  EXPECT_FALSE(Ipv4Addr::parse("223.255.255.255")->is_multicast());
  EXPECT_FALSE(Ipv4Addr::parse("240.0.0.1")->is_multicast());
}

TEST(Ipv6Addr_Parse, TextFormsRoundTrip) {
  const auto a = Ipv6Addr::parse("fe80:0000:0000:0000:5054:00ff:fe12:3456");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->to_string(), "fe80::5054:ff:fe12:3456");
  EXPECT_TRUE(a->is_link_local());
  EXPECT_FALSE(a->is_multicast());
  EXPECT_FALSE(Ipv6Addr::parse("fe80::1::2").has_value());
  EXPECT_FALSE(Ipv6Addr::parse("10.0.0.1").has_value());
  EXPECT_FALSE(Ipv6Addr::parse("").has_value());
  EXPECT_FALSE(Ipv6Addr::parse(std::string(64, '1')).has_value());
  EXPECT_TRUE(Ipv6Addr::parse("::ffff:10.0.0.1")->is_ipv4_mapped());
  EXPECT_FALSE(Ipv6Addr::parse("2001:db8::1")->is_link_local());
}

TEST(Ipv6Addr_LinkLocal, ModifiedEui64OfMac) {
  const Ipv6Addr a = Ipv6Addr::link_local(*MacAddr::parse("52:54:00:12:34:56"));
  EXPECT_EQ(a, *Ipv6Addr::parse("fe80::5054:ff:fe12:3456"));
}

TEST(Ipv6Addr_SolicitedNode, LowThreeBytesUnderFf02_1_ff) {
  const Ipv6Addr a = *Ipv6Addr::parse("2001:db8::aabb:ccdd");
  EXPECT_EQ(a.solicited_node(), *Ipv6Addr::parse("ff02::1:ffbb:ccdd"));
  EXPECT_TRUE(a.solicited_node().is_multicast());
  EXPECT_EQ(a.solicited_node().multicast_mac(), *MacAddr::parse("33:33:ff:bb:cc:dd"));
}

}  // namespace
}  // namespace uroce::wire
