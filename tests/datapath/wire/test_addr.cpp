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

}  // namespace
}  // namespace uroce::wire
