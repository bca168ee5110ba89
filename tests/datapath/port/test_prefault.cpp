#include "datapath/port/prefault.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

namespace uroce::port {
namespace {

TEST(MemifRegionsInMaps, TakesWritableSharedMemifRegionsOnly) {
  const char* maps =
      "10063a000-12063a000 rw-s 00000000 00:01 234112   /memfd:nohuge (deleted)\n"
      "7f12a2ff7000-7f12a4000000 rw-s 00000000 00:01 235924   /memfd:memif_region_0 (deleted)\n"
      "7f12a0000000-7f12a0001000 r--s 00000000 00:01 235925   /memfd:memif_region_1 (deleted)\n"
      "7f12b0000000-7f12b0002000 rw-p 00000000 00:01 235926   /memfd:memif_region_2\n"
      "7f12b1000000-7f12b1004000 rw-s 00000000 00:01 235927   /memfd:memif_region_12\n"
      "7f12b2000000-7f12b2004000 rw-s 00000000 00:01 235928   /memfd:memif_region_x\n"
      "7f12b3000000-7f12b3004000 rw-s 00000000 00:01 235929   /tmp/memfd:memif_region_3.bak\n"
      "garbage line\n"
      "zz-7f12b4000000 rw-s 00000000 00:01 1   /memfd:memif_region_4\n"
      "7f12b5000000-7f12b5000000 rw-s 00000000 00:01 1   /memfd:memif_region_5";
  const std::vector<MappedRange> want = {{0x7f12a2ff7000, 0x7f12a4000000},
                                         {0x7f12b1000000, 0x7f12b1004000}};
  EXPECT_EQ(memif_regions_in_maps(maps), want);
  EXPECT_EQ(want[0].bytes(), 0x1009000u);
}

TEST(MemifRegionsInMaps, EmptyTextHasNone) { EXPECT_TRUE(memif_regions_in_maps("").empty()); }

// Pages of `m` resident in the memfd (mincore): a shared memfd's page exists
// only once something touched it, so this reads how much was populated.
std::size_t resident_pages(void* m, std::size_t len) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> v(len / page);
  if (mincore(m, len, v.data()) != 0) return SIZE_MAX;
  return static_cast<std::size_t>(
      std::count_if(v.begin(), v.end(), [](unsigned char c) { return (c & 1) != 0; }));
}

TEST(PrefaultMemifRegions, PopulatesARegionAndKeepsItsContents) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t len = 64 * page;
  const int fd = memfd_create("memif_region_9", 0);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(len)), 0);
  void* m = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(m, MAP_FAILED);
  auto* bytes = static_cast<unsigned char*>(m);
  bytes[5 * page] = 0xAB;  // one page written before: its contents stay
  ASSERT_EQ(resident_pages(m, len), 1u);

  const PrefaultResult r = prefault_memif_regions();
  EXPECT_EQ(r.error, 0);
  EXPECT_GE(r.regions, 1u);
  EXPECT_GE(r.bytes, len);
  EXPECT_EQ(resident_pages(m, len), 64u);
  EXPECT_EQ(bytes[5 * page], 0xAB);
  EXPECT_EQ(bytes[6 * page], 0);
  munmap(m, len);
  close(fd);
}

TEST(PrefaultRange, UnmappedRangeIsAnError) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  void* m = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(m, MAP_FAILED);
  const auto at = reinterpret_cast<std::uintptr_t>(m);
  munmap(m, page);
  EXPECT_EQ(prefault_range({at, at + page}), ENOMEM);
}

}  // namespace
}  // namespace uroce::port
