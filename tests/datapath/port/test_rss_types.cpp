#include "datapath/port/rss_types.h"

#include <gtest/gtest.h>
#include <rte_ethdev.h>

#include <string>
#include <vector>

namespace uroce::port {
namespace {

using Names = std::vector<std::string>;

TEST(RssTypeNames, NoBitsNoNames) { EXPECT_EQ(rss_type_names(0), Names{}); }

TEST(RssTypeNames, TheTypesSteeringAsksForInBitOrder) {
  EXPECT_EQ(rss_type_names(RTE_ETH_RSS_NONFRAG_IPV6_UDP | RTE_ETH_RSS_IPV4 |
                           RTE_ETH_RSS_NONFRAG_IPV4_UDP | RTE_ETH_RSS_IPV6),
            (Names{"ipv4", "ipv4-udp", "ipv6", "ipv6-udp"}));
}

// What DPDK 22.11's net_virtio reports for every hash type QEMU's
// virtio-net offers (virtio_to_ethdev_rss_offloads of all nine).
TEST(RssTypeNames, VirtioSet) {
  EXPECT_EQ(rss_type_names(RTE_ETH_RSS_IPV4 | RTE_ETH_RSS_FRAG_IPV4 |
                           RTE_ETH_RSS_NONFRAG_IPV4_OTHER | RTE_ETH_RSS_NONFRAG_IPV4_TCP |
                           RTE_ETH_RSS_NONFRAG_IPV4_UDP | RTE_ETH_RSS_IPV6 | RTE_ETH_RSS_FRAG_IPV6 |
                           RTE_ETH_RSS_NONFRAG_IPV6_OTHER | RTE_ETH_RSS_NONFRAG_IPV6_TCP |
                           RTE_ETH_RSS_NONFRAG_IPV6_UDP | RTE_ETH_RSS_IPV6_EX |
                           RTE_ETH_RSS_IPV6_TCP_EX | RTE_ETH_RSS_IPV6_UDP_EX),
            (Names{"ipv4", "ipv4-frag", "ipv4-tcp", "ipv4-udp", "ipv4-other", "ipv6", "ipv6-frag",
                   "ipv6-tcp", "ipv6-udp", "ipv6-other", "ipv6-ex", "ipv6-tcp-ex", "ipv6-udp-ex"}));
}

TEST(RssTypeNames, ModifierBitsByName) {
  EXPECT_EQ(rss_type_names(RTE_ETH_RSS_L3_SRC_ONLY | RTE_ETH_RSS_L4_DST_ONLY),
            (Names{"l4-dst-only", "l3-src-only"}));
}

TEST(RssTypeNames, UnnamedBitByNumber) {
  // Bit 22 is unused in DPDK 22.11; bits 0 and 1 are not RSS types.
  EXPECT_EQ(rss_type_names((std::uint64_t{1} << 22) | 1), (Names{"bit 0", "bit 22"}));
}

}  // namespace
}  // namespace uroce::port
