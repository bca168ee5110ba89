#include "verbs-provider/poll_yield.h"

#include <sched.h>
#include <time.h>

#include "datapath/base/context_switches.h"
#include "datapath/base/time.h"
#include "datapath/base/yield_policy.h"

namespace uroce::provider {
namespace {

// constexpr-constructed and trivially destroyed: no TLS guard, no
// destructor registration in a thread the application owns.
constinit thread_local YieldPolicy t_policy;
constinit thread_local ContextSwitches t_switches;

TimeNs monotonic_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<TimeNs>(ts.tv_sec) * kNsPerSec + static_cast<TimeNs>(ts.tv_nsec);
}

}  // namespace

void poll_found() noexcept { t_policy.worked(); }

void poll_empty() noexcept {
  if (!t_policy.idle()) return;
  const TimeNs t0 = monotonic_ns();
  if (!t_policy.due(t0)) return;
  sched_yield();
  t_policy.yielded(t0, monotonic_ns(), [] { return t_switches.grew(); });
}

}  // namespace uroce::provider
