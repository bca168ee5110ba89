// Vnic definitions (vnic.h): DC QPs (docs/dc.md) in the engine.
//
// A DCI is driven as an RC QP is: its WQEs come from its SQ ring with the
// AH each names resolved as UD resolves its AH (doorbells.h), it arms one
// timer (its lanes' earliest deadline, or a stream's idle disconnect), the
// pump serves it, and its responses arrive from RX. A DCT has no SQ, no
// timer and no send CQ: its requests find their responder context in the
// device's DcTargetPool (made with the device's first DCT, kept until the
// device goes, so that its records and floors outlive every DCT), its
// receives come from its SRQ, and the pump serves the contexts that still
// owe responses.
//
// DC packets (the DC opcodes) reach only a DC QP of their kind: a request
// (DCETH) the DCT whose number is BTH DestQP, a response (DCAETH) the DCI
// whose QPN it is. Anything else (no QP, an RC/UC/UD QP, a DC QP of the
// other kind) is counted as rx_dc_no_target and dropped before any QP or
// the DCQCN/Homa hooks see it. Neither DCQCN nor the Homa-like scheduler
// acts on DC QPs: both act on one connection's peer, and a DC QP has many.
#pragma once

#include <algorithm>

#include "datapath/engine/vnic/entries.h"

namespace uroce::engine {

template <class PortIo, sched::TxScheduler Sched>
int Vnic<PortIo, Sched>::make_dc_qp(const QpCreate& c, const transport::RcQpConfig& rc,
                                    QpEntry& e) {
  if (c.type == transport::QpType::kDci) {
    if (!transport::dci_streams_valid(c.dci_log_streams, c.dci_log_errored)) return EINVAL;
    transport::DciQpConfig d;
    d.rc = rc;
    d.log_streams = c.dci_log_streams;
    d.log_errored = c.dci_log_errored;
    d.idle_disconnect_ns = TimeNs{cfg_.dc_idle_disconnect_us} * kNsPerUs;
    // Selective repeat with the device's lossy key (transport/dc_sr.h).
    d.sr = cfg_.lossy;
    d.sr_eth_mtu = cfg_.eth_mtu;
    d.sr_cap = static_cast<std::uint16_t>(
        std::clamp<std::uint32_t>(cfg_.lossy_cap, 1, transport::kSrWindow));
    d.spray = dc_spray_config();
    e.qp = std::make_unique<transport::DciQp>(d, mrs_, dc_clock_);
    return 0;
  }
  if (dc_pool_ == nullptr) {
    const transport::DcTargetLimits lim = dc_target_limits(cfg_);
    // The table's own bounds (dc_target.h); uroced's keys stay inside them.
    if (lim.contexts == 0 || lim.contexts >= transport::DcTargetTable::kNone / 4 ||
        lim.records_log2 > 30) {
      return EINVAL;
    }
    dc_pool_ = std::make_unique<transport::DcTargetPool>(lim, mrs_, rc.local, cfg_.lossy,
                                                         dc_spray_config());
  }
  e.qp = std::make_unique<transport::DctQp>(rc, c.dct_key, *dc_pool_);
  return 0;
}

// The device's spray keys for its DC connections in selective repeat
// (transport/dc_spray.h): paths that keep the receiver's RX queue, as an RC
// connection's (policy/lossy.h).
template <class PortIo, sched::TxScheduler Sched>
transport::DcSprayConfig Vnic<PortIo, Sched>::dc_spray_config() const {
  transport::DcSprayConfig s;
  s.paths = cfg_.spray_paths;
  s.ecn = cfg_.spray_ecn;
  s.path_port = &port::path_src_port;
  return s;
}

template <class PortIo, sched::TxScheduler Sched>
wire::PathMtu Vnic<PortIo, Sched>::dc_mtu_clamp(wire::PathMtu m) const {
  // VnicConfig keeps eth_mtu at least kMinRoceEthMtu, below kMinDcEthMtu:
  // there 256 is the least wrong value (the DC QP's largest packets do not
  // fit, as no DC packet of any size would).
  const wire::PathMtu cap =
      wire::dc_path_mtu_for_eth_mtu(cfg_.eth_mtu).value_or(wire::PathMtu::k256);
  return static_cast<std::uint8_t>(m) > static_cast<std::uint8_t>(cap) ? cap : m;
}

// A DC packet (before the demux, from on_frame): to the DC QP of its kind.
template <class PortIo, sched::TxScheduler Sched>
[[gnu::noinline]] void Vnic<PortIo, Sched>::dc_rx(TimeNs now, std::size_t frame_bytes) {
  QpEntry* e = demux_.find(pkt_.bth.dest_qp());
  const bool request = pkt_.has(wire::ExtHdr::kDcEth);
  if (e == nullptr || (request ? detail::qp_if<transport::DctQp>(*e) == nullptr
                               : detail::qp_if<transport::DciQp>(*e) == nullptr)) {
    ++ctr_.rx_dc_no_target;
    return;
  }
  assert(e->used && e->qpn == pkt_.bth.dest_qp());
  ++ctr_.rx_dispatched;
  ++e->ctr.rx_packets;
  e->ctr.rx_bytes += frame_bytes;
  if (io_.tx_room() == 0) ctr_.tx_flushed += io_.flush();
  qp_packet(*e, now);
  drain_qp_events(*e);
}

template <class PortIo, sched::TxScheduler Sched>
transport::RcSrCounters Vnic<PortIo, Sched>::dc_sr_counters() const {
  assert(owner_.here());
  transport::RcSrCounters sum = dc_sr_gone_;
  for (const std::uint32_t slot : live_) {
    visit(qps_[slot], [&](const auto& q) {
      if constexpr (requires { q.sr_counters(); }) counters::add(sum, q.sr_counters());
    });
  }
  return sum;
}

template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::dc_status(const transport::DctQp& d, QpStatus* s) {
  s->rc = d.rc_counters();
  s->sr = d.sr_counters();
  s->dct = d.counters();
  s->dct_contexts = d.contexts();
}

template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::dc_status(const transport::DciQp& d, QpStatus* s) {
  s->rc = d.rc_counters();
  s->sr = d.sr_counters();
  s->dci = d.counters();
  s->dci_streams.reserve(d.streams());
  for (std::uint32_t i = 0; i < d.streams(); ++i) {
    const transport::DcStream& st = d.dc_lane(i).stream;
    QpStatus::DcStream x;
    x.bound = st.bound();
    x.conn = st.conn();
    x.syn = st.bound() && st.syn();
    x.dctn = st.dest().dctn;
    x.send_queue = d.lane(i).send_queue_depth();
    x.ctr = st.counters();
    s->dci_streams.push_back(x);
  }
}

}  // namespace uroce::engine
