#include "datapath/engine/gsi_queue.h"

#include <gtest/gtest.h>

namespace uroce::engine {
namespace {

std::array<std::uint8_t, wire::kMadBytes> mad_of(std::uint8_t b) {
  std::array<std::uint8_t, wire::kMadBytes> m{};
  m.fill(b);
  return m;
}

TEST(GsiQueue_Push, RingsTheBellAndIsPendingUntilDrained) {
  GsiQueue q(4);
  WakeWord bell;
  EXPECT_FALSE(q.pending());
  ASSERT_TRUE(q.push(wire::Ipv4Addr{1}, wire::MacAddr{}, 1, mad_of(7)));
  EXPECT_EQ(bell.word.load(), 0u);  // no bell yet
  q.set_bell(&bell);
  ASSERT_TRUE(q.push(wire::Ipv4Addr{2}, wire::MacAddr{}, 1, mad_of(8)));
  EXPECT_EQ(bell.word.load(), 1u);
  EXPECT_TRUE(q.pending());
  std::vector<GsiMad> got;
  EXPECT_EQ(q.drain(&got), 2u);
  EXPECT_FALSE(q.pending());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].peer_ip.v, 1u);
  EXPECT_EQ(got[1].mad[0], 8);
  q.set_bell(nullptr);
  ASSERT_TRUE(q.push(wire::Ipv4Addr{3}, wire::MacAddr{}, 1, mad_of(9)));
  EXPECT_EQ(bell.word.load(), 1u);
}

TEST(GsiQueue_Push, FullQueueRefusesWithoutWaking) {
  GsiQueue q(1);
  WakeWord bell;
  q.set_bell(&bell);
  ASSERT_TRUE(q.push(wire::Ipv4Addr{1}, wire::MacAddr{}, 1, mad_of(1)));
  EXPECT_FALSE(q.push(wire::Ipv4Addr{2}, wire::MacAddr{}, 1, mad_of(2)));
  EXPECT_EQ(bell.word.load(), 1u);
  EXPECT_EQ(q.size(), 1u);
}

}  // namespace
}  // namespace uroce::engine
