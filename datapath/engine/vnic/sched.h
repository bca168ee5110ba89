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

template <class PortIo, sched::TxScheduler Sched>
Sched Vnic<PortIo, Sched>::make_sched(const VnicConfig& c, std::uint32_t flows) {
  if constexpr (std::is_constructible_v<Sched, std::uint32_t, const sched::TxPolicyConfig&>) {
    // The extensions may take the TX classes (the Homa-like scheduler: a
    // QP's class is the network priority of its next packet, all strict).
    sched::TxPolicyConfig t = c.sched;
    [&]<class... P>(std::type_identity<std::tuple<P...>>) {
      (P::tx_policy(c, &t), ...);
    }(std::type_identity<Policies>{});
    return Sched(flows, t);
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
  if constexpr (requires { sched_.auto_classify(); }) auto_on_ = sched_.auto_classify();
  post_hooks_ = auto_on_ || (hooks_ & policy::hook::kPost) != 0;
  tx_plain_ = !classes && pacer_.count() == 0 && !limit_.enabled();
  acks_at_pump_ = tx_plain_ && (hooks_ & policy::hook::kAcksNow) == 0;
}

// Out of line: a device without isolation auto pays one test per send WR.
// A QP pinned through set_qp_sched keeps its class.
template <class PortIo, sched::TxScheduler Sched>
[[gnu::noinline]] void Vnic<PortIo, Sched>::auto_observe(QpEntry& e) {
  if constexpr (requires { sched_.observe(e.slot, std::uint64_t{0}, std::uint32_t{0}); }) {
    assert(auto_on_);
    if (e.class_pinned) return;
    const std::uint32_t depth = visit(e, [](auto& q) { return q.send_queue_depth(); });
    sched_.observe(e.slot, swr_.length(), depth);
  }
}

// UD QPs and DCIs have no address vector of their own (each WR names an
// AH): their class changes only through set_qp_sched. With isolation auto the
// classifier chooses (auto_observe), not the DSCP.
template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::class_from_av(QpEntry& e) {
  if constexpr (requires { sched_.set_class(e.slot, std::uint8_t{0}); }) {
    if (e.class_pinned || e.addressing() == transport::QpAddressing::kPerWr || auto_on_) {
      return;
    }
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

}  // namespace uroce::engine
