// Bounds how often one source may write a log line: at most `burst` lines
// per `period`, in fixed windows. A hostile or broken client cannot flood
// the daemon's log; the number of lines held back is reported with the next
// line that goes out, so nothing is hidden.
//
// Single-threaded (one per client session). Time comes from the caller.
#pragma once

#include <cstdint>

#include "datapath/base/time.h"

namespace uroce::daemon {

class RateLimiter {
 public:
  RateLimiter(std::uint32_t burst, TimeNs period) : burst_(burst), period_(period) {}

  // True when a line may be written at `now`; then *suppressed is the number
  // of lines refused since the last one allowed (and the count restarts).
  bool allow(TimeNs now, std::uint64_t* suppressed) {
    if (!started_ || now >= window_start_ + period_) {
      started_ = true;
      window_start_ = now;
      in_window_ = 0;
    }
    if (in_window_ >= burst_) {
      ++suppressed_;
      return false;
    }
    ++in_window_;
    *suppressed = suppressed_;
    suppressed_ = 0;
    return true;
  }

 private:
  std::uint32_t burst_;
  TimeNs period_;
  bool started_ = false;
  TimeNs window_start_ = 0;
  std::uint32_t in_window_ = 0;
  std::uint64_t suppressed_ = 0;
};

}  // namespace uroce::daemon
