// The RC send queue and the PSN bookkeeping its requester and completer
// share (IBTA Vol1 9.7.1, 9.7.5, 9.9.2).
//
// Every WQE, when first transmitted, takes a contiguous PSN range
// [first_psn, first_psn + npkts): one PSN per request packet for SEND and
// WRITE, one per expected response packet for READ (so the READ request
// itself carries first_psn and the next WQE starts after the last response),
// one for an atomic. Ranges of consecutive WQEs are adjacent.
//
// Cursors (free-running WorkQueue indices, head <= req_idx <= sent_idx <=
// tail, and PSNs):
//   head       oldest WQE not yet completed (the completer's position)
//   req_idx    WQE holding the next packet to transmit; req_pkt its packet
//   sent_idx   one past the newest WQE that has a PSN range
//   comp_psn   oldest PSN not yet acknowledged
//   psn_high   next PSN never sent; outstanding PSNs are [comp_psn, psn_high)
// Go-back-N moves (req_idx, req_pkt) back to the WQE and packet holding a
// PSN; PSN ranges never change once assigned.
#pragma once

#include <cstdint>

#include "datapath/base/time.h"
#include "datapath/transport/cqe.h"
#include "datapath/transport/seq24.h"
#include "datapath/transport/wr.h"
#include "datapath/transport/wr_queue.h"

namespace uroce::transport {

struct SendWqe {
  void bind(Sge* area, std::uint32_t sges) { wr.bind(area, sges); }

  QueuedSendWr wr{};
  Psn first_psn{};
  std::uint32_t npkts = 0;
  bool started = false;
  // Selective repeat (docs/lossy.md): the receive sequence number an SR
  // WQE's packets carry (set when it starts; a WQE is SR when it started
  // while RcSr::tx_on, rc_sr.h).
  std::uint32_t rsn = 0;
  // Set when the WQE failed; the flush reports it instead of FLUSH_ERR.
  WcStatus err = WcStatus::kSuccess;

  Psn last_psn() const { return first_psn + (npkts - 1); }
  bool contains(Psn p) const { return Psn::forward(first_psn, p) < npkts; }
};

constexpr bool is_rd_atomic(WrOpcode op) { return op == WrOpcode::kRdmaRead || is_atomic(op); }

// PSNs a WR (SendWr or QueuedSendWr) takes at path MTU `mtu`:
// ceil(len / mtu), at least 1.
template <class Wr>
constexpr std::uint32_t wqe_packets(const Wr& wr, std::uint32_t mtu) {
  if (is_atomic(wr.opcode)) return 1;
  const std::uint64_t len = wr.length();
  return len == 0 ? 1 : static_cast<std::uint32_t>((len + mtu - 1) / mtu);
}

// The completion opcode of a send WR.
WcOpcode wc_opcode_for(WrOpcode op);

struct RcSendQueue {
  // `sges_per_slot`: send_area_sges of the QP's caps (wr_queue.h).
  RcSendQueue(std::uint32_t capacity, std::uint32_t sges_per_slot) : q(capacity, sges_per_slot) {}

  WrQueue<SendWqe> q;
  std::uint32_t req_idx = 0;
  std::uint32_t req_pkt = 0;
  std::uint32_t sent_idx = 0;
  Psn comp_psn{};
  Psn psn_high{};
  // READ/atomic WQEs transmitted and not yet completed.
  std::uint32_t rd_atomic_out = 0;
  // Request packets sent since the last one with AckReq.
  std::uint32_t noack_pkts = 0;

  // Retry state (the completer's, kept here because sending arms it).
  TimeNs rto_deadline = 0;  // 0: not armed
  std::uint8_t retry_left = 0;
  std::uint8_t rnr_left = 0;
  bool rnr_wait = false;  // requester paused until rnr_deadline
  TimeNs rnr_deadline = 0;
  Psn rnr_psn{};
  // A rewind asked for by a NAK or a response gap is under way: further such
  // requests are ignored until the acknowledged PSN moves (a timeout still
  // rewinds). Keeps one loss from starting a rewind per later packet.
  bool rewind_pending = false;
  // Selective repeat: a cumulative acknowledgement reached past an SR READ
  // still missing responses (docs/lossy.md "READ responses"); applied once
  // that READ completes.
  bool sr_acked_valid = false;
  Psn sr_acked{};

  // Empties the queue and sets every cursor for a fresh start at `psn`.
  void reset(Psn psn);
  bool outstanding() const { return comp_psn != psn_high; }
  bool cursor_behind_head() const { return static_cast<std::int32_t>(req_idx - q.head()) < 0; }
  // The started WQE whose range holds p, or nullptr.
  SendWqe* find(Psn p);
  // Go-back-N: the next packet transmitted is the one with PSN p (which must
  // be outstanding or equal psn_high).
  void rewind(Psn p);
  // Moves the transmit cursor past WQEs already retired and packets already
  // acknowledged (after a rewind, ACKs for the old transmission may have
  // arrived); call before choosing the next packet.
  void skip_acknowledged();
};

}  // namespace uroce::transport
