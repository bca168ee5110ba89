// xsk_pool_probe: opens an af_xdp port (DPDK's net_af_xdp) on a veth end,
// sends one frame from every mbuf its pool can give (each mbuf of the pool
// once, the deep ones included), waits for the kernel to complete them and
// prints what its sockets counted:
//   sent N tx_invalid_descs T rx_invalid_descs R mbufs M
// A pool that reaches past the UMEM the PMD registered shows as
// tx_invalid_descs > 0 (docs/nic.md "AF_XDP pool"). Exits 0 once printed,
// 2 on a setup error. Used by xsk_pool_netns.sh.
#include <rte_ether.h>
#include <rte_mbuf.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "datapath/port/eal.h"
#include "datapath/port/eth_port.h"

namespace {

using namespace uroce::port;

// A broadcast frame of an ethertype nobody speaks (the IEEE's local
// experimental one): the peer's kernel counts and drops it.
bool fill_frame(rte_mbuf* m, std::uint32_t seq) {
  constexpr std::uint16_t kLen = 60;
  auto* p = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(m, kLen));
  if (p == nullptr) return false;
  std::memset(p, 0, kLen);
  std::memset(p, 0xff, 6);
  p[6] = 0x02;
  p[12] = 0x88;
  p[13] = 0xb5;
  std::memcpy(p + 14, &seq, sizeof seq);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Send a frame from every mbuf of an af_xdp port's pool"};
  EalConfig eal;
  eal.memory_mb = 256;
  PortConfig pc;
  pc.device = "net_af_xdp0";
  pc.mtu = 3504;
  pc.mbufs = 8191;  // the engine's default (PortConfig)
  std::string iface;
  app.add_option("--lcores", eal.lcores, "EAL -l");
  app.add_option("--file-prefix", eal.file_prefix, "EAL --file-prefix (unique per process)")
      ->required();
  app.add_option("--iface", iface, "the veth end to bind")->required();
  app.add_option("--mbufs", pc.mbufs, "mbufs in the pool");
  CLI11_PARSE(app, argc, argv);
  pc.vdev_args = "iface=" + iface + ",start_queue=0,queue_count=1";

  std::string err;
  if (eal_init(eal, &err) != 0) {
    std::fprintf(stderr, "xsk_pool_probe: %s\n", err.c_str());
    return 2;
  }
  int rc = 2;
  {
    EthPort port;
    if (port.open(pc, &err) != 0) {
      std::fprintf(stderr, "xsk_pool_probe: %s\n", err.c_str());
    } else {
      // Every mbuf the pool hands out (the PMD's fill ring holds the rest),
      // sent in bursts; a refused burst is retried after the kernel has
      // completed some of the ring.
      const std::uint64_t free_at_start = port.stats().mbufs_free;
      std::vector<rte_mbuf*> all;
      for (rte_mbuf* m; (m = rte_pktmbuf_alloc(port.pool())) != nullptr;) all.push_back(m);
      bool filled = true;
      for (std::size_t i = 0; i < all.size(); ++i) {
        filled = fill_frame(all[i], static_cast<std::uint32_t>(i)) && filled;
      }
      if (!filled) {
        std::fprintf(stderr, "xsk_pool_probe: an mbuf without room for 60 bytes\n");
        rte_pktmbuf_free_bulk(all.data(), all.size());
        all.clear();
      }
      std::size_t sent = 0;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (sent < all.size() && std::chrono::steady_clock::now() < deadline) {
        const auto n = static_cast<std::uint16_t>(std::min<std::size_t>(32, all.size() - sent));
        sent += port.tx_burst(all.data() + sent, n);
        if (sent < all.size()) std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
      if (sent < all.size()) rte_pktmbuf_free_bulk(all.data() + sent, all.size() - sent);
      // Kick the kernel until every mbuf is back (each empty burst reaps
      // completions), or for 5 s: a refused descriptor's mbuf never is.
      const auto settle = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (port.stats().mbufs_free < free_at_start && std::chrono::steady_clock::now() < settle) {
        rte_mbuf* none = nullptr;
        (void)port.tx_burst(&none, 0);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      XdpStats x;
      if (!port.xdp_stats(&x)) {
        std::fprintf(stderr, "xsk_pool_probe: the port has no AF_XDP socket\n");
      } else {
        std::printf("sent %zu tx_invalid_descs %llu rx_invalid_descs %llu mbufs %zu\n", sent,
                    static_cast<unsigned long long>(x.tx_invalid_descs),
                    static_cast<unsigned long long>(x.rx_invalid_descs), all.size());
        rc = 0;
      }
    }
    port.close();
  }
  eal_cleanup();
  return rc;
}
