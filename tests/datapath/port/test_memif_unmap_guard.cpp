#include "datapath/port/memif_unmap_guard.h"

#include <gtest/gtest.h>
#include <rte_alarm.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "datapath/port/got_patch.h"
#include "datapath/port/memif_args.h"
#include "tests/datapath/port/eal_once.h"

namespace uroce::port {
namespace {

class MemifUnmapGuard : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ASSERT_EQ(test::start_eal_once(), ""); }
  void TearDown() override { set_memif_unmap_quiesce({}); }
};

void* map_page() {
  void* p = mmap(nullptr, static_cast<std::size_t>(sysconf(_SC_PAGESIZE)), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

bool mapped(void* p) {
  unsigned char v = 0;
  return mincore(p, static_cast<std::size_t>(sysconf(_SC_PAGESIZE)), &v) == 0;
}

// guarded_munmap of `page` on EAL's interrupt thread (an EAL alarm runs
// there); returns its result once it ran.
int unmap_on_interrupt_thread(void* page) {
  struct Job {
    void* page;
    std::atomic<int> rc{1};
  } job{page};
  const auto run = [](void* arg) {
    auto* j = static_cast<Job*>(arg);
    j->rc.store(detail::guarded_munmap(j->page, static_cast<std::size_t>(sysconf(_SC_PAGESIZE))),
                std::memory_order_release);
  };
  if (rte_eal_alarm_set(1, run, &job) != 0) return -2;
  while (job.rc.load(std::memory_order_acquire) == 1)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return job.rc.load();
}

TEST_F(MemifUnmapGuard, GuardedMunmap_QuiescesOnTheInterruptThreadOnly) {
  int runs = 0;
  set_memif_unmap_quiesce([&runs] { ++runs; });
  const std::uint64_t before = memif_unmaps_quiesced();

  void* a = map_page();
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(detail::guarded_munmap(a, static_cast<std::size_t>(sysconf(_SC_PAGESIZE))), 0);
  EXPECT_FALSE(mapped(a));
  EXPECT_EQ(runs, 0);

  void* b = map_page();
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(unmap_on_interrupt_thread(b), 0);
  EXPECT_FALSE(mapped(b));
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(memif_unmaps_quiesced(), before + 1);
}

TEST_F(MemifUnmapGuard, GuardedMunmap_WithoutAQuiesceUnmapsAlone) {
  const std::uint64_t before = memif_unmaps_quiesced();
  void* p = map_page();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(unmap_on_interrupt_thread(p), 0);
  EXPECT_FALSE(mapped(p));
  EXPECT_EQ(memif_unmaps_quiesced(), before);
}

TEST_F(MemifUnmapGuard, SetQuiesce_WaitsForAGuardedUnmapInProgress) {
  std::atomic<bool> entered{false}, release{false}, replaced{false};
  set_memif_unmap_quiesce([&] {
    entered.store(true);
    while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  void* p = map_page();
  ASSERT_NE(p, nullptr);
  std::thread unmapper([&] { (void)unmap_on_interrupt_thread(p); });
  while (!entered.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::thread setter([&] {
    set_memif_unmap_quiesce({});
    replaced.store(true);
  });
  // The setter must not return while the quiesce runs.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(replaced.load());
  release.store(true);
  setter.join();
  unmapper.join();
  EXPECT_TRUE(replaced.load());
  EXPECT_FALSE(mapped(p));
}

TEST_F(MemifUnmapGuard, RunBetweenUnmaps_AGuardedUnmapWaitsForIt) {
  void* p = map_page();
  ASSERT_NE(p, nullptr);
  std::thread unmapper;
  bool mapped_throughout = true;
  const bool ran = run_between_unmaps([&] {
    unmapper = std::thread([&] { (void)unmap_on_interrupt_thread(p); });
    // However long the interrupt thread has to unmap, it must not while
    // this runs.
    for (int i = 0; i < 50; ++i) {
      mapped_throughout = mapped_throughout && mapped(p);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  unmapper.join();
  EXPECT_TRUE(ran);
  EXPECT_TRUE(mapped_throughout);
  EXPECT_FALSE(mapped(p));
}

TEST_F(MemifUnmapGuard, RunBetweenUnmaps_SkipsWhileAGuardedUnmapRuns) {
  std::atomic<bool> entered{false}, release{false};
  set_memif_unmap_quiesce([&] {
    entered.store(true);
    while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  void* p = map_page();
  ASSERT_NE(p, nullptr);
  std::thread unmapper([&] { (void)unmap_on_interrupt_thread(p); });
  while (!entered.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  bool called = false;
  EXPECT_FALSE(run_between_unmaps([&called] { called = true; }));
  EXPECT_FALSE(called);
  release.store(true);
  unmapper.join();
  EXPECT_TRUE(run_between_unmaps([&called] { called = true; }));
  EXPECT_TRUE(called);
}

TEST_F(MemifUnmapGuard, Install_PointsThePmdsMunmapAtTheGuard) {
  // Debian's EAL loads every PMD of its plugin directory at start.
  ASSERT_FALSE(got_slot_targets(kMemifPmdObject, "munmap").empty())
      << "the memif PMD is not loaded or does not call munmap";
  std::string err;
  ASSERT_EQ(install_memif_unmap_guard(&err), 0) << err;
  for (void* t : got_slot_targets(kMemifPmdObject, "munmap")) {
    EXPECT_EQ(t, reinterpret_cast<void*>(&detail::guarded_munmap));
  }
  EXPECT_EQ(install_memif_unmap_guard(&err), 0);  // idempotent
}

}  // namespace
}  // namespace uroce::port
