// One direction of a testbed link: serialisation at the line rate, then a
// fixed propagation delay. A frame of n bytes occupies the wire for
// (n + overhead_bytes) x 8 / rate seconds. Events are whole ns, so the end
// of a frame is rounded up (a frame is never delivered before its last bit
// could have arrived), and the part of a ns that rounding added is owed to
// the next frame if it starts back to back: its exact start is that much
// earlier. A saturated link therefore carries exactly its rate over time
// (rounding every frame on its own would lose up to 0.5 % at 40 Gb/s with
// 1 KB frames), and a store-and-forward chain of equal links stays back to
// back. The receiver gets the frame when its last bit arrives, at
// done + delay.
//
// The direction does not queue: its sender (switch or host model) holds
// frames until the wire is free, which is where PFC acts.
//
// Random loss (a link's `loss_rate`): each data frame that crossed the wire
// is lost at the receiving end with that probability, drawn from the
// direction's own seeded stream, so one direction's draws never shift the
// other's. PFC frames are never lost (the model studies loss of data with
// PFC off; a lost pause would be another experiment).
//
// A link change (set_down) fails the direction: every frame that arrives
// while it is down, data or PFC, is lost (counted apart from random loss),
// including frames already on the wire when it went down.
#pragma once

#include <cstdint>

#include "datapath/base/rng.h"
#include "datapath/base/time.h"

namespace uroce::testbed {

struct LinkDirCounters {
  std::uint64_t frames = 0;
  std::uint64_t bytes = 0;
  std::uint64_t data_frames = 0;
  std::uint64_t control_frames = 0;
  std::uint64_t lost = 0;       // data frames lost at the receiving end (loss_rate)
  std::uint64_t lost_down = 0;  // frames that arrived while the link was down
  TimeNs busy_ns = 0;
};

class LinkDir {
 public:
  LinkDir(std::uint64_t rate_bps, TimeNs delay_ns, std::uint32_t overhead_bytes,
          double loss_rate = 0, std::uint64_t loss_seed = 0)
      : rate_bps_(rate_bps),
        delay_ns_(delay_ns),
        overhead_(overhead_bytes),
        loss_rate_(loss_rate),
        loss_(loss_seed) {}

  bool busy(TimeNs now) const { return now < free_at_; }
  TimeNs free_at() const { return free_at_; }

  // Puts a frame on the wire at `now` (precondition: !busy(now)); returns
  // when its last bit has left. The caller delivers it at that + delay().
  TimeNs start(std::uint32_t bytes, bool control, TimeNs now);

  // At the arrival of a data frame: true if it is lost (counted). Draws
  // only with a loss rate, so a lossless link consumes no randomness.
  bool lose() {
    if (loss_rate_ <= 0 || !loss_.chance(loss_rate_)) return false;
    ++c_.lost;
    return true;
  }

  // A link change: down or up from now on.
  void set_down(bool down) { down_ = down; }
  bool down() const { return down_; }
  // At the arrival of any frame: true (counted) if the link is down.
  bool lose_down() {
    if (!down_) return false;
    ++c_.lost_down;
    return true;
  }

  TimeNs delay() const { return delay_ns_; }
  double loss_rate() const { return loss_rate_; }
  std::uint64_t rate_bps() const { return rate_bps_; }
  const LinkDirCounters& counters() const { return c_; }

 private:
  std::uint64_t rate_bps_;
  TimeNs delay_ns_;
  std::uint32_t overhead_;
  double loss_rate_;
  SeededRng loss_;
  bool down_ = false;
  TimeNs free_at_ = 0;
  // How far free_at_ lies after the exact end of the last frame, in units
  // of 1 / rate_bps ns (< rate_bps); owed to a frame starting at free_at_.
  std::uint64_t debt_ = 0;
  LinkDirCounters c_;
};

}  // namespace uroce::testbed
