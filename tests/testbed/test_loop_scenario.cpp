#include "testbed/loop_scenario.h"

#include <gtest/gtest.h>

namespace uroce::testbed {
namespace {

TEST(LoopScenario_Make, TwoSwitchesShareOneLoopLink) {
  LoopParams p;
  p.ttl = 32;
  p.rate_bps = 3'000'000'000ull;
  Scenario sc = make_loop_scenario(p);
  Topology t;
  ASSERT_EQ(resolve(sc, t), "");
  EXPECT_EQ(sc.links.size(), 3u);
  EXPECT_EQ(t.link_name(2), "s1-s2");
  // s1 (switch 0) and s2 (switch 1) both send hd's traffic to the other.
  EXPECT_EQ(t.names[t.ports[t.switch_node(0)][static_cast<std::size_t>(t.route(0, 1))].peer.node],
            "s2");
  EXPECT_EQ(t.names[t.ports[t.switch_node(1)][static_cast<std::size_t>(t.route(1, 1))].peer.node],
            "s1");
  EXPECT_EQ(sc.flows[0].ttl, 32);
  EXPECT_EQ(sc.flows[0].rate_bps, 3'000'000'000ull);
  EXPECT_TRUE(sc.route_changes.empty());
  EXPECT_TRUE(sc.deadlock.stop);
}

TEST(LoopScenario_Make, RingOfFourWithATimedFix) {
  LoopParams p;
  p.switches = 4;
  p.fix_at_ns = 7 * kNsPerMs;
  p.watchdog = true;
  Scenario sc = make_loop_scenario(p);
  Topology t;
  ASSERT_EQ(resolve(sc, t), "");
  EXPECT_EQ(sc.links.size(), 6u);  // two host links, four ring links
  EXPECT_EQ(t.link_name(5), "s4-s1");
  for (std::uint32_t s = 0; s < 4; ++s) {
    const auto next = t.ports[t.switch_node(s)][static_cast<std::size_t>(t.route(s, 1))].peer;
    EXPECT_EQ(next.node, t.switch_node((s + 1) % 4));
  }
  ASSERT_EQ(t.route_changes.size(), 1u);
  EXPECT_EQ(t.route_changes[0].at_ns, 7 * kNsPerMs);
  EXPECT_TRUE(sc.watchdog.enabled);
}

TEST(LoopScenario_Bound, IsNTimesBOverTtl) {
  EXPECT_DOUBLE_EQ(loop_bound_bps(2, 40'000'000'000ull, 64), 1.25e9);
  EXPECT_DOUBLE_EQ(loop_bound_bps(3, 40'000'000'000ull, 16), 7.5e9);
}

TEST(LoopScenario_Bound, ExactBoundCountsCrossingsOfTheFirstLink) {
  // TTL 64, n = 2: 63 hops, s1 -> s2 crossed 32 times: 40 / 32.
  EXPECT_DOUBLE_EQ(loop_exact_bound_bps(2, 40'000'000'000ull, 64), 1.25e9);
  // TTL 16, n = 3: 15 hops, 5 each: 8 Gb/s, above n x B / TTL = 7.5.
  EXPECT_DOUBLE_EQ(loop_exact_bound_bps(3, 40'000'000'000ull, 16), 8e9);
  // TTL 32, n = 3: 31 hops, 11 on the first link: 3.636..., below 3.75.
  EXPECT_DOUBLE_EQ(loop_exact_bound_bps(3, 40'000'000'000ull, 32), 40e9 / 11);
}

}  // namespace
}  // namespace uroce::testbed
