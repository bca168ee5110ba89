// Unreliable Connected QP (IBTA Vol1 9.7 without acknowledgements, 9.7.5.1
// for the responder; Linux rxe behaviour where the spec leaves room).
//
// Send: SEND, SEND_WITH_IMM, RDMA_WRITE, RDMA_WRITE_WITH_IMM, segmented by
// the path MTU into FIRST/MIDDLE/LAST or ONLY packets with consecutive PSNs
// (24-bit, wrapping); RETH on the first packet of a WRITE, ImmDt on the last
// packet of the "with immediate" forms. Nothing is acknowledged or
// retransmitted: a signalled WR completes once its last frame is committed.
//
// Receive: packets must arrive with the expected PSN. A gap, or a MIDDLE/
// LAST that does not continue the message in progress, drops the rest of
// that message; the receiver resynchronises on the next FIRST or ONLY,
// whatever its PSN. The receive WR a dropped SEND had started to fill is not
// completed: it stays at the head of the queue and takes the next message
// (IBTA 9.7.5.1.x class D1 for UC). rxe also discards the FIRST packet that
// reveals a missing LAST; we accept it as the start of the new message, as
// the spec reads. WRITE checks its RETH against the MR table (rkey, PD,
// bounds, IBV_ACCESS_REMOTE_WRITE) on the first packet and every chunk on
// its own; a failure drops the message silently (UC has no NAK). A SEND or
// WRITE_WITH_IMM with no receive WR is dropped (UC has no RNR). A SEND
// longer than its receive WR completes IBV_WC_LOC_LEN_ERR. Every drop is
// counted by reason (UcRx).
//
// States, flush and threading as for UdQp (ud_qp.h); SQD lets the message in
// progress finish and starts no new one.
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
#include "datapath/transport/uc_counters.h"
#include "datapath/transport/unreliable_qp_core.h"
#include "datapath/transport/work_queue.h"
#include "datapath/transport/wr.h"
#include "datapath/wire/opcodes.h"
#include "datapath/wire/parser.h"

namespace uroce::transport {

// Largest UC message: the RETH DMA length limit (IBTA 9.4.4: 2^31).
inline constexpr std::uint64_t kUcMaxMessage = 1ull << 31;

struct UcQpConfig {
  std::uint32_t qpn = 0;
  PdHandle pd = 0;
  LocalPort local{};
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

// The accessors, events and Qp entry points it shares with UdQp are
// UnreliableQp's (unreliable_qp_core.h).
class UcQp : public UnreliableQp<UcQp, UcQpConfig, UcCounters> {
 public:
  UcQp(const UcQpConfig& cfg, MrTable& mrs);

  Psn expected_psn() const { return epsn_; }
  // The UDP source port of its packets: rxe's per-QP port unless the engine
  // set another (a port steered to the peer's lcore, datapath/port/rss.h).
  std::uint16_t udp_src() const { return src_port_; }
  void set_udp_src(std::uint16_t port) { src_port_ = port; }

  // ibv_modify_qp: 0 or EINVAL. Attributes used: state, access flags,
  // pkey_index, av, path_mtu, dest_qp_num, rq_psn, sq_psn.
  int modify(std::uint32_t mask, const QpAttrValues& attr);

  // 0, EINVAL (RESET/INIT/RTR, opcode not SEND/WRITE[_WITH_IMM]/BIND_MW, too many
  // SGEs, inline over max_inline, message over 2^31) or ENOMEM (full).
  int post_send(const SendWr& wr);
  int post_recv(const RecvWr& wr);

  // Sends up to `budget` packets in RTS (and in SQD until the message in
  // progress is out). Stops when the TX sink has no room. Returns packets.
  template <TxSink Tx, CqSink Cq>
  std::uint32_t process_send(Tx& tx, Cq& send_cq, std::uint32_t budget);

  template <CqSink Cq>
  UcRx on_packet(const wire::ParsedPacket& pkt, Cq& recv_cq);
  using UnreliableQp::on_packet;

  // As UdQp::flush.
  template <CqSink SendCq, CqSink RecvCq>
  std::uint32_t flush(SendCq& send_cq, RecvCq& recv_cq);

  // ibv_query_qp's values this QP keeps (the caller keeps the others, as
  // modify applied them).
  void query_own(QpAttrValues* v) const {
    v->sq_psn = next_psn().value();
    v->rq_psn = expected_psn().value();
  }

  // The shape every QP kind has (qp_concept.h).
  static constexpr QpType kType = QpType::kUc;
  static constexpr QpAddressing kAddressing = QpAddressing::kConnected;
  // The pump has something to do: a segment to send (RTS, or SQD within a message), or in SQE/ERR a flush.
  bool has_output() const { return may_send() || unreliable_needs_flush(core_.state); }

 private:
  enum class RxOp : std::uint8_t { kNone, kSend, kWrite };
  struct Segment {
    std::uint8_t opcode = 0;
    std::uint32_t len = 0;  // payload bytes
    bool first = false;
    bool last = false;
  };
  using SendStep = UnreliableSendStep;

  bool may_send() const;
  Segment next_segment() const;
  std::size_t segment_frame_len(const Segment& s) const;
  SendStep send_segment(const Segment& s, std::span<std::uint8_t> frame, Cqe* wc);
  // The front WR is a BIND_MW (a local operation, as rxe runs it on UC):
  // binds, retires the WR and fills *wc when it completes (signaled, or
  // refused: IBV_WC_MW_BIND_ERR and the QP to ERR).
  bool bind_front(Cqe* wc);
  UcRx receive(const wire::ParsedPacket& pkt, Cqe* wc);
  UcRx receive_send(const wire::ParsedPacket& pkt, bool starts, bool ends, Cqe* wc);
  UcRx receive_write(const wire::ParsedPacket& pkt, bool starts, bool ends, Cqe* wc);
  // Forgets the message in progress; a half-filled receive WR is reused.
  void abandon_message();
  // Drops the rest of the current message; returns `why` for chaining.
  UcRx drop_message(UcRx why);
  void reset_state();

  std::uint32_t access_ = 0;
  PathAddr path_{};
  wire::PathMtu mtu_ = wire::PathMtu::k1024;
  std::uint32_t dest_qpn_ = 0;
  std::uint16_t src_port_;

  // Requester: how far into the front send WR we are (the next PSN is
  // core_.psn).
  bool tx_in_msg_ = false;
  std::uint64_t tx_offset_ = 0;

  // Responder: expected PSN and the message in progress.
  Psn epsn_{};
  bool drop_msg_ = false;
  RxOp rx_op_ = RxOp::kNone;
  std::uint64_t rx_offset_ = 0;  // SEND: bytes placed in the front recv WR
  std::uint64_t w_va_ = 0;       // WRITE: next target address
  std::uint32_t w_rkey_ = 0;
  std::uint64_t w_left_ = 0;  // WRITE: bytes still to come
  std::uint32_t w_len_ = 0;   // WRITE: RETH DMA length
};

template <TxSink Tx, CqSink Cq>
std::uint32_t UcQp::process_send(Tx& tx, Cq& send_cq, std::uint32_t budget) {
  std::uint32_t done = 0;
  while (done < budget && may_send()) {
    if (core_.sq.front().opcode == WrOpcode::kBindMw) [[unlikely]] {
      Cqe wc{};
      if (bind_front(&wc)) core_.push(send_cq, wc, CqRole::kSend);
      continue;
    }
    const Segment seg = next_segment();
    const std::span<std::uint8_t> frame = tx.tx_alloc(segment_frame_len(seg));
    if (frame.empty()) {
      ++core_.counters.tx_no_buffer;
      break;
    }
    Cqe wc{};
    const SendStep s = send_segment(seg, frame, &wc);
    if (s.frame_len != 0) {
      tx.tx_commit(s.frame_len);
      ++done;
    }
    if (s.has_wc) core_.push(send_cq, wc, CqRole::kSend);
  }
  return done;
}

template <CqSink Cq>
UcRx UcQp::on_packet(const wire::ParsedPacket& pkt, Cq& recv_cq) {
  Cqe wc{};
  const UcRx r = receive(pkt, &wc);
  const bool has_wc = r == UcRx::kCompleted || r == UcRx::kLenErr || r == UcRx::kProtErr;
  return core_.finish_rx(r, has_wc, wc, recv_cq);
}

template <CqSink SendCq, CqSink RecvCq>
std::uint32_t UcQp::flush(SendCq& send_cq, RecvCq& recv_cq) {
  return core_.flush(
      send_cq, recv_cq,
      [this] {
        tx_in_msg_ = false;
        tx_offset_ = 0;
      },
      [this] { rx_offset_ = 0; });
}

static_assert(Qp<UcQp>);

}  // namespace uroce::transport
