// What a policy plugged into the engine looks like (a QP extension): DCQCN
// (dcqcn.h), the Homa-like scheduler (homa.h) and whatever comes next, as
// Demikernel's congestion-control trait and eRPC's cc/ keep congestion
// control out of the transport. The Vnic (datapath/engine/vnic.h) holds one
// object of each registered extension (policies.h) in a std::tuple and, at
// each of the points below, folds over the enabled ones that declare the
// hook: the fold is resolved at compile time (no virtual call), and what it
// costs at run time is one test of a bit mask per point, the bit being set
// only when some enabled extension implements that hook.
//
// An extension is constructed from the device's configuration and its
// number of QP slots (it sizes its per-slot state there: nothing allocates
// afterwards), says whether the device runs it (enabled(), fixed at
// construction) and lists the hooks it implements in kHooks. Every hook has
// a no-op default in NoHooks, so an extension writes only the ones it
// needs. Hooks receive the engine as `H& h` (the Vnic's PolicyHost:
// configuration, counters, the packet being received, the WR being posted,
// the scheduler and pacer, and the builder of engine-originated packets,
// vnic/policy_host.h) and the QP as `typename H::Qp& e` (its slot, QPN,
// attributes). Engine thread only.
//
// The points, in the order of an iteration (vnic.h):
//   on_rx        RX, a RoCEv2 packet for QP e before its transport sees it;
//                true: consumed (the transport never sees it).
//   on_delivered RX, after an RC QP's transport took the packet.
//   on_post      doorbells, after a send WR (h.posted()) was posted.
//   on_timer     timers, after an RC QP's timer ran.
//   on_poll      phase 3b, after the timers; returns the work done.
//   on_pace      pump, a paced QP's turn: before it (bytes 0) and after it
//                (the bytes it sent); wake() bounds how long it may wait.
//   on_served    pump, after an RC QP's turn.
//   on_round_end pump, after a round of the paced pump.
// And on the control path: on_start (once, when the Vnic is made),
// on_created / on_destroyed (a QP takes / leaves a slot), on_modify (may rewrite the attributes before the transport
// applies them) / on_modified (after; `before` the old state),
// owns_class (the QP's TX class is not its address vector's), status (one
// QpStatus), next_deadline (the earliest instant on_poll has work that no
// input brings), and tx_policy (static: adjusts the TX policy's
// configuration before the scheduler is made).
// Counters: an extension names its counter set (Counters: a struct with a
// field list, datapath/base/counter_fields.h) and returns it from
// counters(); the device's status shows every extension's counters among
// its own (Vnic::policy_counters). NoHooks' set is empty.
#pragma once

#include <concepts>
#include <cstdint>
#include <tuple>

#include "datapath/base/counter_fields.h"
#include "datapath/base/time.h"
#include "datapath/engine/vnic_api.h"
#include "datapath/engine/vnic_types.h"
#include "datapath/transport/qp_common.h"
#include "sched/tx_policy.h"

namespace uroce::policy {

using TimeNs = uroce::TimeNs;

// Hook bits (kHooks). A hook whose bit is clear is never called, even when
// the extension defines it.
namespace hook {
inline constexpr std::uint32_t kRx = 1u << 0;
inline constexpr std::uint32_t kDelivered = 1u << 1;
inline constexpr std::uint32_t kPost = 1u << 2;
inline constexpr std::uint32_t kTimer = 1u << 3;
inline constexpr std::uint32_t kPoll = 1u << 4;
inline constexpr std::uint32_t kPace = 1u << 5;
inline constexpr std::uint32_t kServed = 1u << 6;
inline constexpr std::uint32_t kRoundEnd = 1u << 7;
inline constexpr std::uint32_t kModify = 1u << 8;
inline constexpr std::uint32_t kModified = 1u << 9;
inline constexpr std::uint32_t kSlots = 1u << 10;     // on_created, on_destroyed
inline constexpr std::uint32_t kClass = 1u << 11;     // owns_class
inline constexpr std::uint32_t kStatus = 1u << 12;    // status
inline constexpr std::uint32_t kDeadline = 1u << 13;  // next_deadline
// Not a hook: RC ACKs must leave from the RX phase (AckTiming::kNow), as
// the extension may hold a QP back in the pump.
inline constexpr std::uint32_t kAcksNow = 1u << 14;
}  // namespace hook

// The counter set of an extension that counts nothing.
struct NoCounters {};
inline constexpr counters::FieldList<NoCounters, 0> kNoCounterFields{};
static_assert(counters::covers(kNoCounterFields));
constexpr const auto& counter_fields(const NoCounters&) { return kNoCounterFields; }

// The no-op defaults. An extension derives from it and hides the hooks it
// implements (plain overloads: nothing here is virtual).
struct NoHooks {
  static constexpr std::uint32_t kHooks = 0;
  using Counters = NoCounters;
  NoCounters counters() const { return {}; }
  static void tx_policy(const engine::VnicConfig&, sched::TxPolicyConfig*) {}
  template <class H>
  void on_start(H&) {}
  template <class H, class Q>
  bool on_rx(H&, Q&, TimeNs) {
    return false;
  }
  template <class H, class Q>
  void on_delivered(H&, Q&, TimeNs) {}
  template <class H, class Q>
  void on_post(H&, Q&) {}
  template <class H, class Q>
  void on_timer(H&, Q&, TimeNs) {}
  template <class H>
  std::uint32_t on_poll(H&, TimeNs) {
    return 0;
  }
  template <class H, class Q>
  void on_pace(H&, Q&, std::uint64_t, TimeNs) {}
  template <class H, class Q>
  TimeNs wake(const H&, const Q&) const {
    return ~TimeNs{0};
  }
  template <class H, class Q>
  void on_served(H&, Q&) {}
  template <class H>
  void on_round_end(H&) {}
  template <class H, class Q>
  void on_modify(H&, Q&, engine::QpModify*) {}
  template <class H, class Q>
  void on_modified(H&, Q&, transport::QpState) {}
  template <class H, class Q>
  void on_created(H&, Q&) {}
  template <class H, class Q>
  void on_destroyed(H&, Q&) {}
  template <class H, class Q>
  bool owns_class(const H&, const Q&) const {
    return false;
  }
  template <class H, class Q>
  void status(const H&, const Q&, engine::QpStatus*) const {}
  template <class H>
  TimeNs next_deadline(const H&) const {
    return ~TimeNs{0};
  }
};

// An extension as the Vnic holds it.
template <class P>
concept QpExtension = std::derived_from<P, NoHooks> &&
    std::constructible_from<P, const engine::VnicConfig&, std::uint32_t> &&
    requires(const P& p, const engine::VnicConfig& c, sched::TxPolicyConfig* t) {
  { P::kHooks } -> std::convertible_to<std::uint32_t>;
  { p.enabled() } -> std::same_as<bool>;
  { p.counters() } -> std::convertible_to<typename P::Counters>;
  requires counters::CounterSet<typename P::Counters>;
  P::tx_policy(c, t);
};

// P's hooks, as a host H calls them (checked where the Vnic is compiled).
template <class P, class H>
concept QpExtensionOf = QpExtension<P> &&
    requires(P& p, const P& cp, H& h, const H& ch, typename H::Qp& e, const typename H::Qp& ce,
             TimeNs now, engine::QpModify* m, engine::QpStatus* s) {
  { p.on_rx(h, e, now) } -> std::same_as<bool>;
  p.on_delivered(h, e, now);
  p.on_post(h, e);
  p.on_timer(h, e, now);
  { p.on_poll(h, now) } -> std::same_as<std::uint32_t>;
  p.on_pace(h, e, std::uint64_t{0}, now);
  { cp.wake(ch, ce) } -> std::same_as<TimeNs>;
  p.on_served(h, e);
  p.on_round_end(h);
  p.on_modify(h, e, m);
  p.on_modified(h, e, transport::QpState::kReset);
  p.on_created(h, e);
  p.on_destroyed(h, e);
  { cp.owns_class(ch, ce) } -> std::same_as<bool>;
  cp.status(ch, ce, s);
  { cp.next_deadline(ch) } -> std::same_as<TimeNs>;
};

// The counter sets of a tuple of extensions, in its order.
template <class Tuple>
struct CountersOfT;
template <class... P>
struct CountersOfT<std::tuple<P...>> {
  using type = std::tuple<typename P::Counters...>;
};
template <class Tuple>
using CountersOf = typename CountersOfT<Tuple>::type;

// The hooks the enabled extensions of a tuple implement (the Vnic's mask).
template <class... P>
std::uint32_t enabled_hooks(const std::tuple<P...>& t) {
  return std::apply([](const P&... p) { return ((p.enabled() ? P::kHooks : 0u) | ... | 0u); }, t);
}

}  // namespace uroce::policy
