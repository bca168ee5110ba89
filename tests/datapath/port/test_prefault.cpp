#include "datapath/port/prefault.h"

#include <gtest/gtest.h>
#include <rte_alarm.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "datapath/port/memif_unmap_guard.h"
#include "tests/datapath/port/eal_once.h"

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

// A fresh shared mapping of `len` bytes named as the memif PMD names its
// regions.
void map_region(std::size_t len, int* fd, void** m) {
  *fd = memfd_create("memif_region_8", 0);
  ASSERT_GE(*fd, 0);
  ASSERT_EQ(ftruncate(*fd, static_cast<off_t>(len)), 0);
  *m = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
  ASSERT_NE(*m, MAP_FAILED);
}

// A peer that leaves while a link probe populates its region: the PMD
// unmaps the region on EAL's interrupt thread (an EAL alarm runs there),
// through the guard, at a delay that sweeps across the prefault's walk of
// the maps, its MADV_POPULATE_WRITE and its reads. Unserialized, a read after
// the unmap was a SIGSEGV of the whole process; serialized, each round the
// prefault either populated the region whole, found it gone, or skipped.
TEST(PrefaultMemifRegions, NeverReadsARegionAGuardedUnmapRemoved) {
  ASSERT_EQ(test::start_eal_once(), "");
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t len = 1024 * page;
  struct Job {
    void* addr = nullptr;
    std::size_t len = 0;
    std::atomic<int> rc{1};
  };
  // How long one prefault of a fresh region takes here.
  std::uint64_t prefault_us = UINT64_MAX;
  for (int i = 0; i < 3; ++i) {
    int fd = -1;
    void* m = nullptr;
    ASSERT_NO_FATAL_FAILURE(map_region(len, &fd, &m));
    const auto t0 = std::chrono::steady_clock::now();
    (void)prefault_memif_regions();
    const auto us =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0)
            .count();
    prefault_us = std::min<std::uint64_t>(prefault_us, static_cast<std::uint64_t>(us));
    munmap(m, len);
    close(fd);
  }
  // And how late an alarm of 1 us runs on the interrupt thread.
  std::uint64_t alarm_us = UINT64_MAX;
  for (int i = 0; i < 3; ++i) {
    std::atomic<bool> ran{false};
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(rte_eal_alarm_set(
                  1, [](void* arg) { static_cast<std::atomic<bool>*>(arg)->store(true); }, &ran),
              0);
    while (!ran.load()) std::this_thread::yield();
    const auto us =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0)
            .count();
    alarm_us = std::min<std::uint64_t>(alarm_us, static_cast<std::uint64_t>(us));
  }
  // The unmaps' moments sweep twice the time of both, so that some fall
  // into the prefault's reads.
  const std::uint64_t step_us = std::max<std::uint64_t>(1, (prefault_us + alarm_us) / 100);
  int populated = 0, skipped = 0, gone = 0;
  for (int round = 0; round < 200; ++round) {
    int fd = -1;
    void* m = nullptr;
    ASSERT_NO_FATAL_FAILURE(map_region(len, &fd, &m));
    Job job{m, len};
    const auto unmap = [](void* arg) {
      auto* j = static_cast<Job*>(arg);
      j->rc.store(detail::guarded_munmap(j->addr, j->len), std::memory_order_release);
    };
    ASSERT_EQ(rte_eal_alarm_set(1 + static_cast<std::uint64_t>(round) * step_us, unmap, &job), 0);
    const PrefaultResult r = prefault_memif_regions();
    while (job.rc.load(std::memory_order_acquire) == 1)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    EXPECT_EQ(job.rc.load(), 0);
    close(fd);
    if (r.skipped) {
      ++skipped;
    } else if (r.error == 0 && r.regions == 1) {
      ++populated;
    } else {
      // Unmapped before the walk of the maps (none found) or between it and
      // the populate (ENOMEM): nothing read.
      EXPECT_EQ(r.regions, 0u) << "round " << round;
      EXPECT_TRUE(r.error == 0 || r.error == ENOMEM) << "round " << round << ": " << r.error;
      ++gone;
    }
  }
  std::printf("prefault %llu us, alarm %llu us; populated %d, skipped %d, unmapped first %d\n",
              static_cast<unsigned long long>(prefault_us),
              static_cast<unsigned long long>(alarm_us), populated, skipped, gone);
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
