// The engine's sleeper (Engine's Sleeper parameter; tests give a fake):
// nanosleep, sched_yield, and a futex nap that another thread can cut
// short; and WakeWord, the word such a nap waits on, shared by the
// embedded progress thread (Engine::wake_progress) and the CM service's
// thread (gsi_queue.h).
#pragma once

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "datapath/base/context_switches.h"
#include "datapath/base/time.h"

namespace uroce::engine {

struct NanoSleeper {
  void sleep(TimeNs ns) {
    const timespec ts = to_timespec(ns);
    nanosleep(&ts, nullptr);
  }
  void yield() { sched_yield(); }
  // Whether the kernel switched this thread out since the last call
  // (context_switches.h): a yield handed the CPU over, or another thread
  // preempted this one meanwhile. A system call.
  bool switched_out() { return switches_.grew(); }
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
  ContextSwitches switches_;

  static timespec to_timespec(TimeNs ns) {
    timespec ts{};
    ts.tv_sec = static_cast<time_t>(ns / kNsPerSec);
    ts.tv_nsec = static_cast<long>(ns % kNsPerSec);
    return ts;
  }
};
static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t) &&
              std::atomic<std::uint32_t>::is_always_lock_free);

// A nap that another thread can end: a futex word that wake() bumps, and
// whether a thread naps on it (then, and only then, wake() makes the system
// call). Either wake() sees `napping` and wakes the futex, or the futex
// wait finds the word no longer what the napper read and returns at once
// (both sides sequentially consistent; the kernel compares the word
// atomically with going to sleep). One thread naps on a word at a time.
struct WakeWord {
  std::atomic<std::uint32_t> word{0};
  std::atomic<bool> napping{false};

  // Any thread: ends a nap under way, or the next one's wait at once.
  template <class Sleeper>
  void wake(Sleeper& s) {
    word.fetch_add(1, std::memory_order_seq_cst);
    if (napping.load(std::memory_order_seq_cst)) s.wake(word);
  }
  // Naps up to `ns`; whether wake() was called meanwhile.
  template <class Sleeper>
  bool nap(Sleeper& s, TimeNs ns) {
    const std::uint32_t seen = word.load(std::memory_order_seq_cst);
    napping.store(true, std::memory_order_seq_cst);
    s.nap(ns, word, seen);
    napping.store(false, std::memory_order_seq_cst);
    return word.load(std::memory_order_seq_cst) != seen;
  }
  // The same with NanoSleeper.
  void wake() {
    NanoSleeper s;
    wake(s);
  }
  bool nap(TimeNs ns) {
    NanoSleeper s;
    return nap(s, ns);
  }
};

}  // namespace uroce::engine
