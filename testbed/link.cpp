#include "testbed/link.h"

namespace uroce::testbed {

TimeNs LinkDir::start(std::uint32_t bytes, bool control, TimeNs now) {
  // Back to back: this frame really started debt_ / rate ns before now.
  const std::uint64_t debt = now == free_at_ ? debt_ : 0;
  const std::uint64_t num = (std::uint64_t{bytes} + overhead_) * 8 * kNsPerSec;
  TimeNs dur = 0;
  if (num > debt) {
    const std::uint64_t left = num - debt;
    dur = (left + rate_bps_ - 1) / rate_bps_;
    debt_ = dur * rate_bps_ - left;
  } else {
    debt_ = debt - num;  // a frame shorter than the debt (absurd rates only)
  }
  free_at_ = now + dur;
  ++c_.frames;
  c_.bytes += bytes;
  if (control) {
    ++c_.control_frames;
  } else {
    ++c_.data_frames;
  }
  c_.busy_ns += dur;
  return free_at_;
}

}  // namespace uroce::testbed
