// Which thread may run an object's operations now: its owner. The engine
// and every Vnic keep one; each operation asserts that it runs on the owner
// (builds with assertions, the default debugoptimized build and the tests
// among them; under NDEBUG the class is empty and every call compiles away).
//
// The owner changes only where ownership is handed over, and the code that
// hands it over says so with adopt():
//   - the engine thread when run() starts; in embedded mode whichever thread
//     took the EngineOwner word (engine/owner.h) for an iteration;
//   - the thread that runs a closure given to Engine::call (the engine
//     thread, or the caller itself while the engine is not running).
// An object nobody adopted yet belongs to the first thread that checks it
// (it is being set up, or a single-threaded user drives it: a unit test,
// the testbed, a benchmark).
//
// What it catches: a thread that calls an operation directly while another
// thread runs the engine (instead of through Engine::call), which would
// race with the packet path. The hand-over itself is ordered by whatever
// hands the object over (the mailbox's mutex, the EngineOwner word), so the
// owner's id is kept relaxed.
#pragma once

#include <atomic>
#include <thread>

namespace uroce::base {

class OwnerThread {
 public:
  // The calling thread becomes the owner.
  void adopt() noexcept {
#ifndef NDEBUG
    id_.store(std::this_thread::get_id(), std::memory_order_relaxed);
#endif
  }

  // True on the owner thread. An object without an owner takes the caller
  // as its owner and answers true.
  bool here() const noexcept {
#ifndef NDEBUG
    const std::thread::id self = std::this_thread::get_id();
    std::thread::id seen = id_.load(std::memory_order_relaxed);
    if (seen == self) return true;
    if (seen != std::thread::id{}) return false;
    return id_.compare_exchange_strong(seen, self, std::memory_order_relaxed) || seen == self;
#else
    return true;
#endif
  }

 private:
#ifndef NDEBUG
  mutable std::atomic<std::thread::id> id_{};
#endif
};

}  // namespace uroce::base
