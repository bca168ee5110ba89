#include "datapath/port/eth_port.h"

#include <gtest/gtest.h>
#include <rte_ethdev.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <string>
#include <vector>

#include "tests/datapath/port/eal_once.h"

namespace uroce::port {
namespace {

class EthPortQueues : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ASSERT_EQ(test::start_eal_once(), ""); }
  // Small pools: these ports carry no traffic.
  static PortConfig small_config(std::uint16_t queues) {
    PortConfig cfg;
    cfg.queues = queues;
    cfg.mbufs = 511;
    cfg.rx_desc = 64;
    cfg.tx_desc = 64;
    return cfg;
  }
};

TEST_F(EthPortQueues, RingPortOpensTwoQueuesWithoutRss) {
  std::uint16_t a = 0, b = 0;
  ASSERT_EQ(create_ring_pair("rssq2", &a, &b, 1024, 2), 0);
  EthPort pa, pb;
  std::string err;
  ASSERT_EQ(pa.open_port_id(a, small_config(2), &err), 0) << err;
  EXPECT_EQ(pa.queues(), 2);
  EXPECT_EQ(pa.info().queues, 2);
  EXPECT_EQ(pa.info().driver, "net_ring");
  // net_ring offers no RSS: not asked, each queue is its own ring.
  EXPECT_EQ(pa.info().rss, "none");
  EXPECT_EQ(pa.info().reta_size, 0);
  EXPECT_TRUE(pa.info().rss_types_offered.empty());
  EXPECT_TRUE(pa.info().rss_types.empty());
  EXPECT_TRUE(pa.info().rss_key.empty());
  // One queue of a multi-queue device: RSS is not asked.
  ASSERT_EQ(pb.open_port_id(b, small_config(1), &err), 0) << err;
  EXPECT_EQ(pb.queues(), 1);
  EXPECT_EQ(pb.info().rss, "off");
}

TEST_F(EthPortQueues, MoreQueuesThanThePmdOffersRefused) {
  std::uint16_t a = 0, b = 0;
  ASSERT_EQ(create_ring_pair("rssq3", &a, &b, 1024, 2), 0);
  EthPort pa;
  std::string err;
  EXPECT_EQ(pa.open_port_id(a, small_config(3), &err), -EINVAL);
  EXPECT_EQ(err, "port " + std::to_string(a) +
                     " (unnamed): 3 queues asked; the PMD offers 2 RX and 2 TX queues");
  EXPECT_FALSE(pa.is_open());
  (void)rte_eth_dev_close(a);
  (void)rte_eth_dev_close(b);
}

// net_null is the one PMD in Debian's DPDK 22.11 that has RSS without
// hardware or kernel set-up: a 128-entry RETA it stores and reports back,
// hash types, but a hash_key_size of 0, so its own key stays (it happens
// to equal kRssKey, which is not ours to claim): "pmd key".
TEST_F(EthPortQueues, NullPortTakesTheSteeringReta) {
  constexpr std::uint16_t kQueues = 3;
  PortConfig cfg = small_config(kQueues);
  cfg.device = "net_null_rss0";
  cfg.vdev_args = "size=64";
  EthPort p;
  std::string err;
  ASSERT_EQ(p.open(cfg, &err), 0) << err;
  EXPECT_EQ(p.info().driver, "net_null");
  EXPECT_EQ(p.info().queues, kQueues);
  EXPECT_EQ(p.info().rss, "pmd key");
  EXPECT_EQ(p.info().rss_key_size, 0);
  // It offers every IP type (RTE_ETH_RSS_PROTO_MASK) and reports back the
  // four asked; its key, which it reports though it takes none, is 40 bytes.
  EXPECT_NE(std::find(p.info().rss_types_offered.begin(), p.info().rss_types_offered.end(),
                      "ipv4-udp"),
            p.info().rss_types_offered.end());
  EXPECT_EQ(p.info().rss_types, (std::vector<std::string>{"ipv4", "ipv4-udp", "ipv6", "ipv6-udp"}));
  EXPECT_EQ(p.info().rss_key.size(), 80u);
  ASSERT_EQ(p.info().reta_size, 128);
  std::vector<rte_eth_rss_reta_entry64> reta(p.info().reta_size / RTE_ETH_RETA_GROUP_SIZE);
  for (auto& g : reta) g.mask = ~std::uint64_t{0};
  ASSERT_EQ(rte_eth_dev_rss_reta_query(p.port_id(), reta.data(), p.info().reta_size), 0);
  for (std::uint32_t i = 0; i < p.info().reta_size; ++i) {
    EXPECT_EQ(reta[i / RTE_ETH_RETA_GROUP_SIZE].reta[i % RTE_ETH_RETA_GROUP_SIZE],
              (i & 127) % kQueues)
        << "entry " << i;
  }
}

// What the PMD and the pool count, read back: frames through a ring pair
// and the mbufs they hold; a ring port has no XDP sockets.
TEST_F(EthPortQueues, StatsCountThePmdsFramesAndThePoolsMbufs) {
  std::uint16_t a = 0, b = 0;
  ASSERT_EQ(create_ring_pair("stats", &a, &b, 1024, 1), 0);
  EthPort pa, pb;
  std::string err;
  ASSERT_EQ(pa.open_port_id(a, small_config(1), &err), 0) << err;
  ASSERT_EQ(pb.open_port_id(b, small_config(1), &err), 0) << err;
  EXPECT_EQ(pa.stats().mbufs, 511u);
  const std::uint64_t free_before = pa.stats().mbufs_free;
  std::array<rte_mbuf*, 4> m{};
  ASSERT_EQ(rte_pktmbuf_alloc_bulk(pa.pool(), m.data(), m.size()), 0);
  for (rte_mbuf* x : m) ASSERT_NE(rte_pktmbuf_append(x, 60), nullptr);
  ASSERT_EQ(pa.tx_burst(m.data(), m.size()), m.size());
  // In B's RX ring, the four mbufs are out of A's pool.
  EXPECT_EQ(pa.stats().opackets, 4u);  // net_ring counts frames, not bytes
  EXPECT_EQ(pa.stats().mbufs_free, free_before - 4);
  std::array<rte_mbuf*, 8> r{};
  ASSERT_EQ(pb.rx_burst(r.data(), r.size()), 4);
  EXPECT_EQ(pb.stats().ipackets, 4u);
  rte_pktmbuf_free_bulk(r.data(), 4);
  EXPECT_EQ(pa.stats().mbufs_free, free_before);
  XdpStats x;
  EXPECT_FALSE(pa.xdp_stats(&x));
  pa.close();
  EXPECT_EQ(pa.stats().opackets, 0u);  // closed: the PMD is not asked
  EXPECT_EQ(pa.stats().mbufs, 0u);
}

TEST(PeerReadsTxInPlace, MemifZeroCopyClientOnly) {
  EXPECT_TRUE(peer_reads_tx_in_place("net_memif0", "role=client,zero-copy=yes,socket=/tmp/a"));
  EXPECT_TRUE(peer_reads_tx_in_place("net_memif1", "socket=/tmp/a,zero-copy=yes,role=client"));
  EXPECT_TRUE(peer_reads_tx_in_place("net_memif0", "role=slave,zero-copy=yes"));
  // The PMD's default role is server, which copies.
  EXPECT_FALSE(peer_reads_tx_in_place("net_memif0", "zero-copy=yes"));
  EXPECT_FALSE(peer_reads_tx_in_place("net_memif0", "role=client,socket=/tmp/a"));
  EXPECT_FALSE(peer_reads_tx_in_place("net_memif0", "role=client,zero-copy=no"));
  EXPECT_FALSE(peer_reads_tx_in_place("net_memif0", "role=server,zero-copy=yes"));
  EXPECT_FALSE(peer_reads_tx_in_place("net_memif0", "role=client,zero-copy=yesplease"));
  EXPECT_FALSE(peer_reads_tx_in_place("net_af_packet0", "iface=veth0,zero-copy=yes"));
  EXPECT_FALSE(peer_reads_tx_in_place("0000:03:00.0", ""));
  EXPECT_FALSE(peer_reads_tx_in_place("ring:p0", ""));
}

}  // namespace
}  // namespace uroce::port
