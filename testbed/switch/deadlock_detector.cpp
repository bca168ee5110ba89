#include "testbed/switch/deadlock_detector.h"

#include <algorithm>

namespace uroce::testbed {

std::string_view deadlock_config_error_name(DeadlockConfigError e) {
  switch (e) {
    case DeadlockConfigError::kOk: return "Ok";
    case DeadlockConfigError::kZeroStall: return "ZeroStall";
  }
  return "Unknown";
}

void WaitForGraph::clear() {
  keys_.clear();
  progress_.clear();
  edges_.clear();
  targets_.clear();
  begin_.clear();
  final_ = false;
}

std::uint32_t WaitForGraph::add_node(std::uint64_t key, TimeNs progress_at) {
  keys_.push_back(key);
  progress_.push_back(progress_at);
  final_ = false;
  return static_cast<std::uint32_t>(keys_.size() - 1);
}

void WaitForGraph::add_edge(std::uint32_t from, std::uint32_t to) {
  if (from >= keys_.size() || to >= keys_.size()) return;
  edges_.emplace_back(from, to);
  final_ = false;
}

void WaitForGraph::finalize() {
  std::sort(edges_.begin(), edges_.end());
  edges_.erase(std::unique(edges_.begin(), edges_.end()), edges_.end());
  targets_.clear();
  begin_.assign(keys_.size() + 1, 0);
  for (const auto& e : edges_) {
    targets_.push_back(e.second);
    ++begin_[e.first + 1];
  }
  for (std::size_t i = 1; i < begin_.size(); ++i) begin_[i] += begin_[i - 1];
  final_ = true;
}

std::int64_t WaitForGraph::find(std::uint64_t key) const {
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i] == key) return static_cast<std::int64_t>(i);
  }
  return -1;
}

DeadlockConfigError DeadlockDetector::check(const DeadlockConfig& cfg) {
  if (cfg.stall_ns == 0) return DeadlockConfigError::kZeroStall;
  return DeadlockConfigError::kOk;
}

bool DeadlockDetector::stalled(const WaitForGraph& g, std::uint32_t i, TimeNs now) const {
  const TimeNs p = g.progress_at(i);
  return now >= p && now - p >= cfg_.stall_ns;
}

std::vector<std::uint32_t> DeadlockDetector::find_cycle(const WaitForGraph& g, TimeNs now,
                                                        const std::vector<bool>& taken) const {
  enum : std::uint8_t { kWhite = 0, kGrey, kBlack };
  const auto n = static_cast<std::uint32_t>(g.size());
  std::vector<std::uint8_t> color(n, kWhite);
  auto eligible = [&](std::uint32_t i) { return !taken[i] && stalled(g, i, now); };
  // Iterative DFS: (node, index of the next successor to try).
  std::vector<std::pair<std::uint32_t, std::size_t>> stack;
  for (std::uint32_t start = 0; start < n; ++start) {
    if (color[start] != kWhite || !eligible(start)) continue;
    stack.emplace_back(start, 0);
    color[start] = kGrey;
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      const auto succ = g.successors(node);
      if (next == succ.size()) {
        color[node] = kBlack;
        stack.pop_back();
        continue;
      }
      const std::uint32_t s = succ[next++];
      if (!eligible(s)) continue;
      if (color[s] == kGrey) {
        std::vector<std::uint32_t> cycle;
        std::size_t k = stack.size();
        while (stack[k - 1].first != s) --k;
        for (; k <= stack.size(); ++k) cycle.push_back(stack[k - 1].first);
        return cycle;
      }
      if (color[s] == kWhite) {
        color[s] = kGrey;
        stack.emplace_back(s, 0);
      }
    }
  }
  return {};
}

void DeadlockDetector::check(const WaitForGraph& g, TimeNs now, std::vector<std::size_t>& formed,
                             std::vector<std::size_t>& resolved) {
  if (!g.finalized()) return;
  // Active deadlocks first: one node that moved or unpaused ends it.
  for (std::size_t a = 0; a < active_.size();) {
    Deadlock& d = all_[active_[a]];
    bool still = true;
    for (const std::uint64_t key : d.cycle) {
      const std::int64_t i = g.find(key);
      if (i < 0 || !stalled(g, static_cast<std::uint32_t>(i), now) ||
          g.progress_at(static_cast<std::uint32_t>(i)) > d.formed_at) {
        still = false;
        break;
      }
    }
    if (still) {
      ++a;
      continue;
    }
    d.resolved = true;
    d.resolved_at = now;
    resolved.push_back(active_[a]);
    active_.erase(active_.begin() + static_cast<std::ptrdiff_t>(a));
  }
  std::vector<bool> taken(g.size(), false);
  for (const std::size_t a : active_) {
    for (const std::uint64_t key : all_[a].cycle) {
      const std::int64_t i = g.find(key);
      if (i >= 0) taken[static_cast<std::size_t>(i)] = true;
    }
  }
  for (;;) {
    const std::vector<std::uint32_t> cycle = find_cycle(g, now, taken);
    if (cycle.empty()) break;
    Deadlock d;
    d.detected_at = now;
    for (const std::uint32_t i : cycle) {
      taken[i] = true;
      d.cycle.push_back(g.key(i));
      if (g.progress_at(i) > d.formed_at) d.formed_at = g.progress_at(i);
    }
    all_.push_back(std::move(d));
    active_.push_back(all_.size() - 1);
    formed.push_back(all_.size() - 1);
  }
}

}  // namespace uroce::testbed
