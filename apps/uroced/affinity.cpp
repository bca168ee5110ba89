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

}  // namespace uroce::daemon
