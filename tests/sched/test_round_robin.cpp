#include "sched/round_robin.h"

#include <gtest/gtest.h>

#include <vector>

namespace uroce::sched {
namespace {

// Records the turns; each flow has `left[f]` frames of output.
struct Serve {
  std::vector<FlowId> order;
  std::vector<std::uint32_t> budgets;
  std::vector<std::uint32_t> left;
  std::uint32_t port_room = 1000000;
  ServeResult operator()(FlowId f, std::uint32_t budget) {
    order.push_back(f);
    budgets.push_back(budget);
    ServeResult r;
    if (port_room == 0) {
      r.more = true;
      r.stop = true;
      return r;
    }
    r.sent = std::min({budget, left[f], port_room});
    left[f] -= r.sent;
    port_room -= r.sent;
    r.more = left[f] != 0;
    return r;
  }
};

TEST(RoundRobin_Round, ServesEachActiveFlowOncePerRound) {
  RoundRobin rr(8, 4);
  Serve s{{}, {}, {0, 10, 0, 3, 0, 0, 0, 8}};
  rr.activate(7);
  rr.activate(1);
  rr.activate(3);
  rr.activate(1);  // idempotent
  EXPECT_EQ(rr.size(), 3u);
  EXPECT_EQ(rr.round(s), 4u + 4u + 3u);
  EXPECT_EQ(s.order, (std::vector<FlowId>{7, 1, 3}));
  EXPECT_EQ(s.budgets, (std::vector<std::uint32_t>{4, 4, 4}));
  EXPECT_FALSE(rr.active(3));  // done
  EXPECT_TRUE(rr.active(7));
  EXPECT_EQ(rr.size(), 2u);
  s.order.clear();
  EXPECT_EQ(rr.round(s), 8u);
  EXPECT_EQ(s.order, (std::vector<FlowId>{7, 1}));
  s.order.clear();
  EXPECT_EQ(rr.round(s), 2u);  // only flow 1 had 2 left
  EXPECT_EQ(s.order, (std::vector<FlowId>{1}));
  EXPECT_EQ(rr.size(), 0u);
  EXPECT_EQ(rr.round(s), 0u);
}

TEST(RoundRobin_Round, StopKeepsTheFlowInFront) {
  RoundRobin rr(4, 2);
  Serve s{{}, {}, {5, 5, 5, 0}};
  rr.activate(0);
  rr.activate(1);
  rr.activate(2);
  s.port_room = 3;  // flow 0 sends 2, flow 1 sends 1, then the port is full
  EXPECT_EQ(rr.round(s), 3u);
  EXPECT_EQ(s.order, (std::vector<FlowId>{0, 1, 2}));
  // Flow 2 was refused: it is first next round, then 0 and 1.
  s.order.clear();
  s.port_room = 100;
  rr.round(s);
  EXPECT_EQ(s.order, (std::vector<FlowId>{2, 0, 1}));
}

TEST(RoundRobin_Remove, KeepsOthersInOrder) {
  RoundRobin rr(6);
  Serve s{{}, {}, {1, 1, 1, 1, 1, 1}};
  for (FlowId f : {4u, 2u, 5u, 0u}) rr.activate(f);
  rr.remove(5);
  rr.remove(3);  // not queued: no-op
  EXPECT_FALSE(rr.active(5));
  EXPECT_EQ(rr.size(), 3u);
  rr.round(s);
  EXPECT_EQ(s.order, (std::vector<FlowId>{4, 2, 0}));
}

TEST(RoundRobin_Activate, OutOfRangeIgnoredAndCounted) {
  RoundRobin rr(2);
  rr.activate(2);
  EXPECT_EQ(rr.size(), 0u);
  EXPECT_EQ(rr.bad_ids(), 1u);
  EXPECT_FALSE(rr.active(2));
}

TEST(RoundRobin_Round, ActivateFromInsideServeWaitsForNextRound) {
  RoundRobin rr(3, 1);
  std::vector<FlowId> order;
  rr.activate(0);
  rr.round([&](FlowId f, std::uint32_t) {
    order.push_back(f);
    if (f == 0) rr.activate(1);
    rr.activate(f);  // no second copy of the flow being served
    return ServeResult{1, false, false};
  });
  EXPECT_EQ(order, (std::vector<FlowId>{0}));
  EXPECT_EQ(rr.size(), 1u);
  EXPECT_TRUE(rr.active(1));
  EXPECT_FALSE(rr.active(0));
}

}  // namespace
}  // namespace uroce::sched
