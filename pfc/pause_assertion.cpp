#include "pfc/pause_assertion.h"

namespace uroce::pfc {

TimeNs PauseAssertion::next_refresh() const {
  TimeNs d = kNoDeadline;
  for (std::uint8_t p = 0; p < kNumPriorities; ++p) {
    if (asserted_[p] && last_sent_[p] + refresh_ns_ < d) d = last_sent_[p] + refresh_ns_;
  }
  return d;
}

TimeNs PauseAssertion::asserted_ns(std::uint8_t prio, TimeNs now) const {
  prio &= 7;
  TimeNs t = asserted_closed_ns_[prio];
  if (asserted_[prio] && now > asserted_since_[prio]) t += now - asserted_since_[prio];
  return t;
}

}  // namespace uroce::pfc
