// Vnic definitions (vnic.h): address handles (ah_table.h).
//
// A UD WQE, and a DCI's, names its AH by number; the engine looks the AH up
// when it takes the WQE from the ring (resolve_ah) and copies the address
// into the transport's WR, which needs the AH no more. So an AH must outlive
// every WQE posted against it that is still in a ring: an application may
// destroy an AH as soon as ibv_post_send returned (mlx5 and rxe's old ABI
// copy the address into the WQE at post; rdma-core's mckey destroys its AH
// right after posting unsignaled sends). destroy_ah therefore first takes
// what the AH's client's per-WR-addressed QPs hold in their rings; what a
// QP cannot take yet (its transport queue is full) makes the destroy EBUSY,
// and the caller tries again while the engine sends (session_queues.cpp).
// A QP in RESET, INIT or RTR is not waited for: its WQEs stay in the ring
// until a modify that this client's own thread, busy in the destroy, would
// serve; if they name the AH they complete in error (ah_missing).
#pragma once

#include "datapath/engine/vnic/entries.h"

namespace uroce::engine {

template <class PortIo, sched::TxScheduler Sched>
int Vnic<PortIo, Sched>::create_ah(const AhCreate& a) {
  assert(owner_.here());
  AhEntry e;
  e.id = a.id;
  e.client = a.client;
  e.pd = a.pd;
  e.dmac = a.dmac;
  e.dip = a.dip;
  e.dscp = a.dscp;
  e.ttl = a.ttl;
  e.ipv6 = a.ipv6;
  e.global_src = a.global_src;
  e.dip6 = a.dip6;
  return ahs_.insert(e);
}

template <class PortIo, sched::TxScheduler Sched>
int Vnic<PortIo, Sched>::destroy_ah(ObjId id, bool force, std::uint32_t* pending) {
  assert(owner_.here());
  const AhEntry* a = ahs_.find(id);
  if (a == nullptr) return ENOENT;
  if (!force) {
    const std::uint32_t left = take_posted_sends(a->client);
    if (pending != nullptr) *pending = left;
    if (left != 0) return EBUSY;
  }
  return ahs_.erase(id);
}

// Control path: its cost is one look at each live QP. sq_doorbell leaves
// live_ as it is (only create_qp and destroy_qp change it).
template <class PortIo, sched::TxScheduler Sched>
std::uint32_t Vnic<PortIo, Sched>::take_posted_sends(std::uint32_t client) {
  using transport::QpState;
  std::uint32_t left = 0;
  for (const std::uint32_t slot : live_) {
    QpEntry& e = qps_[slot];
    if (e.client != client || !e.has_sq || e.addressing() != transport::QpAddressing::kPerWr) {
      continue;
    }
    const QpState st = qp_state(e);
    if (st == QpState::kReset || st == QpState::kInit || st == QpState::kRtr) continue;
    bool more = false;
    while (e.sq.ready() != 0 && sq_doorbell(e, &more) != 0) {
    }
    left += e.sq.ready();
  }
  return left;
}

// The AH a UD WQE or a DCI's WQE names, checked against the QP's client and
// PD; its address fills the WR's UdDest (a DCI's target).
template <class PortIo, sched::TxScheduler Sched>
transport::WcStatus Vnic<PortIo, Sched>::resolve_ah(const QpEntry& e, std::uint32_t ah_num,
                                                    transport::UdDest* d) {
  const AhEntry* a = ahs_.find(ah_num);
  if (a == nullptr) {
    ++ctr_.ah_missing;
    return transport::WcStatus::kLocQpOpErr;
  }
  if (a->client != e.client || a->pd != e.pd) {
    ++ctr_.ah_foreign;
    return transport::WcStatus::kLocQpOpErr;
  }
  d->dmac = a->dmac;
  d->dip = a->dip;
  d->dscp = a->dscp;
  d->ttl = a->ttl;
  d->ipv6 = a->ipv6;
  d->global_src = a->global_src;
  d->dip6 = a->dip6;
  return transport::WcStatus::kSuccess;
}

}  // namespace uroce::engine
