// Building one RC frame in place in a TX sink buffer: the addressing every
// packet of a connected QP carries, and the alloc -> gather -> build ->
// commit sequence that copies each payload byte exactly once (the payload is
// written straight to its final place in the frame; build_roce then leaves it
// where it is).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "datapath/transport/dc_lane.h"
#include "datapath/transport/rc_core.h"
#include "datapath/transport/seq24.h"
#include "datapath/transport/sinks.h"
#include "datapath/wire/builder.h"

namespace uroce::transport {

enum class RcEmit : std::uint8_t {
  kSent,
  kNoBuffer,    // the sink had no room; nothing changed, try again later
  kFillFailed,  // the payload callback refused (bad local SGE); nothing sent
  kBuildFailed  // build_roce refused the spec; nothing sent (a bug)
};

// A spec with the QP's addressing, P_Key and destination QP filled in (a
// DC lane's: the DC opcode and header too). Always inlined into the RC
// senders, with the DC decoration kept out of line: inlining
// dc_decorate made rc_spec too large to inline, which cost every RC
// message about 130 instructions (bench-callgrind.sh).
[[gnu::always_inline]] inline wire::PacketSpec rc_spec(const RcCore& c, std::uint8_t opcode,
                                                       Psn psn) {
  wire::PacketSpec s;
  s.eth_src = c.cfg.local.mac;
  s.eth_dst = c.attr.av.dmac;
  s.ip_src = c.cfg.local.ip;
  s.ip_dst = c.attr.av.dip;
  if (c.attr.av.ipv6) s.ip6 = &c.attr.av.route6;
  s.dscp = c.attr.av.dscp;
  s.ecn = c.attr.av.ecn;
  s.ttl = c.attr.av.ttl;
  s.udp_src = c.udp_src();
  s.opcode = opcode;
  s.pkey = wire::kDefaultPKey;
  s.dest_qp = c.attr.dest_qp_num;
  s.psn = psn.value();
  s.pmtu = c.attr.path_mtu;
  if (c.dc != nullptr) [[unlikely]]
    dc_decorate(*c.dc, c.cfg.qpn, s);
  return s;
}

// Emits one frame: `fill(span)` writes exactly payload_len payload bytes
// into the frame (or returns false to abandon it: the buffer is then not
// committed and the sink reuses it).
template <TxSink Tx, class Fill>
RcEmit rc_emit(RcCore& c, Tx& tx, wire::PacketSpec& spec, std::size_t payload_len, Fill&& fill) {
  const std::size_t off = wire::roce_payload_offset(spec);
  const std::size_t len = off + payload_len + wire::pad_count(payload_len) + wire::kIcrcSize;
  std::span<std::uint8_t> buf = tx.tx_alloc(len);
  if (buf.size() < len) {
    ++c.ctr.tx_no_buffer;
    return RcEmit::kNoBuffer;
  }
  std::span<std::uint8_t> payload = buf.subspan(off, payload_len);
  if (!fill(payload)) return RcEmit::kFillFailed;
  spec.payload = payload;
  const int n = wire::build_roce(spec, buf);
  if (n < 0) {
    ++c.ctr.tx_build_errors;
    return RcEmit::kBuildFailed;
  }
  tx.tx_commit(static_cast<std::size_t>(n));
  return RcEmit::kSent;
}

// A frame without payload.
template <TxSink Tx>
RcEmit rc_emit(RcCore& c, Tx& tx, wire::PacketSpec& spec) {
  return rc_emit(c, tx, spec, 0, [](std::span<std::uint8_t>) { return true; });
}

}  // namespace uroce::transport
