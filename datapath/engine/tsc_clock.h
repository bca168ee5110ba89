// The engine's clock: TSC cycles converted to nanoseconds since the clock
// was made. The engine reads it once per loop iteration and passes that
// `now` to everything it drives (DESIGN: Determinism); tests and the
// testbed pass a VirtualClock's time instead.
//
// Conversion: ns = (tsc - origin) * mult >> 32 with mult = 10^9 * 2^32 / hz,
// computed in 128 bits so it neither overflows nor loses precision over
// years of uptime (error < 1 ns per 4 s at 1 GHz or more).
#pragma once

#include <rte_cycles.h>

#include <cstdint>

#include "datapath/base/time.h"

namespace uroce::engine {

class TscClock {
 public:
  // `hz` must be non-zero.
  TscClock(std::uint64_t hz, std::uint64_t origin)
      : origin_(origin),
        mult_(static_cast<std::uint64_t>((static_cast<unsigned __int128>(kNsPerSec) << 32) / hz)) {}
  // Calibrated by EAL (needs rte_eal_init), starting now.
  static TscClock from_eal() { return TscClock(rte_get_tsc_hz(), rte_rdtsc()); }

  TimeNs to_ns(std::uint64_t tsc) const {
    const std::uint64_t d = tsc >= origin_ ? tsc - origin_ : 0;
    return static_cast<TimeNs>((static_cast<unsigned __int128>(d) * mult_) >> 32);
  }
  TimeNs now() const { return to_ns(rte_rdtsc()); }

 private:
  std::uint64_t origin_;
  std::uint64_t mult_;
};

}  // namespace uroce::engine
