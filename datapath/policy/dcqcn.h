// DCQCN on a device's connected QPs (RC, UC), when VnicConfig::dcqcn.enabled:
// a QP extension (qp_extension.h). The algorithms are sched/dcqcn.h's; this
// file is where the engine meets them:
//   - TX (on_modify): an enabled device's paths get ECT(0), so the
//     transports mark their data packets ECN-capable (their ACKs are not:
//     rc_responder.h).
//   - Notification point (on_rx, before the transport sees the packet): a
//     CE-marked packet for a connected QP asks its CnpLimiter; an admitted
//     CNP (BTH opcode 0x81, wire/cnp.h) goes to the QP's peer at once, ahead
//     of this iteration's pump, at DSCP cnp_dscp and not ECN-capable.
//   - Reaction point (on_rx): a CNP for a connected QP is consumed here;
//     DcqcnRp cuts the QP's rate and the pacer (sched/pacer.h, set_cc) paces
//     the QP at the lower of that and its verbs rate limit.
//   - Recovery (on_pace, in the paced pump): each turn of a limited QP first
//     runs DcqcnRp's timers due by now, and charges what the turn sent to
//     its byte counter; a limited QP that waits in the wheel is woken no
//     later than DcqcnRp's next timer (wake). Back at line rate the QP
//     leaves the pacer (unless it has a verbs limit).
// A device with DCQCN off pays one test of the Vnic's hook mask per
// received RoCEv2 frame, and its QPs none of this state. UD and DC QPs take
// no part (they have no single peer to notify or rate to cut: connected());
// a CNP for one goes to the transport, which drops it as any unexpected
// opcode. Counters: DcqcnCounters below (the device's status shows them
// among its counters, under the same names); per QP, QpStatus::cc.
//
// State: one Qp per QP slot, allocated at construction when enabled; the
// pacer reserves an entry per slot (on_start), so nothing here allocates
// afterwards. Engine thread only.
#pragma once

#include <cassert>
#include <cstdint>
#include <vector>

#include "datapath/base/counter_fields.h"
#include "datapath/policy/qp_extension.h"
#include "datapath/transport/qp_common.h"
#include "datapath/wire/builder.h"
#include "datapath/wire/cnp.h"
#include "datapath/wire/eth.h"
#include "datapath/wire/ipv4.h"
#include "datapath/wire/parser.h"
#include "sched/dcqcn.h"
#include "sched/pacer.h"

namespace uroce::policy {

// The device's DCQCN counters (all 0 with it off).
struct DcqcnCounters {
  std::uint64_t rx_ce = 0;             // RoCEv2 frames to an RC/UC QP marked CE
  std::uint64_t tx_cnp = 0;            // CNPs sent for them
  std::uint64_t cnp_suppressed = 0;    // CE frames within the QP's CNP interval
  std::uint64_t tx_cnp_no_buffer = 0;  // CNPs not sent: no TX buffer
  std::uint64_t rx_cnp = 0;            // CNPs received for an RC/UC QP
  std::uint64_t cc_no_entry = 0;       // rate changes the pacer had no entry for
};

inline constexpr counters::FieldList<DcqcnCounters, 6> kDcqcnCounterFields{{
    {"rx_ce", &DcqcnCounters::rx_ce, "RoCEv2 frames to an RC/UC QP marked CE"},
    {"tx_cnp", &DcqcnCounters::tx_cnp, "CNPs sent for them"},
    {"cnp_suppressed", &DcqcnCounters::cnp_suppressed, "CE frames within the QP's CNP interval"},
    {"tx_cnp_no_buffer", &DcqcnCounters::tx_cnp_no_buffer, "CNPs not sent: no TX buffer"},
    {"rx_cnp", &DcqcnCounters::rx_cnp, "CNPs received for an RC/UC QP"},
    {"cc_no_entry", &DcqcnCounters::cc_no_entry, "rate changes the pacer had no entry for"},
}};
static_assert(counters::covers(kDcqcnCounterFields));
constexpr const auto& counter_fields(const DcqcnCounters&) { return kDcqcnCounterFields; }

class Dcqcn : public NoHooks {
 public:
  static constexpr std::uint32_t kHooks =
      hook::kRx | hook::kPace | hook::kModify | hook::kSlots | hook::kStatus;

  Dcqcn(const engine::VnicConfig& c, std::uint32_t slots) : cfg_(c.dcqcn), on_(c.dcqcn.enabled) {
    if (on_) qps_.assign(slots, Qp(cfg_));
  }
  bool enabled() const { return on_; }
  using Counters = DcqcnCounters;
  const Counters& counters() const { return ctr_; }

  // DCQCN runs on connected QPs only: its CNPs go to the one peer of the
  // QP's address vector, which UD QPs and DC QPs do not have.
  static bool connected(transport::QpType t) {
    return t == transport::QpType::kRc || t == transport::QpType::kUc;
  }

  template <class H>
  void on_start(H& h) {
    h.pacer().reserve(static_cast<std::uint32_t>(qps_.size()));
  }

  // A new QP starts at line rate with no CNP history.
  template <class H, class Q>
  void on_created(H&, Q& e) {
    qps_[e.slot] = Qp(cfg_);
  }

  // A device that runs DCQCN makes its connected paths ECN-capable.
  template <class H, class Q>
  void on_modify(H&, Q& e, engine::QpModify* m) {
    if ((m->mask & transport::qp_attr::kAv) != 0 && !transport::is_dc(H::type(e))) {
      m->values.av.ecn = wire::kEcnEct0;
    }
  }

  // True when the packet was a CNP and is consumed.
  template <class H, class Q>
  [[gnu::noinline]] bool on_rx(H& h, Q& e, TimeNs now) {
    if (!connected(H::type(e))) return false;
    Qp& c = qps_[e.slot];
    const wire::ParsedPacket& pkt = h.packet();
    if (pkt.bth.opcode() == wire::kCnpOpcode) {
      ++ctr_.rx_cnp;
      c.rp.on_cnp(now);
      apply(h, e, now);
      return true;
    }
    if (pkt.ecn() == wire::kEcnCe) {
      ++ctr_.rx_ce;
      if (c.np.on_ce(now)) {
        send_cnp(h, e);
      } else {
        ++ctr_.cnp_suppressed;
      }
    }
    return false;
  }

  // DCQCN's timers due by `now`, and `bytes` the QP just sent (0 before a
  // turn).
  template <class H, class Q>
  void on_pace(H& h, Q& e, std::uint64_t bytes, TimeNs now) {
    if (!connected(H::type(e))) return;
    Qp& c = qps_[e.slot];
    if (!c.rp.limited()) return;
    c.rp.on_sent(bytes, now);
    apply(h, e, now);
  }

  // When a limited QP waiting in the wheel must be looked at again:
  // DcqcnRp's next timer (its rate may rise then), or never.
  template <class H, class Q>
  TimeNs wake(const H&, const Q& e) const {
    if (!connected(H::type(e)) || !qps_[e.slot].rp.limited()) return ~TimeNs{0};
    return qps_[e.slot].rp.next_deadline();
  }

  template <class H, class Q>
  void status(const H&, const Q& e, engine::QpStatus* s) const {
    if (!connected(H::type(e))) return;
    const Qp& c = qps_[e.slot];
    s->dcqcn = true;
    s->cc.rate_bps = c.rp.rate_bps();
    s->cc.target_bps = c.rp.target_bps();
    s->cc.alpha = c.rp.alpha();
    s->cc.limited = c.rp.limited();
    s->cc.rp = c.rp.counters();
    s->cc.ce_packets = c.np.ce_packets();
    s->cc.cnps_sent = c.np.cnps();
    s->cc.cnps_suppressed = c.np.suppressed();
  }

 private:
  struct Qp {
    explicit Qp(const sched::DcqcnSettings& s) : rp(s.rp), np(s.cnp_interval_ns) {}
    sched::DcqcnRp rp;
    sched::CnpLimiter np;
    std::uint64_t applied_bps = 0;  // the rate handed to the pacer (0: none)
  };

  // A CNP to the QP's peer, along the QP's own path.
  template <class H, class Q>
  void send_cnp(H& h, Q& e) {
    wire::PacketSpec s = h.to_peer(e);
    s.dscp = cfg_.cnp_dscp;
    s.udp_src = transport::rxe_udp_src_port(e.qpn);
    s.opcode = wire::kCnpOpcode;
    s.becn = true;
    s.psn = 0;
    if (!h.originate(e, s)) {
      ++ctr_.tx_cnp_no_buffer;
      return;
    }
    ++ctr_.tx_cnp;
  }

  // Hands DcqcnRp's current rate to the pacer (none once it is back at line
  // rate).
  template <class H, class Q>
  void apply(H& h, Q& e, TimeNs now) {
    Qp& c = qps_[e.slot];
    const std::uint64_t r = c.rp.limited() ? c.rp.rate_bps() : 0;
    if (r == c.applied_bps) return;
    const std::uint32_t typical = h.config().eth_mtu + wire::EthHdr::kSize;
    if (!h.pacer().set_cc(e.slot, r, typical, now,
                          [&](sched::FlowId f) { h.scheduler().activate(f); })) {
      ++ctr_.cc_no_entry;
      return;
    }
    c.applied_bps = r;
    h.tx_changed();
  }

  sched::DcqcnSettings cfg_;
  bool on_;
  std::vector<Qp> qps_;
  DcqcnCounters ctr_{};
};

}  // namespace uroce::policy
