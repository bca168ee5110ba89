#include "testbed/wait_for.h"

#include <gtest/gtest.h>

#include "tests/testbed/test_support.h"

namespace uroce::testbed {
namespace {

struct Loop {
  Scenario sc = make_loop_scenario(testing::small_loop(10, kNsPerMs));
  Topology topo;
  std::vector<SwitchModel> sw;
  Loop() {
    EXPECT_EQ(resolve(sc, topo), "");
    for (std::uint32_t s = 0; s < 2; ++s) {
      sw.emplace_back(switch_config(sc, topo, s, 1));
      for (std::uint16_t d = 0; d < topo.num_hosts; ++d) {
        const std::int32_t p = topo.route(s, d);
        if (p >= 0) sw[s].set_route(d, static_cast<std::uint16_t>(p));
      }
    }
  }
};

SwitchPacket to_hd() {
  SwitchPacket p;
  p.dst = 1;  // hd
  p.prio = 3;
  p.ttl = 10;
  p.bytes = 1000;
  return p;
}

std::vector<std::uint8_t> pause() {
  std::vector<std::uint8_t> f(wire::kPfcFrameSize);
  wire::build_pfc_pause(f, wire::MacAddr{}, 0x08, 0xffff);
  return f;
}

TEST(WaitFor_Key, RoundTripsAndNames) {
  const QueueId q{3, 17, 5};
  EXPECT_EQ(queue_of_key(queue_key(q)), q);
  Loop l;
  EXPECT_EQ(queue_name(l.topo, QueueId{0, 1, 3}), "s1>s2/3");
  EXPECT_EQ(queue_name(l.topo, QueueId{1, 0, 3}), "s2>hd/3");
}

TEST(WaitFor_Build, PausedLoopQueuesWaitForEachOther) {
  Loop l;
  // s1 port 0 faces h1, port 1 faces s2; s2 port 0 faces hd, port 1 s1.
  l.sw[0].on_packet(1, to_hd(), 0);  // from s2 back toward s2
  l.sw[1].on_packet(1, to_hd(), 0);  // from s1 back toward s1
  WaitForGraph g;
  build_wait_for_graph(l.topo, l.sw, 10, g);
  EXPECT_EQ(g.size(), 0u);  // nothing paused yet
  l.sw[0].on_control(1, pause(), 10);
  build_wait_for_graph(l.topo, l.sw, 10, g);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_TRUE(g.successors(0).empty());  // s2's queue is not paused
  l.sw[1].on_control(1, pause(), 10);
  build_wait_for_graph(l.topo, l.sw, 10, g);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(queue_of_key(g.key(0)), (QueueId{0, 1, 3}));
  EXPECT_EQ(queue_of_key(g.key(1)), (QueueId{1, 1, 3}));
  ASSERT_EQ(g.successors(0).size(), 1u);
  EXPECT_EQ(g.successors(0)[0], 1u);
  ASSERT_EQ(g.successors(1).size(), 1u);
  EXPECT_EQ(g.successors(1)[0], 0u);
  EXPECT_EQ(g.progress_at(0), 0u);
}

TEST(WaitFor_Build, NoEdgeWithoutHeldBytesOrTowardAHost) {
  Loop l;
  // s1's packets came from h1 (port 0): s2 holds nothing from s1, so a
  // paused s2>s1 does not wait for s1>s2.
  l.sw[0].on_packet(0, to_hd(), 0);
  l.sw[1].on_packet(1, to_hd(), 0);
  l.sw[0].on_control(1, pause(), 0);
  l.sw[1].on_control(1, pause(), 0);
  WaitForGraph g;
  build_wait_for_graph(l.topo, l.sw, 0, g);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g.successors(0).size(), 1u);  // s1>s2 waits for s2>s1
  EXPECT_TRUE(g.successors(1).empty());
  // A queue paused by a host: a node, never an edge.
  l.sw[1].set_route(1, 0);
  l.sw[1].on_packet(1, to_hd(), 0);
  l.sw[1].on_control(0, pause(), 0);
  build_wait_for_graph(l.topo, l.sw, 0, g);
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(queue_of_key(g.key(1)), (QueueId{1, 0, 3}));
  EXPECT_TRUE(g.successors(1).empty());
}

}  // namespace
}  // namespace uroce::testbed
