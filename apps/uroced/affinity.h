// The process's CPU affinity as it was before rte_eal_init pinned the main
// thread to the engine lcore. Every control thread (accept, clients,
// signals) applies it first thing, so none of them competes with the engine
// for its core. (A thread inherits its creator's affinity; the creator is
// the pinned engine thread.)
#pragma once

#include <sched.h>

namespace uroce::daemon {

class CpuAffinity {
 public:
  // The calling thread's current affinity (call before rte_eal_init).
  static CpuAffinity save();
  // Applies it to the calling thread; 0 or an errno value.
  int apply_to_current_thread() const;
  bool valid() const { return valid_; }
  int count() const { return CPU_COUNT(&set_); }

 private:
  cpu_set_t set_{};
  bool valid_ = false;
};

// The one CPU the calling thread may run on, or -1 when its affinity allows
// several (or cannot be read). On the engine thread after rte_eal_init: the
// CPU of the engine lcore, which clients are told in Hello.
int sole_cpu_of_current_thread();

}  // namespace uroce::daemon
