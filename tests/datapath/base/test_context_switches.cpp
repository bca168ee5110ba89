#include "datapath/base/context_switches.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <thread>

namespace uroce {
namespace {

bool pin_to(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  return pthread_setaffinity_np(pthread_self(), sizeof s, &s) == 0;
}

// A thread that yields while another spins on the same CPU is switched out:
// the count grows (the yields hand the CPU over). The spinner is running
// before the first yield (it says so), so the precondition holds however
// busy the machine is.
TEST(ContextSwitches_Grew, YieldsBesideASpinnerOnTheSameCpu) {
  cpu_set_t mine;
  ASSERT_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
  int cpu = 0;
  while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &mine)) ++cpu;
  ASSERT_LT(cpu, CPU_SETSIZE);
  std::atomic<bool> spinning{false}, stop{false}, pinned_a{false}, pinned_b{false};
  std::thread spinner([&] {
    pinned_a = pin_to(cpu);
    spinning = true;
    while (!stop.load()) {
    }
  });
  bool grew = false;
  std::thread yielder([&] {
    pinned_b = pin_to(cpu);
    while (!spinning.load()) sched_yield();
    ContextSwitches c;
    (void)c.grew();
    for (int i = 0; i < 1000 && !grew; ++i) {
      sched_yield();
      grew = c.grew();
    }
  });
  yielder.join();
  stop = true;
  spinner.join();
  ASSERT_TRUE(pinned_a && pinned_b);
  EXPECT_TRUE(grew);
}

// The first call only takes the count.
TEST(ContextSwitches_Grew, FirstCallIsFalse) {
  ContextSwitches c;
  EXPECT_FALSE(c.grew());
}

// Sleeping is a voluntary switch: it does not count.
TEST(ContextSwitches_Grew, NotBySleeping) {
  ContextSwitches c;
  (void)c.grew();
  int grew = 0;
  for (int i = 0; i < 20; ++i) {
    timespec ts{0, 200000};
    nanosleep(&ts, nullptr);
    grew += c.grew() ? 1 : 0;
  }
  // A preemption by another thread between two reads counts, and a busy
  // machine may preempt this thread once or twice; twenty sleeps are not
  // twenty switches of that kind.
  EXPECT_LT(grew, 20);
}

}  // namespace
}  // namespace uroce
