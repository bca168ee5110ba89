// Building one RC frame in place in a TX sink buffer: the addressing every
// packet of a connected QP carries, and the alloc -> headers -> gather ->
// finish -> commit sequence that copies each payload byte exactly once,
// straight to its final place in the frame, computing the ICRC as it goes.
#pragma once

#include <cassert>
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

// Emits one frame: the headers first, then `fill(writer)` puts exactly
// payload_len payload bytes through the wire::PayloadWriter, which copies
// them into the frame and carries the ICRC over them in the same pass (or
// returns false to abandon the frame: the buffer is then not committed and
// the sink reuses it). The spec is not checked here (wire::write_roce): the
// QP's attributes were when they were set, and the rest comes from the
// transport.
template <TxSink Tx, class Fill>
RcEmit rc_emit(RcCore& c, Tx& tx, wire::PacketSpec& spec, std::size_t payload_len, Fill&& fill) {
  const std::size_t off = wire::roce_payload_offset(spec);
  const std::size_t len = off + payload_len + wire::pad_count(payload_len) + wire::kIcrcSize;
  std::span<std::uint8_t> buf = tx.tx_alloc(len);
  if (buf.size() < len) {
    ++c.ctr.tx_no_buffer;
    return RcEmit::kNoBuffer;
  }
  const std::span<std::uint8_t> payload = buf.subspan(off, payload_len);
  spec.payload = payload;
  wire::PayloadWriter w(payload, wire::write_roce_headers(spec, buf));
  if (!fill(w)) return RcEmit::kFillFailed;
  assert(w.written() == payload_len);
  tx.tx_commit(static_cast<std::size_t>(wire::finish_roce(spec, w.crc(), buf)));
  return RcEmit::kSent;
}

// A frame without payload.
template <TxSink Tx>
RcEmit rc_emit(RcCore& c, Tx& tx, wire::PacketSpec& spec) {
  return rc_emit(c, tx, spec, 0, [](wire::PayloadWriter&) { return true; });
}

}  // namespace uroce::transport
