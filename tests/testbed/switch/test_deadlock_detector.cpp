#include "testbed/switch/deadlock_detector.h"

#include <gtest/gtest.h>

namespace uroce::testbed {
namespace {

constexpr TimeNs kStall = 1000;

TEST(WaitForGraph_Finalize, SortsDeduplicatesAndIgnoresBadEdges) {
  WaitForGraph g;
  const auto a = g.add_node(10, 0);
  const auto b = g.add_node(20, 0);
  const auto c = g.add_node(30, 0);
  g.add_edge(a, c);
  g.add_edge(a, b);
  g.add_edge(a, c);
  g.add_edge(a, 7);  // no such node
  EXPECT_FALSE(g.finalized());
  g.finalize();
  ASSERT_TRUE(g.finalized());
  const auto s = g.successors(a);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0], b);
  EXPECT_EQ(s[1], c);
  EXPECT_TRUE(g.successors(c).empty());
  EXPECT_EQ(g.find(20), 1);
  EXPECT_EQ(g.find(99), -1);
  g.add_node(40, 0);
  EXPECT_FALSE(g.finalized());
}

TEST(DeadlockDetector_Check, ConfigNeedsAStall) {
  EXPECT_EQ(DeadlockDetector::check(DeadlockConfig{0}), DeadlockConfigError::kZeroStall);
  EXPECT_EQ(DeadlockDetector::check(DeadlockConfig{1}), DeadlockConfigError::kOk);
  EXPECT_EQ(deadlock_config_error_name(DeadlockConfigError::kZeroStall), "ZeroStall");
}

// a <-> b, last progress at 100 and 300.
WaitForGraph two_cycle(TimeNs pa = 100, TimeNs pb = 300) {
  WaitForGraph g;
  const auto a = g.add_node(1, pa);
  const auto b = g.add_node(2, pb);
  g.add_edge(a, b);
  g.add_edge(b, a);
  g.finalize();
  return g;
}

TEST(DeadlockDetector_Check, CycleReportedOnceAfterTheStall) {
  DeadlockDetector d(DeadlockConfig{kStall});
  std::vector<std::size_t> formed;
  std::vector<std::size_t> resolved;
  d.check(two_cycle(), 1299, formed, resolved);  // b moved 999 ns ago
  EXPECT_TRUE(formed.empty());
  d.check(two_cycle(), 1300, formed, resolved);
  ASSERT_EQ(formed.size(), 1u);
  const Deadlock& dl = d.all()[formed[0]];
  EXPECT_EQ(dl.formed_at, 300u);
  EXPECT_EQ(dl.detected_at, 1300u);
  EXPECT_EQ(dl.cycle, (std::vector<std::uint64_t>{1, 2}));
  EXPECT_FALSE(dl.resolved);
  formed.clear();
  d.check(two_cycle(), 5000, formed, resolved);
  EXPECT_TRUE(formed.empty());
  EXPECT_TRUE(resolved.empty());
  EXPECT_EQ(d.active(), 1u);
}

TEST(DeadlockDetector_Check, ResolvedWhenANodeMovesOrLeaves) {
  DeadlockDetector d(DeadlockConfig{kStall});
  std::vector<std::size_t> formed;
  std::vector<std::size_t> resolved;
  d.check(two_cycle(), 2000, formed, resolved);
  ASSERT_EQ(formed.size(), 1u);
  d.check(two_cycle(100, 2500), 3000, formed, resolved);  // b moved at 2500
  ASSERT_EQ(resolved.size(), 1u);
  EXPECT_TRUE(d.all()[0].resolved);
  EXPECT_EQ(d.all()[0].resolved_at, 3000u);
  EXPECT_EQ(d.active(), 0u);
  // It stands still again: a second deadlock, formed at b's new progress.
  formed.clear();
  d.check(two_cycle(100, 2500), 3500, formed, resolved);
  ASSERT_EQ(formed.size(), 1u);
  EXPECT_EQ(d.all()[1].formed_at, 2500u);
  // A node that is gone (unpaused or empty) ends it too.
  WaitForGraph only_a;
  only_a.add_node(1, 100);
  only_a.finalize();
  resolved.clear();
  d.check(only_a, 4000, formed, resolved);
  EXPECT_EQ(resolved, (std::vector<std::size_t>{1}));
}

TEST(DeadlockDetector_Check, ChainsAndMovingNodesAreNotDeadlocks) {
  DeadlockDetector d(DeadlockConfig{kStall});
  std::vector<std::size_t> formed;
  std::vector<std::size_t> resolved;
  WaitForGraph chain;  // a -> b -> c, no way back
  const auto a = chain.add_node(1, 0);
  const auto b = chain.add_node(2, 0);
  const auto c = chain.add_node(3, 0);
  chain.add_edge(a, b);
  chain.add_edge(b, c);
  chain.finalize();
  d.check(chain, 10'000, formed, resolved);
  EXPECT_TRUE(formed.empty());
  // A cycle through a node that moved recently is no deadlock.
  d.check(two_cycle(0, 9'500), 10'000, formed, resolved);
  EXPECT_TRUE(formed.empty());
  // An unfinalized graph is not examined.
  WaitForGraph raw;
  raw.add_node(1, 0);
  raw.add_node(2, 0);
  raw.add_edge(0, 1);
  raw.add_edge(1, 0);
  d.check(raw, 10'000, formed, resolved);
  EXPECT_TRUE(formed.empty());
}

TEST(DeadlockDetector_Check, FindsTheCycleBehindATailAndDisjointCycles) {
  DeadlockDetector d(DeadlockConfig{kStall});
  std::vector<std::size_t> formed;
  std::vector<std::size_t> resolved;
  WaitForGraph g;
  // t -> x -> y -> z -> x (a tail into a 3-cycle), and p <-> q.
  const auto t = g.add_node(100, 0);
  const auto x = g.add_node(101, 10);
  const auto y = g.add_node(102, 20);
  const auto z = g.add_node(103, 30);
  const auto p = g.add_node(200, 0);
  const auto q = g.add_node(201, 0);
  g.add_edge(t, x);
  g.add_edge(x, y);
  g.add_edge(y, z);
  g.add_edge(z, x);
  g.add_edge(p, q);
  g.add_edge(q, p);
  g.finalize();
  d.check(g, 5000, formed, resolved);
  ASSERT_EQ(formed.size(), 2u);
  EXPECT_EQ(d.all()[0].cycle, (std::vector<std::uint64_t>{101, 102, 103}));
  EXPECT_EQ(d.all()[0].formed_at, 30u);
  EXPECT_EQ(d.all()[1].cycle, (std::vector<std::uint64_t>{200, 201}));
}

}  // namespace
}  // namespace uroce::testbed
