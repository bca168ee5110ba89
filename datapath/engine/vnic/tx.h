// Vnic definitions (vnic.h): phase 4, the pump (paced QPs whose time came
// rejoin the TX policy, then one round of it over the QPs with output), and
// phase 5, the flush.
#pragma once

#include "datapath/engine/vnic/entries.h"

namespace uroce::engine {

template <class PortIo, sched::TxScheduler Sched>
[[gnu::always_inline]] inline std::uint32_t Vnic<PortIo, Sched>::pump_phase(TimeNs now) {
  if (!tx_plain_) [[unlikely]]
    return pump_paced(now);
  auto turn = [&](sched::FlowId f, std::uint32_t budget) { return serve(qps_[f], budget, now); };
  std::uint32_t n;
  if constexpr (requires { sched_.round_plain(turn); }) {
    n = sched_.round_plain(turn);
  } else {
    n = sched_.round(turn);
  }
  ctr_.tx_pumped += n;
  return n;
}

// The pump with traffic classes, while some QP has a rate limit, or with a
// port limit: paced QPs whose time came rejoin the TX policy, each turn
// checks the QP's limit, and the round stops when the port's modelled
// backlog reaches the port limit (sched/port_limit.h; the QPs keep their
// places and the classes their order for the next pump). Out of line, as
// is serve_paced: a plain device (isolation off, no rate or port limit)
// pays one test per pump, and the code inlined into its loop stays what it
// was before classes and pacing existed.
template <class PortIo, sched::TxScheduler Sched>
[[gnu::noinline]] std::uint32_t Vnic<PortIo, Sched>::pump_paced(TimeNs now) {
  if (pacer_.waiting() != 0) {
    pacer_.advance(now, [&](sched::FlowId f) { sched_.activate(f); });
  }
  if constexpr (requires { sched_.set_now(now); }) sched_.set_now(now);
  const bool limited = limit_.enabled();
  if (limited) {
    limit_.advance(now);
    if (!limit_.open()) {
      if (sched_.size() != 0) ++ctr_.tx_limit_stops;
      return 0;
    }
  }
  // The largest frame the port takes: a turn's frame budget under the limit.
  const std::uint32_t frame = cfg_.eth_mtu + wire::EthHdr::kSize;
  const std::uint32_t n = sched_.round([&](sched::FlowId f, std::uint32_t budget) {
    QpEntry& e = qps_[f];
    if (limited) {
      const std::uint32_t left = limit_.frames_left(frame);
      if (left == 0) {
        ++ctr_.tx_limit_stops;
        return sched::ServeResult{0, true, true};
      }
      budget = std::min(budget, left);
    }
    const std::uint64_t bytes0 = e.ctr.tx_bytes;
    const sched::ServeResult r =
        pacer_.paced(f) ? serve_paced(e, budget, now) : serve(e, budget, now);
    if (limited) limit_.sent(e.ctr.tx_bytes - bytes0, r.sent);
    return r;
  });
  if ((hooks_ & policy::hook::kRoundEnd) != 0) policy_round_end();
  ctr_.tx_pumped += n;
  return n;
}

// A paced QP that ran ahead of its rate waits in the wheel, out of the
// policy's set (more = false); otherwise it sends at most its burst, and
// waits if that took it ahead of its rate.
// With DCQCN (datapath/policy/dcqcn.h, on_pace) the QP's rate may rise with time: its timers due by now
// run first (the QP may leave the pacer: then it is served as any other),
// what it sent is charged to its byte counter, and it waits no longer than
// its next DCQCN timer.
template <class PortIo, sched::TxScheduler Sched>
[[gnu::noinline]] sched::ServeResult Vnic<PortIo, Sched>::serve_paced(QpEntry& e,
                                                                      std::uint32_t budget,
                                                                      TimeNs now) {
  const bool hooked = (hooks_ & policy::hook::kPace) != 0;
  if (hooked) {
    policy_pace(e, 0, now);
    if (!pacer_.paced(e.slot)) return serve(e, budget, now);
  }
  if (!pacer_.may_send(e.slot, now)) {
    pacer_.park(e.slot, now, hooked ? policy_wake(e) : ~TimeNs{0});
    return sched::ServeResult{};
  }
  const std::uint64_t bytes0 = e.ctr.tx_bytes;
  sched::ServeResult r = serve(e, std::min(budget, pacer_.burst_frames(e.slot)), now);
  const std::uint64_t sent = e.ctr.tx_bytes - bytes0;
  pacer_.sent(e.slot, sent, now, r.more);
  if (hooked) {
    policy_pace(e, sent, now);
    if (!pacer_.paced(e.slot)) return r;
  }
  if (r.more && !pacer_.may_send(e.slot, now)) {
    pacer_.park(e.slot, now, hooked ? policy_wake(e) : ~TimeNs{0});
    r.more = false;
  }
  return r;
}

template <class PortIo, sched::TxScheduler Sched>
inline sched::ServeResult Vnic<PortIo, Sched>::serve(QpEntry& e, std::uint32_t budget, TimeNs now) {
  sched::ServeResult r;
  if (!e.used) return r;
  if (pfc_paused(e, now)) return sched::ServeResult{0, true, false};
  std::uint32_t room = io_.tx_room();
  if (room == 0) {
    ctr_.tx_flushed += io_.flush();
    room = io_.tx_room();
    if (room == 0) {
      r.more = true;
      r.stop = true;
      return r;
    }
  }
  const std::uint32_t b = std::min(budget, room);
  [[maybe_unused]] const std::uint64_t bytes0 = e.ctr.tx_bytes;
  QpTx tx{this, e.ctr};
  visit(
      e, [&](auto& q) __attribute__((always_inline)) {
        using Q = std::remove_reference_t<decltype(q)>;
        const transport::PumpResult p = with_io<Q>(
            e, tx, [&](auto& io) __attribute__((always_inline)) { return q.pump(now, io, b); });
        if constexpr (std::is_same_v<Q, transport::RcQp>) {
          if ((hooks_ & policy::hook::kServed) != 0) [[unlikely]]
            policy_served(e);
        }
        r.sent = p.sent;
        r.more = p.more;
      });
  if (stages_ != nullptr && r.sent != 0) [[unlikely]]
    stages_->on_served(e.slot);
  if constexpr (sched::kSharesBytes<Sched>) r.bytes = e.ctr.tx_bytes - bytes0;
  drain_qp_events(e);
  return r;
}

// Held frames of priorities whose pause ended go first, then the burst.
template <class PortIo, sched::TxScheduler Sched>
[[gnu::always_inline]] inline void Vnic<PortIo, Sched>::flush_phase() {
  if (pfc_.held() != 0) {
    HeldTx h{this};
    pfc_.release(now_, h);
  }
  // A port adapter with an ACK hold (eth_port_io.h) may keep a burst of
  // ACKs for a later iteration.
  bool held = false;
  if constexpr (requires { io_.flush_end(); }) {
    ctr_.tx_flushed += io_.flush_end();
    held = io_.tx_held();
  } else {
    ctr_.tx_flushed += io_.flush();
  }
  if (stages_ != nullptr && stages_->waiting_tx() && !held) [[unlikely]]
    stages_->on_flushed(stage_now());
}

}  // namespace uroce::engine
