// The multicast group table (mcast_table.h): which GIDs name groups, attach
// and detach with their errors, rxe's limits, and forget.
#include "datapath/engine/mcast_table.h"

#include <gtest/gtest.h>

namespace uroce::engine {
namespace {

wire::Ipv6Addr v4_group(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
  return wire::Ipv6Addr{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d}};
}

TEST(IsMcastGid, Ipv6MulticastAndIpv4MappedMulticastOnly) {
  EXPECT_TRUE(is_mcast_gid(*wire::Ipv6Addr::parse("ff0e::1")));
  EXPECT_TRUE(is_mcast_gid(v4_group(224, 0, 0, 1)));
  EXPECT_TRUE(is_mcast_gid(v4_group(239, 255, 255, 255)));
  EXPECT_FALSE(is_mcast_gid(v4_group(240, 0, 0, 1)));
  EXPECT_FALSE(is_mcast_gid(v4_group(10, 0, 0, 1)));
  EXPECT_FALSE(is_mcast_gid(*wire::Ipv6Addr::parse("2001:db8::1")));
  EXPECT_FALSE(is_mcast_gid(*wire::Ipv6Addr::parse("::e000:1")));  // not IPv4-mapped
}

TEST(McastTable_Attach, JoinsOnceAndListsMembersInOrder) {
  McastTable t;
  const wire::Ipv6Addr g = v4_group(239, 1, 2, 3);
  EXPECT_TRUE(t.empty());
  EXPECT_TRUE(t.members(g).empty());
  ASSERT_EQ(t.attach(g, 0x11), 0);
  ASSERT_EQ(t.attach(g, 0x12), 0);
  EXPECT_EQ(t.attach(g, 0x11), EEXIST);
  EXPECT_EQ(t.attach(v4_group(10, 0, 0, 1), 0x11), EINVAL);
  ASSERT_EQ(t.members(g).size(), 2u);
  EXPECT_EQ(t.members(g)[0], 0x11u);
  EXPECT_EQ(t.members(g)[1], 0x12u);
  EXPECT_EQ(t.groups(), 1u);
  EXPECT_EQ(t.attached(), 2u);
}

TEST(McastTable_Attach, EnforcesRxesLimits) {
  McastTable t;
  const wire::Ipv6Addr g = v4_group(239, 1, 2, 3);
  for (std::uint32_t q = 0; q < kMaxMcastQpAttach; ++q) ASSERT_EQ(t.attach(g, 0x100 + q), 0);
  EXPECT_EQ(t.attach(g, 0x100 + kMaxMcastQpAttach), ENOMEM);
  McastTable u;
  for (std::uint32_t i = 0; i < kMaxMcastGroups; ++i) {
    ASSERT_EQ(u.attach(v4_group(239, 0, static_cast<std::uint8_t>(i >> 8),
                                static_cast<std::uint8_t>(i)),
                       0x11),
              0);
  }
  EXPECT_EQ(u.attach(v4_group(238, 0, 0, 0), 0x11), ENOMEM);
  EXPECT_EQ(u.attach(v4_group(239, 0, 0, 0), 0x12), 0);  // an existing group still takes QPs
  EXPECT_EQ(kMaxTotalMcastQpAttach, 458752u);
}

TEST(McastTable_Detach, LeavesAndDropsAnEmptyGroup) {
  McastTable t;
  const wire::Ipv6Addr g = v4_group(239, 1, 2, 3);
  ASSERT_EQ(t.attach(g, 0x11), 0);
  ASSERT_EQ(t.attach(g, 0x12), 0);
  EXPECT_EQ(t.detach(g, 0x13), EINVAL);
  EXPECT_EQ(t.detach(v4_group(239, 9, 9, 9), 0x11), EINVAL);
  ASSERT_EQ(t.detach(g, 0x11), 0);
  ASSERT_EQ(t.members(g).size(), 1u);
  ASSERT_EQ(t.detach(g, 0x12), 0);
  EXPECT_TRUE(t.empty());
  EXPECT_EQ(t.attached(), 0u);
}

TEST(McastTable_Forget, RemovesAQpFromEveryGroup) {
  McastTable t;
  const wire::Ipv6Addr g1 = v4_group(239, 1, 2, 3);
  const wire::Ipv6Addr g2 = *wire::Ipv6Addr::parse("ff0e::5");
  ASSERT_EQ(t.attach(g1, 0x11), 0);
  ASSERT_EQ(t.attach(g2, 0x11), 0);
  ASSERT_EQ(t.attach(g2, 0x12), 0);
  t.forget(0x11);
  EXPECT_TRUE(t.members(g1).empty());
  ASSERT_EQ(t.members(g2).size(), 1u);
  EXPECT_EQ(t.members(g2)[0], 0x12u);
  EXPECT_EQ(t.groups(), 1u);
  EXPECT_EQ(t.attached(), 1u);
}

}  // namespace
}  // namespace uroce::engine
