// rte_intr_handle's accessors are experimental in DPDK 22.11.
#define ALLOW_EXPERIMENTAL_API 1

#include "datapath/port/intr_thread_hold.h"

#include <gtest/gtest.h>
#include <rte_alarm.h>
#include <rte_interrupts.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "tests/datapath/port/eal_once.h"

namespace uroce::port {
namespace {

using std::chrono::milliseconds;

class IntrThreadHoldTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ASSERT_EQ(test::start_eal_once(), ""); }
};

// Waits for `done` (EAL's interrupt thread sets it) for up to 10 s.
bool wait_for(const std::atomic<bool>& done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done.load() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(milliseconds(1));
  return done.load();
}

// An interrupt callback on an eventfd, as a PMD registers one for its
// control socket: counts its runs and reads the counter it was woken by.
struct EventSource {
  EventSource() : fd(eventfd(0, EFD_NONBLOCK)), h(rte_intr_instance_alloc(0)) {
    rte_intr_fd_set(h, fd);
    rte_intr_type_set(h, RTE_INTR_HANDLE_EXT);
  }
  ~EventSource() {
    (void)rte_intr_callback_unregister_sync(h, on_event, this);
    rte_intr_instance_free(h);
    close(fd);
  }
  EventSource(const EventSource&) = delete;
  EventSource& operator=(const EventSource&) = delete;
  static void on_event(void* arg) {
    auto* s = static_cast<EventSource*>(arg);
    std::uint64_t v = 0;
    (void)!read(s->fd, &v, sizeof(v));
    s->runs.fetch_add(1);
  }
  int fd;
  rte_intr_handle* h;
  std::atomic<int> runs{0};
};

// Parks EAL's interrupt thread in an alarm until `release` (a callback
// that will not return, as a PMD's handler waiting on its peer).
struct Blocker {
  std::atomic<bool> entered{false}, release{false};
  static void run(void* arg) {
    auto* b = static_cast<Blocker*>(arg);
    b->entered.store(true);
    while (!b->release.load()) std::this_thread::sleep_for(milliseconds(1));
  }
};

TEST_F(IntrThreadHoldTest, Hold_NoCallbackRunsUntilItEnds) {
  EventSource src;
  ASSERT_EQ(rte_intr_callback_register(src.h, EventSource::on_event, &src), 0);
  {
    const IntrThreadHold hold;
    ASSERT_TRUE(hold.held());
    const std::uint64_t one = 1;
    ASSERT_EQ(write(src.fd, &one, sizeof(one)), static_cast<ssize_t>(sizeof(one)));
    // However long the holder takes, the callback waits for it.
    std::this_thread::sleep_for(milliseconds(100));
    EXPECT_EQ(src.runs.load(), 0);
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (src.runs.load() == 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(milliseconds(1));
  EXPECT_EQ(src.runs.load(), 1);
}

TEST_F(IntrThreadHoldTest, Hold_OnTheInterruptThreadHeldAtOnce) {
  struct Probe {
    std::atomic<bool> done{false};
    bool held = false;
  } probe;
  const std::uint64_t missed = intr_thread_holds_missed();
  ASSERT_EQ(rte_eal_alarm_set(
                1,
                [](void* a) {
                  auto* p = static_cast<Probe*>(a);
                  {
                    const IntrThreadHold hold(milliseconds(0));
                    p->held = hold.held();
                  }
                  p->done.store(true);
                },
                &probe),
            0);
  ASSERT_TRUE(wait_for(probe.done));
  EXPECT_TRUE(probe.held);
  EXPECT_EQ(intr_thread_holds_missed(), missed);
}

TEST_F(IntrThreadHoldTest, Hold_MissedWhileACallbackDoesNotReturn) {
  Blocker blocker;
  ASSERT_EQ(rte_eal_alarm_set(1, Blocker::run, &blocker), 0);
  ASSERT_TRUE(wait_for(blocker.entered));
  const std::uint64_t missed = intr_thread_holds_missed();
  {
    const IntrThreadHold hold(milliseconds(50));
    EXPECT_FALSE(hold.held());
  }
  EXPECT_EQ(intr_thread_holds_missed(), missed + 1);
  blocker.release.store(true);
  // The missed hold's alarm was cancelled: the thread goes on, and parks
  // for the next hold.
  const IntrThreadHold next;
  EXPECT_TRUE(next.held());
  EXPECT_EQ(intr_thread_holds_missed(), missed + 1);
}

TEST_F(IntrThreadHoldTest, Hold_WaitsForTheRunningCallback) {
  Blocker blocker;
  ASSERT_EQ(rte_eal_alarm_set(1, Blocker::run, &blocker), 0);
  ASSERT_TRUE(wait_for(blocker.entered));
  std::atomic<bool> held{false};
  std::thread holder([&] {
    const IntrThreadHold hold;
    held.store(hold.held());
    // While held, the callback that ran before has returned.
    EXPECT_TRUE(blocker.release.load());
  });
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_FALSE(held.load());
  blocker.release.store(true);
  holder.join();
  EXPECT_TRUE(held.load());
}

TEST_F(IntrThreadHoldTest, Hold_TwoHoldersOneAfterTheOther) {
  std::atomic<int> inside{0}, most{0};
  auto hold_a_while = [&] {
    const IntrThreadHold hold;
    EXPECT_TRUE(hold.held());
    const int n = inside.fetch_add(1) + 1;
    int m = most.load();
    while (n > m && !most.compare_exchange_weak(m, n)) {
    }
    std::this_thread::sleep_for(milliseconds(20));
    inside.fetch_sub(1);
  };
  std::thread a(hold_a_while), b(hold_a_while);
  a.join();
  b.join();
  EXPECT_EQ(most.load(), 1);
}

}  // namespace
}  // namespace uroce::port
