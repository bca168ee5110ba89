#include "datapath/transport/grant_gate.h"

#include <gtest/gtest.h>

namespace uroce::transport {
namespace {

GrantGateConfig config() {
  GrantGateConfig c;
  c.unsched_bytes = 10'000;
  c.grant_timeout_ns = 1'000;
  c.max_timeouts = 3;
  return c;
}

// Two levels: up to 1,000 bytes at priority 7, anything longer at 6.
PeerCutoffs two_levels() {
  PeerCutoffs p;
  p.cutoffs.levels = 2;
  p.cutoffs.max_length.fill(UINT64_MAX);
  p.cutoffs.max_length[0] = 1'000;
  p.top_priority = 7;
  return p;
}

TEST(PeerCutoffs, PriorityOf_ShorterHigher) {
  const PeerCutoffs p = two_levels();
  EXPECT_EQ(p.priority_of(500), 7);
  EXPECT_EQ(p.priority_of(1'000), 7);
  EXPECT_EQ(p.priority_of(1'001), 6);
}

TEST(GrantGate, New_UnscheduledBytesAllowedAtTheCutoffsPriority) {
  const GrantGate g(config(), 100, 50'000, two_levels());
  EXPECT_EQ(g.allowed(), 10'000u);
  EXPECT_EQ(g.priority(0), 6);
  EXPECT_EQ(g.priority(9'999), 6);
  EXPECT_FALSE(g.blocked());
  const GrantGate small(config(), 100, 800, two_levels());
  EXPECT_EQ(small.allowed(), 800u);  // the whole message, no grant needed
  EXPECT_EQ(small.priority(0), 7);
}

TEST(GrantGate, OnGrant_CumulativeStaleOrForeignIgnored) {
  GrantGate g(config(), 100, 50'000, two_levels());
  EXPECT_TRUE(g.on_grant(100, 20'000, 2, 0));
  EXPECT_EQ(g.allowed(), 20'000u);
  EXPECT_EQ(g.priority(15'000), 2);
  EXPECT_FALSE(g.on_grant(100, 15'000, 5, 0));  // older: takes nothing back
  EXPECT_EQ(g.allowed(), 20'000u);
  EXPECT_EQ(g.priority(15'000), 2);
  EXPECT_FALSE(g.on_grant(101, 40'000, 1, 0));  // another message
  EXPECT_TRUE(g.on_grant(100, 90'000, 3, 0));   // past the end: the end
  EXPECT_EQ(g.allowed(), 50'000u);
}

TEST(GrantGate, OnSent_BlockedWhenAllAllowedIsSent) {
  GrantGate g(config(), 100, 50'000, two_levels());
  g.on_sent(4'000, 10);
  EXPECT_FALSE(g.blocked());
  EXPECT_EQ(g.deadline(), UINT64_MAX);
  g.on_sent(10'000, 20);
  EXPECT_TRUE(g.blocked());
  EXPECT_EQ(g.deadline(), 1'020u);
  g.on_grant(100, 30'000, 1, 0);
  EXPECT_FALSE(g.blocked());
  EXPECT_EQ(g.deadline(), UINT64_MAX);
  g.on_sent(50'000, 30);  // (the caller never sends past allowed; here done)
  EXPECT_TRUE(g.done());
  EXPECT_FALSE(g.blocked());
}

TEST(GrantGate, OnTimer_FallsBackAfterMaxTimeoutsInARow) {
  GrantGate g(config(), 100, 50'000, two_levels());
  g.on_sent(10'000, 0);
  EXPECT_FALSE(g.on_timer(999));  // before the deadline
  EXPECT_EQ(g.timeouts(), 0u);
  EXPECT_FALSE(g.on_timer(1'000));
  EXPECT_FALSE(g.on_timer(2'000));
  EXPECT_EQ(g.timeouts(), 2u);
  EXPECT_TRUE(g.on_timer(3'000));  // the third: open for the whole message
  EXPECT_TRUE(g.fallen_back());
  EXPECT_EQ(g.allowed(), 50'000u);
  EXPECT_EQ(g.priority(20'000), 0);  // the lowest priority
  EXPECT_FALSE(g.on_grant(100, 60'000, 5, 0));
}

TEST(GrantGate, OnGrant_ResendOfTheSameOffsetKeepsTheGateFromFallingBack) {
  GrantGate g(config(), 100, 50'000, two_levels());
  g.on_grant(100, 20'000, 1, 0);
  g.on_sent(20'000, 0);
  // The receiver re-sends the grant every 800 ns (its data is being
  // recovered): never three timeouts in a row.
  for (std::uint64_t t = 800; t < 20'000; t += 800) {
    g.on_timer(t);
    EXPECT_FALSE(g.on_grant(100, 20'000, 1, t));
  }
  EXPECT_FALSE(g.fallen_back());
  EXPECT_EQ(g.allowed(), 20'000u);
  // Silence after the last resend (19,200): three timeouts, then it falls
  // back.
  EXPECT_FALSE(g.on_timer(20'000));  // not due before 20,200
  EXPECT_FALSE(g.on_timer(21'000));
  EXPECT_FALSE(g.on_timer(22'000));
  EXPECT_EQ(g.timeouts(), 2u);
  EXPECT_TRUE(g.on_timer(23'000));
}

TEST(GrantGate, OnGrant_ResetsTheTimeoutCount) {
  GrantGate g(config(), 100, 50'000, two_levels());
  g.on_sent(10'000, 0);
  g.on_timer(1'000);
  g.on_timer(2'000);
  ASSERT_EQ(g.timeouts(), 2u);
  g.on_grant(100, 20'000, 1, 0);
  EXPECT_EQ(g.timeouts(), 0u);
  g.on_sent(20'000, 3'000);
  EXPECT_FALSE(g.on_timer(4'000));
  EXPECT_FALSE(g.on_timer(5'000));
  EXPECT_FALSE(g.fallen_back());
}

}  // namespace
}  // namespace uroce::transport
