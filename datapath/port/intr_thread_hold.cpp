#include "datapath/port/intr_thread_hold.h"

#include <rte_alarm.h>
#include <rte_interrupts.h>

#include <thread>

namespace uroce::port {

namespace {

std::atomic<std::uint64_t> g_missed{0};

}  // namespace

// Says the thread is parked and waits for the holder's release.
void IntrThreadHold::park(void* arg) {
  auto* p = static_cast<Park*>(arg);
  p->parked.store(true, std::memory_order_release);
  p->released.wait(false, std::memory_order_acquire);
  p->returning.store(true, std::memory_order_release);
  p->returning.notify_one();
}

IntrThreadHold::IntrThreadHold(std::chrono::milliseconds patience) {
  if (rte_thread_is_intr() != 0) {
    held_ = true;
    return;
  }
  if (rte_eal_alarm_set(1, park, &park_) != 0) {
    g_missed.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  armed_ = true;
  const auto give_up = std::chrono::steady_clock::now() + patience;
  while (!park_.parked.load(std::memory_order_acquire)) {
    if (std::chrono::steady_clock::now() >= give_up) {
      g_missed.fetch_add(1, std::memory_order_relaxed);
      release();
      return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  held_ = true;
}

IntrThreadHold::~IntrThreadHold() { release(); }

void IntrThreadHold::release() {
  if (!armed_) return;
  // Released first: a park that starts now returns at once.
  park_.released.store(true, std::memory_order_release);
  park_.released.notify_all();
  // A parked thread is woken and runs again before the alarm is gone: the
  // holder sleeps meanwhile, leaving the core to it (EAL's cancel below
  // spins until the alarm's callback has returned).
  if (park_.parked.load(std::memory_order_acquire)) {
    park_.returning.wait(false, std::memory_order_acquire);
  }
  // Removes the alarm if it has not run, or waits until it has returned:
  // park_ is not touched after this.
  (void)rte_eal_alarm_cancel(park, &park_);
  armed_ = false;
}

std::uint64_t intr_thread_holds_missed() { return g_missed.load(std::memory_order_relaxed); }

}  // namespace uroce::port
