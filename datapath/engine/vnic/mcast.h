// Vnic definitions (vnic.h): UD multicast, as rxe does it.
//
// A UD QP joins a group with ibv_attach_mcast (the group table:
// mcast_table.h). A sender addresses the group with an AH whose GID is the
// group's (its MAC is the group's mapped MAC, not a neighbour's) and DestQP
// 0xFFFFFF. Here, a RoCEv2 frame to a group MAC leaves the unicast path in
// on_frame (rx.h) and comes to mcast_rx: a UD packet to a group with QPs
// attached goes to each of them, which checks it as any UD packet (state,
// P_Key, Q_Key, a receive WQE: ud_qp.cpp) and completes it with its own
// QP number. Everything else to a group MAC is counted (rx_mcast_drop)
// and dropped, as is a group packet to a unicast address
// (rx_no_qp: no QP 0xFFFFFF).
//
// A device of several engine lcores has no multicast (the daemon refuses
// the attach): a group's packets arrive on whatever queue RSS picks.
#pragma once

#include "datapath/engine/vnic/entries.h"

namespace uroce::engine {

template <class PortIo, sched::TxScheduler Sched>
int Vnic<PortIo, Sched>::attach_mcast(ObjId id, const wire::Ipv6Addr& gid) {
  assert(owner_.here());
  QpEntry* e = find_qp(id);
  if (e == nullptr) return ENOENT;
  if (e->type() != transport::QpType::kUd) return EINVAL;
  return mcast_.attach(gid, e->qpn);
}

template <class PortIo, sched::TxScheduler Sched>
int Vnic<PortIo, Sched>::detach_mcast(ObjId id, const wire::Ipv6Addr& gid) {
  assert(owner_.here());
  QpEntry* e = find_qp(id);
  if (e == nullptr) return ENOENT;
  if (e->type() != transport::QpType::kUd) return EINVAL;
  return mcast_.detach(gid, e->qpn);
}

template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::mcast_rx(TimeNs now, std::size_t frame_bytes) {
  // The group: the destination address as a GID, which must be a group's
  // and map to the frame's MAC (a group MAC names 32 groups for IPv4; the
  // address picks one).
  wire::Ipv6Addr gid;
  wire::MacAddr mac;
  if (pkt_.ipv6) {
    gid = pkt_.ip6.dst();
    mac = gid.multicast_mac();
  } else {
    const wire::Ipv4Addr ip = pkt_.ip.dst();
    gid = port::Gid::ipv4_mapped(ip).ipv6();
    mac = ip.multicast_mac();
  }
  if (!is_mcast_gid(gid) || !(pkt_.eth.dst() == mac) || pkt_.bth.dest_qp() != wire::kMulticastQpn ||
      pkt_.info->transport != wire::Transport::kUd) {
    ++ctr_.rx_mcast_drop;
    return;
  }
  const std::span<const std::uint32_t> qpns = mcast_.members(gid);
  if (qpns.empty()) {
    ++ctr_.rx_mcast_drop;
    return;
  }
  ++ctr_.rx_mcast;
  for (const std::uint32_t qpn : qpns) {
    QpEntry* e = demux_.find(qpn);
    // destroy_qp leaves the groups as it leaves the demux.
    assert(e != nullptr && e->type() == transport::QpType::kUd);
    ++ctr_.rx_dispatched;
    ++e->ctr.rx_packets;
    e->ctr.rx_bytes += frame_bytes;
    if (io_.tx_room() == 0) ctr_.tx_flushed += io_.flush();
    qp_packet(*e, now);
    drain_qp_events(*e);
  }
}

}  // namespace uroce::engine
