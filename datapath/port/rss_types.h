// Names of DPDK's RSS hash types (rte_ethdev.h RTE_ETH_RSS_*), for what a
// port's PMD offers and hashes with (PortInfo, docs/nic.md "Queues and
// RSS"). DPDK 22.11 has no public name lookup for these bits, as it has for
// offloads (rte_eth_dev_rx_offload_name); the names are testpmd's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace uroce::port {

// One name per set bit of `types` (an rte_eth_rss_conf.rss_hf or a
// flow_type_rss_offloads mask), in bit order; a bit without a name here
// as "bit N".
std::vector<std::string> rss_type_names(std::uint64_t types);

}  // namespace uroce::port
