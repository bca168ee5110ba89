#include "datapath/base/page_touch.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "tests/datapath/base/pagemap.h"

namespace uroce::base {
namespace {

const std::size_t kPage = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));

using test::mapped_pages;

// A memfd of `pages` pages holding `fill`, mapped shared with `prot`: a
// fresh mapping, none of whose pages this process maps yet.
struct SharedPages {
  int fd = -1;
  void* m = MAP_FAILED;
  std::size_t len = 0;
  SharedPages(std::size_t pages, int prot, unsigned char fill) : len(pages * kPage) {
    fd = memfd_create("page_touch_test", MFD_CLOEXEC);
    std::vector<unsigned char> bytes(len, fill);
    if (fd < 0 || pwrite(fd, bytes.data(), len, 0) != static_cast<ssize_t>(len)) return;
    m = mmap(nullptr, len, prot, MAP_SHARED, fd, 0);
  }
  ~SharedPages() {
    if (m != MAP_FAILED) munmap(m, len);
    if (fd >= 0) close(fd);
  }
};

TEST(TouchPages, MapsEveryPageOfAFreshSharedMapping) {
  SharedPages s(32, PROT_READ | PROT_WRITE, 0x5A);
  ASSERT_NE(s.m, MAP_FAILED);
  ASSERT_EQ(mapped_pages(s.m, s.len), 0u);
  EXPECT_EQ(touch_pages(s.m, s.len, kPage), 0);
  EXPECT_EQ(mapped_pages(s.m, s.len), 32u);
}

TEST(TouchPages, LeavesTheBytesAsTheyWere) {
  SharedPages s(8, PROT_READ | PROT_WRITE, 0xC3);
  ASSERT_NE(s.m, MAP_FAILED);
  ASSERT_EQ(touch_pages(s.m, s.len, kPage), 0);
  const std::vector<unsigned char> want(s.len, 0xC3);
  EXPECT_EQ(std::memcmp(s.m, want.data(), s.len), 0);
}

TEST(TouchPages, ReadOnlyMappingIsMappedForReading) {
  SharedPages s(4, PROT_READ, 0x11);
  ASSERT_NE(s.m, MAP_FAILED);
  EXPECT_EQ(touch_pages(s.m, s.len, kPage), 0);
  EXPECT_EQ(mapped_pages(s.m, s.len), 4u);
}

TEST(TouchPages, StrideOfSeveralPagesMapsEveryPageAllTheSame) {
  // The populate covers each run of pages; the reads take one page in four.
  SharedPages s(16, PROT_READ | PROT_WRITE, 0x01);
  ASSERT_NE(s.m, MAP_FAILED);
  EXPECT_EQ(touch_pages(s.m, s.len, 4 * kPage), 0);
  EXPECT_EQ(mapped_pages(s.m, s.len), 16u);
}

// A sparse object keeps its holes: nothing is allocated for them, only the
// pages it holds are mapped (a client's sparse 64 GiB memfd must not fill
// the daemon's memory).
TEST(TouchPages, LeavesHolesUnallocated) {
  const int fd = memfd_create("page_touch_sparse", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(64 * kPage)), 0);
  const std::vector<unsigned char> one(kPage, 7);
  for (std::size_t k : {0, 1, 2, 40}) {
    ASSERT_EQ(pwrite(fd, one.data(), kPage, static_cast<off_t>(k * kPage)),
              static_cast<ssize_t>(kPage));
  }
  void* m = mmap(nullptr, 64 * kPage, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(m, MAP_FAILED);
  struct stat before {};
  ASSERT_EQ(fstat(fd, &before), 0);
  EXPECT_EQ(touch_pages(m, 64 * kPage, kPage), 0);
  struct stat after {};
  ASSERT_EQ(fstat(fd, &after), 0);
  EXPECT_EQ(after.st_blocks, before.st_blocks);
  EXPECT_EQ(mapped_pages(m, 64 * kPage), 4u);
  munmap(m, 64 * kPage);
  close(fd);
}

// Pages of 16 MiB or more (1 GiB hugetlbfs) are asked for one at a time:
// here 16 MiB "pages" over base pages the object holds throughout.
TEST(TouchPages, PagesOfSixteenMebibytesAreTakenOneAtATime) {
  const std::size_t big = 4096 * kPage;
  SharedPages s(2 * 4096, PROT_READ | PROT_WRITE, 0x22);
  ASSERT_NE(s.m, MAP_FAILED);
  EXPECT_EQ(touch_pages(s.m, s.len, big), 0);
  EXPECT_EQ(mapped_pages(s.m, s.len), 2 * 4096u);
}

// A range longer than one window of 4,096 pages, holes across the seam.
TEST(TouchPages, RunsAcrossWindowsMapExactlyTheHeldPages) {
  const std::size_t n = 4096 + 64;
  const int fd = memfd_create("page_touch_windows", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(n * kPage)), 0);
  const std::vector<unsigned char> one(kPage, 9);
  std::size_t held = 0;
  for (std::size_t k = 4000; k < 4200 && k < n; ++k) {
    if (k % 7 == 0) continue;
    ASSERT_EQ(pwrite(fd, one.data(), kPage, static_cast<off_t>(k * kPage)),
              static_cast<ssize_t>(kPage));
    ++held;
  }
  void* m = mmap(nullptr, n * kPage, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(m, MAP_FAILED);
  EXPECT_EQ(touch_pages(m, n * kPage, kPage), 0);
  EXPECT_EQ(mapped_pages(m, n * kPage), held);
  munmap(m, n * kPage);
  close(fd);
}

TEST(TouchPages, UnmappedRangeIsAnErrorAndIsNotRead) {
  void* m = mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(m, MAP_FAILED);
  munmap(m, kPage);
  EXPECT_EQ(touch_pages(m, kPage, kPage), ENOMEM);
}

TEST(TouchPages, PageSizeNotAMultipleOfTheBasePageIsInvalid) {
  SharedPages s(1, PROT_READ | PROT_WRITE, 0);
  ASSERT_NE(s.m, MAP_FAILED);
  EXPECT_EQ(touch_pages(s.m, s.len, 0), EINVAL);
  EXPECT_EQ(touch_pages(s.m, s.len, kPage / 2), EINVAL);
  EXPECT_EQ(mapped_pages(s.m, s.len), 0u);
}

TEST(TouchPages, EmptyRangeDoesNothing) { EXPECT_EQ(touch_pages(nullptr, 0, kPage), 0); }

// Memory the caller owns whole: its holes are filled and every page mapped
// writable, the bytes left as they were (zero in a hole).
TEST(PopulatePages, AllocatesAndMapsEveryPageOfASparseObject) {
  const int fd = memfd_create("populate_sparse", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(16 * kPage)), 0);
  const std::vector<unsigned char> one(kPage, 9);
  ASSERT_EQ(pwrite(fd, one.data(), kPage, static_cast<off_t>(3 * kPage)),
            static_cast<ssize_t>(kPage));
  void* m = mmap(nullptr, 16 * kPage, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(m, MAP_FAILED);
  EXPECT_EQ(populate_pages(m, 16 * kPage, kPage), 0);
  struct stat st {};
  ASSERT_EQ(fstat(fd, &st), 0);
  EXPECT_EQ(static_cast<std::size_t>(st.st_blocks) * 512, 16 * kPage);
  EXPECT_EQ(mapped_pages(m, 16 * kPage), 16u);
  const auto* b = static_cast<const unsigned char*>(m);
  EXPECT_EQ(b[0], 0);
  EXPECT_EQ(b[3 * kPage + 5], 9);
  munmap(m, 16 * kPage);
  close(fd);
}

TEST(PopulatePages, PageSizeNotAMultipleOfTheBasePageIsInvalid) {
  EXPECT_EQ(populate_pages(nullptr, kPage, kPage / 2), EINVAL);
  EXPECT_EQ(populate_pages(nullptr, kPage, 0), EINVAL);
}

}  // namespace
}  // namespace uroce::base
