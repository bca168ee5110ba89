#include "datapath/port/frame_pool.h"

#include <gtest/gtest.h>

#include <set>

namespace uroce::port {
namespace {

TEST(FramePool_Alloc, FreshPoolHandsOutEverySlotThenFails) {
  FramePool pool(3, 64);
  std::set<std::uint32_t> got;
  for (int i = 0; i < 3; ++i) {
    const std::uint32_t s = pool.alloc();
    ASSERT_NE(s, FramePool::kInvalidSlot);
    got.insert(s);
  }
  EXPECT_EQ(got, (std::set<std::uint32_t>{0, 1, 2}));
  EXPECT_EQ(pool.alloc(), FramePool::kInvalidSlot);
  EXPECT_EQ(pool.in_use(), 3u);
  EXPECT_EQ(pool.high_water(), 3u);
}

TEST(FramePool_Alloc, ZeroCapacityAlwaysFails) {
  FramePool pool(0, 64);
  EXPECT_EQ(pool.alloc(), FramePool::kInvalidSlot);
  EXPECT_EQ(pool.in_use(), 0u);
}

TEST(FramePool_Data, SlotsDoNotOverlap) {
  FramePool pool(2, 16);
  const std::uint32_t a = pool.alloc();
  const std::uint32_t b = pool.alloc();
  for (int i = 0; i < 16; ++i) pool.data(a)[i] = 0xAA;
  for (int i = 0; i < 16; ++i) pool.data(b)[i] = 0x55;
  for (int i = 0; i < 16; ++i) EXPECT_EQ(pool.data(a)[i], 0xAA);
  EXPECT_EQ(pool.data(b) - pool.data(a), b > a ? 16 : -16);
}

TEST(FramePool_Free, FreedSlotIsReusedFirst) {
  FramePool pool(4, 8);
  const std::uint32_t a = pool.alloc();
  pool.alloc();
  pool.free(a);
  EXPECT_EQ(pool.in_use(), 1u);
  EXPECT_EQ(pool.alloc(), a);
  EXPECT_EQ(pool.high_water(), 2u);
}

TEST(FramePool_Free, DoubleFreeAndOutOfRangeAreCountedAndIgnored) {
  FramePool pool(2, 8);
  const std::uint32_t a = pool.alloc();
  pool.free(a);
  pool.free(a);
  pool.free(7);
  pool.free(FramePool::kInvalidSlot);
  EXPECT_EQ(pool.bad_frees(), 3u);
  EXPECT_EQ(pool.in_use(), 0u);
  // The free stack was not corrupted: exactly two slots come out.
  EXPECT_NE(pool.alloc(), FramePool::kInvalidSlot);
  EXPECT_NE(pool.alloc(), FramePool::kInvalidSlot);
  EXPECT_EQ(pool.alloc(), FramePool::kInvalidSlot);
}

}  // namespace
}  // namespace uroce::port
