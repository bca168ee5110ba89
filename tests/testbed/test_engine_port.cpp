#include "testbed/engine_port.h"

#include <gtest/gtest.h>

#include <vector>

namespace uroce::testbed {
namespace {

TEST(EnginePortIo_Rx, BurstHandsOldestFirstAndReleasesSlots) {
  FrameStore store;
  EnginePortIo port(store);
  for (std::uint8_t i = 0; i < 40; ++i) {
    const std::vector<std::uint8_t> f{i};
    port.deliver(store.put(f));
  }
  std::vector<std::uint8_t> seen;
  EXPECT_EQ(port.rx_burst([&](std::span<const std::uint8_t> f) { seen.push_back(f[0]); }),
            EnginePortIo::kBurst);
  EXPECT_EQ(seen.front(), 0);
  EXPECT_EQ(seen.back(), 31);
  EXPECT_EQ(store.live(), 8u);
  EXPECT_EQ(port.rx_burst([&](std::span<const std::uint8_t>) {}), 8);
  EXPECT_EQ(store.live(), 0u);
  EXPECT_EQ(port.counters().rx_frames, 40u);
}

TEST(EnginePortIo_Tx, CommitsGoToTheOutboxAndUseTheRoom) {
  FrameStore store;
  EnginePortIo port(store);
  port.set_room(2);
  EXPECT_EQ(port.tx_room(), 2);
  for (int i = 0; i < 3; ++i) {
    auto b = port.tx().tx_alloc(10);
    ASSERT_EQ(b.size(), 10u);
    b[0] = static_cast<std::uint8_t>(i);
    port.tx().tx_commit(10);
  }
  EXPECT_EQ(port.tx_room(), 0);
  EXPECT_TRUE(port.out_of_room());
  ASSERT_EQ(port.outbox().size(), 3u);
  EXPECT_EQ(store.get(port.outbox()[2])[0], 2);
  EXPECT_EQ(port.counters().tx_over_room, 1u);
  EXPECT_TRUE(port.tx().tx_alloc(EnginePortIo::kMaxFrame + 1).empty());
  EXPECT_EQ(port.counters().tx_oversize, 1u);
  port.set_room(100);
  EXPECT_EQ(port.tx_room(), EnginePortIo::kBurst);
}

}  // namespace
}  // namespace uroce::testbed
