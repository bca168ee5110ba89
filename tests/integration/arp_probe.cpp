// arp_probe: brings up one DPDK port, runs the ArpAgent on it until it has
// resolved a peer's IPv4 address, keeps answering for a grace period (so the
// peer resolves us too), then prints `resolved <ip> <mac>` and exits 0.
// Exits 1 when the peer is not resolved within the timeout, 2 on a setup
// error. Used by arp_netns.sh with net_af_packet on a veth in a namespace.
#include <rte_mbuf.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "datapath/port/arp_agent.h"
#include "datapath/port/eal.h"
#include "datapath/port/eth_port.h"

namespace {

using uroce::kNsPerMs;
using uroce::TimeNs;
using namespace uroce::port;
using uroce::wire::Ipv4Addr;
using uroce::wire::MacAddr;

TimeNs now_ns() {
  return static_cast<TimeNs>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::steady_clock::now().time_since_epoch())
                                 .count());
}

// Copies each frame the agent emits into a fresh mbuf and sends it at once:
// ARP is rare, so batching would only add latency.
struct PortSink {
  EthPort* port;
  std::uint64_t sent = 0;
  std::uint64_t failed = 0;

  void emit(std::span<const std::uint8_t> f) {
    rte_mbuf* m = rte_pktmbuf_alloc(port->pool());
    if (m == nullptr) {
      ++failed;
      return;
    }
    char* p = rte_pktmbuf_append(m, static_cast<std::uint16_t>(f.size()));
    if (p == nullptr) {
      rte_pktmbuf_free(m);
      ++failed;
      return;
    }
    std::memcpy(p, f.data(), f.size());
    if (port->tx_burst(&m, 1) == 1) {
      ++sent;
    } else {
      rte_pktmbuf_free(m);
      ++failed;
    }
  }
};

void print_counters(const ArpAgent& a, const PortSink& sink) {
  const ArpCounters& c = a.counters();
  std::fprintf(stderr,
               "arp_probe: rx_frames=%lu rx_requests=%lu rx_replies=%lu "
               "learned=%lu tx_requests=%lu tx_replies=%lu "
               "tx_announcements=%lu sent=%lu tx_failed=%lu\n",
               c.rx_frames, c.rx_requests, c.rx_replies, c.learned, c.tx_requests, c.tx_replies,
               c.tx_announcements, sink.sent, sink.failed);
  for (std::size_t i = 1; i < c.drops.size(); ++i) {
    if (c.drops[i] != 0)
      std::fprintf(stderr, "arp_probe: drop %s=%lu\n", to_string(static_cast<ArpDrop>(i)),
                   c.drops[i]);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Resolve a peer's IPv4 address with the uroce ARP agent"};
  EalConfig eal;
  eal.memory_mb = 256;
  PortConfig pc;
  pc.device = "net_af_packet0";
  pc.data_room = 8192;
  pc.mbufs = 1023;
  std::string mac_text;
  std::string ip_text;
  std::string peer_text;
  unsigned timeout_ms = 10000;
  unsigned grace_ms = 2000;
  unsigned retransmit_ms = 200;
  unsigned retries = 4;

  app.add_option("--lcores", eal.lcores, "EAL -l");
  app.add_option("--memory-mb", eal.memory_mb, "EAL -m");
  app.add_option("--file-prefix", eal.file_prefix, "EAL --file-prefix (unique per process)")
      ->required();
  app.add_option("--log-level", eal.log_level, "EAL --log-level");
  app.add_option("--device", pc.device, "ethdev name");
  app.add_option("--vdev-args", pc.vdev_args,
                 "devargs to hot-plug the device with, e.g. "
                 "iface=vA,qdisc_bypass=1,blocksz=8192,framesz=8192,"
                 "framecnt=512")
      ->required();
  app.add_option("--mtu", pc.mtu, "Ethernet MTU");
  app.add_option("--data-room", pc.data_room, "mbuf data room (>= framesz)");
  app.add_option("--mbufs", pc.mbufs, "mbufs in the pool");
  app.add_option("--mac", mac_text, "our MAC (aa:bb:cc:dd:ee:ff)")->required();
  app.add_option("--ip", ip_text, "our IPv4 address")->required();
  app.add_option("--peer-ip", peer_text, "IPv4 address to resolve")->required();
  app.add_option("--timeout-ms", timeout_ms, "give up after this long");
  app.add_option("--grace-ms", grace_ms, "keep answering this long after resolving");
  app.add_option("--retransmit-ms", retransmit_ms, "ARP retransmit time");
  app.add_option("--retries", retries, "ARP retransmissions before failing");
  CLI11_PARSE(app, argc, argv);

  const auto mac = MacAddr::parse(mac_text);
  const auto ip = Ipv4Addr::parse(ip_text);
  const auto peer = Ipv4Addr::parse(peer_text);
  if (!mac || !ip || !peer) {
    std::fprintf(stderr, "arp_probe: bad --mac, --ip or --peer-ip\n");
    return 2;
  }
  pc.mac = *mac;

  std::string err;
  if (eal_init(eal, &err) != 0) {
    std::fprintf(stderr, "arp_probe: %s\n", err.c_str());
    return 2;
  }
  int rc = 1;
  {
    EthPort port;
    if (port.open(pc, &err) != 0) {
      std::fprintf(stderr, "arp_probe: %s\n", err.c_str());
      port.close();
      eal_cleanup();
      return 2;
    }
    ArpConfig ac;
    ac.mac = *mac;
    ac.ip = *ip;
    ac.retransmit_time = retransmit_ms * kNsPerMs;
    ac.retries = static_cast<std::uint8_t>(retries);
    ac.failed_hold_time = retransmit_ms * kNsPerMs;
    ArpAgent agent(ac);
    PortSink sink{&port};

    const TimeNs start = now_ns();
    const TimeNs deadline = start + timeout_ms * kNsPerMs;
    agent.announce(start, sink);
    bool resolved = false;
    MacAddr peer_mac{};
    TimeNs resolved_at = 0;
    rte_mbuf* pkts[32];
    for (;;) {
      const std::uint16_t n = port.rx_burst(pkts, 32);
      TimeNs now = now_ns();
      for (std::uint16_t i = 0; i < n; ++i) {
        rte_mbuf* m = pkts[i];
        agent.on_frame(std::span<const std::uint8_t>(rte_pktmbuf_mtod(m, const std::uint8_t*),
                                                     rte_pktmbuf_data_len(m)),
                       now, sink);
        rte_pktmbuf_free(m);
      }
      if (!resolved) {
        const Resolution r = agent.resolve(*peer, now, sink);
        if (r.status == ResolveStatus::kResolved) {
          resolved = true;
          peer_mac = r.mac;
          resolved_at = now;
        }
      }
      agent.on_timer(now, sink);
      if (resolved && now - resolved_at >= grace_ms * kNsPerMs) {
        rc = 0;
        break;
      }
      if (now >= deadline) break;
      // Four engineers share two cores: poll gently when idle.
      if (n == 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    print_counters(agent, sink);
    if (rc == 0) {
      std::printf("resolved %s %s\n", peer->to_string().c_str(), peer_mac.to_string().c_str());
    } else {
      std::printf("timeout %s after %u ms\n", peer->to_string().c_str(), timeout_ms);
    }
    std::fflush(stdout);
    port.close();
  }
  eal_cleanup();
  return rc;
}
