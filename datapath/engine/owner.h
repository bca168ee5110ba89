// Who runs the engine in embedded mode (docs/embedded.md): one word that
// the application's threads (inside their verbs calls) and the progress
// thread take with one exchange before an iteration and give back after it.
// A thread that finds it taken does not wait: the owner's iteration will
// see whatever that thread published (its doorbell), so nobody blocks on
// the packet path and no lock is held there.
//
// Memory order: try_take() is an acquire and release() a release, so one
// owner's iteration happens before the next owner's: the engine's state
// moves between threads as it would between iterations on one thread.
#pragma once

#include <atomic>
#include <cassert>

namespace uroce::engine {

class EngineOwner {
 public:
  // True when the caller now owns the engine. The relaxed load first keeps
  // a thread that finds it taken from writing the line (no bounce).
  bool try_take() noexcept {
    return !held_.load(std::memory_order_relaxed) &&
           !held_.exchange(true, std::memory_order_acquire);
  }
  // The owner only.
  void release() noexcept {
    assert(held_.load(std::memory_order_relaxed));
    held_.store(false, std::memory_order_release);
  }
  bool held() const noexcept { return held_.load(std::memory_order_relaxed); }

 private:
  alignas(64) std::atomic<bool> held_{false};
};

}  // namespace uroce::engine
