#include "datapath/transport/rc_requester.h"

namespace uroce::transport {

std::uint8_t rc_request_opcode(WrOpcode op, std::uint32_t idx, std::uint32_t npkts) {
  namespace o = wire::op;
  const bool first = idx == 0;
  const bool last = idx + 1 == npkts;
  switch (op) {
    case WrOpcode::kRdmaWrite:
    case WrOpcode::kRdmaWriteImm: {
      const bool imm = op == WrOpcode::kRdmaWriteImm;
      if (first && last) return imm ? o::kRcWriteOnlyImm : o::kRcWriteOnly;
      if (first) return o::kRcWriteFirst;
      if (last) return imm ? o::kRcWriteLastImm : o::kRcWriteLast;
      return o::kRcWriteMiddle;
    }
    case WrOpcode::kRdmaRead: return o::kRcReadRequest;
    case WrOpcode::kCmpSwap: return o::kRcCompareSwap;
    case WrOpcode::kFetchAdd: return o::kRcFetchAdd;
    default: {
      if (first && last) {
        if (op == WrOpcode::kSendImm) return o::kRcSendOnlyImm;
        if (op == WrOpcode::kSendInv) return o::kRcSendOnlyInv;
        return o::kRcSendOnly;
      }
      if (first) return o::kRcSendFirst;
      if (last) {
        if (op == WrOpcode::kSendImm) return o::kRcSendLastImm;
        if (op == WrOpcode::kSendInv) return o::kRcSendLastInv;
        return o::kRcSendLast;
      }
      return o::kRcSendMiddle;
    }
  }
}

namespace {}  // namespace

ReqStep RcRequester::local_op(SendWqe& w, bool fresh) {
  ++sq_.req_idx;
  sq_.req_pkt = 0;
  if (!fresh) return ReqStep::kLocal;
  w.started = true;
  w.first_psn = sq_.psn_high;
  w.npkts = 0;
  ++sq_.sent_idx;
  if (w.wr.opcode == WrOpcode::kBindMw) {
    std::uint32_t key = 0;
    if (c_.mrs.bind_mw(mw_bind_of(w.wr), c_.cfg.pd, c_.cfg.qpn, &key) != MrError::kOk) {
      ++c_.ctr.mw_bind_errors;
      w.err = WcStatus::kMwBindErr;
      c_.state = QpState::kErr;
      return ReqStep::kFailed;
    }
    ++c_.ctr.mw_binds;
    return ReqStep::kLocal;
  }
  if (c_.mrs.invalidate(w.wr.imm_or_inv, c_.cfg.pd) != MrError::kOk) {
    ++c_.ctr.local_inv_errors;
    w.err = WcStatus::kLocQpOpErr;
    c_.state = QpState::kErr;
    return ReqStep::kFailed;
  }
  ++c_.ctr.local_invalidates;
  return ReqStep::kLocal;
}

}  // namespace uroce::transport
