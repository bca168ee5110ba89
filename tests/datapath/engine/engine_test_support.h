// Test support for the engine tests (not a source mirror): a crossed
// net_ring pair of open EthPorts with small pools, mempools with unique
// names, and committing given bytes to an MbufTxSink.
#pragma once

#include <gtest/gtest.h>

#include <rte_mbuf.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "datapath/engine/mbuf_tx_sink.h"
#include "datapath/port/eth_port.h"

namespace uroce::engine::test {

// DPDK object names are process-global: every ring pair and pool gets a
// fresh suffix.
inline std::string unique_name(const char* base) {
  static std::atomic<unsigned> n{0};
  return std::string(base) + std::to_string(n++);
}

struct RingPair {
  port::EthPort a;
  port::EthPort b;
  // `ring_size` bounds the frames in flight per direction (size - 1).
  explicit RingPair(unsigned ring_size = 1024, std::uint16_t mtu = 9000, std::uint16_t queues = 1) {
    std::uint16_t ida = 0, idb = 0;
    const int rc = port::create_ring_pair(unique_name("eng"), &ida, &idb, ring_size, queues);
    EXPECT_EQ(rc, 0);
    port::PortConfig pc;
    pc.mtu = mtu;
    pc.mbufs = 511;
    pc.queues = queues;
    std::string err;
    pc.device = "ring_a";
    EXPECT_EQ(a.open_port_id(ida, pc, &err), 0) << err;
    pc.device = "ring_b";
    EXPECT_EQ(b.open_port_id(idb, pc, &err), 0) << err;
  }
};

inline rte_mempool* make_pool(unsigned n, std::uint16_t data_room) {
  return rte_pktmbuf_pool_create(unique_name("engpool").c_str(), n, 0, 0,
                                 static_cast<std::uint16_t>(data_room + RTE_PKTMBUF_HEADROOM),
                                 SOCKET_ID_ANY);
}

// Commits frame `f` (a copy) to sink `s`.
inline void commit_bytes(MbufTxSink& s, const std::vector<std::uint8_t>& f) {
  std::span<std::uint8_t> b = s.tx_alloc(f.size());
  ASSERT_EQ(b.size(), f.size());
  std::memcpy(b.data(), f.data(), f.size());
  s.tx_commit(f.size());
}

}  // namespace uroce::engine::test
