#include "apps/uroced/affinity.h"

#include <pthread.h>

#include <cerrno>

namespace uroce::daemon {

CpuAffinity CpuAffinity::save() {
  CpuAffinity a;
  CPU_ZERO(&a.set_);
  a.valid_ = sched_getaffinity(0, sizeof(a.set_), &a.set_) == 0;
  return a;
}

int CpuAffinity::apply_to_current_thread() const {
  if (!valid_) return EINVAL;
  return pthread_setaffinity_np(pthread_self(), sizeof(set_), &set_);
}

int sole_cpu_of_current_thread() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (pthread_getaffinity_np(pthread_self(), sizeof(set), &set) != 0) return -1;
  if (CPU_COUNT(&set) != 1) return -1;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) return c;
  }
  return -1;
}

}  // namespace uroce::daemon
