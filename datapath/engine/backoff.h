// The engine's idle policy in backoff mode: after `idle_spins` iterations in
// a row found no work, sleep, first min_sleep_ns and then twice as long on
// every further idle iteration, up to max_sleep_ns; any work resets it. Busy
// mode never sleeps (the engine does not consult this).
//
// Why spin first: a request/response exchange leaves the engine idle for a
// round trip at a time; spinning through short gaps keeps latency at the
// busy-poll figure, and only a quiet device pays the wake-up delay (at most
// max_sleep_ns, which also bounds how long an Engine::call may wait).
//
// Pure arithmetic (no clock, no syscall): the engine asks after() what to
// sleep and does the sleeping, so tests drive the policy directly.
#pragma once

#include <algorithm>
#include <cstdint>

#include "datapath/base/time.h"

namespace uroce::engine {

struct BackoffConfig {
  std::uint32_t idle_spins = 1024;
  TimeNs min_sleep_ns = 1 * kNsPerUs;
  TimeNs max_sleep_ns = 200 * kNsPerUs;
};

class Backoff {
 public:
  explicit Backoff(const BackoffConfig& c) : cfg_(c) {
    if (cfg_.min_sleep_ns == 0) cfg_.min_sleep_ns = 1;
    if (cfg_.max_sleep_ns < cfg_.min_sleep_ns) cfg_.max_sleep_ns = cfg_.min_sleep_ns;
    next_ = cfg_.min_sleep_ns;
  }

  // Called after each iteration; returns the nanoseconds to sleep now (0:
  // keep polling).
  TimeNs after(bool worked) {
    if (worked) {
      idle_ = 0;
      next_ = cfg_.min_sleep_ns;
      return 0;
    }
    if (idle_ < cfg_.idle_spins) {
      ++idle_;
      return 0;
    }
    const TimeNs d = next_;
    next_ = std::min(next_ * 2, cfg_.max_sleep_ns);
    return d;
  }

  std::uint32_t idle_run() const { return idle_; }
  const BackoffConfig& config() const { return cfg_; }

 private:
  BackoffConfig cfg_;
  std::uint32_t idle_ = 0;
  TimeNs next_ = 0;
};

}  // namespace uroce::engine
