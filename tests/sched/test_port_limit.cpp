#include "sched/port_limit.h"

#include <gtest/gtest.h>

namespace uroce::sched {
namespace {

// 8 Gb/s: one byte per ns, so the hand computations below are in bytes.
PortLimitConfig cfg(std::uint32_t limit) {
  PortLimitConfig c;
  c.limit_bytes = limit;
  c.link_bps = 8'000'000'000ull;
  return c;
}

TEST(PortLimit_Config, OffWithoutALimitOrALinkRate) {
  EXPECT_FALSE(PortLimit().enabled());
  EXPECT_TRUE(PortLimit(cfg(4096)).enabled());
  PortLimitConfig no_rate = cfg(4096);
  no_rate.link_bps = 0;
  EXPECT_FALSE(PortLimit(no_rate).enabled());
  // Without a limit the port is always open, whatever was sent.
  PortLimit off;
  off.sent(1u << 30, 1);
  EXPECT_TRUE(off.open());
  EXPECT_EQ(off.open_at(), 0u);
}

TEST(PortLimit_Backlog, ClosesAtTheLimitAndDrainsAtTheLinkRate) {
  PortLimit l(cfg(4096));
  l.advance(1000);
  EXPECT_TRUE(l.open());
  EXPECT_EQ(l.frames_left(1500), 3u);  // 4096 bytes: the third overshoots
  l.sent(3000, 2);
  EXPECT_TRUE(l.open());
  EXPECT_EQ(l.frames_left(1500), 1u);
  l.sent(1500, 1);
  EXPECT_FALSE(l.open());
  EXPECT_EQ(l.frames_left(1500), 0u);
  // 4500 bytes queued at t = 1000: below 4096 once 405 have left.
  EXPECT_EQ(l.open_at(), 1405u);
  l.advance(1404);
  EXPECT_EQ(l.backlog(), 4096u);
  EXPECT_FALSE(l.open());
  l.advance(1405);
  EXPECT_TRUE(l.open());
  l.advance(100'000);
  EXPECT_EQ(l.backlog(), 0u);
}

// 3 Gb/s: 3/8 byte per ns. The fractions of a byte drained are carried, so
// many short looks drain what one long look does.
TEST(PortLimit_Backlog, FractionsOfABytesAreCarriedAcrossLooks) {
  PortLimitConfig c = cfg(1u << 20);
  c.link_bps = 3'000'000'000ull;
  PortLimit a(c);
  PortLimit b(c);
  a.sent(100'000, 1);
  b.sent(100'000, 1);
  for (TimeNs t = 1; t <= 8000; ++t) a.advance(t);
  b.advance(8000);
  EXPECT_EQ(a.backlog(), 97'000u);
  EXPECT_EQ(b.backlog(), 97'000u);
}

// An Ethernet link carries 24 bytes per frame beyond it: 64-byte frames
// take 88 bytes of wire time each, and the model drains them so (without
// the overhead it would think the port empty 27 % early).
TEST(PortLimit_Overhead, EachFrameCostsItsWireOverhead) {
  PortLimitConfig c = cfg(1u << 20);
  c.overhead_bytes = 24;
  PortLimit l(c);
  l.sent(100 * 64, 100);
  EXPECT_EQ(l.backlog(), 8800u);
  l.advance(6400);  // what 6,400 bytes without overhead would need
  EXPECT_EQ(l.backlog(), 2400u);
  l.advance(8800);
  EXPECT_EQ(l.backlog(), 0u);
}

}  // namespace
}  // namespace uroce::sched
