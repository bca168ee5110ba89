#include "testbed/frame_store.h"

#include <gtest/gtest.h>

#include <vector>

namespace uroce::testbed {
namespace {

TEST(FrameStore_Put, KeepsBytesUntilReleasedAndReusesSlots) {
  FrameStore s;
  const std::vector<std::uint8_t> a{1, 2, 3};
  const std::vector<std::uint8_t> b{9, 8};
  const std::uint32_t sa = s.put(a);
  const std::uint32_t sb = s.put(b);
  EXPECT_NE(sa, sb);
  EXPECT_EQ(std::vector<std::uint8_t>(s.get(sa).begin(), s.get(sa).end()), a);
  EXPECT_EQ(std::vector<std::uint8_t>(s.get(sb).begin(), s.get(sb).end()), b);
  EXPECT_EQ(s.live(), 2u);
  s.release(sa);
  EXPECT_EQ(s.live(), 1u);
  // The freed slot comes back, with the new bytes only.
  const std::uint32_t sc = s.put(b);
  EXPECT_EQ(sc, sa);
  EXPECT_EQ(s.get(sc).size(), 2u);
  EXPECT_EQ(s.peak(), 2u);
  EXPECT_EQ(s.stored(), 3u);
}

TEST(FrameStore_Get, IsWritable) {
  FrameStore s;
  const std::vector<std::uint8_t> a{1, 2, 3};
  const std::uint32_t sa = s.put(a);
  s.get(sa)[1] = 7;
  EXPECT_EQ(s.get(sa)[1], 7);
}

}  // namespace
}  // namespace uroce::testbed
