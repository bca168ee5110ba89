#include "apps/uroced/ring_arena.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace uroce::daemon {
namespace {

constexpr std::uint64_t kChunk = 64 * 1024;

// Bytes of the memfd that hold pages (not holes).
std::uint64_t allocated_bytes(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return 0;
  return static_cast<std::uint64_t>(st.st_blocks) * 512;
}

TEST(RingArenaAlloc, PageAlignedFirstFitGrowingByChunks) {
  RingArena a;
  ASSERT_EQ(a.create("t", kChunk, 4), 0);
  ArenaExtent e1, e2, e3;
  ASSERT_EQ(a.alloc(100, &e1), 0);
  EXPECT_EQ(e1.offset, 0u);
  EXPECT_EQ(e1.bytes, 4096u);
  ASSERT_EQ(a.alloc(5000, &e2), 0);
  EXPECT_EQ(e2.offset, 4096u);
  EXPECT_EQ(e2.bytes, 8192u);
  // Does not fit what is left of chunk 0: the next chunk.
  ASSERT_EQ(a.alloc(kChunk - 4096, &e3), 0);
  EXPECT_EQ(e3.offset, kChunk);
  EXPECT_EQ(a.map().grown(), 2u);
  EXPECT_EQ(a.bytes_in_use(), 4096u + 8192u + kChunk - 4096u);
}

// Placing a ring makes no page: who will write it makes them (and is
// charged for them): the session for a CQ, the provider for an SQ or RQ
// (docs/first-lap.md, "The first lap of the arena's rings").
TEST(RingArenaAlloc, MakesNoPage) {
  RingArena a;
  ASSERT_EQ(a.create("t", kChunk, 4), 0);
  ArenaExtent e;
  ASSERT_EQ(a.alloc(5 * 4096 - 100, &e), 0);
  EXPECT_EQ(e.bytes, 5 * 4096u);
  EXPECT_EQ(allocated_bytes(a.fd()), 0u);
}

TEST(RingArenaAlloc, Errors) {
  RingArena a;
  ASSERT_EQ(a.create("t", kChunk, 1), 0);
  ArenaExtent e;
  EXPECT_EQ(a.alloc(0, &e), EINVAL);
  EXPECT_EQ(a.alloc(kChunk + 1, &e), EINVAL);
  ASSERT_EQ(a.alloc(kChunk, &e), 0);
  ArenaExtent more;
  EXPECT_EQ(a.alloc(4096, &more), ENOMEM);  // its one chunk is full
  EXPECT_EQ(a.create("t", 0, 1), EINVAL);
}

TEST(RingArenaRelease, ReusedZeroFilledAndPunched) {
  RingArena a;
  ASSERT_EQ(a.create("t", kChunk, 4), 0);
  ArenaExtent e;
  ASSERT_EQ(a.alloc(3 * 4096, &e), 0);
  std::memset(e.addr, 0x5a, e.bytes);
  EXPECT_GE(allocated_bytes(a.fd()), 3 * 4096u);
  a.release(e);
  EXPECT_EQ(a.bytes_in_use(), 0u);
  EXPECT_EQ(allocated_bytes(a.fd()), 0u);  // the pages went back to the kernel
  ArenaExtent again;
  ASSERT_EQ(a.alloc(3 * 4096, &again), 0);
  EXPECT_EQ(again.offset, e.offset);
  const auto* b = static_cast<const unsigned char*>(again.addr);
  for (std::uint64_t i = 0; i < again.bytes; ++i) ASSERT_EQ(b[i], 0) << i;
}

TEST(RingArenaRelease, NeighboursCoalesceWithinAChunkOnly) {
  RingArena a;
  ASSERT_EQ(a.create("t", kChunk, 4), 0);
  ArenaExtent x, y, z, w;
  ASSERT_EQ(a.alloc(kChunk / 2, &x), 0);
  ASSERT_EQ(a.alloc(kChunk / 2, &y), 0);
  ASSERT_EQ(a.alloc(kChunk / 2, &z), 0);  // chunk 1
  ASSERT_EQ(z.offset, kChunk);
  a.release(y);
  a.release(z);
  a.release(x);
  // Chunk 0 is one free extent again, chunk 1 two halves that merged: two in all.
  EXPECT_EQ(a.free_extents(), 2u);
  ASSERT_EQ(a.alloc(kChunk, &w), 0);
  EXPECT_EQ(w.offset, 0u);
  EXPECT_EQ(a.map().grown(), 2u);
}

// The premise of the change: many rings cost one descriptor.
TEST(RingArenaAlloc, ThousandsOfRingsOneDescriptor) {
  RingArena a;
  ASSERT_EQ(a.create("t"), 0);
  std::vector<ArenaExtent> rings(3000);
  for (auto& r : rings) ASSERT_EQ(a.alloc(12 * 1024, &r), 0);
  EXPECT_EQ(a.map().grown(), 1u);  // 3,000 x 12 KiB fit the first 64 MiB chunk
  for (auto& r : rings) a.release(r);
  EXPECT_EQ(a.bytes_in_use(), 0u);
  EXPECT_EQ(a.free_extents(), 1u);
}

}  // namespace
}  // namespace uroce::daemon
