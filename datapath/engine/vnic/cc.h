// Vnic definitions (vnic.h): DCQCN on the device's connected QPs (RC, UC),
// when VnicConfig::dcqcn.enabled. The policies are sched/dcqcn.h's; this
// file is where the engine meets them:
//   - TX: modify_qp gives an enabled device's paths ECT(0), so the
//     transports mark their data packets ECN-capable (their ACKs are not:
//     rc_responder.h).
//   - Notification point (RX phase, before the transport sees the packet):
//     a CE-marked packet for a connected QP asks its CnpLimiter; an admitted
//     CNP (BTH opcode 0x81, wire/cnp.h) goes to the QP's peer at once, ahead
//     of this iteration's pump, at DSCP cnp_dscp and not ECN-capable.
//   - Reaction point (RX phase): a CNP for a connected QP is consumed here;
//     DcqcnRp cuts the QP's rate and the pacer (sched/pacer.h, set_cc) paces
//     the QP at the lower of that and its verbs rate limit.
//   - Recovery (pump, serve_paced in tx.h): each turn of a limited QP first
//     runs DcqcnRp's timers due by now, and charges what the turn sent to
//     its byte counter; a limited QP that waits in the wheel is woken no
//     later than DcqcnRp's next timer. Back at line rate the QP leaves the
//     pacer (unless it has a verbs limit).
// A device with DCQCN off pays one test of cc_on_ per received RoCEv2
// frame, and its QPs none of this state. UD and DC QPs take no part (they
// have no single peer to notify or rate to cut: detail::cc_type); a CNP for
// one goes to the transport, which drops it as any unexpected opcode.
//
// State: one CcQp per QP slot, allocated at construction when enabled; the
// pacer reserves an entry per slot, so nothing here allocates.
// Engine thread only.
#pragma once

#include "datapath/engine/vnic/entries.h"
#include "datapath/transport/qp_common.h"
#include "datapath/wire/builder.h"
#include "datapath/wire/cnp.h"

namespace uroce::engine {

template <class PortIo, sched::TxScheduler Sched>
struct Vnic<PortIo, Sched>::CcQp {
  explicit CcQp(const sched::DcqcnSettings& s) : rp(s.rp), np(s.cnp_interval_ns) {}
  sched::DcqcnRp rp;
  sched::CnpLimiter np;
  std::uint64_t applied_bps = 0;  // the rate handed to the pacer (0: none)
};

template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::cc_init() {
  cc_on_ = cfg_.dcqcn.enabled;
  if (!cc_on_) return;
  cc_.assign(qps_.size(), CcQp(cfg_.dcqcn));
  pacer_.reserve(static_cast<std::uint32_t>(qps_.size()));
}

// A new QP in `slot` starts at line rate with no CNP history.
template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::cc_reset(std::uint32_t slot) {
  if (cc_on_) cc_[slot] = CcQp(cfg_.dcqcn);
}

// Returns true when the packet was a CNP and is consumed.
template <class PortIo, sched::TxScheduler Sched>
[[gnu::noinline]] bool Vnic<PortIo, Sched>::cc_rx(QpEntry& e, TimeNs now) {
  if (!detail::cc_type(e)) return false;
  CcQp& c = cc_[e.slot];
  if (pkt_.bth.opcode() == wire::kCnpOpcode) {
    ++ctr_.rx_cnp;
    c.rp.on_cnp(now);
    cc_apply(e, now);
    return true;
  }
  if (pkt_.ecn() == wire::kEcnCe) {
    ++ctr_.rx_ce;
    if (c.np.on_ce(now)) {
      send_cnp(e);
    } else {
      ++ctr_.cnp_suppressed;
    }
  }
  return false;
}

// A CNP to the QP's peer, along the QP's own path.
template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::send_cnp(QpEntry& e) {
  const transport::PathAddr& a = e.attr.av;
  wire::PacketSpec s;
  s.eth_src = cfg_.mac;
  s.eth_dst = a.dmac;
  s.ip_src = cfg_.ip;
  s.ip_dst = a.dip;
  if (a.ipv6) s.ip6 = &a.route6;
  s.dscp = cfg_.dcqcn.cnp_dscp;
  s.ecn = wire::kEcnNotEct;
  s.ttl = a.ttl;
  s.udp_src = transport::rxe_udp_src_port(e.qpn);
  s.opcode = wire::kCnpOpcode;
  s.becn = true;
  s.dest_qp = e.attr.dest_qp_num;
  s.psn = 0;
  const std::size_t len = wire::roce_frame_size(s);
  if (io_.tx_room() == 0) ctr_.tx_flushed += io_.flush();
  QpTx tx{this, e.ctr};
  const std::span<std::uint8_t> b = tx.tx_alloc(len);
  if (b.size() < len) {
    ++ctr_.tx_cnp_no_buffer;
    return;
  }
  const int n = wire::build_roce(s, b);
  assert(n > 0);
  tx.tx_commit(static_cast<std::size_t>(n));
  ++ctr_.tx_cnp;
}

// Hands DcqcnRp's current rate to the pacer (none once it is back at line
// rate).
template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::cc_apply(QpEntry& e, TimeNs now) {
  CcQp& c = cc_[e.slot];
  const std::uint64_t r = c.rp.limited() ? c.rp.rate_bps() : 0;
  if (r == c.applied_bps) return;
  const std::uint32_t typical = cfg_.eth_mtu + wire::EthHdr::kSize;
  if (!pacer_.set_cc(e.slot, r, typical, now, [&](sched::FlowId f) { sched_.activate(f); })) {
    ++ctr_.cc_no_entry;
    return;
  }
  c.applied_bps = r;
  update_tx_plain();
}

// DCQCN's timers due by `now`, and `bytes` the QP just sent (0 before a
// turn).
template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::cc_progress(QpEntry& e, std::uint64_t bytes, TimeNs now) {
  if (!detail::cc_type(e)) return;
  CcQp& c = cc_[e.slot];
  if (!c.rp.limited()) return;
  c.rp.on_sent(bytes, now);
  cc_apply(e, now);
}

// When a limited QP waiting in the wheel must be looked at again: DcqcnRp's
// next timer (its rate may rise then), or never.
template <class PortIo, sched::TxScheduler Sched>
TimeNs Vnic<PortIo, Sched>::cc_wake(const QpEntry& e) const {
  if (!cc_on_ || !detail::cc_type(e) || !cc_[e.slot].rp.limited()) {
    return ~TimeNs{0};
  }
  return cc_[e.slot].rp.next_deadline();
}

template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::cc_status(const QpEntry& e, QpStatus* s) const {
  if (!cc_on_ || !detail::cc_type(e)) return;
  const CcQp& c = cc_[e.slot];
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

}  // namespace uroce::engine
