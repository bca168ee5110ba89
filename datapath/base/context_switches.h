// Whether the kernel switched this thread out: its involuntary context
// switches (getrusage RUSAGE_THREAD's ru_nivcsw), which grow when a
// sched_yield hands the CPU to another thread and when another thread
// preempts this one, and not when it sleeps (those are voluntary).
//
// Why (docs/engine.md, "Sharing a core"): a yield's duration alone cannot
// tell. Where a switch there and back is fast (the VM's fast state: well
// under the 1.5 us YieldPolicyConfig::switch_ns), two pollers on one CPU
// that yield to each other saw only quick yields, judged the CPU
// uncontended and probed once per 50 us: every message that the other one
// had to handle then waited up to 50 us (the daemon-mode UCX tag_lat's p99
// at 58-61 us, session 41).
//
// Cost: one system call (about 0.2-0.5 us here) per check. Per thread: a
// counter serves the thread that made it only.
#pragma once

#include <sys/resource.h>

#include <cstdint>

namespace uroce {

class ContextSwitches {
 public:
  // Whether the count grew since the last call; false on the first call,
  // which only takes the count.
  bool grew() noexcept {
    rusage r{};
    if (::getrusage(RUSAGE_THREAD, &r) != 0) return false;
    const auto now = static_cast<std::uint64_t>(r.ru_nivcsw);
    const bool g = last_ != kNone && now != last_;
    last_ = now;
    return g;
  }

 private:
  static constexpr std::uint64_t kNone = ~std::uint64_t{0};
  std::uint64_t last_ = kNone;
};

}  // namespace uroce
