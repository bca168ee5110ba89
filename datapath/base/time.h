// Time as the datapath sees it: nanoseconds on a monotonic axis whose origin is
// chosen by the clock. The engine and every state machine take `now` as an
// argument and never read a clock themselves (DESIGN: Determinism), so the same
// code runs under a virtual clock in tests and the testbed.
#pragma once

#include <cstdint>

namespace uroce {

using TimeNs = std::uint64_t;

inline constexpr TimeNs kNsPerUs = 1'000;
inline constexpr TimeNs kNsPerMs = 1'000'000;
inline constexpr TimeNs kNsPerSec = 1'000'000'000;

// A clock that only moves when told to. Single-threaded by contract: the
// simulation loop that owns it is the only writer and reader.
class VirtualClock {
 public:
  explicit VirtualClock(TimeNs start = 0) : now_(start) {}
  TimeNs now() const { return now_; }
  // Time never goes backwards: advancing to an earlier instant is a no-op.
  void advance_to(TimeNs t) {
    if (t > now_) now_ = t;
  }
  void advance_by(TimeNs d) { now_ += d; }

 private:
  TimeNs now_;
};

}  // namespace uroce
