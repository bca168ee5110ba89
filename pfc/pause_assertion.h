// The receive side of PFC for one port: which of its 8 priorities we hold
// paused at the upstream sender, the refreshes that keep that pause from
// lapsing, and the one frame per evaluation that carries every change.
// Both buffer models run it: the endpoint's IngressAccounting (one port, one
// buffer) and the testbed switch's SharedBuffer (one per port, over a
// buffer the ports share). They differ only in when a priority is over XOFF
// or down to XON, which they hand to plan() as two predicates.
//
// Per PFC-enabled priority p, at an evaluation at `now`:
//   not asserted, over_xoff(p)           -> XOFF  (xoff_quanta)
//   asserted, at_xon(p)                  -> XON   (0 quanta)
//   asserted, not at_xon(p), and
//     now >= last sent + refresh_ns      -> refresh (xoff_quanta)
// The frame's class-enable bits are exactly the priorities that change.
// send() builds it; when the sink has no buffer nothing changes (the owner
// counts it and retries on its next poll).
//
// Invariant (asserted): a priority is asserted only if PFC-enabled.
#pragma once

#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>

#include "datapath/base/time.h"
#include "datapath/wire/addr.h"
#include "datapath/wire/pfc.h"
#include "pfc/priority_map.h"
#include "pfc/sinks.h"

namespace uroce::pfc {

// The priorities one evaluation changes, and the quanta each gets.
struct PausePlan {
  std::uint8_t mask = 0;
  std::uint8_t xoff = 0;
  std::uint8_t refresh = 0;
  std::uint8_t xon = 0;
  std::uint16_t quanta[kNumPriorities] = {};
};

class PauseAssertion {
 public:
  PauseAssertion() = default;
  // pause_ns: how long xoff_quanta pause the peer at the port's rate;
  // refresh_ns: how long after an XOFF (or refresh) the next refresh is due.
  PauseAssertion(std::uint8_t pfc_enable, std::uint16_t xoff_quanta, TimeNs pause_ns,
                 TimeNs refresh_ns)
      : enable_(pfc_enable), quanta_(xoff_quanta), pause_ns_(pause_ns), refresh_ns_(refresh_ns) {}

  // What changes now; false when nothing does. over_xoff(p) and at_xon(p)
  // (bool (std::uint8_t prio)) are asked only of enabled priorities, the
  // first when p is not asserted, the second when it is.
  template <class OverXoff, class AtXon>
  bool plan(TimeNs now, OverXoff&& over_xoff, AtXon&& at_xon, PausePlan& p) const {
    for (std::uint8_t prio = 0; prio < kNumPriorities; ++prio) {
      const std::uint8_t bit = static_cast<std::uint8_t>(1u << prio);
      if ((enable_ & bit) == 0) continue;
      if (asserted_[prio]) {
        if (at_xon(prio)) {
          p.xon |= bit;
          p.quanta[prio] = 0;
        } else if (now >= last_sent_[prio] + refresh_ns_) {
          p.refresh |= bit;
          p.quanta[prio] = quanta_;
        } else {
          continue;
        }
      } else if (over_xoff(prio)) {
        p.xoff |= bit;
        p.quanta[prio] = quanta_;
      } else {
        continue;
      }
      p.mask |= bit;
    }
    return p.mask != 0;
  }

  // Sends p's frame (source `src`) through tx and commits it: true. False
  // when tx has no buffer; then nothing changes. counters(prio) returns the
  // priority's counters, a struct with xoff_sent, refresh_sent, xon_sent and
  // refresh_late (a refresh sent after the pause it renews had lapsed).
  template <FrameSink Tx, class CountersOf>
  bool send(const PausePlan& p, const wire::MacAddr& src, TimeNs now, Tx& tx,
            CountersOf&& counters) {
    const auto buf = tx.tx_alloc(wire::kPfcFrameSize);
    const std::size_t n = wire::build_pfc(buf, src, p.mask, p.quanta);
    if (n == 0) return false;
    tx.tx_commit(n);
    for (std::uint8_t prio = 0; prio < kNumPriorities; ++prio) {
      const std::uint8_t bit = static_cast<std::uint8_t>(1u << prio);
      if ((p.mask & bit) == 0) continue;
      assert((enable_ & bit) != 0);
      auto& c = counters(prio);
      if ((p.xoff & bit) != 0) {
        ++c.xoff_sent;
        asserted_[prio] = true;
        asserted_since_[prio] = now;
        last_sent_[prio] = now;
      } else if ((p.refresh & bit) != 0) {
        ++c.refresh_sent;
        if (now > last_sent_[prio] + pause_ns_) ++c.refresh_late;
        last_sent_[prio] = now;
      } else if ((p.xon & bit) != 0) {
        ++c.xon_sent;
        asserted_[prio] = false;
        asserted_closed_ns_[prio] += now - asserted_since_[prio];
      }
    }
    return true;
  }

  // The earliest refresh due; kNoDeadline when no priority is asserted.
  TimeNs next_refresh() const;
  // True while the peer has been told to pause `prio`.
  bool asserted(std::uint8_t prio) const { return asserted_[prio & 7]; }
  // Total time `prio` has been held paused, up to `now`.
  TimeNs asserted_ns(std::uint8_t prio, TimeNs now) const;
  TimeNs pause_ns() const { return pause_ns_; }
  TimeNs refresh_ns() const { return refresh_ns_; }

 private:
  std::uint8_t enable_ = 0;
  std::uint16_t quanta_ = 0;
  TimeNs pause_ns_ = 0;
  TimeNs refresh_ns_ = 0;
  std::array<bool, kNumPriorities> asserted_{};
  std::array<TimeNs, kNumPriorities> last_sent_{};
  std::array<TimeNs, kNumPriorities> asserted_since_{};
  std::array<TimeNs, kNumPriorities> asserted_closed_ns_{};
};

// The configuration rules both buffer models check (their check() keeps
// its own error names and order).
// Bounds that keep free bytes x alpha_num within 64 bits.
inline constexpr std::uint32_t kMaxAlphaTerm = 1u << 16;
inline constexpr std::uint64_t kMaxBufferBytes = std::uint64_t{1} << 40;

inline bool refresh_percent_ok(std::uint32_t percent) { return percent != 0 && percent < 100; }
inline bool buffer_size_ok(std::uint64_t bytes) { return bytes != 0 && bytes <= kMaxBufferBytes; }
inline bool alpha_ok(std::uint32_t num, std::uint32_t den) {
  return num != 0 && den != 0 && num <= kMaxAlphaTerm && den <= kMaxAlphaTerm;
}
// How long xoff_quanta pause a sender at link_bps.
inline TimeNs pause_time(std::uint16_t xoff_quanta, std::uint64_t link_bps) {
  return wire::pfc_quanta_to_ns(xoff_quanta, link_bps);
}
// refresh_percent of that: when an asserted pause is sent again.
inline TimeNs refresh_interval(std::uint16_t xoff_quanta, std::uint64_t link_bps,
                               std::uint32_t refresh_percent) {
  return pause_time(xoff_quanta, link_bps) * refresh_percent / 100;
}
// The dynamic threshold: floor(alpha_num x max(capacity - used, 0) /
// alpha_den), alpha_ok(alpha_num, alpha_den).
inline std::uint64_t dynamic_threshold(std::uint64_t capacity, std::uint64_t used,
                                       std::uint32_t alpha_num, std::uint32_t alpha_den) {
  const std::uint64_t free = capacity > used ? capacity - used : 0;
  return free * alpha_num / alpha_den;
}

}  // namespace uroce::pfc
