#include "datapath/port/eth_port.h"

#include <gtest/gtest.h>
#include <rte_alarm.h>
#include <rte_bus_vdev.h>
#include <rte_ethdev.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "datapath/port/got_patch.h"
#include "datapath/port/memif_args.h"
#include "datapath/port/memif_fd_guard.h"
#include "datapath/port/memif_intr_guard.h"
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

// The memif PMD's recvmsg, through its GOT, once armed: the first call
// (the client's handler reading its departed server) says so and waits
// until the test's close of the client has returned, or 1 s, before it
// reads.
struct HandlerStall {
  std::atomic<bool> armed{false}, entered{false}, closed{false};
};
HandlerStall g_stall;

ssize_t stalled_recvmsg(int fd, msghdr* mh, int flags) {
  if (g_stall.armed.exchange(false)) {
    g_stall.entered.store(true);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (!g_stall.closed.load() && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return ::recvmsg(fd, mh, flags);
}

bool link_up_within_10s(std::uint16_t port) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    rte_eth_link link{};
    if (rte_eth_link_get_nowait(port, &link) == 0 && link.link_status == RTE_ETH_LINK_UP)
      return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// The race of an exiting memif peer, made to happen: the client's handler
// of its server's departure runs on EAL's interrupt thread, stalled in its
// read, while the test thread closes the client. A close that did not wait
// for the handler would return first and release the port under it, and
// the handler would write through the released private data (this process
// would die of SIGSEGV on the interrupt thread); EthPort::close holds the
// interrupt thread first, which waits for the handler to return (after
// its 1 s stall).
TEST_F(EthPortQueues, Close_AMemifPortWaitsForItsPeersDepartureHandler) {
  std::string err;
  ASSERT_GT(patch_got(kMemifPmdObject, "recvmsg", reinterpret_cast<void*>(&stalled_recvmsg), &err),
            0)
      << err;
  const test::SigpipeIgnored no_sigpipe;
  char dir_template[] = "/tmp/uroce-memif-close-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string sock = std::string(dir_template) + "/memif.sock";
  PortConfig server = small_config(1);
  server.device = "net_memif_close_s";
  server.vdev_args = "role=server,id=0,socket-abstract=no,socket=" + sock;
  PortConfig client = server;
  client.device = "net_memif_close_c";
  client.vdev_args = "role=client,id=0,socket-abstract=no,socket=" + sock;
  EthPort s, c;
  ASSERT_EQ(s.open(server, &err), 0) << err;
  ASSERT_EQ(c.open(client, &err), 0) << err;
  ASSERT_TRUE(link_up_within_10s(s.port_id()));
  ASSERT_TRUE(link_up_within_10s(c.port_id()));

  g_stall.armed.store(true);
  s.close();  // the server leaves: the client's handler reads its end
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!g_stall.entered.load() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(g_stall.entered.load());
  c.close();
  g_stall.closed.store(true);
  EXPECT_FALSE(c.is_open());
  // The handler has returned, and the interrupt thread runs the next
  // callback: this process outlived the client's departure.
  EXPECT_TRUE(test::interrupt_thread_runs());
  std::uint16_t id = 0;
  EXPECT_EQ(rte_eth_dev_get_port_by_name(client.device.c_str(), &id), -ENODEV);

  unlink(sock.c_str());
  rmdir(dir_template);
}

// A peer a memif server accepted and greeted, which never said which port
// it wanted: the PMD keeps its channel, registered with EAL, after the
// server's port (and with it the socket) is gone. The last memif port's
// close releases it, and the peer sees its connection end.
TEST_F(EthPortQueues, Close_TheLastMemifPortEndsAPeerThatNeverChoseAPort) {
  std::string err;
  ASSERT_EQ(install_memif_fd_guard(&err), 0) << err;
  ASSERT_EQ(install_memif_intr_guard(&err), 0) << err;
  const test::SigpipeIgnored no_sigpipe;
  char dir_template[] = "/tmp/uroce-memif-orphan-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string sock = std::string(dir_template) + "/memif.sock";
  PortConfig server = small_config(1);
  server.device = "net_memif_orphan_s";
  server.vdev_args = "role=server,id=0,socket-abstract=no,socket=" + sock;
  EthPort s;
  ASSERT_EQ(s.open(server, &err), 0) << err;

  const int peer = socket(AF_UNIX, SOCK_SEQPACKET, 0);
  ASSERT_GE(peer, 0);
  const timeval ten_s{10, 0};
  ASSERT_EQ(setsockopt(peer, SOL_SOCKET, SO_RCVTIMEO, &ten_s, sizeof(ten_s)), 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, sock.c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(connect(peer, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  std::array<char, 256> msg{};
  ASSERT_GT(recv(peer, msg.data(), msg.size(), 0), 0);  // the server's hello
  const std::uint64_t closed = memif_intr_handles_closed();
  s.close();
  // The listener's descriptor and the peer's channel.
  EXPECT_EQ(memif_intr_handles_closed(), closed + 2);
  EXPECT_EQ(recv(peer, msg.data(), msg.size(), 0), 0);
  close(peer);

  rmdir(dir_template);
}

// A memif port adopted by id (created by EAL's vdev list, not hot-plugged)
// counts towards the last memif port too: its close, while a hot-plugged
// server stays open, leaves the server's listener alone.
TEST_F(EthPortQueues, Close_AMemifPortAdoptedByIdIsNotTheLast) {
  std::string err;
  ASSERT_EQ(install_memif_fd_guard(&err), 0) << err;
  ASSERT_EQ(install_memif_intr_guard(&err), 0) << err;
  char dir_template[] = "/tmp/uroce-memif-byid-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string sock = std::string(dir_template) + "/memif.sock";
  PortConfig server = small_config(1);
  server.device = "net_memif_byid_s";
  server.vdev_args = "role=server,id=0,socket-abstract=no,socket=" + sock;
  EthPort s;
  ASSERT_EQ(s.open(server, &err), 0) << err;
  const std::string other = "net_memif_byid_c";
  ASSERT_EQ(rte_vdev_init(other.c_str(), ("role=server,id=1,socket-abstract=no,socket=" +
                                          std::string(dir_template) + "/other.sock")
                                             .c_str()),
            0);
  std::uint16_t id = 0;
  ASSERT_EQ(rte_eth_dev_get_port_by_name(other.c_str(), &id), 0);
  EthPort adopted;
  ASSERT_EQ(adopted.open_port_id(id, small_config(1), &err), 0) << err;
  const std::uint64_t closed = memif_intr_handles_closed();
  adopted.close();
  (void)rte_vdev_uninit(other.c_str());
  // The adopted port's own listener goes with its socket; the server's
  // listener is still there.
  EXPECT_EQ(memif_intr_handles_closed(), closed + 1);
  const int peer = socket(AF_UNIX, SOCK_SEQPACKET, 0);
  ASSERT_GE(peer, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, sock.c_str(), sizeof(addr.sun_path) - 1);
  EXPECT_EQ(connect(peer, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << strerror(errno);
  close(peer);
  s.close();
  unlink((std::string(dir_template) + "/other.sock").c_str());
  rmdir(dir_template);
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
