// Vnic definitions (vnic.h): the stage stamps' hooks (stage_stamps.h), which
// the phases call only when the device keeps stamps (stages_ set).
#pragma once

#include "datapath/engine/vnic/entries.h"

namespace uroce::engine {

// A send WQE about to be posted is tracked when it is a signalled RC WQE and
// the QP's send queue is empty: the QP's next packet is then its own.
template <class PortIo, sched::TxScheduler Sched>
bool Vnic<PortIo, Sched>::stage_trackable(QpEntry& e) const {
  const transport::RcQp* q = detail::qp_if<transport::RcQp>(e);
  if (q == nullptr || q->send_queue_depth() != 0) return false;
  return q->sq_sig_all() || (swr_.flags & transport::send_flag::kSignaled) != 0;
}

template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::stage_post(QpEntry& e, bool trackable) {
  stages_->on_post(e.slot, swr_.wr_id, trackable, stage_now());
}

template <class PortIo, sched::TxScheduler Sched>
void Vnic<PortIo, Sched>::stage_cqe(QpEntry& e, const transport::Cqe& c, bool send) {
  stages_->on_cqe(e.slot, send, c.wr_id, rx_stamp_, stage_now());
}

template <class PortIo, sched::TxScheduler Sched>
StageReport Vnic<PortIo, Sched>::stage_report() const {
  assert(owner_.here());
  return stages_ != nullptr ? stages_->report() : StageReport{};
}

}  // namespace uroce::engine
