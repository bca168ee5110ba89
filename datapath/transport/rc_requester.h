// RC requester: turns send WQEs into request packets (IBTA Vol1 9.7.1-9.7.4,
// 9.2 opcode sequences; behaviour as Linux rxe_req.c).
//
// Per packet: PSN from the WQE's range; segmentation by the path MTU
// (FIRST / MIDDLE / LAST, or ONLY); RETH on the first (or only) WRITE packet
// and on READ requests; AtomicETH on atomics; ImmDt on the last packet of a
// *_WITH_IMM; IETH on the last packet of SEND_WITH_INV; SE on the last packet
// of a SEND or WRITE_WITH_IMM whose WR is solicited; AckReq on the last
// packet of every message and on every RcTuning::ack_req_every-th packet,
// or every half window when the window is smaller.
// A READ resent from the middle (go-back-N into a partly answered READ) is a
// new READ request for the remaining bytes at the first missing PSN.
//
// With the Homa-like scheduler attached (rc_homa.h), a new SEND/WRITE data
// packet also waits for the receiver's grant, and each data packet takes
// the DSCP of its network priority.
//
// Selective repeat (rc_sr.h, docs/lossy.md "Requester"), once the peer
// answered the handshake: a WQE started from then on sends SR opcodes, its
// SEND/WRITE packets with SRETH (its RSN and the packet's offset; every
// WRITE packet a RETH), so any one of them can be sent again alone. A PSN
// the loss signal deems lost (rc_sr_tx.h) goes again, with AckReq, before
// anything new; a go-back-N (timeout, RNR NAK, an atomic's lost ACK)
// passes over the PSNs a SACK reported held. New PSNs stay within
// min(window_psns, sr_cap_psns, kSrWindow) of the oldest unacknowledged
// one. An SR READ asks for its responses in parts of sr_read_chunk PSNs
// (rc_sr.h), each a READ request of its own at its first response PSN,
// sent once the part fits in that window; its response PSNs are tracked
// by the scoreboard as request PSNs are, and a missing one is asked for
// again (sr_reread) by a READ request for the missing bytes alone, from
// the first missing PSN to the last one deemed lost in its part. Atomic
// PSNs are recovered by RC's rules (their ACKs deliver them).
// The switch waits until every WQE started before it has completed, and
// every SR SEND and WRITE with immediate takes the next RSN (from 0) when it
// starts.
//
// A fresh WQE is started only when: its first PSN is inside the window
// (fewer than window_psns PSNs unacknowledged), it is not a fenced WR while
// READ/atomics are outstanding (IBV_SEND_FENCE), and, for a READ/atomic,
// fewer than max_rd_atomic are outstanding. Retransmissions only need a TX
// buffer. The payload is gathered from the MR straight into the frame; a bad
// local SGE fails the WQE with IBV_WC_LOC_PROT_ERR and moves the QP to ERR.
//
// LOCAL_INV (IBTA 10.6.5, rxe's rxe_do_local_ops): executed in send-queue
// order once every earlier WQE has completed (the local invalidate fence,
// IBA 10.6.5.1, which rxe's rxe_wqe_is_fenced makes mandatory), so a
// retransmission of an earlier WQE or a late READ response / atomic ACK
// still finds the key valid; WQEs after it wait with it. It invalidates the
// key in imm_or_inv in the MR table; nothing goes on the wire. It takes no
// PSN (an empty range at the next PSN), so the completer completes it,
// IBV_WC_LOCAL_INV, at once. Only a bound type-2 memory window of this QP's
// PD is invalidated (mr_table.h); any other key fails it with
// IBV_WC_LOC_QP_OP_ERR and moves the QP to ERR, as rxe does, and changes
// nothing. BIND_MW (IBTA 10.6.7.2, rxe_bind_mw) runs the same way: the
// window is bound (type 1 by ibv_bind_mw, type 2 by the WR) and completes
// IBV_WC_BIND_MW; a bind the table refuses fails IBV_WC_MW_BIND_ERR and
// moves the QP to ERR. A go-back-N passes over both without executing them
// again.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>

#include "datapath/transport/rc_core.h"
#include "datapath/transport/rc_homa.h"
#include "datapath/transport/rc_packet.h"
#include "datapath/transport/rc_send_queue.h"
#include "datapath/transport/rc_sr.h"
#include "datapath/transport/rc_timers.h"
#include "datapath/transport/sge_copy.h"
#include "datapath/wire/homa_mlen.h"
#include "datapath/wire/opcodes.h"

namespace uroce::transport {

enum class ReqStep : std::uint8_t {
  kSent,
  kIdle,      // nothing to send
  kBlocked,   // window, fence, max_rd_atomic, RNR wait, or state
  kNoBuffer,  // TX sink full
  kFailed,    // the WQE failed locally; the QP is in ERR
  kLocal,     // a LOCAL_INV or BIND_MW was executed or passed over; nothing was sent
};

// The opcode of packet `idx` of `npkts` of a SEND/WRITE WR.
std::uint8_t rc_request_opcode(WrOpcode op, std::uint32_t idx, std::uint32_t npkts);

class RcRequester {
 public:
  RcRequester(RcCore& core, RcSendQueue& sq) : c_(core), sq_(sq) {}

  // Sends at most one packet.
  template <TxSink Tx>
  ReqStep send_one(TimeNs now, Tx& tx);
  // Selective repeat was asked for (RcQp::sr_tx_start): it starts once every
  // WQE started before has completed (rc_sr.h), numbering from RSN 0.
  void sr_maybe_start() {
    if (sq_.q.head() != sq_.sent_idx) return;
    RcSr& r = *c_.sr;
    r.tx_pending = false;
    r.tx_on = true;
    r.next_rsn = 0;
    r.tx.reset(sq_.psn_high);
  }

  // DC: a connection begins at `from` (dc_sr.h): with selective repeat
  // when the lane has its state, the target has not declined it and SR's
  // headers fit the path MTU (RcCore::sr points to the lane's state), else
  // go-back-N (RcCore::sr null). Every WQE started before (a restart sends
  // them again) is numbered again from RSN 0, as the target's new context
  // counts.
  void dc_sr_begin(Psn from);

  // The fresh WQE at the cursor is a LOCAL_INV or BIND_MW that must wait:
  // an earlier WQE has not completed yet (local invalidate fence).
  bool local_inv_fenced(const QueuedSendWr& wr) const {
    return is_local_op(wr.opcode) && sq_.q.head() != sq_.req_idx;
  }

  // DC: the stream drained and stays idle; DC_DISCONNECT tells its target
  // the context may go. False when the sink had no room (try again).
  template <TxSink Tx>
  bool dc_disconnect(Tx& tx, TimeNs now);
  // DC: a closing connection's DC_DISCONNECT goes again when its timer
  // passed (DcClosing).
  template <TxSink Tx>
  void dc_closing_timer(Tx& tx, TimeNs now);

 private:
  ReqStep local_op(SendWqe& w, bool fresh);
  // The packet at the cursor (send_one after its checks).
  template <TxSink Tx>
  ReqStep send_next(TimeNs now, Tx& tx);
  // Selective repeat: PSN p, deemed lost, goes again by itself.
  template <TxSink Tx>
  ReqStep sr_resend(Psn p, TimeNs now, Tx& tx);
  // Selective repeat: the READ response PSN p of READ `w`, deemed lost, is
  // asked for again: one READ request at p for the bytes up to the last
  // PSN deemed lost in p's part (placed PSNs between come again and are
  // dropped as duplicates).
  template <TxSink Tx>
  ReqStep sr_reread(const SendWqe& w, Psn p, TimeNs now, Tx& tx);
  // The cap on PSNs in flight of a selective-repeat connection.
  std::uint32_t sr_window() const {
    return transport::sr_window(c_.cfg.tuning.window_psns, c_.cfg.tuning.sr_cap_psns, c_.sr->cap);
  }
  // DC (dc_lane.h): before a fresh WR, the stream must be connected to the
  // WR's target. kSent: go on; otherwise what send_one returns.
  template <TxSink Tx>
  ReqStep dc_connect(const QueuedSendWr& wr, TimeNs now, Tx& tx);
  template <TxSink Tx>
  bool dc_send_disconnect(Tx& tx, TimeNs now);
  // The MLEN of a gated message (rc_homa.h) whose first PSN is `psn`;
  // false when the sink had no room.
  template <TxSink Tx>
  bool send_mlen(Tx& tx, Psn psn, std::uint64_t total);

  RcCore& c_;
  RcSendQueue& sq_;
};

template <TxSink Tx>
bool RcRequester::send_mlen(Tx& tx, Psn psn, std::uint64_t total) {
  RcHomaTx& h = *c_.homa;
  wire::PacketSpec spec = rc_spec(c_, wire::op::kHomaMlen, psn);
  spec.dscp = h.ctl_dscp;
  spec.ecn = wire::kEcnNotEct;
  const wire::HomaMlenHdr m =
      wire::HomaMlenHdr::make(static_cast<std::uint32_t>(total),
                              static_cast<std::uint32_t>(
                                  std::min<std::uint64_t>(h.gate_cfg.unsched_bytes, total)));
  const RcEmit e = rc_emit(c_, tx, spec, sizeof m.raw, [&](wire::PayloadWriter& w) {
    w.put(m.raw, sizeof m.raw);
    return true;
  });
  if (e != RcEmit::kSent) return false;
  ++h.ctr.mlen;
  return true;
}

template <TxSink Tx>
ReqStep RcRequester::dc_connect(const QueuedSendWr& wr, TimeNs now, Tx& tx) {
  DcLane& l = *c_.dc;
  const DcDest d = dc_dest_of(wr.ud);
  if (l.stream.bound() && l.stream.dest() == d) return ReqStep::kSent;
  // Every earlier WR of the stream completed (docs/dc.md: a stream is
  // connected to one target at a time).
  const bool drained = sq_.q.head() == sq_.req_idx;
  if (l.stream.bound() && drained && !dc_send_disconnect(tx, now)) return ReqStep::kNoBuffer;
  DcStream::Switch sw;
  if (!l.stream.connect(d, sq_.psn_high, drained, *l.clock, now, &sw)) {
    return ReqStep::kBlocked;
  }
  c_.attr.av = dc_path_of(wr.ud, c_.cfg.local, c_.attr.av.ecn);
  c_.attr.dest_qp_num = d.dctn;
  dc_sr_begin(sq_.psn_high);
  return ReqStep::kSent;
}

inline void RcRequester::dc_sr_begin(Psn from) {
  DcLane& l = *c_.dc;
  const bool on = l.sr != nullptr && wire::dc_sr_fits(c_.attr.path_mtu, l.sr_eth_mtu) &&
                  (l.sr_declined == nullptr || !l.sr_declined->has(l.stream.dest()));
  if (!on) {
    c_.sr = nullptr;
    return;
  }
  RcSr& r = *l.sr;
  c_.sr = &r;
  r.tx_pending = false;
  r.tx_on = true;
  // The RTT to a host outlives a connection to it; another host's does not
  // apply.
  const DcDest& d = l.stream.dest();
  if (l.sr_peer_valid && same_host(l.sr_peer, d)) {
    r.tx.restart(from);
  } else {
    r.tx.reset(from);
  }
  l.sr_peer = d;
  l.sr_peer_valid = true;
  // Paths from the DCI's port, of this target's IP version (dc_spray.h).
  if (l.spray != nullptr) {
    l.spray->begin(r.spray, c_.udp_src(), c_.attr.av.ipv6);
  } else {
    r.spray.reset();
  }
  std::uint32_t rsn = 0;
  for (std::uint32_t i = sq_.q.head(); i != sq_.sent_idx; ++i) {
    SendWqe& w = sq_.q.at(i);
    w.rsn = rsn;
    if (sr_consumes_rsn(w.wr.opcode)) rsn = (rsn + 1) & kRsnMask;
  }
  r.next_rsn = rsn;
}

template <TxSink Tx>
bool RcRequester::dc_send_disconnect(Tx& tx, TimeNs now) {
  DcLane& l = *c_.dc;
  // The target may retire the context now: everything it ran was
  // acknowledged (the DISCONNECT's PSN is the next one). Saved so that it
  // can go again until answered.
  DcClosing x;
  x.active = true;
  x.av = c_.attr.av;
  x.dctn = c_.attr.dest_qp_num;
  x.key = l.stream.dest().key;
  x.conn = l.stream.conn();
  x.psn = sq_.psn_high;
  const TimeNs rto = local_ack_timeout_ns(c_.attr.timeout);
  x.deadline = now + (rto != 0 ? rto : kNsPerMs);
  wire::PacketSpec spec = dc_disconnect_spec(x, c_.cfg.local, c_.cfg.qpn, l.lane, c_.udp_src());
  if (rc_emit(c_, tx, spec) != RcEmit::kSent) return false;
  l.closing = x;
  return true;
}

template <TxSink Tx>
bool RcRequester::dc_disconnect(Tx& tx, TimeNs now) {
  DcLane& l = *c_.dc;
  if (!l.stream.bound() || !sq_.q.empty()) return true;
  if (!dc_send_disconnect(tx, now)) return false;
  l.stream.disconnect();
  return true;
}

template <TxSink Tx>
void RcRequester::dc_closing_timer(Tx& tx, TimeNs now) {
  DcLane& l = *c_.dc;
  DcClosing& x = l.closing;
  if (!x.active || now < x.deadline) return;
  // The target's stale retirement frees the context if it never answers.
  if (x.tries >= c_.attr.retry_cnt) {
    x.active = false;
    return;
  }
  wire::PacketSpec spec = dc_disconnect_spec(x, c_.cfg.local, c_.cfg.qpn, l.lane, c_.udp_src());
  if (rc_emit(c_, tx, spec) != RcEmit::kSent) return;
  ++x.tries;
  ++l.disconnect_resends;
  const TimeNs rto = local_ack_timeout_ns(c_.attr.timeout);
  x.deadline = now + (rto != 0 ? rto : kNsPerMs);
}

template <TxSink Tx>
ReqStep RcRequester::send_one(TimeNs now, Tx& tx) {
  if (c_.state != QpState::kRts && c_.state != QpState::kSqd) {
    return ReqStep::kBlocked;
  }
  if (sq_.rnr_wait) return ReqStep::kBlocked;
  sq_.skip_acknowledged();
  if (c_.dc != nullptr) [[unlikely]]
    c_.dc->acked = sq_.comp_psn;
  // Selective repeat: what the loss signal deemed lost goes first.
  if (c_.sr != nullptr) [[unlikely]] {
    if (c_.sr->tx_pending) sr_maybe_start();
    Psn lost;
    if (c_.sr->tx_on && c_.sr->tx.next_lost(&lost)) return sr_resend(lost, now, tx);
  }
  return send_next(now, tx);
}

template <TxSink Tx>
ReqStep RcRequester::sr_resend(Psn p, TimeNs now, Tx& tx) {
  const SendWqe* w = sq_.find(p);
  // Only a packet of an SR WQE goes again alone; anything else
  // (acknowledged meanwhile, an atomic's) is RC's to recover.
  if (w == nullptr || is_atomic(w->wr.opcode) || p.before(sq_.comp_psn)) {
    c_.sr->tx.forget(p);
    return ReqStep::kLocal;
  }
  if (w->wr.opcode == WrOpcode::kRdmaRead) return sr_reread(*w, p, now, tx);
  const std::uint32_t idx = sq_.req_idx;
  const std::uint32_t pkt = sq_.req_pkt;
  sq_.rewind(p);
  const ReqStep st = send_next(now, tx);
  sq_.req_idx = idx;
  sq_.req_pkt = pkt;
  if (st == ReqStep::kSent) ++c_.sr->ctr.sr_tx_resends;
  return st;
}

template <TxSink Tx>
ReqStep RcRequester::sr_reread(const SendWqe& w, Psn p, TimeNs now, Tx& tx) {
  SrTx& t = c_.sr->tx;
  const std::uint32_t mtu = c_.mtu();
  const std::uint32_t idx = Psn::forward(w.first_psn, p);
  const std::uint32_t part_end = sr_read_part_end(idx, w.npkts, sr_window());
  std::uint32_t end = idx;
  for (std::uint32_t i = idx + 1; i < part_end; ++i) {
    if (t.lost(w.first_psn + i)) end = i;
  }
  const std::uint64_t total = w.wr.length();
  const std::uint64_t offset = static_cast<std::uint64_t>(idx) * mtu;
  const std::uint64_t stop =
      std::min<std::uint64_t>(total, static_cast<std::uint64_t>(end + 1) * mtu);
  wire::PacketSpec spec = rc_spec(c_, wire::sr_opcode(wire::op::kRcReadRequest), p);
  spec.reth = wire::RethHdr::make(w.wr.remote_addr + offset, w.wr.rkey,
                                  static_cast<std::uint32_t>(stop - offset));
  spec.ack_req = true;
  const RcEmit e = rc_emit(c_, tx, spec);
  if (e == RcEmit::kNoBuffer) return ReqStep::kNoBuffer;
  ++c_.ctr.tx_requests;
  ++c_.ctr.tx_retransmits;
  sq_.noack_pkts = 0;
  ++c_.sr->ctr.sr_rd_rereqs;
  c_.sr->ctr.sr_rd_rereq_psns += end - idx + 1;
  for (std::uint32_t i = idx; i <= end; ++i) {
    if (!t.held(w.first_psn + i)) t.on_sent(w.first_psn + i, now, SrTx::Kind::kReadResponse);
  }
  const TimeNs rto = local_ack_timeout_ns(c_.attr.timeout);
  if (rto != 0 && sq_.rto_deadline == 0) sq_.rto_deadline = now + rto;
  return ReqStep::kSent;
}

template <TxSink Tx>
[[gnu::always_inline]] inline ReqStep RcRequester::send_next(TimeNs now, Tx& tx) {
  if (sq_.req_idx == sq_.q.tail()) return ReqStep::kIdle;

  SendWqe& w = sq_.q.at(sq_.req_idx);
  const QueuedSendWr& wr = w.wr;
  const bool fresh = sq_.req_idx == sq_.sent_idx;
  const std::uint32_t mtu = c_.mtu();
  Psn psn = sq_.psn_high;
  std::uint32_t npkts = 0;
  // Selective repeat: every WQE started while tx_on (the earlier ones had
  // all completed when it began, rc_sr.h).
  bool sr = c_.sr != nullptr && c_.sr->tx_on && !is_local_op(wr.opcode);
  if (fresh) {
    // SQD drains: WQEs already started finish, no new one begins.
    if (c_.state == QpState::kSqd) return ReqStep::kBlocked;
    // Selective repeat waits for the earlier WQEs to complete (rc_sr.h).
    if (c_.sr != nullptr && c_.sr->tx_pending) [[unlikely]]
      return ReqStep::kBlocked;
    if ((wr.flags & send_flag::kFence) != 0 && sq_.rd_atomic_out > 0) {
      ++c_.ctr.wait_fence;
      return ReqStep::kBlocked;
    }
    if (is_rd_atomic(wr.opcode) && sq_.rd_atomic_out >= c_.attr.max_rd_atomic) {
      ++c_.ctr.wait_rd_atomic;
      return ReqStep::kBlocked;
    }
    if (local_inv_fenced(wr)) {
      ++c_.ctr.wait_local_inv;
      return ReqStep::kBlocked;
    }
    if (c_.dc != nullptr && !is_local_op(wr.opcode)) [[unlikely]] {
      const ReqStep st = dc_connect(wr, now, tx);
      if (st != ReqStep::kSent) return st;
      // A connection that began here decided on selective repeat.
      sr = c_.sr != nullptr && c_.sr->tx_on;
    }
    npkts = wqe_packets(wr, mtu);
  } else {
    psn = w.first_psn + sq_.req_pkt;
    npkts = w.npkts;
    // A go-back-N passes over what the responder holds (for a READ: the
    // responses the requester placed).
    if (sr && !is_atomic(wr.opcode) && c_.sr->tx.held(psn)) [[unlikely]] {
      if (sq_.req_pkt + 1 == npkts) {
        ++sq_.req_idx;
        sq_.req_pkt = 0;
      } else {
        ++sq_.req_pkt;
      }
      return ReqStep::kLocal;
    }
  }
  if (is_local_op(wr.opcode)) return local_op(w, fresh);
  const bool new_psn = psn == sq_.psn_high;
  std::uint32_t window = c_.cfg.tuning.window_psns;
  if (sr) [[unlikely]]
    window = sr_window();
  const std::uint32_t idx = fresh ? 0 : sq_.req_pkt;
  // An SR READ asks for one part of its responses, [idx, part_end), which
  // must fit in the cap as a whole (rc_sr.h).
  std::uint32_t part_end = npkts;
  std::uint32_t span = 1;
  if (sr && wr.opcode == WrOpcode::kRdmaRead) [[unlikely]] {
    part_end = sr_read_part_end(idx, npkts, window);
    span = part_end - idx;
  }
  if (new_psn && Psn::forward(sq_.comp_psn, psn) + span > window) {
    ++c_.ctr.wait_window;
    return ReqStep::kBlocked;
  }

  const std::uint64_t offset = static_cast<std::uint64_t>(idx) * mtu;
  const std::uint64_t total = wr.length();
  bool last = idx + 1 == npkts;
  std::size_t payload_len = 0;
  // The opcode first, so the spec is built once in place: assigning a
  // PacketSpec copies each of its optional headers, a cost per packet.
  std::uint8_t opcode;
  switch (wr.opcode) {
    case WrOpcode::kRdmaRead: opcode = wire::op::kRcReadRequest; break;
    case WrOpcode::kCmpSwap: opcode = wire::op::kRcCompareSwap; break;
    case WrOpcode::kFetchAdd: opcode = wire::op::kRcFetchAdd; break;
    default: opcode = rc_request_opcode(wr.opcode, idx, npkts); break;
  }
  if (sr) [[unlikely]]
    opcode = wire::sr_opcode(opcode);
  wire::PacketSpec spec = rc_spec(c_, opcode, psn);

  switch (wr.opcode) {
    case WrOpcode::kRdmaRead: {
      const std::uint64_t stop =
          std::min<std::uint64_t>(total, static_cast<std::uint64_t>(part_end) * mtu);
      spec.reth = wire::RethHdr::make(wr.remote_addr + offset, wr.rkey,
                                      static_cast<std::uint32_t>(
                                          (part_end == npkts ? total : stop) - offset));
      last = part_end == npkts;
      if (c_.homa != nullptr) [[unlikely]]
        c_.homa->admit_request(sq_.outstanding(), &spec);
      break;
    }
    case WrOpcode::kCmpSwap:
    case WrOpcode::kFetchAdd: {
      const bool cs = wr.opcode == WrOpcode::kCmpSwap;
      spec.atomic_eth =
          wire::AtomicEthHdr::make(wr.remote_addr, wr.rkey, cs ? wr.swap : wr.compare_add,
                                   cs ? wr.compare_add : 0);
      last = true;
      if (c_.homa != nullptr) [[unlikely]]
        c_.homa->admit_request(sq_.outstanding(), &spec);
      break;
    }
    default: {
      payload_len =
          static_cast<std::size_t>(std::min<std::uint64_t>(mtu, total - std::min(total, offset)));
      const wire::OpcodeInfo& info = wire::opcode_info(opcode);
      if (info.has(wire::ExtHdr::kReth)) {
        spec.reth = wire::RethHdr::make(wr.remote_addr, wr.rkey, static_cast<std::uint32_t>(total));
      }
      if (info.has(wire::ExtHdr::kImmDt)) {
        // imm_or_inv holds the immediate in network order, as the app gave it.
        std::uint8_t b[4];
        std::memcpy(b, &wr.imm_or_inv, 4);
        spec.immdt = wire::ImmDtHdr::read(b);
      }
      if (info.has(wire::ExtHdr::kIeth)) {
        spec.ieth = wire::IethHdr::make(wr.imm_or_inv);
      }
      if (sr) [[unlikely]] {
        spec.sr_eth = wire::SrEthHdr::make(fresh ? c_.sr->next_rsn : w.rsn,
                                           static_cast<std::uint32_t>(offset));
        // Sprayed over several source ports (rc_sr_spray.h); with ECN
        // steering ECN-capable, so that a path's queue marks it before it
        // drops it.
        if (c_.sr->spray.on()) {
          spec.udp_src = c_.sr->spray.pick_port();
          if (c_.sr->spray.ecn()) spec.ecn = wire::kEcnEct0;
        }
      }
      const bool solicited_op = info.op == wire::OpClass::kSend || info.has(wire::ExtHdr::kImmDt);
      spec.se = last && solicited_op && (wr.flags & send_flag::kSolicited) != 0;
      if (c_.homa != nullptr) [[unlikely]] {
        const Psn first = fresh ? psn : w.first_psn;
        if (fresh && c_.homa->needs_mlen(total) && !send_mlen(tx, psn, total)) {
          return ReqStep::kNoBuffer;
        }
        if (!c_.homa->admit(fresh, new_psn, first, offset, payload_len, total, sq_.outstanding(),
                            now, &spec)) {
          return ReqStep::kBlocked;
        }
      }
      break;
    }
  }
  // AckReq on a message's last packet, on every ack_req_every-th and at
  // least every half window: a window below ack_req_every (an SR cap of 32)
  // would fill without one and move only at the tail-loss probe or the
  // timeout. A packet sent again by selective repeat asks for a SACK at once.
  const std::uint32_t ack_req_every =
      std::min(c_.cfg.tuning.ack_req_every, std::max<std::uint32_t>(window / 2, 1));
  spec.ack_req = last || sq_.noack_pkts + 1 >= ack_req_every || (sr && !new_psn);

  const RcEmit e = rc_emit(c_, tx, spec, payload_len, [&](wire::PayloadWriter& w) {
    if (w.size() == 0) return true;
    if ((wr.flags & send_flag::kInline) != 0) {
      w.put(wr.inline_data() + offset, w.size());
      return true;
    }
    const SgeCopyResult r = gather(c_.mrs, c_.cfg.pd, wr.sge(), wr.num_sge, offset, w);
    return r.err == MrError::kOk && !r.too_long;
  });
  if (e == RcEmit::kNoBuffer) return ReqStep::kNoBuffer;
  if (e != RcEmit::kSent) {
    ++c_.ctr.local_errors;
    w.err = WcStatus::kLocProtErr;
    if (fresh) {
      // Give it a PSN range so the flush sees it in order like any other.
      w.started = true;
      w.first_psn = psn;
      w.npkts = npkts;
      ++sq_.sent_idx;
    }
    c_.state = QpState::kErr;
    return ReqStep::kFailed;
  }

  ++c_.ctr.tx_requests;
  if (!new_psn) ++c_.ctr.tx_retransmits;
  sq_.noack_pkts = spec.ack_req ? 0 : sq_.noack_pkts + 1;
  if (fresh) {
    w.started = true;
    w.first_psn = psn;
    w.npkts = npkts;
    ++sq_.sent_idx;
    if (is_rd_atomic(wr.opcode)) ++sq_.rd_atomic_out;
  }
  if (sr) [[unlikely]] {
    SrTx& t = c_.sr->tx;
    // SEND and WRITE with immediate consume a receive WQE: the next RSN.
    if (fresh) {
      w.rsn = c_.sr->next_rsn;
      if (sr_consumes_rsn(wr.opcode)) c_.sr->next_rsn = (w.rsn + 1) & kRsnMask;
    }
    if (!is_rd_atomic(wr.opcode)) {
      t.on_sent(psn, now);
      if (c_.sr->spray.on()) c_.sr->spray.sent(psn);
    } else if (wr.opcode == WrOpcode::kRdmaRead) {
      for (std::uint32_t k = idx; k < part_end; ++k) {
        if (!t.held(w.first_psn + k)) t.on_sent(w.first_psn + k, now, SrTx::Kind::kReadResponse);
      }
    } else if (fresh) {
      t.on_sent(w.first_psn, now, SrTx::Kind::kAtomic);
    }
  }
  // A READ request stands for every response PSN up to the end of its range
  // (of its part, for an SR READ).
  Psn end = psn + 1;
  if (is_rd_atomic(wr.opcode)) end = w.first_psn + part_end;
  if (sq_.psn_high.before(end)) sq_.psn_high = end;
  if (last) {
    ++sq_.req_idx;
    sq_.req_pkt = 0;
  } else {
    sq_.req_pkt = is_rd_atomic(wr.opcode) ? part_end : idx + 1;
  }
  const TimeNs rto = local_ack_timeout_ns(c_.attr.timeout);
  if (rto != 0 && sq_.rto_deadline == 0) sq_.rto_deadline = now + rto;
  return ReqStep::kSent;
}

}  // namespace uroce::transport
