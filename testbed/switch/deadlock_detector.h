// PFC deadlock detection on a wait-for graph.
//
// A node is a queue that cannot send: in the testbed, a non-empty egress
// queue whose neighbour has paused its priority. An edge A -> B says A waits
// for B: A's neighbour paused A because of the bytes it holds for A's
// ingress, and those bytes wait in B. Each node carries a caller-chosen key
// (its identity across checks) and the last instant it made progress.
//
// A deadlock is a cycle of nodes none of which has made progress for
// stall_ns: the queues of the cycle pause each other and nothing drains
// them. It formed at the latest progress instant of its nodes (from then
// on the whole cycle stood still) and is detected at the first check at or
// after formed + stall_ns. It is resolved at the first check where one of
// its nodes is no longer stalled (it moved, emptied or was unpaused, e.g. by
// a watchdog flush), so `resolved_at` is exact to the check interval.
//
// check() reports each deadlock once when it forms and once when it
// resolves; several disjoint deadlocks may be active at once. Search order
// is fixed (nodes in insertion order, edges sorted), so the same graph
// gives the same cycle.
//
// Off the data path: a check allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "datapath/base/time.h"

namespace uroce::testbed {

class WaitForGraph {
 public:
  void clear();
  // Returns the node's index.
  std::uint32_t add_node(std::uint64_t key, TimeNs progress_at);
  // Indices from add_node(); out-of-range edges are ignored.
  void add_edge(std::uint32_t from, std::uint32_t to);
  // Sorts the edges and indexes them per node; call after the last
  // add_edge() and before successors() or a detector check.
  void finalize();
  bool finalized() const { return final_; }

  std::size_t size() const { return keys_.size(); }
  std::uint64_t key(std::uint32_t i) const { return keys_[i]; }
  TimeNs progress_at(std::uint32_t i) const { return progress_[i]; }
  // Targets of node i's edges, ascending, duplicates removed. Precondition:
  // finalized().
  std::span<const std::uint32_t> successors(std::uint32_t i) const {
    return {targets_.data() + begin_[i], begin_[i + 1] - begin_[i]};
  }
  // Index of the node with `key`, or -1.
  std::int64_t find(std::uint64_t key) const;

 private:
  std::vector<std::uint64_t> keys_;
  std::vector<TimeNs> progress_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges_;
  std::vector<std::uint32_t> targets_;
  std::vector<std::uint32_t> begin_;  // size() + 1 offsets into targets_
  bool final_ = false;
};

struct DeadlockConfig {
  TimeNs stall_ns = kNsPerMs;
};

enum class DeadlockConfigError : std::uint8_t { kOk = 0, kZeroStall };
std::string_view deadlock_config_error_name(DeadlockConfigError e);

struct Deadlock {
  std::vector<std::uint64_t> cycle;  // node keys, each waiting for the next
  TimeNs formed_at = 0;
  TimeNs detected_at = 0;
  TimeNs resolved_at = 0;
  bool resolved = false;
};

class DeadlockDetector {
 public:
  static DeadlockConfigError check(const DeadlockConfig& cfg);

  // Precondition: check(cfg) == kOk.
  explicit DeadlockDetector(const DeadlockConfig& cfg) : cfg_(cfg) {}

  // One check at `now` over the current graph (finalized; an unfinalized
  // graph is not examined). Appends to `formed` the
  // indices (into all()) of deadlocks first seen now, and to `resolved`
  // those that ended now.
  void check(const WaitForGraph& g, TimeNs now, std::vector<std::size_t>& formed,
             std::vector<std::size_t>& resolved);

  // Every deadlock seen, in detection order.
  const std::vector<Deadlock>& all() const { return all_; }
  std::size_t active() const { return active_.size(); }
  const DeadlockConfig& config() const { return cfg_; }

 private:
  bool stalled(const WaitForGraph& g, std::uint32_t i, TimeNs now) const;
  // A cycle among stalled nodes not in `taken`, or empty.
  std::vector<std::uint32_t> find_cycle(const WaitForGraph& g, TimeNs now,
                                        const std::vector<bool>& taken) const;

  DeadlockConfig cfg_;
  std::vector<Deadlock> all_;
  std::vector<std::size_t> active_;  // indices into all_
};

}  // namespace uroce::testbed
