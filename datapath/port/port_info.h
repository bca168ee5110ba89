// What a port's PMD said of it when it was opened, and what was asked of
// it (eth_port.h): shown by status (uroce-ctl status, docs/nic.md), read on
// the control path only. Kept free of DPDK types so that status code and
// its tests need no DPDK header.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace uroce::port {

struct PortInfo {
  std::string driver;         // rte_eth_dev_info.driver_name
  std::uint16_t rx_desc = 0;  // descriptors per queue, after the PMD's adjustment
  std::uint16_t tx_desc = 0;
  std::uint16_t queues = 0;  // RX and TX queues (one pair per engine lcore)
  // How RX packets are spread over the queues (docs/nic.md "Queues and
  // RSS"); steering (rss.h) needs kRssKey and our redirection table:
  //   "off"        one queue: RSS not asked.
  //   "none"       the PMD offers no RSS over IPv4/IPv6 or UDP (net_ring,
  //                memif): not asked; the device feeds the queues its own
  //                way (net_ring: each queue is a ring of its own).
  //   "programmed" RSS with kRssKey and RETA entry i -> reta_queue(i, queues):
  //                a steering sender's packets land on the owner's queue.
  //   "pmd key"    our table, the PMD's key (its hash_key_size is not 40,
  //                or it refused or ignored kRssKey).
  //   "pmd table"  kRssKey, the PMD's table (reta_size 0, or the RETA
  //                update was refused).
  //   "pmd"        RSS with the PMD's key and table.
  // Short of "programmed", packets spread over the queues by a hash the
  // sender cannot aim; the engine hands each to its QP's owner lcore.
  std::string rss = "off";
  std::uint16_t reta_size = 0;     // RETA entries the PMD reports (0: none settable)
  std::uint16_t rss_key_size = 0;  // the PMD's hash_key_size (0: it takes no key)
  // RSS hash types by name (rss_types.h): those the PMD offers
  // (flow_type_rss_offloads), and those it hashes with after the start as
  // it reports them (those asked, when it cannot report them).
  std::vector<std::string> rss_types_offered, rss_types;
  // The key the PMD reports after the start, in hex (empty: RSS not asked,
  // or the PMD cannot report its key).
  std::string rss_key;
  std::uint16_t rx_desc_max = 0;  // the PMD's limits
  std::uint16_t tx_desc_max = 0;
  std::uint32_t max_mtu = 0;  // as reported (virtual PMDs report 1500 yet carry more)
  std::uint32_t rx_buf = 0;   // the RX buffers' data room (PortConfig::rx_buf)
  bool rx_scatter = false;    // RX scatter asked of the PMD
  // Offloads by DPDK's names: offered by the PMD, and asked for.
  std::vector<std::string> rx_offloads_offered, tx_offloads_offered;
  std::vector<std::string> rx_offloads, tx_offloads;
};

// Whether every TX burst on the port is a system call: the kernel-attached
// PMDs (af_xdp, af_packet: a sendto per burst). The embedded engine batches
// posts harder there (engine.h, drive_post).
inline bool tx_burst_is_syscall(const PortInfo& p) {
  return p.driver == "net_af_xdp" || p.driver == "net_af_packet";
}

}  // namespace uroce::port
