#include "datapath/port/gid_table.h"

#include <gtest/gtest.h>

namespace uroce::port {
namespace {

using wire::Ipv4Addr;
using wire::MacAddr;

const MacAddr kQemuMac{{0x52, 0x54, 0x00, 0x12, 0x34, 0x56}};

TEST(Gid_LinkLocal, ModifiedEui64FlipsUniversalLocalBit) {
  // Linux gives this MAC the link-local address fe80::5054:ff:fe12:3456.
  EXPECT_EQ(Gid::link_local(kQemuMac).to_string(), "fe80:0000:0000:0000:5054:00ff:fe12:3456");
  // A locally administered MAC (U/L bit set) loses the bit.
  const MacAddr local{{0x02, 0x00, 0x5e, 0x00, 0x53, 0x01}};
  EXPECT_EQ(Gid::link_local(local).to_string(), "fe80:0000:0000:0000:0000:5eff:fe00:5301");
}

TEST(Gid_Ipv4Mapped, SysfsForm) {
  const Gid g = Gid::ipv4_mapped(*Ipv4Addr::parse("192.168.1.10"));
  EXPECT_EQ(g.to_string(), "0000:0000:0000:0000:0000:ffff:c0a8:010a");
  EXPECT_TRUE(g.is_ipv4_mapped());
  ASSERT_TRUE(g.ipv4().has_value());
  EXPECT_EQ(g.ipv4()->to_string(), "192.168.1.10");
  EXPECT_FALSE(Gid::link_local(kQemuMac).is_ipv4_mapped());
  EXPECT_FALSE(Gid::link_local(kQemuMac).ipv4().has_value());
}

TEST(Gid_Parse, SysfsFormRoundTrips) {
  const auto g = Gid::parse("fe80:0000:0000:0000:5054:00ff:fe12:3456");
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(*g, Gid::link_local(kQemuMac));
}

TEST(Gid_Parse, CompressedAndDottedForms) {
  EXPECT_EQ(Gid::parse("fe80::5054:ff:fe12:3456"), Gid::link_local(kQemuMac));
  EXPECT_EQ(Gid::parse("::ffff:10.0.0.1"), Gid::ipv4_mapped(Ipv4Addr{0x0a000001}));
  EXPECT_EQ(Gid::parse("::"), Gid{});
}

TEST(Gid_Parse, InvalidGivesNullopt) {
  EXPECT_FALSE(Gid::parse("").has_value());
  EXPECT_FALSE(Gid::parse("fe80::1::2").has_value());
  EXPECT_FALSE(Gid::parse("fe80:0000:0000:0000:5054:00ff:fe12").has_value());
  EXPECT_FALSE(Gid::parse("10.0.0.1").has_value());
  EXPECT_FALSE(Gid::parse("fe80:0000:0000:0000:5054:00ff:fe12:3456 ").has_value());
  EXPECT_FALSE(Gid::parse(std::string(100, '0')).has_value());
}

TEST(GidTable_At, RxeOrderAndTypes) {
  const GidTable t(kQemuMac, *Ipv4Addr::parse("10.1.2.3"));
  const auto e0 = t.at(0);
  const auto e1 = t.at(1);
  ASSERT_TRUE(e0.has_value());
  ASSERT_TRUE(e1.has_value());
  EXPECT_EQ(e0->gid.to_string(), "fe80:0000:0000:0000:5054:00ff:fe12:3456");
  EXPECT_EQ(e1->gid.to_string(), "0000:0000:0000:0000:0000:ffff:0a01:0203");
  EXPECT_STREQ(to_string(e0->type), "RoCE v2");
  EXPECT_STREQ(to_string(e1->type), "RoCE v2");
  EXPECT_FALSE(t.at(2).has_value());
  EXPECT_FALSE(t.at(GidTable::kEntries).has_value());
}

TEST(GidTable_At, NoIpv4LeavesIndexOneEmpty) {
  const GidTable t(kQemuMac, Ipv4Addr{});
  EXPECT_TRUE(t.at(0).has_value());
  EXPECT_FALSE(t.at(1).has_value());
}

TEST(GidTable_Find, IndexOfEachGid) {
  const GidTable t(kQemuMac, Ipv4Addr{0x0a010203});
  EXPECT_EQ(t.find(Gid::link_local(kQemuMac)), 0u);
  EXPECT_EQ(t.find(Gid::ipv4_mapped(Ipv4Addr{0x0a010203})), 1u);
  EXPECT_FALSE(t.find(Gid::ipv4_mapped(Ipv4Addr{0x0a010204})).has_value());
  EXPECT_FALSE(t.find(Gid{}).has_value());
}

TEST(GidTable_SetIpv4, ReplacesAndClearsIndexOne) {
  GidTable t(kQemuMac, Ipv4Addr{0x0a010203});
  t.set_ipv4(Ipv4Addr{0x0a010204});
  EXPECT_EQ(t.at(1)->gid, Gid::ipv4_mapped(Ipv4Addr{0x0a010204}));
  EXPECT_FALSE(t.find(Gid::ipv4_mapped(Ipv4Addr{0x0a010203})).has_value());
  t.set_ipv4(Ipv4Addr{});
  EXPECT_FALSE(t.at(1).has_value());
  EXPECT_EQ(t.find(Gid::link_local(kQemuMac)), 0u);
}

TEST(GidTable_SetMac, ReplacesIndexZero) {
  GidTable t(kQemuMac, Ipv4Addr{0x0a010203});
  const MacAddr other{{0x02, 0, 0, 0, 0, 1}};
  t.set_mac(other);
  EXPECT_EQ(t.at(0)->gid.to_string(), "fe80:0000:0000:0000:0000:00ff:fe00:0001");
  EXPECT_FALSE(t.find(Gid::link_local(kQemuMac)).has_value());
}

TEST(GidTable_At, GlobalIpv6FollowsIpv4AsInRxe) {
  const wire::Ipv6Addr g6 = *wire::Ipv6Addr::parse("2001:db8::5");
  const GidTable t(kQemuMac, *Ipv4Addr::parse("10.1.2.3"), g6);
  ASSERT_TRUE(t.at(2).has_value());
  EXPECT_EQ(t.at(2)->gid.to_string(), "2001:0db8:0000:0000:0000:0000:0000:0005");
  EXPECT_STREQ(to_string(t.at(2)->type), "RoCE v2");
  EXPECT_EQ(t.ipv6_index(), 2u);
  EXPECT_EQ(t.find(Gid::from_ipv6(g6)), 2u);
  EXPECT_EQ(t.at(2)->gid.ipv6(), g6);
  // Without an IPv4 address the kernel puts it in the first free entry.
  const GidTable no4(kQemuMac, Ipv4Addr{}, g6);
  EXPECT_EQ(no4.ipv6_index(), 1u);
  EXPECT_EQ(no4.at(1)->gid, Gid::from_ipv6(g6));
  EXPECT_FALSE(no4.at(2).has_value());
}

TEST(GidTable_SetIpv6, AddsMovesAndClears) {
  GidTable t(kQemuMac, Ipv4Addr{0x0a010203});
  EXPECT_FALSE(t.ipv6_index().has_value());
  EXPECT_FALSE(t.at(2).has_value());
  const wire::Ipv6Addr g6 = *wire::Ipv6Addr::parse("2001:db8::5");
  t.set_ipv6(g6);
  EXPECT_EQ(t.find(Gid::from_ipv6(g6)), 2u);
  t.set_ipv4(Ipv4Addr{});
  EXPECT_EQ(t.find(Gid::from_ipv6(g6)), 1u);
  EXPECT_FALSE(t.at(2).has_value());
  t.set_ipv6(wire::Ipv6Addr{});
  EXPECT_FALSE(t.at(1).has_value());
  EXPECT_EQ(t.find(Gid::link_local(kQemuMac)), 0u);
}

}  // namespace
}  // namespace uroce::port
