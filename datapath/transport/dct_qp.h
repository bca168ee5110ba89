// The DC target (docs/dc.md, "Target"): DCTs and the per-device pool of
// responder contexts they share.
//
// DcTargetPool: the device's DcTargetTable and, for each of its slots, an
// RC responder (RcResponder over its own RcCore) sized when the pool is
// made, so opening a context allocates nothing. A context serves one
// initiator stream's connection to one DCT: its RcCore takes the DCT's
// configuration and attributes, with the reply path (the request's source)
// as its address vector and the DCI's QPN as its destination, and its
// DcLane makes its responses DC responses.
//
// DctQp: a DCT. Its requests find their context through the pool's table
// (opened by a SYN request, answered GONE / UNKNOWN / BUSY otherwise), are
// processed exactly as an RC responder processes them, and its receives
// come from its SRQ. A wrong DC access key is answered KEY_VIOLATION,
// counted, and raises IBV_EVENT_QP_ACCESS_ERR once per DCT. The interface
// follows RcQp's so the engine drives it the same way. I/O-free; owned by
// one engine lcore.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "datapath/base/counter_fields.h"
#include "datapath/transport/dc_counters.h"
#include "datapath/transport/dc_lane.h"
#include "datapath/transport/dc_target.h"
#include "datapath/transport/qp_concept.h"
#include "datapath/transport/rc_core.h"
#include "datapath/transport/rc_responder.h"
#include "datapath/transport/rc_sr.h"
#include "datapath/transport/sinks.h"
#include "datapath/wire/parser.h"

namespace uroce::transport {

class DctQp;

// Receive WR slots of a context that runs selective repeat (dc_sr.h): its
// out-of-order SENDs up to this many messages ahead of the one in progress
// are placed (one slot without it: the message in progress).
inline constexpr std::uint32_t kDcSrRecvSlots = 8;

struct DcContext {
  DcContext(const RcQpConfig& cfg, MrTable& mrs) : core(cfg, mrs), resp(core) {}
  RcCore core;
  RcResponder resp;
  DcLane lane{};
  // Selective repeat's state (pool made with it; dc_sr.h): RcCore::sr
  // points here while the connection it serves uses it.
  std::unique_ptr<RcSr> sr;
  DctQp* dct = nullptr;  // the DCT it serves while open
  // Its DCT's list of contexts owing responses (intrusive: no allocation).
  bool ready = false;
  std::uint32_t ready_prev = DcTargetTable::kNone;
  std::uint32_t ready_next = DcTargetTable::kNone;
};

class DcTargetPool {
 public:
  // Allocates every context (control path); with `sr`, each with
  // selective repeat's state (the device runs it: dc_sr.h), whose answers
  // spray over `spray`'s paths (dc_spray.h).
  DcTargetPool(const DcTargetLimits& limits, MrTable& mrs, const LocalPort& local, bool sr = false,
               const DcSprayConfig& spray = {});
  // The contexts point into the pool (their spray paths): it stays put.
  DcTargetPool(const DcTargetPool&) = delete;
  DcTargetPool& operator=(const DcTargetPool&) = delete;
  bool sr() const { return sr_; }
  const DcSpray& spray() const { return spray_; }
  // Nothing is owed or held: no response to send, no message half
  // received, no selective-repeat packet held beyond the expected PSN.
  static bool quiescent(const DcContext& x) {
    return !x.resp.has_output() && !x.resp.mid_message() &&
           (x.core.sr == nullptr || !x.core.sr->rx.any());
  }
  // Its connection failed: the responder sent (or owes) a class C NAK and
  // takes no more requests (dc_target.h: retired once the NAK is out).
  static bool failed(const DcContext& x) { return x.core.state == QpState::kErr; }
  DcTargetTable& table() { return table_; }
  const DcTargetTable& table() const { return table_; }
  DcContext& ctx(std::uint32_t i) { return *ctx_[i]; }
  // Table plus contexts.
  std::size_t memory_bytes() const;
  const LocalPort& local() const { return local_; }

 private:
  DcTargetTable table_;
  std::vector<std::unique_ptr<DcContext>> ctx_;
  LocalPort local_;
  bool sr_ = false;
  DcSpray spray_;
};

class DctQp {
 public:
  static constexpr QpType kType = QpType::kDct;
  static constexpr QpAddressing kAddressing = QpAddressing::kReplies;
  static constexpr bool kSendCq = false;
  static constexpr bool kRecvCq = true;

  DctQp(const RcQpConfig& cfg, std::uint64_t key, DcTargetPool& pool);
  ~DctQp();
  DctQp(const DctQp&) = delete;
  DctQp& operator=(const DctQp&) = delete;

  std::uint32_t qpn() const { return cfg_.qpn; }
  QpState state() const { return state_; }
  std::uint64_t key() const { return key_; }
  const DctCounters& counters() const { return ctr_; }
  // The responder counters of the contexts it served (retired ones
  // included).
  RcCounters rc_counters() const;
  // Their selective-repeat counters (0 without it).
  RcSrCounters sr_counters() const;

  int modify(std::uint32_t mask, const QpAttrValues& attr);
  QpAttrValues query() const;
  int post_send(const SendWr&) { return EINVAL; }
  int post_recv(const RecvWr&) { return EINVAL; }

  // `acks`: no plain ACK waits for a pump here (qp_concept.h).
  template <class Io>
  void on_packet(const wire::ParsedPacket& pkt, TimeNs now, Io& io,
                 AckTiming acks = AckTiming::kNow);
  template <class Io>
  void on_timer(TimeNs, Io&) {}
  template <class Io>
  std::uint32_t pump_tx(TimeNs now, Io& io, std::uint32_t budget);
  // pump_tx, and whether output is left (qp_concept.h).
  template <class Io>
  PumpResult pump(TimeNs now, Io& io, std::uint32_t budget) {
    const std::uint32_t sent = pump_tx(now, io, budget);
    return PumpResult{sent, has_output()};
  }
  template <CqSink SendCq, CqSink RecvCq>
  std::uint32_t flush(SendCq&, RecvCq&) {
    return 0;
  }
  bool has_output() const { return ready_head_ != DcTargetTable::kNone; }
  TimeNs timer_deadline() const { return 0; }
  std::uint32_t send_queue_depth() const { return 0; }
  std::uint32_t recv_queue_depth() const { return 0; }
  std::uint32_t contexts() const { return open_; }

  bool has_events() const { return !ev_.pending().empty(); }
  template <EventSink S>
  std::uint32_t drain_events(S& sink) {
    return ev_.pending().drain(sink);
  }

 private:
  // The context `c` of the pool now serves this DCT for the request `pkt`.
  void open_context(std::uint32_t c, const wire::ParsedPacket& pkt);
  // The context leaves this DCT (retired, or taken by another DCT).
  void close_context(std::uint32_t c);
  // After a packet: settle the table, queue the context if it owes output;
  // a failed context that owes nothing more is retired.
  void after_context(std::uint32_t c);
  // A failed context's NAK is out: it goes (dc_target.h).
  void retire_failed(std::uint32_t c);
  // A failed context's receive WR in use by the NAK'd SEND completes with
  // the error, as an RC QP's flush completes it (the rest of its receive
  // WRs go back to the SRQ when it closes).
  template <CqSink RecvCq>
  void complete_failed_recv(DcContext& x, RecvCq& cq);
  // A DC ACK without a context: GONE / UNKNOWN / BUSY / KEY_VIOLATION to the
  // request's source.
  template <TxSink Tx>
  void answer(Tx& tx, const wire::ParsedPacket& pkt, wire::DcStatus st, std::uint32_t value);
  // The GONE notice to an initiator whose context was retired.
  template <TxSink Tx>
  void notice_gone(Tx& tx, const DcContext& ctx, std::uint32_t conn, std::uint32_t epsn);
  static DcIdentity identity_of(const wire::ParsedPacket& pkt);
  void ready_push(std::uint32_t c);
  void ready_remove(std::uint32_t c);

  RcQpConfig cfg_;
  std::uint64_t key_;
  DcTargetPool& pool_;
  QpState state_ = QpState::kReset;
  QpAttrValues attr_{};
  std::uint32_t ready_head_ = DcTargetTable::kNone;  // contexts owing responses
  std::uint32_t ready_tail_ = DcTargetTable::kNone;
  std::uint32_t open_ = 0;
  bool key_event_raised_ = false;
  QpEventState ev_;
  RcCounters retired_{};
  RcSrCounters retired_sr_{};
  DctCounters ctr_{};
};

}  // namespace uroce::transport

namespace uroce::transport {

template <class Io>
void DctQp::on_packet(const wire::ParsedPacket& pkt, TimeNs now, Io& io, AckTiming) {
  if (pkt.info == nullptr || pkt.info->transport != wire::Transport::kDc ||
      !pkt.has(wire::ExtHdr::kDcEth)) {
    ++ctr_.drop_not_dc;
    return;
  }
  if (state_ != QpState::kRtr) {
    ++ctr_.drop_state;
    return;
  }
  // Contexts nothing reached for the stale time go first (one check).
  DcTargetTable& t = pool_.table();
  for (std::uint32_t c = t.retire_stale(now); c != DcTargetTable::kNone; c = t.retire_stale(now)) {
    DcContext& x = pool_.ctx(c);
    if (x.dct != nullptr) {
      notice_gone(io.tx, x, t.conn(c), t.epsn(c));
      x.dct->close_context(c);
    }
  }
  const wire::DcEthHdr& h = pkt.dc_eth;
  if (h.key() != key_) {
    ++ctr_.key_violations;
    if (!key_event_raised_) {
      key_event_raised_ = true;
      ev_.qp_error(AsyncEventType::kQpAccessErr);
    }
    answer(io.tx, pkt, wire::DcStatus::kKeyViolation, 0);
    return;
  }
  const DcIdentity id = identity_of(pkt);
  if (pkt.bth.opcode() == wire::op::kDcDisconnect) {
    const DcLookup r = t.on_disconnect(id, h.conn(), pkt.bth.psn());
    // Answered, so the initiator stops sending it again (GONE: retired now
    // or before; UNKNOWN: nothing kept). Not answered while the context
    // still owes something: the next DISCONNECT finds it settled.
    if (r.verdict == DcVerdict::kGone) {
      if (r.ctx != DcTargetTable::kNone) {
        DcContext& x = pool_.ctx(r.ctx);
        if (x.dct != nullptr) x.dct->close_context(r.ctx);
      }
      answer(io.tx, pkt, wire::DcStatus::kGone, r.value);
    } else if (r.verdict == DcVerdict::kUnknown) {
      answer(io.tx, pkt, wire::DcStatus::kUnknown, r.value);
    }
    return;
  }
  // Selective repeat asked for (dc_sr.h): a device without it answers the
  // connection's opening request NO_SR (nothing runs) and drops the rest,
  // as BUSY does.
  const bool sr = pkt.info->sr;
  if (sr && !pool_.sr()) [[unlikely]] {
    if (pkt.bth.psn() != h.first_psn()) {
      ++ctr_.drop_no_sr_later;
      return;
    }
    answer(io.tx, pkt, wire::DcStatus::kNoSr, 0);
    return;
  }
  ++ctr_.rx_requests;
  const DcLookup r = t.on_request(id, h.conn(), h.syn(), h.acked_psn(), now);
  switch (r.verdict) {
    case DcVerdict::kRun:
      if (pool_.ctx(r.ctx).dct != this) {
        ++ctr_.drop_other_dct;
        return;
      }
      break;
    case DcVerdict::kOpened: {
      DcContext& x = pool_.ctx(r.ctx);
      if (r.evicted && x.dct != nullptr) notice_gone(io.tx, x, r.old_conn, r.old_epsn);
      if (x.dct != nullptr) x.dct->close_context(r.ctx);
      open_context(r.ctx, pkt);
      break;
    }
    case DcVerdict::kStale: ++ctr_.drop_stale; return;
    case DcVerdict::kGone: answer(io.tx, pkt, wire::DcStatus::kGone, r.value); return;
    case DcVerdict::kUnknown: answer(io.tx, pkt, wire::DcStatus::kUnknown, r.value); return;
    case DcVerdict::kBusy:
      // Only the connection's opening packet is answered, as RC NAKs a gap
      // once: the initiator resends its whole window after the RNR wait,
      // and an answer to each packet of a burst would restart that wait
      // once per packet (a retry storm that grows with the window).
      if (pkt.bth.psn() != h.first_psn()) {
        ++ctr_.drop_busy_later;
        return;
      }
      answer(io.tx, pkt, wire::DcStatus::kBusy, 0);
      return;
    case DcVerdict::kIgnore: return;
  }
  DcContext& x = pool_.ctx(r.ctx);
  // A connection is selective repeat or go-back-N from its first request
  // to its last (dc_eth.h R).
  if (sr != (x.core.sr != nullptr)) [[unlikely]] {
    ++ctr_.drop_sr_mismatch;
    return;
  }
  x.resp.on_request(pkt, io.recv_cq);
  if (DcTargetPool::failed(x)) [[unlikely]]
    complete_failed_recv(x, io.recv_cq);
  x.resp.send(io.tx, cfg_.tuning.responder_burst);
  after_context(r.ctx);
}

template <CqSink RecvCq>
void DctQp::complete_failed_recv(DcContext& x, RecvCq& cq) {
  if (x.resp.head_status() == WcStatus::kWrFlushErr || x.resp.rq().empty()) return;
  if (!cq.push(error_wc(x.resp.rq().front().wr_id, cfg_.qpn, x.resp.head_status()))) {
    ++x.core.ctr.cq_overflow;
    return;
  }
  x.resp.clear_head_status();
  x.resp.rq().pop();
}

template <class Io>
std::uint32_t DctQp::pump_tx(TimeNs, Io& io, std::uint32_t budget) {
  std::uint32_t n = 0;
  std::uint32_t c = ready_head_;
  while (c != DcTargetTable::kNone && n < budget) {
    DcContext& x = pool_.ctx(c);
    const std::uint32_t next = x.ready_next;
    n += x.resp.send(io.tx, budget - n);
    if (x.resp.has_output()) break;  // the TX sink is full
    ready_remove(c);
    if (DcTargetPool::failed(x)) [[unlikely]] {
      retire_failed(c);
    } else {
      pool_.table().settle(c, DcTargetPool::quiescent(x), x.resp.epsn().value());
    }
    c = next;
  }
  return n;
}

template <TxSink Tx>
void DctQp::answer(Tx& tx, const wire::ParsedPacket& pkt, wire::DcStatus st, std::uint32_t value) {
  const wire::DcEthHdr& h = pkt.dc_eth;
  wire::PacketSpec s;
  s.eth_src = pool_.local().mac;
  s.eth_dst = pkt.eth.src();
  wire::Ipv6Route route6{};
  if (pkt.ipv6) {
    route6 = wire::Ipv6Route{pkt.ip6.dst(), pkt.ip6.src(), 0};
    s.ip6 = &route6;
  } else {
    s.ip_src = pool_.local().ip;
    s.ip_dst = pkt.ip.src();
  }
  s.dscp = attr_.av.dscp;
  s.ttl = attr_.av.ttl;
  s.udp_src = rxe_udp_src_port(cfg_.qpn);
  s.opcode = wire::op::kDcAck;
  s.dest_qp = h.dci_qpn();
  // The connection's first PSN, not the request's: an answer comes per
  // request, not cumulatively as a responder's NAK, and an RNR NAK or NAK
  // at a later PSN would acknowledge the connection's earlier requests,
  // which never ran (wire/dc_aeth.h).
  s.psn = h.first_psn();
  s.dc_aeth = wire::DcAethHdr::make(h.lane(), st, h.conn(), value);
  switch (st) {
    case wire::DcStatus::kBusy:
      s.aeth = wire::AethHdr::make(wire::aeth_rnr_nak_syndrome(attr_.min_rnr_timer), 0);
      ++ctr_.tx_busy;
      break;
    case wire::DcStatus::kKeyViolation:
      s.aeth = wire::AethHdr::make(wire::aeth_nak_syndrome(wire::NakCode::kRemoteAccessError), 0);
      ++ctr_.tx_key_violation;
      break;
    case wire::DcStatus::kUnknown:
      s.aeth = wire::AethHdr::make(wire::aeth_ack_syndrome(), 0);
      ++ctr_.tx_unknown;
      break;
    case wire::DcStatus::kNoSr:
      s.aeth = wire::AethHdr::make(wire::aeth_ack_syndrome(), 0);
      ++ctr_.tx_no_sr;
      break;
    default:
      s.aeth = wire::AethHdr::make(wire::aeth_ack_syndrome(), 0);
      ++ctr_.tx_gone;
      break;
  }
  const std::size_t len = wire::roce_frame_size(s);
  std::span<std::uint8_t> buf = tx.tx_alloc(len);
  if (buf.size() < len) {
    ++ctr_.tx_no_buffer;
    return;
  }
  const int n = wire::build_roce(s, buf);
  if (n > 0) tx.tx_commit(static_cast<std::size_t>(n));
}

template <TxSink Tx>
void DctQp::notice_gone(Tx& tx, const DcContext& x, std::uint32_t conn, std::uint32_t epsn) {
  wire::PacketSpec s = rc_spec(x.core, wire::op::kRcAck, Psn(epsn) - 1);
  s.ecn = 0;
  s.dc_aeth = wire::DcAethHdr::make(x.lane.lane, wire::DcStatus::kGone, conn, epsn);
  s.aeth = wire::AethHdr::make(wire::aeth_ack_syndrome(), 0);
  const std::size_t len = wire::roce_frame_size(s);
  std::span<std::uint8_t> buf = tx.tx_alloc(len);
  if (buf.size() < len) {
    ++ctr_.tx_no_buffer;
    return;
  }
  const int n = wire::build_roce(s, buf);
  if (n > 0) {
    tx.tx_commit(static_cast<std::size_t>(n));
    ++ctr_.tx_gone;
  }
}

static_assert(Qp<DctQp>);

}  // namespace uroce::transport
