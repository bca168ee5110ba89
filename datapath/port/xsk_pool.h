// The mbuf pool of an af_xdp port (DPDK's net_af_xdp), laid out so that
// the PMD can register all of it as the socket's UMEM.
//
// net_af_xdp (DPDK 22.11) registers the RX queue's mempool as one UMEM
// starting at the page of its first memory chunk and
//   populated_size x rte_mempool_calc_obj_size(elt_size, flags)
// bytes long: it assumes the objects lie back to back. A pool whose objects
// are smaller than a page but do not tile it breaks that: the mempool
// starts each object that would cross a page boundary on the next page, so
// the objects spread over more memory than the UMEM covers. With 4 KiB
// pages (EAL's --no-huge) and the 3,904-byte objects of MTU 3504, 385 of
// 8,191 mbufs lay beyond the UMEM's end (the figure test_xsk_pool.cpp
// reproduces). The kernel refuses their descriptors silently: a frame sent
// from one is dropped as an invalid TX descriptor (XDP_STATISTICS
// tx_invalid_descs; its mbuf never comes back), and the frames queued
// behind it wait for the next sendto. Under load the engine's retries met
// them until the QP's retry count ran out (docs/nic.md "AF_XDP pool").
//
// The pool made here has page-sized objects (no channel-spread padding),
// which tile every page size, never cross a page, and match what the PMD
// reads as its frame size: the RX data room is then what the PMD carries
// anyway (its max_rx_pktlen is a page less the same headers). Control path
// only.
#pragma once

#include <rte_mempool.h>

#include <cstdint>
#include <string>

namespace uroce::port {

// How a pool lies against the UMEM net_af_xdp registers for it.
struct XskUmemFit {
  std::uint32_t objects = 0;  // the pool's objects
  std::uint32_t outside = 0;  // of those, not wholly inside the UMEM
  std::uint32_t chunks = 0;   // the pool's memory chunks (the UMEM covers the first)
  std::uint64_t umem_bytes = 0;
  std::uint64_t span_bytes = 0;  // from the first object's header to the last one's end
  bool fits() const { return objects != 0 && outside == 0; }
};
XskUmemFit xsk_umem_fit(rte_mempool* pool);

// The data room (headroom included) of an af_xdp pool's mbufs that needs
// `room` bytes (headroom included): a page's worth, unless `room` is more.
std::uint32_t xsk_data_room(std::uint32_t room, std::uint32_t page_size);

// A pktmbuf pool of `n` mbufs for an af_xdp port, with at least `room`
// bytes of data room (headroom included; xsk_data_room), whose every
// object lies inside the UMEM net_af_xdp registers (xsk_umem_fit). Returns
// nullptr with `error` set to why (DPDK's error, or how the layout misses).
rte_mempool* create_xsk_pool(const std::string& name, std::uint32_t n, std::uint32_t cache,
                             std::uint32_t room, int socket, std::string* error);

}  // namespace uroce::port
