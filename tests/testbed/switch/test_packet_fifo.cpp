#include "testbed/switch/packet_fifo.h"

#include <gtest/gtest.h>

namespace uroce::testbed {
namespace {

TEST(PacketFifo_Order, FirstInFirstOutAcrossGrowthAndWrap) {
  PacketFifo<int> f;
  EXPECT_TRUE(f.empty());
  int next_in = 0;
  int next_out = 0;
  // Interleave pushes and pops so the head wraps before each growth.
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 7; ++i) f.push(next_in++);
    for (int i = 0; i < 3; ++i) {
      ASSERT_EQ(f.front(), next_out);
      EXPECT_EQ(f.pop(), next_out++);
    }
  }
  EXPECT_EQ(f.size(), static_cast<std::size_t>(next_in - next_out));
  for (std::size_t i = 0; i < f.size(); ++i) EXPECT_EQ(f.at(i), next_out + static_cast<int>(i));
  while (!f.empty()) EXPECT_EQ(f.pop(), next_out++);
  EXPECT_EQ(next_out, next_in);
  f.push(5);
  f.clear();
  EXPECT_TRUE(f.empty());
}

}  // namespace
}  // namespace uroce::testbed
