// Pieces every transport QP (UD, UC, and RC if it wants them) shares: the
// local port address, the remote path of a connected QP, the attribute values
// of an ibv_modify_qp, their value checks, the P_Key match rule, the UDP
// source port rxe picks, the shape of error completions, gathering a send
// WR's payload (inline or through its SGEs) and the immediate-data byte order.
//
// Header-only and I/O-free, like the rest of datapath/transport.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <span>

#include "datapath/transport/cqe.h"
#include "datapath/transport/qp_attr.h"
#include "datapath/transport/qp_modify_rules.h"
#include "datapath/transport/sge_copy.h"
#include "datapath/transport/wr.h"
#include "datapath/wire/addr.h"
#include "datapath/wire/bth.h"
#include "datapath/wire/builder.h"
#include "datapath/wire/immdt.h"
#include "datapath/wire/opcodes.h"
#include "datapath/wire/parser.h"

namespace uroce::transport {

// The port a QP sends from: its MAC, IPv4 address (GID index 1,
// ::ffff:<IPv4>, in the GID table rxe and we expose), and IPv6 addresses
// (GID 0, fe80:: + EUI-64 of the MAC; the global one, all zero if none).
struct LocalPort {
  wire::MacAddr mac{};
  wire::Ipv4Addr ip{};
  wire::Ipv6Addr ip6_link_local{};
  wire::Ipv6Addr ip6_global{};

  // The IPv6 source address a path with `global_src` uses.
  const wire::Ipv6Addr& ip6(bool global_src) const {
    return global_src ? ip6_global : ip6_link_local;
  }
};

// The far end of a connected QP (UC, RC): ibv_qp_attr.ah_attr as the engine
// resolved it (GID -> IPv4 or IPv6, ARP or ND -> MAC, traffic class ->
// DSCP, hop limit). With `ipv6` the path is RoCEv2 over IPv6 along route6
// (from our link-local address, or from the global one with global_src,
// to the peer), and dip is unused.
struct PathAddr {
  wire::MacAddr dmac{};
  wire::Ipv4Addr dip{};
  std::uint8_t dscp = 0;
  std::uint8_t ttl = 64;
  bool ipv6 = false;
  bool global_src = false;
  wire::Ipv6Route route6{};
  // The ECN field of its packets: ECT(0) (2) where the device runs DCQCN
  // (datapath/policy/dcqcn.h), else Not-ECT.
  std::uint8_t ecn = 0;
};

// rxe's check_addr: a connected QP takes packets only from its peer's
// address to its own, over the path's IP version. An IPv6 packet never
// passes the IPv4 check: the parser leaves 0.0.0.0 in its `ip` addresses.
// Always inlined: it is on every connected packet's path, and left to the
// compiler's unit-growth limits it was sometimes called out of line (about
// 15 instructions per packet, bench-callgrind.sh).
[[gnu::always_inline]] inline bool from_peer(const wire::ParsedPacket& p, const PathAddr& a,
                                             const LocalPort& local) {
  if (!a.ipv6) return p.ip.src() == a.dip && p.ip.dst() == local.ip;
  return p.ipv6 && p.ip6.src() == a.route6.dst && p.ip6.dst() == a.route6.src;
}

// The attribute values of one ibv_modify_qp. Only the fields whose
// qp_attr bit is in the accompanying mask are meaningful.
struct QpAttrValues {
  QpState qp_state = QpState::kReset;
  QpState cur_qp_state = QpState::kReset;
  std::uint32_t qp_access_flags = 0;
  std::uint16_t pkey_index = 0;
  std::uint8_t port_num = 1;
  std::uint32_t qkey = 0;
  PathAddr av{};
  wire::PathMtu path_mtu = wire::PathMtu::k1024;
  std::uint32_t rq_psn = 0;
  std::uint32_t sq_psn = 0;
  std::uint32_t dest_qp_num = 0;
  std::uint8_t timeout = 0;
  std::uint8_t retry_cnt = 0;
  std::uint8_t rnr_retry = 0;
  std::uint8_t min_rnr_timer = 0;
  std::uint8_t max_rd_atomic = 0;
  std::uint8_t max_dest_rd_atomic = 0;
};

// The one port and the one P_Key table entry (0xFFFF at index 0) a device
// of ours has, as rxe's.
inline constexpr std::uint8_t kPortNum = 1;
inline constexpr std::uint16_t kPkeyTableSize = 1;

// 0 when `mask` is a legal modification of a `type` QP in state `cur` (the
// IBTA transition table, qp_modify_rules.h) and every value it carries is one
// this device supports; EINVAL otherwise: a cur_qp_state that is not the
// QP's state, a pkey_index past the table, a port other than 1, a path MTU
// code outside 1..5, a QPN or PSN wider than 24 bits, an address vector
// whose DSCP, ECN or IPv6 flow label is wider than its field.
inline int check_modify_values(QpType type, QpState cur, std::uint32_t mask,
                               const QpAttrValues& a) {
  const QpState next = (mask & qp_attr::kState) != 0 ? a.qp_state : cur;
  if (int rc = check_modify(type, cur, next, mask); rc != 0) return rc;
  if ((mask & qp_attr::kCurState) != 0 && a.cur_qp_state != cur) return EINVAL;
  if ((mask & qp_attr::kPkeyIndex) != 0 && a.pkey_index >= kPkeyTableSize) {
    return EINVAL;
  }
  if ((mask & qp_attr::kPort) != 0 && a.port_num != kPortNum) return EINVAL;
  if ((mask & qp_attr::kPathMtu) != 0 &&
      !wire::path_mtu_valid(static_cast<std::uint8_t>(a.path_mtu))) {
    return EINVAL;
  }
  if ((mask & qp_attr::kDestQpn) != 0 && a.dest_qp_num > wire::kQpnMask) {
    return EINVAL;
  }
  // The path's header fields, checked here once: the packets built from
  // them are written unchecked (wire::write_roce).
  if ((mask & qp_attr::kAv) != 0 &&
      (a.av.dscp > 0x3f || a.av.ecn > 0x03 ||
       (a.av.ipv6 && a.av.route6.flow_label > wire::kFlowLabelMask))) {
    return EINVAL;
  }
  if ((mask & qp_attr::kRqPsn) != 0 && a.rq_psn > wire::kPsnMask) return EINVAL;
  if ((mask & qp_attr::kSqPsn) != 0 && a.sq_psn > wire::kPsnMask) return EINVAL;
  return 0;
}

// P_Key match (IBTA Vol1 10.9.3): the low 15 bits are equal and at least one
// of the two keys has the full-membership bit (0x8000).
constexpr bool pkey_match(std::uint16_t a, std::uint16_t b) {
  return (a & 0x7fff) == (b & 0x7fff) && ((a | b) & 0x8000) != 0;
}

// The UDP source port rxe gives a QP without a flow label:
// 0xC000 + hash_32(qpn, 14), hash_32 being the kernel's multiplicative hash
// (x * 0x61C88647, top bits). Receivers accept any source port; matching
// rxe keeps our traces comparable with its.
constexpr std::uint16_t rxe_udp_src_port(std::uint32_t qpn) {
  const std::uint32_t h = (qpn * 0x61C88647u) >> (32 - 14);
  return static_cast<std::uint16_t>(0xC000u + (h & 0x3fffu));
}

// The UDP source port rxe gives a connected QP once modify_qp sets its AV
// (always with a GRH for RoCE): rdma_get_udp_sport(flow_label, lqpn, rqpn).
// A zero flow label is replaced by the 20-bit fold of lqpn * rqpn
// (rdma_calc_flow_label); the port is 0xC000 | (low 14 bits of the label
// XOR its top 6 bits). Both ends of a connection compute the same value.
constexpr std::uint16_t rxe_connected_udp_src_port(std::uint32_t flow_label, std::uint32_t lqpn,
                                                   std::uint32_t rqpn) {
  std::uint32_t fl = flow_label & 0xfffffu;
  if (fl == 0) {
    std::uint64_t v = static_cast<std::uint64_t>(lqpn) * rqpn;
    v ^= v >> 20;
    v ^= v >> 40;
    fl = static_cast<std::uint32_t>(v & 0xfffffu);
  }
  const std::uint32_t low = (fl & 0x3fffu) ^ ((fl & 0xfc000u) >> 14);
  return static_cast<std::uint16_t>(0xC000u | low);
}

// A completion in error carries only wr_id, status and qp_num; rxe leaves
// every other field zero, and the verbs API defines no other field then.
inline Cqe error_wc(std::uint64_t wr_id, std::uint32_t qpn, WcStatus status) {
  Cqe c{};
  c.wr_id = wr_id;
  c.status = static_cast<std::uint32_t>(status);
  c.qp_num = qpn;
  return c;
}

// Receive processing runs in RTR and later states short of ERR (IBTA 10.3.1:
// SQD and SQE stop only the send queue).
constexpr bool receive_enabled(QpState s) {
  return s == QpState::kRtr || s == QpState::kRts || s == QpState::kSqd || s == QpState::kSqe;
}

// Copies `dst.size()` bytes of a send WR's message, starting `offset` bytes
// in, into `dst` (a TX frame's payload area): from the inline data, or
// through the SGE list checked against the MR table.
inline SgeCopyResult gather_wr(const MrTable& mrs, PdHandle pd, const QueuedSendWr& wr,
                               std::uint64_t offset, std::span<std::uint8_t> dst) {
  if ((wr.flags & send_flag::kInline) != 0) {
    SgeCopyResult r;
    if (offset + dst.size() > wr.inline_len) {
      r.too_long = true;
      return r;
    }
    if (!dst.empty()) std::memcpy(dst.data(), wr.inline_data() + offset, dst.size());
    return r;
  }
  return gather(mrs, pd, wr.sge(), wr.num_sge, offset, dst);
}

// Checks every SGE of a send WR (lkey, PD, bounds) before its first packet
// leaves, so that a bad SGE fails the WR instead of cutting a message short
// on the wire. Inline WRs have nothing to check.
inline MrError check_send_sges(const MrTable& mrs, PdHandle pd, const QueuedSendWr& wr) {
  if ((wr.flags & send_flag::kInline) != 0) return MrError::kOk;
  const Sge* sge = wr.sge();
  for (std::uint32_t i = 0; i < wr.num_sge; ++i) {
    std::uint8_t* host = nullptr;
    const MrError e = mrs.resolve(sge[i].lkey, pd, sge[i].addr, sge[i].length, 0, &host);
    if (e != MrError::kOk) return e;
  }
  return MrError::kOk;
}

// The 4 bytes of immediate data go on the wire exactly as they sit in
// ibv_send_wr.imm_data (network order in memory) and come back the same way
// in ibv_wc.imm_data: a byte copy, independent of the host's endianness.
inline wire::ImmDtHdr immdt_from_wr(std::uint32_t imm_be) {
  wire::ImmDtHdr h;
  std::memcpy(h.raw, &imm_be, sizeof(imm_be));
  return h;
}
inline std::uint32_t imm_to_wc(const wire::ImmDtHdr& h) {
  std::uint32_t v = 0;
  std::memcpy(&v, h.raw, sizeof(v));
  return v;
}

}  // namespace uroce::transport
