// Test support for the engine tests (not a source mirror): a clock that
// threaded tests of engine.h share.
#pragma once

#include <chrono>

#include "datapath/base/time.h"

namespace uroce::engine::test {

// A monotonic clock for threaded tests.
struct SteadyClock {
  TimeNs now() const {
    return static_cast<TimeNs>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
  }
};

}  // namespace uroce::engine::test
