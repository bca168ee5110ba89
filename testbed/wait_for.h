// The testbed's wait-for graph over switch egress queues, for
// DeadlockDetector.
//
// Node: a switch egress queue (switch, port, priority) that holds packets
// while its neighbour pauses that priority. Edge (s, p, c) -> (t, e, c):
// the neighbour t on port p is pausing (s, p, c) because of what it holds
// from its ingress port facing s at priority c, and some of that waits in
// t's egress queue (t, e, c), which is itself paused. A host neighbour
// holds nothing for anyone, so a queue paused by a host has no edge: a
// slow receiver is back-pressure, not a deadlock.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "datapath/base/time.h"
#include "testbed/scenario.h"
#include "testbed/switch/deadlock_detector.h"
#include "testbed/switch/switch_model.h"

namespace uroce::testbed {

struct QueueId {
  std::uint32_t sw = 0;
  std::uint16_t port = 0;
  std::uint8_t prio = 0;
  friend bool operator==(const QueueId&, const QueueId&) = default;
};

inline std::uint64_t queue_key(const QueueId& q) {
  return (std::uint64_t{q.sw} << 24) | (std::uint64_t{q.port} << 8) | q.prio;
}
inline QueueId queue_of_key(std::uint64_t k) {
  return QueueId{static_cast<std::uint32_t>(k >> 24), static_cast<std::uint16_t>((k >> 8) & 0xffff),
                 static_cast<std::uint8_t>(k & 0xff)};
}

// "s1>s2/3": switch s1's port toward s2, priority 3.
std::string queue_name(const Topology& topo, const QueueId& q);

// Rebuilds `g` (finalized) from the switches at `now`.
void build_wait_for_graph(const Topology& topo, const std::vector<SwitchModel>& switches,
                          TimeNs now, WaitForGraph& g);

}  // namespace uroce::testbed
