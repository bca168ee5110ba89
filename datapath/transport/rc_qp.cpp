#include "datapath/transport/rc_qp.h"

#include <algorithm>
#include <cerrno>

namespace uroce::transport {

RcQp::RcQp(const RcQpConfig& cfg, MrTable& mrs)
    : core_(cfg, mrs),
      sq_(cfg.max_send_wr, send_area_sges(std::min(cfg.max_send_sge, kMaxSge),
                                          std::min(cfg.max_inline, kMaxInline))),
      req_(core_, sq_),
      comp_(core_, sq_),
      resp_(core_) {}

namespace {

bool rc_values_ok(std::uint32_t mask, const QpAttrValues& a, const RcQpConfig& cfg) {
  using namespace qp_attr;
  if ((mask & kTimeout) != 0 && a.timeout > 31) return false;
  if ((mask & kRetryCnt) != 0 && a.retry_cnt > 7) return false;
  if ((mask & kRnrRetry) != 0 && a.rnr_retry > 7) return false;
  if ((mask & kMinRnrTimer) != 0 && a.min_rnr_timer > 31) return false;
  if ((mask & kMaxQpRdAtomic) != 0 && a.max_rd_atomic > cfg.max_rd_atomic) {
    return false;
  }
  if ((mask & kMaxDestRdAtomic) != 0 && a.max_dest_rd_atomic > cfg.max_dest_rd_atomic) {
    return false;
  }
  return true;
}

}  // namespace

int RcQp::modify(std::uint32_t mask, const QpAttrValues& a) {
  using namespace qp_attr;
  const QpState cur = core_.state;
  if (int rc = check_modify_values(QpType::kRc, cur, mask, a); rc != 0) {
    return rc;
  }
  if (!rc_values_ok(mask, a, core_.cfg)) return EINVAL;
  QpAttrValues& v = core_.attr;
  if ((mask & kAccessFlags) != 0) v.qp_access_flags = a.qp_access_flags;
  if ((mask & kPkeyIndex) != 0) v.pkey_index = a.pkey_index;
  if ((mask & kPort) != 0) v.port_num = a.port_num;
  if ((mask & kAv) != 0) v.av = a.av;
  if ((mask & kPathMtu) != 0) v.path_mtu = a.path_mtu;
  if ((mask & kTimeout) != 0) v.timeout = a.timeout;
  if ((mask & kRetryCnt) != 0) {
    v.retry_cnt = a.retry_cnt;
    sq_.retry_left = a.retry_cnt;
  }
  if ((mask & kRnrRetry) != 0) {
    v.rnr_retry = a.rnr_retry;
    sq_.rnr_left = a.rnr_retry;
  }
  if ((mask & kRqPsn) != 0) v.rq_psn = a.rq_psn;
  if ((mask & kSqPsn) != 0) v.sq_psn = a.sq_psn;
  if ((mask & kMaxQpRdAtomic) != 0) v.max_rd_atomic = a.max_rd_atomic;
  if ((mask & kMinRnrTimer) != 0) v.min_rnr_timer = a.min_rnr_timer;
  if ((mask & kMaxDestRdAtomic) != 0) {
    v.max_dest_rd_atomic = a.max_dest_rd_atomic;
    resp_.set_rd_atomic_limit(a.max_dest_rd_atomic);
  }
  if ((mask & kDestQpn) != 0) v.dest_qp_num = a.dest_qp_num;
  // As rxe_modify_qp: with the AV (a GRH is implied for RoCE), after the
  // destination QPN of the same call is applied. Our AV has no flow label.
  if ((mask & kAv) != 0) {
    core_.src_port = rxe_connected_udp_src_port(0, core_.cfg.qpn, v.dest_qp_num);
  }

  const QpState next = (mask & kState) != 0 ? a.qp_state : cur;
  if (next == QpState::kReset) {
    sq_.reset(Psn{});
    // A new connection negotiates again (docs/lossy.md).
    if (core_.sr != nullptr) core_.sr->tx_on = core_.sr->tx_pending = false;
    resp_.rq().clear();
    resp_.reset(Psn{});
    core_.ev.reset();
  } else if (next == QpState::kRtr && cur == QpState::kInit) {
    resp_.reset(Psn(v.rq_psn));
    resp_.set_rd_atomic_limit(v.max_dest_rd_atomic);
  } else if (next == QpState::kRts && cur == QpState::kRtr) {
    sq_.reset(Psn(v.sq_psn));
    sq_.retry_left = v.retry_cnt;
    sq_.rnr_left = v.rnr_retry;
  } else if ((mask & kSqPsn) != 0 && sq_.q.empty()) {
    sq_.reset(Psn(v.sq_psn));
  }
  // A new send queue start forgets the gated message (rc_homa.h).
  if (core_.homa != nullptr && (next == QpState::kReset || sq_.q.empty())) core_.homa->reset();
  core_.state = next;
  return 0;
}

QpAttrValues RcQp::query() const {
  QpAttrValues v = core_.attr;
  v.qp_state = v.cur_qp_state = core_.state;
  v.sq_psn = sq_.psn_high.value();
  v.rq_psn = resp_.epsn().value();
  return v;
}

int RcQp::post_send(const SendWr& wr) {
  const QpState s = core_.state;
  if (s == QpState::kReset || s == QpState::kInit || s == QpState::kRtr) {
    return EINVAL;
  }
  switch (wr.opcode) {
    case WrOpcode::kSend:
    case WrOpcode::kSendImm:
    case WrOpcode::kSendInv:
    case WrOpcode::kRdmaWrite:
    case WrOpcode::kRdmaWriteImm:
    case WrOpcode::kRdmaRead:
    case WrOpcode::kCmpSwap:
    case WrOpcode::kFetchAdd:
    case WrOpcode::kLocalInv:
    case WrOpcode::kBindMw: break;
    default: return EINVAL;
  }
  if (wr.num_sge > core_.cfg.max_send_sge || wr.num_sge > kMaxSge) return EINVAL;
  const bool inl = (wr.flags & send_flag::kInline) != 0;
  if (inl && (is_rd_atomic(wr.opcode) || wr.inline_len > core_.cfg.max_inline ||
              wr.inline_len > kMaxInline)) {
    return EINVAL;
  }
  if (wr.opcode == WrOpcode::kCmpSwap || wr.opcode == WrOpcode::kFetchAdd) {
    std::uint64_t n = 0;
    for (std::uint32_t i = 0; i < wr.num_sge; ++i) n += wr.sge[i].length;
    if (n != 8) return EINVAL;
  }
  if (wr.length() > kRcMaxMessage) return EINVAL;
  if (wr.opcode == WrOpcode::kRdmaRead && wqe_packets(wr, core_.mtu()) > (1u << 22)) {
    return EINVAL;
  }
  // In place: copying a whole SendWqe (~1 KiB, mostly unused SGE and
  // inline space) per post was ~10% of the transport benchmark.
  SendWqe* w = sq_.q.push_slot();
  if (w == nullptr) return ENOMEM;
  assign_used(&w->wr, wr);
  w->first_psn = Psn{};
  w->npkts = 0;
  w->started = false;
  w->err = WcStatus::kSuccess;
  return 0;
}

int RcQp::post_recv(const RecvWr& wr) {
  if (core_.state == QpState::kReset) return EINVAL;
  // With an SRQ, receives are posted to the SRQ (rxe: EINVAL).
  if (core_.cfg.srq != nullptr) return EINVAL;
  if (wr.num_sge > core_.cfg.max_recv_sge || wr.num_sge > kMaxSge) return EINVAL;
  QueuedRecvWr* slot = resp_.rq().push_slot();
  if (slot == nullptr) return ENOMEM;
  assign_used(slot, wr);
  return 0;
}

bool RcQp::has_output() const {
  if (resp_.has_output()) return true;
  // ERR: the flush (run by pump_tx) has WRs to complete, a parked
  // completion to post, or LAST_WQE_REACHED to raise. Without this an
  // engine that drives only QPs with output never flushes a QP moved to ERR
  // by modify() when the peer is silent (rxe schedules its flush on the
  // state change).
  if (core_.state == QpState::kErr) {
    return !sq_.q.empty() || !resp_.rq().empty() || core_.ev.parked(CqRole::kSend) ||
           core_.ev.parked(CqRole::kRecv) ||
           (core_.cfg.srq != nullptr && !core_.ev.last_wqe_raised());
  }
  const bool sqd = core_.state == QpState::kSqd;
  if ((core_.state != QpState::kRts && !sqd) || sq_.rnr_wait) return false;
  // Selective repeat: a PSN deemed lost goes again.
  if (core_.sr != nullptr && core_.sr->tx_on) [[unlikely]] {
    Psn lost;
    if (core_.sr->tx.next_lost(&lost)) return true;
  }
  const std::uint32_t idx = sq_.cursor_behind_head() ? sq_.q.head() : sq_.req_idx;
  // SQD starts no new WQE but finishes (and retransmits) started ones.
  if (idx == (sqd ? sq_.sent_idx : sq_.q.tail())) return false;
  const bool fresh = idx == sq_.sent_idx;
  // Selective repeat starts once the WQEs started before have completed
  // (rc_sr.h): until then an ACK (on_packet) is what unblocks a new one.
  if (fresh && core_.sr != nullptr && core_.sr->tx_pending && sq_.q.head() != sq_.sent_idx) {
    return false;
  }
  const bool local_inv = fresh && is_local_op(sq_.q.at(idx).wr.opcode);
  // A LOCAL_INV waiting for earlier WQEs: their completions (on_packet,
  // on_timer) make it ready, not a pump.
  if (local_inv && idx != sq_.q.head()) return false;
  // The next packet takes a new PSN and the window is full: only an ACK
  // (on_packet) or a timeout (on_timer) can unblock it, and the engine asks
  // has_output() after both, so a pump now would send nothing (the
  // requester counts wait_window and stops). Without this a QP with a full
  // window stays active and is served every scheduler round for nothing.
  // A LOCAL_INV takes no PSN; a packet behind the head cursor (go-back-N
  // about to skip acknowledged WQEs) is left to the requester.
  if (!local_inv && idx == sq_.req_idx) {
    const Psn next = fresh ? sq_.psn_high : sq_.q.at(idx).first_psn + sq_.req_pkt;
    if (next == sq_.psn_high && Psn::forward(sq_.comp_psn, next) >= core_.cfg.tuning.window_psns) {
      return false;
    }
    // The next part of an SR READ must fit in the cap as a whole
    // (rc_requester.h).
    if (core_.sr != nullptr && core_.sr->tx_on && next == sq_.psn_high) [[unlikely]] {
      const SendWqe& w = sq_.q.at(idx);
      if (w.wr.opcode == WrOpcode::kRdmaRead) {
        const std::uint32_t win =
            sr_window(core_.cfg.tuning.window_psns, core_.cfg.tuning.sr_cap_psns, core_.sr->cap);
        const std::uint32_t at = fresh ? 0 : sq_.req_pkt;
        const std::uint32_t n = fresh ? wqe_packets(w.wr, core_.mtu()) : w.npkts;
        if (Psn::forward(sq_.comp_psn, next) + sr_read_part_end(at, n, win) - at > win) {
          return false;
        }
      }
    }
    // The next new packet waits for the receiver's grant (rc_homa.h): a
    // GRANT (on the engine's RX path) or the gate's timeout (on_timer)
    // unblocks it, as an ACK does a full window.
    if (core_.homa != nullptr && !fresh && next == sq_.psn_high) {
      const SendWqe& w = sq_.q.at(idx);
      if (!is_rd_atomic(w.wr.opcode) &&
          core_.homa->holds(w.first_psn, std::uint64_t{sq_.req_pkt} * core_.mtu())) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace uroce::transport
