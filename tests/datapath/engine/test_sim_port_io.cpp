#include "datapath/engine/sim_port_io.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace uroce::engine {
namespace {

port::SimLinkConfig link_cfg(TimeNs delay, std::uint64_t bps = 0, std::uint32_t queue = 1024) {
  port::SimDirectionConfig d;
  d.propagation_ns = delay;
  d.bandwidth_bps = bps;
  d.queue_frames = queue;
  return port::SimLinkConfig::symmetric(d, 7);
}

TEST(SimPortIo_TxCommit, FrameLeavesAtTheIterationsNow) {
  port::SimLink link(link_cfg(100));
  port::SimPort p0(link, 0), p1(link, 1);
  SimPortIo a(p0), b(p1);
  a.begin(50);
  std::span<std::uint8_t> f = a.tx().tx_alloc(64);
  ASSERT_EQ(f.size(), 64u);
  std::memset(f.data(), 0x5a, f.size());
  a.tx().tx_commit(64);
  EXPECT_EQ(a.tx().counters().committed, 1u);
  EXPECT_EQ(a.flush(), 0u);
  std::vector<std::uint8_t> got;
  auto take = [&](std::span<const std::uint8_t> fr) { got.assign(fr.begin(), fr.end()); };
  b.begin(149);
  EXPECT_EQ(b.rx_burst(take), 0u);
  b.begin(150);
  EXPECT_EQ(b.rx_burst(take), 1u);
  EXPECT_EQ(got, std::vector<std::uint8_t>(64, 0x5a));
}

TEST(SimPortIo_TxCommit, FrameTheLinkRefusesIsCounted) {
  // 1 Mb/s and a one-frame queue: the second frame finds the queue full.
  port::SimLink link(link_cfg(0, 1'000'000, 1));
  port::SimPort p0(link, 0);
  SimPortIo a(p0);
  a.begin(0);
  for (int i = 0; i < 2; ++i) {
    ASSERT_FALSE(a.tx().tx_alloc(100).empty());
    a.tx().tx_commit(100);
  }
  EXPECT_EQ(a.tx().counters().committed, 2u);
  EXPECT_EQ(a.tx().counters().refused, 1u);
  EXPECT_EQ(link.counters(0).drop_queue_full, 1u);
}

TEST(SimPortIo_TxAlloc, FrameLargerThanALinkSlotGivesEmptySpan) {
  port::SimLink link(link_cfg(0));
  port::SimPort p0(link, 0);
  SimPortIo a(p0);
  EXPECT_TRUE(a.tx().tx_alloc(port::kSimMaxFrameBytes + 1).empty());
  EXPECT_EQ(a.tx().counters().oversize, 1u);
  EXPECT_EQ(a.tx_room(), SimPortIo::kBurst);
}

}  // namespace
}  // namespace uroce::engine
