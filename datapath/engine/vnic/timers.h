// Vnic definitions (vnic.h): phase 3, timers. RC QPs and DCIs arm one deadline each
// through the Timers sink (entries.h) into a TimerHeap keyed by QP slot; the
// phase fires the ones due, so it costs one comparison when none is and
// nothing per QP without an armed timer. A heap key earlier than the QP's
// deadline (the deadline moved later since) is moved, not fired.
#pragma once

#include "datapath/engine/vnic/entries.h"

namespace uroce::engine {

template <class PortIo, sched::TxScheduler Sched>
[[gnu::always_inline]] inline std::uint32_t Vnic<PortIo, Sched>::timer_phase(TimeNs now) {
  ArpTx sink{this};
  arp_.on_timer(now, sink);
  nd_.on_timer(now, sink);
  if (now < timers_.earliest()) return 0;
  ++ctr_.timer_scans;
  // Take every due timer first: a QP that re-arms at or before `now` while
  // firing waits for the next iteration instead of looping here.
  while (timers_.earliest() <= now) due_.push_back(timers_.pop());
  std::uint32_t fired = 0;
  for (const std::uint32_t slot : due_) {
    QpEntry& e = qps_[slot];
    // Only live QPs of kinds with timers arm (destroy_qp and a move to
    // RESET cancel).
    assert(e.used && e.deadline != 0);
    if (e.deadline > now) {
      timers_.set(slot, e.deadline);
      continue;
    }
    e.deadline = 0;
    ++fired;
    ++ctr_.timer_fires;
    ++e.ctr.timer_fires;
    if (io_.tx_room() == 0) ctr_.tx_flushed += io_.flush();
    QpTx tx{this, e.ctr};
    visit(
        e, [&](auto& q) __attribute__((always_inline)) {
          using Q = std::remove_reference_t<decltype(q)>;
          with_io<Q>(
              e, tx, [&](auto& io) __attribute__((always_inline)) { q.on_timer(now, io); });
          if constexpr (std::is_same_v<Q, transport::RcQp>) {
            if ((hooks_ & policy::hook::kTimer) != 0) [[unlikely]]
              policy_timer(e, now);
          }
          if (q.has_output()) sched_.activate(slot);
        });
    drain_qp_events(e);
  }
  due_.clear();
  return fired;
}

}  // namespace uroce::engine
