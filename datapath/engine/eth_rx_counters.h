// EthPortIo's RX counters (eth_port_io.h), apart from it so that status
// code reads them without DPDK's headers.
#pragma once

#include <cstdint>

#include "datapath/base/counter_fields.h"

namespace uroce::engine {

struct EthRxCounters {
  std::uint64_t frames = 0;             // frames received (handed on or dropped)
  std::uint64_t bursts = 0;             // rx_burst calls that returned frames
  std::uint64_t chained = 0;            // multi-segment frames handed on as a head and a tail
  std::uint64_t too_many_segments = 0;  // chains longer than kMaxSegments, as empty spans
  std::uint64_t handed_off = 0;         // frames moved to another engine lcore (shard_links.h)
  std::uint64_t handed_in = 0;          // frames other engine lcores moved to this one
  std::uint64_t handoff_full = 0;       // hand-offs refused: the ring to that lcore was full
  std::uint64_t handoff_no_mbuf = 0;    // hand-offs of a copied frame with no mbuf for it
};

inline constexpr counters::FieldList<EthRxCounters, 8> kEthRxCounterFields{{
    {"frames", &EthRxCounters::frames, "frames received (handed on or dropped)"},
    {"bursts", &EthRxCounters::bursts, "rx_burst calls that returned frames"},
    {"chained", &EthRxCounters::chained, "multi-segment frames handed on as a head and a tail"},
    {"too_many_segments", &EthRxCounters::too_many_segments,
     "chains of more segments than the engine reads, handed on as empty spans"},
    {"handed_off", &EthRxCounters::handed_off, "frames moved to another engine lcore"},
    {"handed_in", &EthRxCounters::handed_in, "frames other engine lcores moved to this one"},
    {"handoff_full", &EthRxCounters::handoff_full,
     "hand-offs refused: the ring to that lcore was full"},
    {"handoff_no_mbuf", &EthRxCounters::handoff_no_mbuf,
     "hand-offs of a copied frame with no mbuf for it"},
}};
static_assert(counters::covers(kEthRxCounterFields));
constexpr const auto& counter_fields(const EthRxCounters&) { return kEthRxCounterFields; }

}  // namespace uroce::engine
