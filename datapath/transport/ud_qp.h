// Unreliable Datagram QP (IBTA Vol1 9.8 and 10.2.5; Linux rxe behaviour where
// the spec leaves room).
//
// Send: SEND and SEND_WITH_IMM only, one UD_SEND_ONLY[_WITH_IMMEDIATE] packet
// per WR, BTH + DETH (Q_Key, source QPN), addressed by the WR's UdDest. A WR
// whose Q_Key has the high bit set sends the QP's own Q_Key instead (IBTA
// C10-15: controlled Q_Keys cannot be named by a send WR). A message longer
// than the port MTU emits no packet and completes successfully (C10-93.1.1;
// rxe does exactly this). UD has no ACK: a signalled WR completes
// IBV_WC_SEND as soon as its frame is committed to the TX sink.
//
// Receive, in this order (each failure is a silent drop with a counter, as
// rxe drops): QP state (RTR..SQE), UD opcode, BTH destination QPN, P_Key,
// Q_Key, a posted receive WR (UD has no RNR: no WR, no delivery). The first
// 40 bytes of the receive buffer take the GRH: for RoCEv2 over IPv4 that is
// 20 zero bytes and then the IPv4 header as received (rxe's union
// rdma_network_hdr), followed by the payload; byte_len = 40 + payload. A
// receive WR shorter than that completes IBV_WC_LOC_LEN_ERR and writes
// nothing; an invalid receive SGE completes IBV_WC_LOC_PROT_ERR and moves the
// QP to ERR.
//
// States: modify() applies the IBTA transition table (EINVAL like rxe);
// sends run only in RTS; SQD stops new sends; a local send error moves the
// QP to SQE (IBTA 10.3.1; rxe goes to ERR instead); flush() completes every
// WR of the send queue (SQE, ERR) and receive queue (ERR) with
// IBV_WC_WR_FLUSH_ERR. Moving to RESET discards WRs without completions.
//
// I/O-free: frames go to a TxSink, completions to CqSinks; there are no
// timers (nothing is retransmitted). Queues are allocated at construction;
// nothing allocates afterwards. Owned by one engine lcore; not thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "datapath/base/counter_fields.h"
#include "datapath/transport/async_event.h"
#include "datapath/transport/cqe.h"
#include "datapath/transport/mr_table.h"
#include "datapath/transport/qp_attr.h"
#include "datapath/transport/qp_common.h"
#include "datapath/transport/recv_refill.h"
#include "datapath/transport/seq24.h"
#include "datapath/transport/sinks.h"
#include "datapath/transport/srq.h"
#include "datapath/transport/ud_counters.h"
#include "datapath/transport/unreliable_qp_core.h"
#include "datapath/transport/work_queue.h"
#include "datapath/transport/wr.h"
#include "datapath/wire/opcodes.h"
#include "datapath/wire/parser.h"

namespace uroce::transport {

// Bytes of GRH at the start of every UD receive buffer.
inline constexpr std::uint32_t kUdGrhSize = 40;

struct UdQpConfig {
  std::uint32_t qpn = 0;
  PdHandle pd = 0;
  LocalPort local{};
  // UD messages are bounded by the port's MTU (rxe: port.mtu_cap), there
  // being no path.
  wire::PathMtu port_mtu = wire::PathMtu::k1024;
  std::uint32_t max_send_wr = 64;
  std::uint32_t max_recv_wr = 64;
  std::uint32_t max_send_sge = kMaxSge;
  std::uint32_t max_recv_sge = kMaxSge;
  std::uint32_t max_inline = kMaxInline;
  bool sq_sig_all = false;
  // Receives come from this SRQ instead of the QP's own RQ (srq.h).
  Srq* srq = nullptr;
  // Without an SRQ: the receive WRs posted but not yet handed to the QP,
  // taken when a packet finds the RQ empty (recv_refill.h).
  RecvRefill recv_refill{};
};

// The accessors, events and Qp entry points it shares with UcQp are
// UnreliableQp's (unreliable_qp_core.h).
class UdQp : public UnreliableQp<UdQp, UdQpConfig, UdCounters> {
 public:
  UdQp(const UdQpConfig& cfg, MrTable& mrs);

  std::uint32_t qkey() const { return qkey_; }

  // ibv_modify_qp: 0 or EINVAL (illegal transition, missing or extra
  // attribute, unsupported value). Attributes used: state, Q_Key,
  // pkey_index, sq_psn.
  int modify(std::uint32_t mask, const QpAttrValues& attr);

  // ibv_post_send for one WR: 0, EINVAL (QP in RESET/INIT/RTR, opcode other
  // than SEND/SEND_WITH_IMM, too many SGEs, inline data over max_inline) or
  // ENOMEM (send queue full). In SQE and ERR the WR is queued and flushed.
  int post_send(const SendWr& wr);
  // ibv_post_recv for one WR: 0, EINVAL (RESET, too many SGEs) or ENOMEM.
  int post_recv(const RecvWr& wr);

  // Sends up to `budget` WRs (one frame each) in RTS. Stops early when the
  // TX sink has no room (the WR stays queued). Returns WRs retired.
  template <TxSink Tx, CqSink Cq>
  std::uint32_t process_send(Tx& tx, Cq& send_cq, std::uint32_t budget);

  // One parsed, ICRC-checked RoCEv2 packet addressed to this QP.
  template <CqSink Cq>
  UdRx on_packet(const wire::ParsedPacket& pkt, Cq& recv_cq);
  using UnreliableQp::on_packet;

  // In SQE flushes the send queue, in ERR both queues, with
  // IBV_WC_WR_FLUSH_ERR. Stops at a full CQ (the rest stays queued for the
  // next call). Returns completions posted.
  template <CqSink SendCq, CqSink RecvCq>
  std::uint32_t flush(SendCq& send_cq, RecvCq& recv_cq);

  // ibv_query_qp's values this QP keeps (the caller keeps the others, as
  // modify applied them).
  void query_own(QpAttrValues* v) const {
    v->sq_psn = next_psn().value();
    v->qkey = qkey();
  }

  // The shape every QP kind has (qp_concept.h).
  static constexpr QpType kType = QpType::kUd;
  static constexpr QpAddressing kAddressing = QpAddressing::kPerWr;
  // The pump has something to do: a WR to send (RTS), or in SQE/ERR a flush.
  bool has_output() const {
    return (core_.state == QpState::kRts && !core_.sq.empty()) ||
           unreliable_needs_flush(core_.state);
  }

 private:
  using SendStep = UnreliableSendStep;

  // Frame bytes the front send WR needs; 0 when it sends no frame.
  std::size_t front_frame_len() const;
  // Builds the front WR's frame into `frame` (sized front_frame_len()),
  // retires the WR and fills *wc when it completes.
  SendStep send_front(std::span<std::uint8_t> frame, Cqe* wc);
  // Receive checks and placement; fills *wc for kDelivered/kLenErr/kProtErr.
  UdRx receive(const wire::ParsedPacket& pkt, Cqe* wc);

  std::uint32_t qkey_ = 0;
};

template <TxSink Tx, CqSink Cq>
std::uint32_t UdQp::process_send(Tx& tx, Cq& send_cq, std::uint32_t budget) {
  std::uint32_t done = 0;
  while (done < budget && core_.state == QpState::kRts && !core_.sq.empty()) {
    const std::size_t len = front_frame_len();
    std::span<std::uint8_t> frame;
    if (len != 0) {
      frame = tx.tx_alloc(len);
      if (frame.empty()) {
        ++core_.counters.tx_no_buffer;
        break;
      }
    }
    Cqe wc{};
    const SendStep s = send_front(frame, &wc);
    if (s.frame_len != 0) tx.tx_commit(s.frame_len);
    if (s.has_wc) core_.push(send_cq, wc, CqRole::kSend);
    ++done;
  }
  return done;
}

template <CqSink Cq>
UdRx UdQp::on_packet(const wire::ParsedPacket& pkt, Cq& recv_cq) {
  Cqe wc{};
  const UdRx r = receive(pkt, &wc);
  const bool has_wc = r == UdRx::kDelivered || r == UdRx::kLenErr || r == UdRx::kProtErr;
  return core_.finish_rx(r, has_wc, wc, recv_cq);
}

template <CqSink SendCq, CqSink RecvCq>
std::uint32_t UdQp::flush(SendCq& send_cq, RecvCq& recv_cq) {
  return core_.flush(
      send_cq, recv_cq, [] {}, [] {});
}

static_assert(Qp<UdQp>);

}  // namespace uroce::transport
