#include "datapath/port/eth_port.h"

#include "datapath/port/intr_thread_hold.h"
#include "datapath/port/memif_args.h"
#include "datapath/port/memif_intr_guard.h"
#include "datapath/port/rss.h"
#include "datapath/port/rss_types.h"
#include "datapath/port/xsk_pool.h"
#include "datapath/port/xsk_sockets.h"

#include <rte_bus_vdev.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ring.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace uroce::port {

namespace {

// Ethernet header + optional VLAN tag + FCS room: what a frame needs beyond
// the L3 MTU.
constexpr std::uint32_t kL2Overhead = RTE_ETHER_HDR_LEN + 4 + RTE_ETHER_CRC_LEN;

std::string errstr(int err) { return std::strerror(err < 0 ? -err : err); }

void set_error(std::string* error, const std::string& msg) {
  if (error != nullptr) *error = msg;
}

// DPDK's name of each RX (or TX) offload bit set in `bits`.
std::vector<std::string> offload_names(std::uint64_t bits, bool rx) {
  std::vector<std::string> out;
  for (unsigned b = 0; b < 64; ++b) {
    const std::uint64_t bit = std::uint64_t{1} << b;
    if ((bits & bit) == 0) continue;
    const char* n = rx ? rte_eth_dev_rx_offload_name(bit) : rte_eth_dev_tx_offload_name(bit);
    out.emplace_back(n != nullptr ? n : "UNKNOWN");
  }
  return out;
}

// The hash types asked of an RSS PMD (ANDed with what it offers): UDP over
// IPv4 and IPv6, the 4-tuple steering aims at (rss.h); plain IPv4/IPv6 for
// a PMD that hashes only the addresses, which still spreads the queues
// though a sender's port choice then moves nothing.
constexpr std::uint64_t kRssTypes = RTE_ETH_RSS_NONFRAG_IPV4_UDP | RTE_ETH_RSS_NONFRAG_IPV6_UDP |
                                    RTE_ETH_RSS_IPV4 | RTE_ETH_RSS_IPV6;

// kRssKey where a PMD may point at it. rte_eth_dev_configure copies the
// rte_eth_conf, key pointer and all, and PMDs read the key at start (or any
// later reconfiguration), so it must outlive every port; the API takes a
// non-const pointer, hence a mutable copy that nothing writes.
alignas(4) std::array<std::uint8_t, kRssKey.size()> g_rss_key = kRssKey;

// Whether the started port hashes with kRssKey. It was handed to configure;
// some PMDs take it there, others (net_null) ignore it and take it only
// through rss_hash_update, so read it back and, if it differs, set it once
// more that way. A PMD that cannot report its key (-ENOTSUP; net_tap) is
// trusted to use what configure accepted.
bool hashes_with_our_key(std::uint16_t port_id, std::uint64_t rss_hf) {
  auto read_back = [port_id](bool* ours) {
    std::array<std::uint8_t, kRssKey.size()> key{};
    rte_eth_rss_conf c{};
    c.rss_key = key.data();
    c.rss_key_len = static_cast<std::uint8_t>(key.size());
    const int rc = rte_eth_dev_rss_hash_conf_get(port_id, &c);
    *ours = rc == 0 && key == kRssKey;
    return rc;
  };
  bool ours = false;
  const int rc = read_back(&ours);
  if (rc == -ENOTSUP) return true;
  if (ours) return true;
  rte_eth_rss_conf c{};
  c.rss_key = g_rss_key.data();
  c.rss_key_len = static_cast<std::uint8_t>(g_rss_key.size());
  c.rss_hf = rss_hf;
  if (rte_eth_dev_rss_hash_update(port_id, &c) != 0) return false;
  return read_back(&ours) == 0 && ours;
}

// Programs RETA entry i -> reta_queue(i, queues) for all `reta_size`
// entries. False if the PMD refuses.
bool program_reta(std::uint16_t port_id, std::uint16_t reta_size, std::uint16_t queues) {
  std::vector<rte_eth_rss_reta_entry64> reta((reta_size + RTE_ETH_RETA_GROUP_SIZE - 1) /
                                             RTE_ETH_RETA_GROUP_SIZE);
  for (std::uint32_t i = 0; i < reta_size; ++i) {
    rte_eth_rss_reta_entry64& g = reta[i / RTE_ETH_RETA_GROUP_SIZE];
    g.mask |= std::uint64_t{1} << (i % RTE_ETH_RETA_GROUP_SIZE);
    g.reta[i % RTE_ETH_RETA_GROUP_SIZE] = reta_queue(i, queues);
  }
  return rte_eth_dev_rss_reta_update(port_id, reta.data(), reta_size) == 0;
}

// The key (in hex) and the hash types the started port reports, into
// `key_hex` and `types`; false if the PMD cannot report them. The buffer is
// at least kRssKey's size: some PMDs (net_null) report a key while their
// hash_key_size says 0.
bool reported_rss(std::uint16_t port_id, std::uint8_t key_size, std::string* key_hex,
                  std::uint64_t* types) {
  std::vector<std::uint8_t> key(std::max<std::size_t>(key_size, kRssKey.size()));
  rte_eth_rss_conf c{};
  c.rss_key = key.data();
  c.rss_key_len = static_cast<std::uint8_t>(key.size());
  if (rte_eth_dev_rss_hash_conf_get(port_id, &c) != 0) return false;
  key_hex->clear();
  const std::size_t n = std::min<std::size_t>(c.rss_key_len, key.size());
  for (std::size_t i = 0; i < n; ++i) {
    char b[3];
    std::snprintf(b, sizeof b, "%02x", key[i]);
    *key_hex += b;
  }
  *types = c.rss_hf;
  return true;
}

// A pool of `n` mbufs with `room` bytes of data room beyond the headroom
// (more for an af_xdp port: xsk_pool.h); nullptr with `why` set.
rte_mempool* make_pool(const std::string& name, std::uint32_t n, std::uint32_t room, bool xsk,
                       std::string* why) {
  const std::uint32_t cache = 256;
  const int socket = static_cast<int>(rte_socket_id());
  if (xsk) return create_xsk_pool(name, n, cache, room + RTE_PKTMBUF_HEADROOM, socket, why);
  rte_mempool* p =
      rte_pktmbuf_pool_create(name.c_str(), n, cache, 0,
                              static_cast<std::uint16_t>(room + RTE_PKTMBUF_HEADROOM), socket);
  if (p == nullptr) *why = errstr(rte_errno);
  return p;
}

// memif ports open in this process (EthPort::memif_ set).
std::atomic<int> g_memif_ports{0};

}  // namespace

bool peer_reads_tx_in_place(std::string_view device, std::string_view vdev_args) {
  const std::optional<MemifArgs> m = parse_memif_args(device, vdev_args);
  return m && m->client && m->zero_copy;
}

EthPort::~EthPort() { close(); }

void EthPort::set_memif() {
  if (!memif_) g_memif_ports.fetch_add(1, std::memory_order_acq_rel);
  memif_ = true;
}

int EthPort::open(const PortConfig& cfg, std::string* error) {
  if (!cfg.vdev_args.empty()) {
    const int rc = rte_vdev_init(cfg.device.c_str(), cfg.vdev_args.c_str());
    if (rc != 0) {
      set_error(error, "cannot create device " + cfg.device + " (" + cfg.vdev_args +
                           "): " + errstr(rc) + "; check the devargs and that the name is unused");
      return rc < 0 ? rc : -rc;
    }
    hotplugged_ = true;
    hotplug_name_ = cfg.device;
    // The PMD's handlers may run from here on (a client connects at once).
    if (parse_memif_args(cfg.device, cfg.vdev_args).has_value()) set_memif();
  }
  std::uint16_t id = 0;
  if (rte_eth_dev_get_port_by_name(cfg.device.c_str(), &id) != 0) {
    set_error(error, "no DPDK port named " + cfg.device +
                         ": add it to eal.vdevs (or eal.allow for PCI) and "
                         "check that the PMD is installed");
    if (hotplugged_) {
      rte_vdev_uninit(hotplug_name_.c_str());
      hotplugged_ = false;
    }
    return -ENODEV;
  }
  if (!cfg.device.starts_with("net_af_xdp")) return open_port_id(id, cfg, error);
  // The PMD makes its sockets at queue set-up: those new after the start
  // are this port's.
  const XskSockets before = xsk_sockets();
  const int rc = open_port_id(id, cfg, error);
  if (rc == 0) {
    const XskSockets after = xsk_sockets();
    xdp_mode_ = std::string(xsk_mode(before, after));
    xsk_fds_ = xsk_new_sockets(before, after);
  }
  return rc;
}

int EthPort::open_port_id(std::uint16_t port_id, const PortConfig& cfg, std::string* error) {
  port_id_ = port_id;
  std::string why;
  const std::string where = "port " + std::to_string(port_id) + " (" +
                            (cfg.device.empty() ? "unnamed" : cfg.device) + ")";
  rte_eth_dev_info info{};
  int rc = rte_eth_dev_info_get(port_id, &info);
  if (rc != 0) {
    set_error(error, where + ": cannot read device info: " + errstr(rc));
    return rc;
  }
  if (info.driver_name != nullptr && std::string_view(info.driver_name) == "net_memif") {
    set_memif();
  }
  max_frame_ = cfg.mtu + kL2Overhead;
  peer_reads_tx_in_place_ = port::peer_reads_tx_in_place(cfg.device, cfg.vdev_args);
  std::uint32_t room = std::max<std::uint32_t>(cfg.data_room != 0 ? cfg.data_room : max_frame_,
                                               RTE_MBUF_DEFAULT_DATAROOM);
  // net_af_xdp registers the RX pool as its UMEM, and the TX pool's mbufs
  // go to the kernel as they are: both laid out for it (xsk_pool.h).
  const bool xsk =
      info.driver_name != nullptr && std::string_view(info.driver_name) == "net_af_xdp";
  // Pool names are global in a DPDK process; derive it from the port id.
  const std::string pool_name = "uroce_pool_" + std::to_string(port_id);
  pool_ = make_pool(pool_name, cfg.mbufs, room, xsk, &why);
  if (pool_ == nullptr) {
    set_error(error, where + ": cannot create mbuf pool of " + std::to_string(cfg.mbufs) + " x " +
                         std::to_string(room) + " B: " + why +
                         "; raise eal.memory_mb or lower mbufs");
    return -ENOMEM;
  }
  room = rte_pktmbuf_data_room_size(pool_) - RTE_PKTMBUF_HEADROOM;
  rte_mempool* rx_pool = pool_;
  std::uint32_t rx_buf = room;
  if (cfg.rx_buf != 0 && cfg.rx_buf < room) {
    if (cfg.rx_buf < kMinRxBuf) {
      set_error(error, where + ": rx_buf " + std::to_string(cfg.rx_buf) + " is below " +
                           std::to_string(kMinRxBuf) + " bytes");
      close();
      return -EINVAL;
    }
    const std::string rx_name = "uroce_rxpool_" + std::to_string(port_id);
    rx_pool_ = make_pool(rx_name, cfg.mbufs, cfg.rx_buf, xsk, &why);
    if (rx_pool_ == nullptr) {
      set_error(error, where + ": cannot create RX mbuf pool of " + std::to_string(cfg.mbufs) +
                           " x " + std::to_string(cfg.rx_buf) + " B: " + why +
                           "; raise eal.memory_mb or lower mbufs");
      close();
      return -ENOMEM;
    }
    rx_pool = rx_pool_;
    rx_buf = rte_pktmbuf_data_room_size(rx_pool_) - RTE_PKTMBUF_HEADROOM;
  }

  // Virtual PMDs (memif, af_packet) report the default 1518-byte max frame
  // yet carry whatever fits their buffers (memif bsize, af_packet framesz and
  // the kernel interface MTU). ethdev refuses an MTU above the reported
  // maximum, so configure at most that and let the mbuf data room, sized
  // from cfg.mtu, decide what we can carry.
  const std::uint32_t reported_max_mtu =
      std::min<std::uint32_t>(info.max_mtu,
                              info.max_rx_pktlen > RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN
                                  ? info.max_rx_pktlen - RTE_ETHER_HDR_LEN - RTE_ETHER_CRC_LEN
                                  : RTE_ETHER_MTU);
  rte_eth_conf conf{};
  conf.rxmode.mtu = std::min<std::uint32_t>(cfg.mtu, reported_max_mtu);
  // Frames longer than an RX buffer need the PMD to chain them.
  if (rx_buf < max_frame_ && (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_SCATTER) != 0) {
    conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_SCATTER;
  }
  const std::uint16_t queues = cfg.queues;
  if (queues == 0 || queues > info.max_rx_queues || queues > info.max_tx_queues) {
    set_error(error, where + ": " + std::to_string(queues) + " queues asked; the PMD offers " +
                         std::to_string(info.max_rx_queues) + " RX and " +
                         std::to_string(info.max_tx_queues) + " TX queues");
    close();
    return -EINVAL;
  }
  // RSS over several queues, when the PMD hashes IP or UDP at all; ours is
  // the key only when the PMD's key is the 40 bytes kRssKey has (a NULL key
  // keeps the PMD's own). The RETA is set after the start (below).
  const std::uint64_t rss_hf = queues > 1 ? info.flow_type_rss_offloads & kRssTypes : 0;
  bool key_asked = false;
  if (rss_hf != 0) {
    conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
    conf.rx_adv_conf.rss_conf.rss_hf = rss_hf;
    if (info.hash_key_size == g_rss_key.size()) {
      conf.rx_adv_conf.rss_conf.rss_key = g_rss_key.data();
      conf.rx_adv_conf.rss_conf.rss_key_len = static_cast<std::uint8_t>(g_rss_key.size());
      key_asked = true;
    }
  }
  rc = rte_eth_dev_configure(port_id, queues, queues, &conf);
  if (rc != 0 && key_asked) {
    // A PMD refusing kRssKey still spreads the queues with its own key: run
    // with that (steering then misses and the engine hands packets off).
    conf.rx_adv_conf.rss_conf.rss_key = nullptr;
    conf.rx_adv_conf.rss_conf.rss_key_len = 0;
    key_asked = false;
    rc = rte_eth_dev_configure(port_id, queues, queues, &conf);
  }
  if (rc != 0) {
    set_error(error, where + ": configure failed: " + errstr(rc));
    close();
    return rc;
  }
  std::uint16_t nb_rx = cfg.rx_desc;
  std::uint16_t nb_tx = cfg.tx_desc;
  rte_eth_dev_adjust_nb_rx_tx_desc(port_id, &nb_rx, &nb_tx);
  info_ = PortInfo{.driver = info.driver_name != nullptr ? info.driver_name : "",
                   .rx_desc = nb_rx,
                   .tx_desc = nb_tx,
                   .rx_desc_max = info.rx_desc_lim.nb_max,
                   .tx_desc_max = info.tx_desc_lim.nb_max,
                   .max_mtu = info.max_mtu,
                   .rx_buf = rx_buf,
                   .rx_scatter = (conf.rxmode.offloads & RTE_ETH_RX_OFFLOAD_SCATTER) != 0,
                   .rx_offloads_offered = offload_names(info.rx_offload_capa, true),
                   .tx_offloads_offered = offload_names(info.tx_offload_capa, false),
                   .rx_offloads = offload_names(conf.rxmode.offloads, true),
                   .tx_offloads = offload_names(conf.txmode.offloads, false)};
  const int socket = rte_eth_dev_socket_id(port_id);
  const unsigned sock = socket < 0 ? 0u : static_cast<unsigned>(socket);
  for (std::uint16_t q = 0; q < queues; ++q) {
    rc = rte_eth_rx_queue_setup(port_id, q, nb_rx, sock, nullptr, rx_pool);
    if (rc != 0) {
      set_error(error, where + ": RX queue " + std::to_string(q) + " setup failed: " + errstr(rc));
      close();
      return rc;
    }
    rc = rte_eth_tx_queue_setup(port_id, q, nb_tx, sock, nullptr);
    if (rc != 0) {
      set_error(error, where + ": TX queue " + std::to_string(q) + " setup failed: " + errstr(rc));
      close();
      return rc;
    }
  }
  info_.queues = queues;
  info_.reta_size = info.reta_size;
  info_.rss_key_size = info.hash_key_size;
  info_.rss_types_offered = rss_type_names(info.flow_type_rss_offloads);
  // Only ask for an MTU the PMD says it supports: af_packet applies it to the
  // kernel interface, and a capped value would shrink a jumbo veth. A refusal
  // is not fatal: the frame size we carry is set by the pool.
  if (cfg.mtu <= reported_max_mtu) (void)rte_eth_dev_set_mtu(port_id, cfg.mtu);
  rc = rte_eth_dev_start(port_id);
  if (rc != 0) {
    set_error(error, where + ": start failed: " + errstr(rc));
    close();
    return rc;
  }
  open_ = true;
  stopped_ = false;
  // The RETA goes in after the start: some PMDs write a default table at
  // start, over one set before it. Until then packets may land on any
  // queue, which hand-off tolerates. A refusal is recorded, not fatal.
  if (queues == 1) {
    info_.rss = "off";
  } else if (rss_hf == 0) {
    info_.rss = "none";
  } else {
    const bool key = key_asked && hashes_with_our_key(port_id, rss_hf);
    const bool table = info.reta_size > 0 && program_reta(port_id, info.reta_size, queues);
    info_.rss = key ? (table ? "programmed" : "pmd table") : (table ? "pmd key" : "pmd");
    std::uint64_t types = rss_hf;  // kept when the PMD cannot report its own
    (void)reported_rss(port_id, info.hash_key_size, &info_.rss_key, &types);
    info_.rss_types = rss_type_names(types);
  }
  if (cfg.promiscuous) (void)rte_eth_promiscuous_enable(port_id);
  if (!cfg.mac.is_zero()) {
    mac_ = cfg.mac;
    rte_ether_addr a{};
    std::memcpy(a.addr_bytes, cfg.mac.b.data(), 6);
    // Best effort: with promiscuous RX the software MAC is what counts.
    (void)rte_eth_dev_default_mac_addr_set(port_id, &a);
  } else {
    rte_ether_addr a{};
    rte_eth_macaddr_get(port_id, &a);
    std::memcpy(mac_.b.data(), a.addr_bytes, 6);
  }
  return 0;
}

void EthPort::stop() {
  // A stopped memif server is still on its socket's list, and the PMD
  // attaches a peer that connects then to it: a close under a later hold
  // would release the port with that peer's callback registered.
  if (!memif_) stop_held();
}

void EthPort::stop_held() {
  if (open_ && !stopped_) {
    (void)rte_eth_dev_stop(port_id_);
    stopped_ = true;
  }
}

PortStats EthPort::stats() const {
  PortStats out;
  rte_eth_stats s{};
  if (open_ && rte_eth_stats_get(port_id_, &s) == 0) {
    out.ipackets = s.ipackets;
    out.opackets = s.opackets;
    out.ibytes = s.ibytes;
    out.obytes = s.obytes;
    out.imissed = s.imissed;
    out.ierrors = s.ierrors;
    out.oerrors = s.oerrors;
    out.rx_nombuf = s.rx_nombuf;
  }
  for (const rte_mempool* p : {pool_, rx_pool_}) {
    if (p == nullptr) continue;
    out.mbufs += p->size;
    out.mbufs_free += rte_mempool_avail_count(p);
  }
  return out;
}

bool EthPort::xdp_stats(XdpStats* out) const {
  if (xsk_fds_.empty() || !open_) return false;
  *out = xsk_statistics(xsk_fds_);
  return true;
}

void EthPort::close() {
  std::optional<IntrThreadHold> hold;
  if (memif_) hold.emplace();
  if (open_) {
    stop_held();
    (void)rte_eth_dev_close(port_id_);
    open_ = false;
  }
  xsk_fds_.clear();
  if (hotplugged_) {
    (void)rte_vdev_uninit(hotplug_name_.c_str());
    hotplugged_ = false;
  }
  if (memif_ && g_memif_ports.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    // No memif port is left: whatever the PMD still has registered (a
    // peer it accepted that had not said which port it wanted) belongs to
    // a socket it freed.
    (void)release_orphaned_memif_callbacks();
  }
  memif_ = false;
  if (pool_ != nullptr) {
    rte_mempool_free(pool_);
    pool_ = nullptr;
  }
  if (rx_pool_ != nullptr) {
    rte_mempool_free(rx_pool_);
    rx_pool_ = nullptr;
  }
}

int create_ring_pair(const std::string& name, std::uint16_t* port_a, std::uint16_t* port_b,
                     unsigned ring_size, std::uint16_t queues) {
  if (queues == 0 || queues > RTE_MAX_QUEUES_PER_PORT) return -EINVAL;
  // Queue i of A sends on ab[i], which is queue i of B's RX, and so on.
  std::vector<rte_ring*> ab(queues, nullptr), ba(queues, nullptr);
  auto free_all = [&] {
    for (rte_ring* r : ab) rte_ring_free(r);
    for (rte_ring* r : ba) rte_ring_free(r);
  };
  for (std::uint16_t q = 0; q < queues; ++q) {
    // Queue 0 keeps the names a one-queue pair always had.
    const std::string sfx = q == 0 ? "" : "_" + std::to_string(q);
    ab[q] = rte_ring_create((name + "_ab" + sfx).c_str(), ring_size, rte_socket_id(),
                            RING_F_SP_ENQ | RING_F_SC_DEQ);
    ba[q] = rte_ring_create((name + "_ba" + sfx).c_str(), ring_size, rte_socket_id(),
                            RING_F_SP_ENQ | RING_F_SC_DEQ);
    if (ab[q] == nullptr || ba[q] == nullptr) {
      const int err = rte_errno;
      free_all();
      return -err;
    }
  }
  // Port A receives on ba and sends on ab; port B the other way round.
  const int a = rte_eth_from_rings((name + "_a").c_str(), ba.data(), queues, ab.data(), queues,
                                   rte_socket_id());
  const int b = rte_eth_from_rings((name + "_b").c_str(), ab.data(), queues, ba.data(), queues,
                                   rte_socket_id());
  if (a < 0 || b < 0) return -(rte_errno != 0 ? rte_errno : ENODEV);
  *port_a = static_cast<std::uint16_t>(a);
  *port_b = static_cast<std::uint16_t>(b);
  return 0;
}

}  // namespace uroce::port
