// What a port's PMD, its mbuf pools and (af_xdp) its kernel sockets count:
// frames the engine never saw, dropped below it. Read on the control path
// (EthPort::stats, uroce-ctl status "port_stats" and "port_xdp", metrics
// uroce_port_stats_* and uroce_port_xdp_*); kept free of DPDK types so that
// status code and its tests need no DPDK header.
#pragma once

#include <cstdint>

#include "datapath/base/counter_fields.h"

namespace uroce::port {

// rte_eth_stats of the port, and its pools' mbufs.
struct PortStats {
  std::uint64_t ipackets = 0;
  std::uint64_t opackets = 0;
  std::uint64_t ibytes = 0;
  std::uint64_t obytes = 0;
  std::uint64_t imissed = 0;     // dropped by the device: RX ring full (af_xdp: the socket's drops)
  std::uint64_t ierrors = 0;     // received with errors
  std::uint64_t oerrors = 0;     // failed to send
  std::uint64_t rx_nombuf = 0;   // RX with no mbuf to fill
  std::uint64_t mbufs = 0;       // in the port's pools
  std::uint64_t mbufs_free = 0;  // of those, in the pools now (rings and caches)
};

inline constexpr counters::FieldList<PortStats, 10> kPortStatsFields{{
    {"ipackets", &PortStats::ipackets, "frames the PMD received"},
    {"opackets", &PortStats::opackets, "frames the PMD sent"},
    {"ibytes", &PortStats::ibytes, "bytes the PMD received"},
    {"obytes", &PortStats::obytes, "bytes the PMD sent"},
    {"imissed", &PortStats::imissed,
     "frames the device dropped for want of RX room (af_xdp: the sockets' rx_dropped)"},
    {"ierrors", &PortStats::ierrors, "frames received with errors"},
    {"oerrors", &PortStats::oerrors, "frames the PMD failed to send"},
    {"rx_nombuf", &PortStats::rx_nombuf, "RX buffers the PMD could not refill: no free mbuf"},
    {"mbufs", &PortStats::mbufs, "mbufs in the port's pools", counters::Kind::kLevel},
    {"mbufs_free", &PortStats::mbufs_free, "of those, free in the pools now",
     counters::Kind::kLevel},
}};
static_assert(counters::covers(kPortStatsFields));
constexpr const auto& counter_fields(const PortStats&) { return kPortStatsFields; }

// XDP_STATISTICS of an af_xdp port's sockets, summed (linux/if_xdp.h). A
// frame the kernel drops here is one the PMD never hands on: an invalid
// TX descriptor is a frame lost without a completion.
struct XdpStats {
  std::uint64_t rx_dropped = 0;
  std::uint64_t rx_invalid_descs = 0;
  std::uint64_t tx_invalid_descs = 0;
  std::uint64_t rx_ring_full = 0;
  std::uint64_t rx_fill_ring_empty_descs = 0;
  std::uint64_t tx_ring_empty_descs = 0;
};

inline constexpr counters::FieldList<XdpStats, 6> kXdpStatsFields{{
    {"rx_dropped", &XdpStats::rx_dropped, "frames the sockets dropped on receive"},
    {"rx_invalid_descs", &XdpStats::rx_invalid_descs,
     "fill-ring buffers the kernel refused as invalid"},
    {"tx_invalid_descs", &XdpStats::tx_invalid_descs,
     "TX descriptors the kernel refused as invalid: frames lost"},
    {"rx_ring_full", &XdpStats::rx_ring_full, "frames dropped: the sockets' RX ring was full"},
    {"rx_fill_ring_empty_descs", &XdpStats::rx_fill_ring_empty_descs,
     "times a frame found the fill ring empty"},
    {"tx_ring_empty_descs", &XdpStats::tx_ring_empty_descs,
     "times the kernel found the TX ring empty when asked to send"},
}};
static_assert(counters::covers(kXdpStatsFields));
constexpr const auto& counter_fields(const XdpStats&) { return kXdpStatsFields; }

}  // namespace uroce::port
