#include "datapath/shm/arena_map.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

namespace uroce::shm {
namespace {

constexpr std::uint64_t kChunk = 64 * 1024;

TEST(ArenaMapCreate, BadSizes) {
  ArenaMap a;
  EXPECT_EQ(a.create("t", 0, 4).err, ShmError::kBadSize);
  EXPECT_EQ(a.create("t", 1000, 4).err, ShmError::kBadSize);  // not a page multiple
  EXPECT_EQ(a.create("t", kChunk, 0).err, ShmError::kBadSize);
  EXPECT_FALSE(a.valid());
}

TEST(ArenaMapCreate, SealedAgainstShrinkAndFurtherSeals) {
  ArenaMap a;
  ASSERT_TRUE(a.create("t", kChunk, 4).ok());
  const int seals = fcntl(a.fd(), F_GET_SEALS);
  EXPECT_NE(seals & F_SEAL_SHRINK, 0);
  EXPECT_NE(seals & F_SEAL_SEAL, 0);
  EXPECT_EQ(seals & F_SEAL_GROW, 0);  // the daemon grows it
  // A peer holding the fd can neither shrink it nor stop it from growing.
  std::uint32_t i = 0;
  ASSERT_TRUE(a.grow(&i).ok());
  EXPECT_NE(ftruncate(a.fd(), 0), 0);
  EXPECT_NE(fcntl(a.fd(), F_ADD_SEALS, F_SEAL_GROW), 0);
  EXPECT_NE(fcntl(a.fd(), F_ADD_SEALS, F_SEAL_FUTURE_WRITE), 0);
}

TEST(ArenaMapGrow, ChunksUpToTheMaximum) {
  ArenaMap a;
  ASSERT_TRUE(a.create("t", kChunk, 2).ok());
  std::uint32_t i = 9;
  ASSERT_TRUE(a.grow(&i).ok());
  EXPECT_EQ(i, 0u);
  ASSERT_TRUE(a.grow(&i).ok());
  EXPECT_EQ(i, 1u);
  EXPECT_EQ(a.grow(&i).err, ShmError::kFull);
  EXPECT_EQ(a.grown(), 2u);
  EXPECT_EQ(a.mapped(), 2u);
  EXPECT_EQ(lseek(a.fd(), 0, SEEK_END), static_cast<off_t>(2 * kChunk));
}

TEST(ArenaMapGrow, AfterThePeerGrewTheFile) {
  ArenaMap a;
  ASSERT_TRUE(a.create("t", kChunk, 4).ok());
  ASSERT_EQ(ftruncate(a.fd(), static_cast<off_t>(3 * kChunk)), 0);
  std::uint32_t i = 0;
  EXPECT_TRUE(a.grow(&i).ok());  // no shrink back to one chunk
  EXPECT_EQ(lseek(a.fd(), 0, SEEK_END), static_cast<off_t>(3 * kChunk));
}

// Daemon and provider sides of one arena see the same bytes; the provider
// maps a chunk only when an offset names it.
TEST(ArenaMapLocate, PeerSeesTheSameMemory) {
  ArenaMap daemon;
  ASSERT_TRUE(daemon.create("t", kChunk, 4).ok());
  std::uint32_t i = 0;
  ASSERT_TRUE(daemon.grow(&i).ok());
  ASSERT_TRUE(daemon.grow(&i).ok());
  void* d = nullptr;
  ASSERT_TRUE(daemon.locate(kChunk + 4096, 4096, &d).ok());
  std::memcpy(d, "ring", 4);

  ArenaMap provider;
  ASSERT_TRUE(provider.adopt(dup(daemon.fd()), kChunk, 4).ok());
  EXPECT_EQ(provider.mapped(), 0u);
  void* p = nullptr;
  ASSERT_TRUE(provider.locate(kChunk + 4096, 4096, &p).ok());
  EXPECT_EQ(std::memcmp(p, "ring", 4), 0);
  EXPECT_EQ(provider.mapped(), 1u);  // only chunk 1
}

TEST(ArenaMapLocate, RangesOutsideOneChunk) {
  ArenaMap a;
  ASSERT_TRUE(a.create("t", kChunk, 2).ok());
  std::uint32_t i = 0;
  ASSERT_TRUE(a.grow(&i).ok());
  void* p = nullptr;
  EXPECT_EQ(a.locate(0, 0, &p).err, ShmError::kOutOfRange);
  EXPECT_EQ(a.locate(kChunk - 4096, 8192, &p).err, ShmError::kOutOfRange);  // crosses
  EXPECT_EQ(a.locate(0, kChunk + 1, &p).err, ShmError::kOutOfRange);
  EXPECT_EQ(a.locate(2 * kChunk, 4096, &p).err, ShmError::kOutOfRange);  // past max_chunks
  EXPECT_EQ(a.locate(~std::uint64_t{0} - 10, 4096, &p).err, ShmError::kOutOfRange);
  // Chunk 1 is within max_chunks but the file does not cover it yet.
  EXPECT_EQ(a.locate(kChunk, 4096, &p).err, ShmError::kTooSmall);
  EXPECT_TRUE(a.locate(kChunk - 4096, 4096, &p).ok());
}

TEST(ArenaMapAdopt, RefusesWhatCouldBeTruncated) {
  const int plain = memfd_create("t", MFD_CLOEXEC);
  ASSERT_GE(plain, 0);
  ArenaMap a;
  EXPECT_EQ(a.adopt(plain, kChunk, 4).err, ShmError::kNotSealed);  // and closes it
  int p[2];
  ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
  EXPECT_EQ(a.adopt(p[0], kChunk, 4).err, ShmError::kNotRegular);
  close(p[1]);
  EXPECT_FALSE(a.valid());
}

}  // namespace
}  // namespace uroce::shm
