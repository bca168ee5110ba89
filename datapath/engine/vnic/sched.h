// Vnic definitions (vnic.h): TX scheduling on the control path. A QP's
// class follows its address vector's DSCP through PFC's priority map (one
// number for its TX class and its PFC priority) unless set_qp_sched pinned
// it; its rate limit lives in the pacer, which tx.h consults per turn.
// Engine thread only.
#pragma once

#include <cerrno>
#include <type_traits>

#include "datapath/engine/vnic/entries.h"

namespace uroce::engine {

// The device's TX policy configuration as the extensions adjust it (the
// Homa-like scheduler takes the classes: a QP's class is the network
// priority of its next packet, all strict).
template <class PortIo, sched::TxScheduler Sched>
sched::TxPolicyConfig Vnic<PortIo, Sched>::effective_tx_policy(const VnicConfig& c) {
  sched::TxPolicyConfig t = c.sched;
  [&]<class... P>(std::type_identity<std::tuple<P...>>) {
    (P::tx_policy(c, &t), ...);
  }(std::type_identity<Policies>{});
  return t;
}

template <class PortIo, sched::TxScheduler Sched>
Sched Vnic<PortIo, Sched>::make_sched(const VnicConfig& c, std::uint32_t flows) {
  if constexpr (std::is_constructible_v<Sched, std::uint32_t, const sched::TxPolicyConfig&>) {
    return Sched(flows, effective_tx_policy(c));
  } else {
    return Sched(flows);
  }
}

template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::update_tx_plain() {
  bool classes = false;
  if constexpr (requires { sched_.isolation(); }) {
    classes = sched_.isolation() != sched::Isolation::kOff;
  }
  tx_plain_ = !classes && pacer_.count() == 0 && !limit_.enabled();
  acks_at_pump_ = tx_plain_ && (hooks_ & policy::hook::kAcksNow) == 0;
}

// UD QPs and DCIs have no address vector of their own (each WR names an
// AH): their class changes only through set_qp_sched. An extension may own
// the class (isolation auto's classifier, the Homa-like scheduler's
// priorities): then the DSCP does not decide it.
template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::class_from_av(QpEntry& e) {
  if constexpr (requires { sched_.set_class(e.slot, std::uint8_t{0}); }) {
    if (e.class_pinned || e.addressing() == transport::QpAddressing::kPerWr) return;
    // An extension's (the Homa-like scheduler's priorities).
    if ((hooks_ & policy::hook::kClass) != 0) {
      const PolicyHost h{this};
      bool owned = false;
      each_policy<policy::hook::kClass>(
          [&](const auto& p) { owned = owned || p.owns_class(h, e); });
      if (owned) return;
    }
    sched_.set_class(e.slot, pfc_.config().map.priority_of_dscp(e.attr.av.dscp));
  }
}

template <class PortIo, sched::TxScheduler Sched>
int Vnic<PortIo, Sched>::set_qp_sched(ObjId id, const QpSched& s) {
  assert(owner_.here());
  QpEntry* e = find_qp(id);
  if (e == nullptr) return ENOENT;
  if (s.set_class) {
    if constexpr (requires { sched_.set_class(e->slot, std::uint8_t{0}); }) {
      if (s.tx_class == QpSched::kClassFromDscp) {
        e->class_pinned = false;
        class_from_av(*e);
      } else {
        if (s.tx_class >= sched::kNumClasses) return EINVAL;
        e->class_pinned = true;
        sched_.set_class(e->slot, s.tx_class);
      }
    } else {
      return EINVAL;
    }
  }
  if (s.set_rate) {
    // The typical packet, when the caller gives none: a full frame of the
    // port's MTU.
    const std::uint32_t typical = cfg_.eth_mtu + wire::EthHdr::kSize;
    pacer_.set(e->slot, s.pace, typical, now_, [&](sched::FlowId f) { sched_.activate(f); });
    update_tx_plain();
  }
  // A QP whose limit changed may send now (or must wait): let the pump look.
  sched_.activate(e->slot);
  return 0;
}

template <class PortIo, sched::TxScheduler Sched>
int Vnic<PortIo, Sched>::set_tx_classes(const sched::TrafficClassConfig& classes) {
  assert(owner_.here());
  if constexpr (requires { sched_.set_classes(sched::TxPolicyConfig{}, TimeNs{0}); }) {
    VnicConfig c = cfg_;
    c.sched.classes = classes;
    sched_.set_classes(effective_tx_policy(c), now_);
    return 0;
  } else {
    return EOPNOTSUPP;
  }
}

}  // namespace uroce::engine
