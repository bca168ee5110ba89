#include "apps/uroced/affinity.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <thread>

namespace uroce::daemon {
namespace {

TEST(CpuAffinity_Save, AppliedToAnotherThread) {
  const CpuAffinity saved = CpuAffinity::save();
  ASSERT_TRUE(saved.valid());
  ASSERT_GE(saved.count(), 1);
  // Pin this thread to one CPU (as EAL pins the engine lcore); a thread it
  // creates inherits the pin until it applies the saved mask.
  cpu_set_t cur;
  ASSERT_EQ(sched_getaffinity(0, sizeof(cur), &cur), 0);
  int first = 0;
  while (!CPU_ISSET(first, &cur)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof(one), &one), 0);
  int inherited = 0, applied = 0;
  std::thread t([&] {
    cpu_set_t s;
    sched_getaffinity(0, sizeof(s), &s);
    inherited = CPU_COUNT(&s);
    EXPECT_EQ(saved.apply_to_current_thread(), 0);
    sched_getaffinity(0, sizeof(s), &s);
    applied = CPU_COUNT(&s);
  });
  t.join();
  EXPECT_EQ(inherited, 1);
  EXPECT_EQ(applied, saved.count());
  EXPECT_EQ(saved.apply_to_current_thread(), 0);  // restore this thread
}

TEST(SoleCpuOfCurrentThread, OnePinnedCpuOrNone) {
  cpu_set_t all;
  ASSERT_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
  int last = CPU_SETSIZE - 1;
  while (!CPU_ISSET(last, &all)) --last;
  int pinned = -2, spread = -2;
  std::thread t([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(last, &one);
    ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof(one), &one), 0);
    pinned = sole_cpu_of_current_thread();
    ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof(all), &all), 0);
    spread = sole_cpu_of_current_thread();
  });
  t.join();
  EXPECT_EQ(pinned, last);
  // A process allowed on one CPU only has that CPU as its sole one.
  EXPECT_EQ(spread, CPU_COUNT(&all) == 1 ? last : -1);
}

TEST(CpuAffinity_Invalid, ApplyFails) {
  const CpuAffinity none;
  EXPECT_FALSE(none.valid());
  EXPECT_EQ(none.apply_to_current_thread(), EINVAL);
}

}  // namespace
}  // namespace uroce::daemon
