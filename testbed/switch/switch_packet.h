// The record of one data packet as the switch model and the testbed carry
// it: the fields a switch pipeline reads or rewrites (destination, priority,
// TTL, ECN, length), not the bytes. The testbed turns a record into a real
// RoCEv2 frame only where bytes are wanted (pcap taps); real-engine hosts
// will convert at their port (docs/testbed.md).
#pragma once

#include <cstdint>

#include "datapath/base/time.h"
#include "datapath/wire/ipv4.h"

namespace uroce::testbed {

using wire::kEcnCe;
using wire::kEcnEct0;
using wire::kEcnNotEct;

struct SwitchPacket {
  std::uint64_t id = 0;       // unique per simulation, for traces
  std::uint64_t seq = 0;      // position in its flow (0, 1, ...)
  TimeNs sent_at = 0;         // when the source created it
  std::uint32_t bytes = 0;    // Ethernet frame length without FCS
  std::uint32_t flow = 0;     // index of the flow that sent it
  std::uint16_t src = 0;      // source host index
  std::uint16_t dst = 0;      // destination host index: the route key
  std::uint16_t in_port = 0;  // set by the switch that holds it
  std::uint8_t prio = 0;      // 802.1p / PFC priority, 0..7
  std::uint8_t ttl = 0;       // IPv4 TTL as it is on the wire now
  std::uint8_t ecn = kEcnNotEct;
  // The flow's hash that ECMP groups choose a member by (ecmp.h).
  std::uint32_t entropy = 0;
};

}  // namespace uroce::testbed
