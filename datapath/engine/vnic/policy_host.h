// Vnic definitions (vnic.h): the engine as the QP extensions see it
// (datapath/policy/qp_extension.h), the folds over the enabled ones at each
// hook point, and the one builder of the packets the engine itself
// originates for a QP (DCQCN's CNPs, the Homa-like scheduler's GRANT,
// CUTOFFS and MLEN): addressed to the QP's peer along its path, allocated in
// the port's TX burst (flushing it first when full), counted on the QP and
// committed through the QP's sink (loopback, PFC hold, loss injection), ahead
// of this iteration's pump.
#pragma once

#include <algorithm>
#include <tuple>
#include <type_traits>

#include "datapath/engine/vnic/entries.h"
#include "datapath/wire/builder.h"

namespace uroce::engine {

template <class PortIo, sched::TxScheduler Sched>
struct Vnic<PortIo, Sched>::PolicyHost {
  using Qp = QpEntry;
  // Const hooks (status, wake, next_deadline) get a const PolicyHost: only
  // the const accessors below.
  Vnic* v;

  const VnicConfig& config() const { return v->cfg_; }
  VnicCounters& counters() { return v->ctr_; }
  TimeNs now() const { return v->now_; }
  // The packet being received (on_rx, on_delivered).
  const wire::ParsedPacket& packet() const { return v->pkt_; }
  // The send WR just posted (on_post).
  const transport::SendWr& posted() const { return v->swr_; }

  static transport::QpType type(const Qp& e) { return e.type(); }
  static transport::QpAddressing addressing(const Qp& e) { return e.addressing(); }
  static transport::QpState state(const Qp& e) { return qp_state(e); }
  // WRs e's send queue holds.
  static std::uint32_t send_queue_depth(Qp& e) {
    return visit(e, [](auto& q) { return q.send_queue_depth(); });
  }
  static transport::RcQp& rc(Qp& e) {
    transport::RcQp* q = detail::qp_if<transport::RcQp>(e);
    assert(q != nullptr);
    return *q;
  }
  static const transport::RcQp& rc(const Qp& e) { return rc(const_cast<Qp&>(e)); }
  // A live QP by QPN, or null.
  Qp* find(std::uint32_t qpn) { return v->demux_.find(qpn); }
  Qp& qp(std::uint32_t slot) { return v->qps_[slot]; }

  Sched& scheduler() { return v->sched_; }
  const Sched& scheduler() const { return v->sched_; }
  sched::Pacer& pacer() { return v->pacer_; }
  // A QP's pacing changed: the pump may have to leave (or take) its plain
  // path.
  void tx_changed() { v->update_tx_plain(); }

  // A packet from us to e's peer QP along e's path, not ECN-capable; the
  // caller sets DSCP, UDP source port, opcode, PSN and payload.
  wire::PacketSpec to_peer(const Qp& e) const {
    const transport::PathAddr& a = e.attr.av;
    wire::PacketSpec s;
    s.eth_src = v->cfg_.mac;
    s.eth_dst = a.dmac;
    s.ip_src = v->cfg_.ip;
    s.ip_dst = a.dip;
    if (a.ipv6) s.ip6 = &a.route6;
    s.ecn = wire::kEcnNotEct;
    s.ttl = a.ttl;
    s.dest_qp = e.attr.dest_qp_num;
    return s;
  }
  // Builds `s` into the TX burst as one of e's frames; false (nothing sent)
  // when the port has no TX buffer: the caller counts it.
  bool originate(Qp& e, const wire::PacketSpec& s) {
    const std::size_t len = wire::roce_frame_size(s);
    if (v->io_.tx_room() == 0) v->ctr_.tx_flushed += v->io_.flush();
    QpTx tx{v, e.ctr};
    const std::span<std::uint8_t> b = tx.tx_alloc(len);
    if (b.size() < len) return false;
    const int n = wire::build_roce(s, b);
    assert(n > 0);
    tx.tx_commit(static_cast<std::size_t>(n));
    return true;
  }
};

template <class PortIo, sched::TxScheduler Sched>
typename Vnic<PortIo, Sched>::Policies Vnic<PortIo, Sched>::make_policies(const VnicConfig& c) {
  const auto slots = static_cast<std::uint32_t>(c.max_qps == 0 ? 1 : c.max_qps);
  // Each extension sees the TX policy as the scheduler runs it (after
  // every extension's tx_policy).
  VnicConfig eff = c;
  eff.sched = effective_tx_policy(c);
  return [&]<class... P>(std::type_identity<std::tuple<P...>>) {
    static_assert((policy::QpExtensionOf<P, PolicyHost> && ...));
    return Policies(P(eff, slots)...);
  }(std::type_identity<Policies>{});
}

// f(p) for each enabled extension p whose kHooks has `bit`, in the list's
// order; extensions without it cost nothing (resolved at compile time).
template <class PortIo, sched::TxScheduler Sched>
template <std::uint32_t Bit, class F>
inline void Vnic<PortIo, Sched>::each_policy(F&& f) {
  std::apply(
      [&](auto&... p) {
        (
            [&](auto& x) {
              if constexpr ((std::remove_cvref_t<decltype(x)>::kHooks & Bit) != 0) {
                if (x.enabled()) f(x);
              }
            }(p),
            ...);
      },
      policies_);
}

template <class PortIo, sched::TxScheduler Sched>
template <std::uint32_t Bit, class F>
inline void Vnic<PortIo, Sched>::each_policy(F&& f) const {
  std::apply(
      [&](const auto&... p) {
        (
            [&](const auto& x) {
              if constexpr ((std::remove_cvref_t<decltype(x)>::kHooks & Bit) != 0) {
                if (x.enabled()) f(x);
              }
            }(p),
            ...);
      },
      policies_);
}

// Out of line, as are the other hot-path folds below: a device without the
// hook pays one test of hooks_ where it would be called.
template <class PortIo, sched::TxScheduler Sched>
[[gnu::noinline]] bool Vnic<PortIo, Sched>::policy_rx(QpEntry& e, TimeNs now) {
  PolicyHost h{this};
  bool consumed = false;
  each_policy<policy::hook::kRx>([&](auto& p) {
    if (!consumed) consumed = p.on_rx(h, e, now);
  });
  return consumed;
}

template <class PortIo, sched::TxScheduler Sched>
[[gnu::noinline]] void Vnic<PortIo, Sched>::policy_delivered(QpEntry& e, TimeNs now) {
  PolicyHost h{this};
  each_policy<policy::hook::kDelivered>([&](auto& p) { p.on_delivered(h, e, now); });
}

template <class PortIo, sched::TxScheduler Sched>
[[gnu::noinline]] void Vnic<PortIo, Sched>::policy_post(QpEntry& e) {
  PolicyHost h{this};
  each_policy<policy::hook::kPost>([&](auto& p) { p.on_post(h, e); });
}

template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::policy_timer(QpEntry& e, TimeNs now) {
  PolicyHost h{this};
  each_policy<policy::hook::kTimer>([&](auto& p) { p.on_timer(h, e, now); });
}

template <class PortIo, sched::TxScheduler Sched>
[[gnu::noinline]] std::uint32_t Vnic<PortIo, Sched>::policy_poll(TimeNs now) {
  PolicyHost h{this};
  std::uint32_t work = 0;
  each_policy<policy::hook::kPoll>([&](auto& p) { work += p.on_poll(h, now); });
  return work;
}

template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::policy_pace(QpEntry& e, std::uint64_t bytes, TimeNs now) {
  PolicyHost h{this};
  each_policy<policy::hook::kPace>([&](auto& p) { p.on_pace(h, e, bytes, now); });
}

template <class PortIo, sched::TxScheduler Sched>
TimeNs Vnic<PortIo, Sched>::policy_wake(const QpEntry& e) const {
  const PolicyHost h{const_cast<Vnic*>(this)};
  TimeNs t = ~TimeNs{0};
  each_policy<policy::hook::kPace>([&](const auto& p) { t = std::min(t, p.wake(h, e)); });
  return t;
}

template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::policy_served(QpEntry& e) {
  PolicyHost h{this};
  each_policy<policy::hook::kServed>([&](auto& p) { p.on_served(h, e); });
}

template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::policy_round_end() {
  PolicyHost h{this};
  each_policy<policy::hook::kRoundEnd>([&](auto& p) { p.on_round_end(h); });
}

}  // namespace uroce::engine
