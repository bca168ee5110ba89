// What the three halves of an RC QP share: its creation-time configuration,
// the attribute values modify() set, the QP state, the MR table and the
// counters. The requester (rc_requester.h), completer (rc_completer.h) and
// responder (rc_responder.h) each hold a reference to one RcCore owned by
// RcQp (rc_qp.h).
#pragma once

#include <cstdint>

#include "datapath/base/counter_fields.h"
#include "datapath/transport/async_event.h"
#include "datapath/transport/mr_table.h"
#include "datapath/transport/qp_attr.h"
#include "datapath/transport/qp_common.h"
#include "datapath/transport/rc_counters.h"
#include "datapath/transport/recv_refill.h"
#include "datapath/transport/srq.h"
#include "datapath/transport/wr.h"
#include "datapath/wire/opcodes.h"

namespace uroce::transport {

// Knobs that are not verbs attributes. Defaults follow Linux rxe.
struct RcTuning {
  // Unacknowledged PSNs the requester may have outstanding before it stops
  // sending new packets (rxe RXE_MAX_UNACKED_PSNS). Must stay below 2^22.
  std::uint32_t window_psns = 128;
  // The requester sets AckReq on the last packet of every message and at
  // least on every this-many-th packet (rxe asks when more than
  // RXE_MAX_PKT_PER_ACK = 64 went without), or every half window when its
  // window (window_psns, or a selective-repeat cap) is smaller.
  std::uint32_t ack_req_every = 64;
  // The responder acknowledges when a packet has AckReq set and at least
  // every this-many in-order request packets (0: only on AckReq).
  std::uint32_t ack_every = 64;
  // Responder packets (ACK/NAK, READ responses) emitted from inside
  // on_packet before the rest waits for pump_tx.
  std::uint32_t responder_burst = 16;
  // Selective repeat (docs/lossy.md): packets in flight at most, one
  // bandwidth-delay product of the fabric (IRN's BDP cap); the requester
  // also keeps window_psns and the responder's window (kSrWindow).
  std::uint32_t sr_cap_psns = 256;
};

// Fixed at creation (ibv_create_qp's cap and the engine's choices).
struct RcQpConfig {
  std::uint32_t qpn = 0;
  PdHandle pd = 0;
  LocalPort local{};
  std::uint32_t max_send_wr = 64;
  std::uint32_t max_recv_wr = 64;
  std::uint32_t max_send_sge = kMaxSge;
  std::uint32_t max_recv_sge = kMaxSge;
  std::uint32_t max_inline = kMaxInline;
  // Upper bounds for the max_rd_atomic / max_dest_rd_atomic attributes;
  // the responder's READ/atomic resource table has max_dest_rd_atomic slots.
  std::uint8_t max_rd_atomic = 16;
  std::uint8_t max_dest_rd_atomic = 16;
  bool sq_sig_all = false;
  // Receives come from this SRQ instead of the QP's own RQ (srq.h).
  Srq* srq = nullptr;
  // Without an SRQ: the receive WRs posted but not yet handed to the QP,
  // taken when a packet finds the RQ empty (recv_refill.h).
  RecvRefill recv_refill{};
  RcTuning tuning{};
};

struct RcHomaTx;  // rc_homa.h
struct DcLane;    // dc_lane.h
struct RcSr;      // rc_sr.h

struct RcCore {
  RcCore(const RcQpConfig& c, MrTable& m) : cfg(c), mrs(m) {}

  RcQpConfig cfg;
  MrTable& mrs;
  QpState state = QpState::kReset;
  QpAttrValues attr{};
  RcCounters ctr{};
  // Pending async events and a completion a CQ refused (async_event.h).
  QpEventState ev{cfg.qpn};
  // The Homa-like scheduler's sender state (rc_homa.h), attached by the
  // engine once the peer runs it too; null: plain RC (one test per packet).
  RcHomaTx* homa = nullptr;
  // A DC stream or responder context (dc_lane.h, owned by the DCI or the
  // target's pool); null: plain RC.
  DcLane* dc = nullptr;
  // Selective repeat with a uroce peer (rc_sr.h, docs/lossy.md), attached
  // by the engine once the handshake is done; null: plain RC (one test per
  // packet).
  RcSr* sr = nullptr;

  std::uint32_t mtu() const { return wire::path_mtu_bytes(attr.path_mtu); }
  std::uint16_t udp_src() const { return src_port; }
  // rxe's create-time port until modify() sets the AV; then the one rxe's
  // rxe_modify_qp computes from the QPNs (qp_common.h).
  std::uint16_t src_port = rxe_udp_src_port(cfg.qpn);
};

}  // namespace uroce::transport
