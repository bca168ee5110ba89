#include "datapath/transport/rc_send_queue.h"

namespace uroce::transport {

WcOpcode wc_opcode_for(WrOpcode op) {
  switch (op) {
    case WrOpcode::kRdmaWrite:
    case WrOpcode::kRdmaWriteImm: return WcOpcode::kRdmaWrite;
    case WrOpcode::kRdmaRead: return WcOpcode::kRdmaRead;
    case WrOpcode::kCmpSwap: return WcOpcode::kCompSwap;
    case WrOpcode::kFetchAdd: return WcOpcode::kFetchAdd;
    case WrOpcode::kLocalInv: return WcOpcode::kLocalInv;
    case WrOpcode::kBindMw: return WcOpcode::kBindMw;
    case WrOpcode::kSend:
    case WrOpcode::kSendImm:
    case WrOpcode::kSendInv: return WcOpcode::kSend;
  }
  return WcOpcode::kSend;
}

void RcSendQueue::reset(Psn psn) {
  q.clear();
  req_idx = sent_idx = q.head();
  req_pkt = 0;
  comp_psn = psn_high = psn;
  rd_atomic_out = 0;
  noack_pkts = 0;
  rto_deadline = 0;
  rnr_wait = false;
  rnr_deadline = 0;
  rewind_pending = false;
  sr_acked_valid = false;
}

SendWqe* RcSendQueue::find(Psn p) {
  for (std::uint32_t i = q.head(); i != sent_idx; ++i) {
    SendWqe& w = q.at(i);
    if (w.contains(p)) return &w;
  }
  return nullptr;
}

void RcSendQueue::rewind(Psn p) {
  for (std::uint32_t i = q.head(); i != sent_idx; ++i) {
    const SendWqe& w = q.at(i);
    if (w.contains(p)) {
      req_idx = i;
      req_pkt = Psn::forward(w.first_psn, p);
      return;
    }
  }
  // p == psn_high: the next packet is the first of the next fresh WQE.
  req_idx = sent_idx;
  req_pkt = 0;
}

void RcSendQueue::skip_acknowledged() {
  if (cursor_behind_head()) {
    req_idx = q.head();
    req_pkt = 0;
  }
  if (req_idx == sent_idx) return;
  const SendWqe& w = q.at(req_idx);
  const Psn next = w.first_psn + req_pkt;
  if (next.before(comp_psn)) {
    const std::uint32_t d = Psn::forward(w.first_psn, comp_psn);
    if (d < w.npkts) req_pkt = d;
  }
}

}  // namespace uroce::transport
