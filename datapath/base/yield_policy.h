// When a thread that polls for work another thread makes should hand its CPU
// over (sched_yield) instead of spinning out its time slice. Two pollers use
// it: the daemon's engine in yield mode (engine/engine.h), whose work comes
// from applications spinning on their CQs beside it, and a daemon-mode
// application thread polling an empty CQ (verbs-provider/poll_yield.h), whose
// completions come from the daemon and whose CPU may be shared with another
// spinning program (docs/engine.md, "Sharing a core").
//
// The rule: after `spins` idle polls in a row (a gap shorter than that costs
// no system call), yield on every idle poll while the CPU is contended, and
// otherwise probe with one yield per `probe_ns` of idleness. A yield ran
// somebody else, which makes the CPU contended, when the kernel says this
// thread was switched out (context_switches.h) or, where the caller cannot
// ask, when it lasted at least `switch_ns` (a switch there and back costs
// microseconds in the VM's slow state; a yield alone returns in under one).
// kFastYields yields in a row that ran nobody make it uncontended again.
//
// Pure arithmetic: the caller reads its clock, yields, and reports the
// yield's start and end, so tests drive the policy with made-up times.
#pragma once

#include <cstdint>

#include "datapath/base/time.h"

namespace uroce {

// The defaults are the daemon's: a gap shorter than 16 idle polls (well
// under a microsecond of the engine's) costs no system call; an
// uncontended yield costs ~0.5 us on a VM, 1 % of the probe period; a
// switch there and back costs microseconds, a yield alone under one.
struct YieldPolicyConfig {
  std::uint32_t spins = 16;
  TimeNs probe_ns = 50 * kNsPerUs;
  TimeNs switch_ns = 1500;
};

class YieldPolicy {
 public:
  // Quick yields in a row after which the CPU counts as uncontended.
  static constexpr std::uint32_t kFastYields = 8;

  constexpr YieldPolicy() = default;
  constexpr explicit YieldPolicy(const YieldPolicyConfig& c) : cfg_(c) {}

  // A poll that found work: the next idle run spins first again.
  void worked() { idle_run_ = 0; }
  // A poll that found nothing: whether the spins are over, so that the
  // caller reads its clock and asks due() (no clock read while spinning).
  bool idle() { return ++idle_run_ > cfg_.spins; }
  // Past the spins, at `now`: whether to yield now.
  bool due(TimeNs now) const { return contended_ || now - last_yield_ >= cfg_.probe_ns; }
  // The yield made from t0 to t1: whether it ran another thread. A yield
  // of switch_ns or more did; for a quicker one `switched_out()` is asked
  // (the kernel's word, ContextSwitches::grew: a system call, so only
  // then).
  template <class SwitchedOut>
  bool yielded(TimeNs t0, TimeNs t1, SwitchedOut&& switched_out) {
    last_yield_ = t1;
    if (t1 - t0 >= cfg_.switch_ns || switched_out()) {
      contended_ = true;
      fast_yields_ = 0;
      return true;
    }
    if (++fast_yields_ >= kFastYields) contended_ = false;
    return false;
  }

  // As above, where the caller knows whether the kernel switched it out
  // (false: it cannot ask, and the yield's length alone decides).
  bool yielded(TimeNs t0, TimeNs t1, bool switched = false) {
    return yielded(t0, t1, [switched] { return switched; });
  }

  bool contended() const { return contended_; }

 private:
  YieldPolicyConfig cfg_{};
  std::uint32_t idle_run_ = 0;
  std::uint32_t fast_yields_ = 0;
  TimeNs last_yield_ = 0;
  bool contended_ = false;
};

}  // namespace uroce
