// One DPDK ethdev port with one RX and one TX queue per engine lcore
// (PortConfig::queues) and its own mbuf pool: the object the engine, the
// benchmarks and the ARP tests move frames through. Works for net_ring,
// net_memif, net_af_packet, net_af_xdp and PCI devices.
//
// Threading: setup and close are control-path calls; rx_burst/tx_burst of a
// queue are called by exactly one lcore (the queue's owner) and are thin
// inline wrappers over rte_eth_rx_burst/rte_eth_tx_burst (no virtual call,
// no lock).
#pragma once

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "datapath/port/port_info.h"
#include "datapath/port/port_stats.h"
#include "datapath/wire/addr.h"

namespace uroce::port {

struct PortConfig {
  // The ethdev to use: a vdev/device name as EAL knows it ("net_memif0",
  // "net_af_packet0", "0000:03:00.0"). The vdev itself is created by the EAL
  // config's --vdev list, or by `vdev_args` below through hot-plug.
  std::string device;
  // When non-empty, the device is hot-plugged with these devargs before use
  // (e.g. "role=server,socket=/run/x.sock,socket-abstract=no").
  std::string vdev_args;
  // Ethernet MTU (L3 bytes). Path MTU 4096 needs >= 4096 + 64 header bytes
  // (wire::kPathMtuOverhead); 9000 is the usual jumbo setting.
  std::uint16_t mtu = 1500;
  std::uint16_t rx_desc = 1024;
  std::uint16_t tx_desc = 1024;
  // RX and TX queues: one of each per engine lcore (docs/engine.md
  // "Several lcores"). More than the PMD offers is refused at open.
  std::uint16_t queues = 1;
  std::uint32_t mbufs = 8191;
  // mbuf data room (excluding headroom); 0 -> max frame size rounded up.
  std::uint32_t data_room = 0;
  // RX buffer size (mbuf data room of the RX queue's own pool); 0 -> RX
  // takes the pool above. Smaller than the largest frame: longer frames
  // arrive as chains (the PMD's RX scatter, asked for when it offers it;
  // memif chains anyway), which the engine reads in place
  // (engine/eth_port_io.h). At least kMinRxBuf, so that every header of a
  // RoCE frame and every control frame is in the first segment.
  std::uint32_t rx_buf = 0;
  // Software MAC override; the all-zero MAC keeps the device's own.
  wire::MacAddr mac{};
  bool promiscuous = true;
};

// True when the peer of `device` (an EAL device name) opened with
// `vdev_args` reads the frames we send in place, from our mbufs, on its own
// core: a memif client (role=client; the PMD's default is server) with
// zero-copy=yes (its mbufs are the peer's receive buffers; memif_args.h). The engine's TX sink then streams small frames into their
// mbufs (engine/mbuf_tx_sink.h). Anything else, a PCI device included
// (not measured here), is false.
bool peer_reads_tx_in_place(std::string_view device, std::string_view vdev_args);

// The smallest and largest PortConfig::rx_buf (an mbuf's data room and
// headroom share a 16-bit size).
inline constexpr std::uint32_t kMinRxBuf = 1024;
inline constexpr std::uint32_t kMaxRxBuf = UINT16_MAX - RTE_PKTMBUF_HEADROOM;

class EthPort {
 public:
  EthPort() = default;
  ~EthPort();
  EthPort(const EthPort&) = delete;
  EthPort& operator=(const EthPort&) = delete;

  // Finds (or hot-plugs) the device, creates its pool, configures
  // PortConfig::queues RX and TX queues (with several, RSS with kRssKey
  // and the steering RETA, as far as the PMD allows: PortInfo::rss), sets
  // the MTU and starts it. Returns 0 or a negative errno with `error` set
  // to a sentence naming the device and the failing step.
  int open(const PortConfig& cfg, std::string* error = nullptr);
  // Adopts an already created ethdev (e.g. from rte_eth_from_rings).
  int open_port_id(std::uint16_t port_id, const PortConfig& cfg, std::string* error = nullptr);
  // Stops and releases the device. A memif port is stopped and closed
  // while EAL's interrupt thread is held (intr_thread_hold.h), so that the
  // PMD's handler of a peer's message never runs on a port being released;
  // the last memif port's close also releases the callbacks the PMD left
  // (memif_intr_guard.h).
  void close();
  // Stops the device (no more RX/TX; close() still releases it). Lets an
  // owner of several ports stop them all before closing any. Idempotent.
  // A memif port is stopped as close() closes it.
  void stop();

  // `queue` < queues(); each queue has one owner lcore.
  std::uint16_t rx_burst(rte_mbuf** pkts, std::uint16_t n, std::uint16_t queue = 0) {
    return rte_eth_rx_burst(port_id_, queue, pkts, n);
  }
  std::uint16_t tx_burst(rte_mbuf** pkts, std::uint16_t n, std::uint16_t queue = 0) {
    return rte_eth_tx_burst(port_id_, queue, pkts, n);
  }
  // The queues opened (0 until open).
  std::uint16_t queues() const { return info_.queues; }

  bool is_open() const { return open_; }
  std::uint16_t port_id() const { return port_id_; }
  // The TX pool (and the RX pool unless rx_buf set one of its own).
  rte_mempool* pool() const { return pool_; }
  // What the PMD reported at open and what was asked of it (the RX
  // buffers' size, RX scatter, offloads: port_info.h).
  const PortInfo& info() const { return info_; }
  const wire::MacAddr& mac() const { return mac_; }
  // peer_reads_tx_in_place of the config it was opened with.
  bool peer_reads_tx_in_place() const { return peer_reads_tx_in_place_; }
  // The largest frame (L2 header + MTU) this port was set up to carry.
  std::uint32_t max_frame() const { return max_frame_; }
  // An af_xdp port (net_af_xdp*): the mode its sockets run in, "zero-copy"
  // or "copy" (xsk_sockets.h); empty for every other kind.
  const std::string& xdp_mode() const { return xdp_mode_; }
  // The PMD's counts and the pools' mbufs (port_stats.h). Control path:
  // callers serialize it with anything else that asks the PMD (a PCI PMD
  // may read its registers).
  PortStats stats() const;
  // An af_xdp port: its sockets' XDP_STATISTICS, summed; false for every
  // other kind (`out` untouched).
  bool xdp_stats(XdpStats* out) const;

 private:
  void stop_held();
  void set_memif();
  std::uint16_t port_id_ = 0;
  bool open_ = false;
  bool peer_reads_tx_in_place_ = false;
  bool stopped_ = false;
  bool hotplugged_ = false;
  bool memif_ = false;  // a net_memif port: its PMD works on EAL's interrupt thread
  std::string hotplug_name_;
  rte_mempool* pool_ = nullptr;
  rte_mempool* rx_pool_ = nullptr;  // rx_buf's own pool, or nullptr
  PortInfo info_;
  wire::MacAddr mac_{};
  std::uint32_t max_frame_ = 0;
  std::string xdp_mode_;
  std::vector<int> xsk_fds_;  // an af_xdp port's sockets
};

// Creates a crossed pair of net_ring ports in this process (what A sends on
// its TX queue i, B receives on its RX queue i, and vice versa), with
// `queues` queues each. Names must be unique in the process. Returns 0 and
// the two port ids, or a negative errno.
int create_ring_pair(const std::string& name, std::uint16_t* port_a, std::uint16_t* port_b,
                     unsigned ring_size = 4096, std::uint16_t queues = 1);

}  // namespace uroce::port
