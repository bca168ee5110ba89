// What turns an RC requester, completer or responder into one side of a DC
// connection (docs/dc.md): RcCore::dc points here. On the initiator, one
// per DCI stream (the lane): its packets are DC requests with a DCETH
// naming the stream's target, connection and SYN; on the target, one per
// responder context: its packets are DC responses with a DCAETH naming the
// initiator's lane and connection. Null RcCore::dc: plain RC, one pointer
// test per packet built or received.
#pragma once

#include <cstdint>

#include "datapath/transport/dc_spray.h"
#include "datapath/transport/dc_sr.h"
#include "datapath/transport/dc_stream.h"
#include "datapath/transport/qp_common.h"
#include "datapath/transport/wr.h"
#include "datapath/wire/builder.h"
#include "datapath/wire/opcodes.h"

namespace uroce::transport {

// A connection the stream left (docs/dc.md, "Initiator"): its DC_DISCONNECT
// goes again at each timeout until the target answers it (GONE, or
// UNKNOWN when it kept nothing), so a target is not left holding a context
// a lost DISCONNECT should have freed.
struct DcClosing {
  bool active = false;
  PathAddr av{};
  std::uint32_t dctn = 0;
  std::uint64_t key = 0;
  std::uint32_t conn = 0;
  Psn psn{};
  std::uint8_t tries = 0;
  TimeNs deadline = 0;
};

struct RcSr;  // rc_sr.h

struct DcLane {
  bool initiator = true;
  std::uint16_t lane = 0;
  // Initiator: the stream's binding and connection, and the device's
  // connection numbers.
  DcStream stream{};
  DcConnClock* clock = nullptr;
  // The stream's oldest PSN without a response, set by the requester
  // before each packet (DCETH Acked PSN).
  Psn acked{};
  DcClosing closing{};
  std::uint64_t disconnect_resends = 0;
  // Selective repeat (dc_sr.h), when the device runs it: the stream's
  // state (owned by the DCI), which RcCore::sr points to while the current
  // connection uses it; the DCI's targets that declined; the port's
  // Ethernet MTU, which SR's headers must fit beside a full payload; the
  // paths its connections spray over (dc_spray.h: the DCI's, or on the
  // target the pool's).
  RcSr* sr = nullptr;
  DcSrDeclined* sr_declined = nullptr;
  std::uint32_t sr_eth_mtu = 0;
  DcSpray* spray = nullptr;
  // The host of the stream's last connection in selective repeat: a new
  // connection there keeps the RTT estimates of `sr` (SrTx::restart).
  DcDest sr_peer{};
  bool sr_peer_valid = false;
  // Target: the connection this context serves.
  std::uint32_t conn = 0;
};

// The target a DC WR names (the engine resolved its AH into `ud`).
inline DcDest dc_dest_of(const UdDest& ud) {
  DcDest d;
  d.ipv6 = ud.ipv6;
  if (ud.ipv6) {
    d.dip6 = ud.dip6;
  } else {
    d.dip = ud.dip;
  }
  d.dctn = ud.remote_qpn;
  d.key = ud.dc_key;
  return d;
}

// The path to a DC target, as a connected QP's address vector.
inline PathAddr dc_path_of(const UdDest& ud, const LocalPort& local, std::uint8_t ecn) {
  PathAddr a;
  a.dmac = ud.dmac;
  a.dip = ud.dip;
  a.dscp = ud.dscp & 0x3f;  // as a UD packet takes it (ud_qp.cpp)
  a.ttl = ud.ttl;
  a.ipv6 = ud.ipv6;
  a.global_src = ud.global_src;
  if (ud.ipv6) a.route6 = wire::Ipv6Route{local.ip6(ud.global_src), ud.dip6, 0};
  a.ecn = ecn;
  return a;
}

// An RC spec made a DC one: the DC opcode of the same operation and the DC
// header of its direction. `dci_qpn` is the initiator's own QPN. An SR
// opcode (a connection with selective repeat, rc_sr.h) becomes the DC
// opcode of its operation with the DC header's SR flag (DCETH R; SR_SACK:
// a DC ACKNOWLEDGE with DCAETH S), which selects the SR form of its shape
// (wire/opcodes.h, dc_sr_opcode_info).
[[gnu::noinline]] inline void dc_decorate(const DcLane& l, std::uint32_t dci_qpn,
                                          wire::PacketSpec& s) {
  bool sr = false;
  if (s.opcode < wire::op::kDcBase) {
    std::uint8_t o = s.opcode;
    if (o == wire::op::kSrSack) {
      o = wire::op::kRcAck;
      sr = true;
    } else if (o >= wire::op::kSrBase) {
      o = wire::rc_opcode_of_sr(o);
      sr = true;
    }
    s.opcode = wire::dc_opcode(o);
  }
  if (l.initiator) {
    const DcStream& st = l.stream;
    s.dc_eth = wire::DcEthHdr::make(st.dest().key, st.syn(), dci_qpn, l.lane, st.conn(),
                                    st.start_psn().value(), l.acked.value());
    if (sr) s.dc_eth->set_sr(true);
  } else {
    s.dc_aeth = wire::DcAethHdr::make(l.lane, wire::DcStatus::kOk, l.conn);
    if (sr) s.dc_aeth->set_sack(true);
  }
}

// The DC_DISCONNECT of a closing connection, from what was saved of it
// (the stream may be connected elsewhere by now).
inline wire::PacketSpec dc_disconnect_spec(const DcClosing& x, const LocalPort& local,
                                           std::uint32_t dci_qpn, std::uint16_t lane,
                                           std::uint16_t udp_src) {
  wire::PacketSpec s;
  s.eth_src = local.mac;
  s.eth_dst = x.av.dmac;
  s.ip_src = local.ip;
  s.ip_dst = x.av.dip;
  if (x.av.ipv6) s.ip6 = &x.av.route6;
  s.dscp = x.av.dscp;
  s.ecn = wire::kEcnNotEct;
  s.ttl = x.av.ttl;
  s.udp_src = udp_src;
  s.opcode = wire::op::kDcDisconnect;
  s.pkey = wire::kDefaultPKey;
  s.dest_qp = x.dctn;
  s.psn = x.psn.value();
  s.dc_eth =
      wire::DcEthHdr::make(x.key, false, dci_qpn, lane, x.conn, x.psn.value(), x.psn.value());
  return s;
}

}  // namespace uroce::transport
