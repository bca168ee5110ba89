// The engine's sleeper (Engine's Sleeper parameter; tests give a fake):
// nanosleep, sched_yield, and a futex nap that another thread can cut
// short. Also the CM service's wake-up (gsi_queue.h, GsiBell).
#pragma once

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "datapath/base/time.h"

namespace uroce::engine {

struct NanoSleeper {
  void sleep(TimeNs ns) {
    const timespec ts = to_timespec(ns);
    nanosleep(&ts, nullptr);
  }
  void yield() { sched_yield(); }
  // Sleeps up to `ns` unless `word` no longer holds `seen` (checked by the
  // kernel, atomically with going to sleep) or wake() is called on it.
  void nap(TimeNs ns, std::atomic<std::uint32_t>& word, std::uint32_t seen) {
    const timespec ts = to_timespec(ns);
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, seen, &ts,
            nullptr, 0);
  }
  void wake(std::atomic<std::uint32_t>& word) {
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, 1, nullptr,
            nullptr, 0);
  }

 private:
  static timespec to_timespec(TimeNs ns) {
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(ns / kNsPerSec);
    ts.tv_nsec = static_cast<long>(ns % kNsPerSec);
    return ts;
  }
};
static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t) &&
              std::atomic<std::uint32_t>::is_always_lock_free);

}  // namespace uroce::engine
