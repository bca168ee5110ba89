// BTH opcodes (IBTA Vol.1 section 9.2.1, table 38; CNP from Annex A17.9.2):
// which extension headers each opcode carries, in wire order, whether it may
// carry payload, where it sits in a message and who sends it. Also the path
// MTU encoding (IBTA 7.7.5 / verbs enum ibv_mtu) and the pad count rule.
//
// Opcode byte = transport (bits 7..5) | operation (bits 4..0):
//   RC 0x00..0x14, 0x16, 0x17, 0x1C, 0x1D   UC 0x20..0x2b   UD 0x64, 0x65
//   CNP 0x81
//   RC FLUSH (0x1C) and ATOMIC_WRITE (0x1D) are IBTA's Memory Placement
//   Extensions (Annex A19), which Linux rxe sends since 6.2: parsed so that
//   the responder can answer them (rc_responder.h NAKs them, not supported).
//   uroce extensions (manufacturer-specific range, IBTA 9.2.3: bits 7..5 =
//   110 and 111; between uroce peers only):
//     0xC0..0xC2 (of 0xC0..0xC7; docs/homa.md): HOMA_GRANT, HOMA_CUTOFFS,
//       HOMA_MLEN.
//     0xC3 SR_SACK (AETH + SACKETH, sr_sack_eth.h) and 0xC4 SR_HELLO (a
//       control packet like Homa's, sr_hello.h): selective repeat,
//       docs/lossy.md.
//     0xC8..0xDF: SR = 0xC8 + the RC request opcode of the same operation
//       (SEND, WRITE, READ request, CMP_SWAP, FETCH_ADD), with RC's
//       headers, position and payload rules; SEND and WRITE add SRETH
//       (sr_eth.h) last, and every SR WRITE packet carries a RETH.
//     0xE0..0xF4, 0xF6, 0xF7 (docs/dc.md): DC = 0xE0 + the RC opcode of the
//       same operation, with RC's headers, position and payload rules plus
//       one DC header right after the BTH: DCETH (dc_eth.h) in requests,
//       DCAETH (dc_aeth.h) in READ responses, ACKs and atomic ACKs.
//     0xF8 DC_DISCONNECT: requester-sent, DCETH only, no payload.
// RD (0x40..) and opcodes this table marks invalid are unsupported: the
// parser rejects them. A Homa extension packet carries its header where a
// payload would be (the parser checks only that the ICRC has room; the
// header's reader, datapath/wire/homa_*.h, checks its length): the opcode
// alone tells which header follows. The DC headers are extension headers
// like RC's: the parser checks their length.
//
// Extension headers always appear in the canonical order of ExtHdr below
// (IBTA 9.2: DETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH, with
// DCETH and DCAETH first after DETH, as no opcode carries DETH with them,
// and FETH before RETH as rxe places it), then uroce's SRETH and SACKETH
// after every IBTA header (no opcode carries either with a CNP body);
// the CNP body takes the place of the payload.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "datapath/wire/aeth.h"
#include "datapath/wire/atomic_ack_eth.h"
#include "datapath/wire/atomic_eth.h"
#include "datapath/wire/bth.h"
#include "datapath/wire/cnp.h"
#include "datapath/wire/dc_aeth.h"
#include "datapath/wire/dc_eth.h"
#include "datapath/wire/deth.h"
#include "datapath/wire/feth.h"
#include "datapath/wire/icrc.h"
#include "datapath/wire/ieth.h"
#include "datapath/wire/immdt.h"
#include "datapath/wire/ipv4.h"
#include "datapath/wire/reth.h"
#include "datapath/wire/sr_eth.h"
#include "datapath/wire/sr_sack_eth.h"
#include "datapath/wire/udp.h"

namespace uroce::wire {

namespace op {
inline constexpr std::uint8_t kRcSendFirst = 0x00;
inline constexpr std::uint8_t kRcSendMiddle = 0x01;
inline constexpr std::uint8_t kRcSendLast = 0x02;
inline constexpr std::uint8_t kRcSendLastImm = 0x03;
inline constexpr std::uint8_t kRcSendOnly = 0x04;
inline constexpr std::uint8_t kRcSendOnlyImm = 0x05;
inline constexpr std::uint8_t kRcWriteFirst = 0x06;
inline constexpr std::uint8_t kRcWriteMiddle = 0x07;
inline constexpr std::uint8_t kRcWriteLast = 0x08;
inline constexpr std::uint8_t kRcWriteLastImm = 0x09;
inline constexpr std::uint8_t kRcWriteOnly = 0x0a;
inline constexpr std::uint8_t kRcWriteOnlyImm = 0x0b;
inline constexpr std::uint8_t kRcReadRequest = 0x0c;
inline constexpr std::uint8_t kRcReadResponseFirst = 0x0d;
inline constexpr std::uint8_t kRcReadResponseMiddle = 0x0e;
inline constexpr std::uint8_t kRcReadResponseLast = 0x0f;
inline constexpr std::uint8_t kRcReadResponseOnly = 0x10;
inline constexpr std::uint8_t kRcAck = 0x11;
inline constexpr std::uint8_t kRcAtomicAck = 0x12;
inline constexpr std::uint8_t kRcCompareSwap = 0x13;
inline constexpr std::uint8_t kRcFetchAdd = 0x14;
inline constexpr std::uint8_t kRcSendLastInv = 0x16;
inline constexpr std::uint8_t kRcSendOnlyInv = 0x17;
inline constexpr std::uint8_t kRcFlush = 0x1c;
inline constexpr std::uint8_t kRcAtomicWrite = 0x1d;

inline constexpr std::uint8_t kUcSendFirst = 0x20;
inline constexpr std::uint8_t kUcSendMiddle = 0x21;
inline constexpr std::uint8_t kUcSendLast = 0x22;
inline constexpr std::uint8_t kUcSendLastImm = 0x23;
inline constexpr std::uint8_t kUcSendOnly = 0x24;
inline constexpr std::uint8_t kUcSendOnlyImm = 0x25;
inline constexpr std::uint8_t kUcWriteFirst = 0x26;
inline constexpr std::uint8_t kUcWriteMiddle = 0x27;
inline constexpr std::uint8_t kUcWriteLast = 0x28;
inline constexpr std::uint8_t kUcWriteLastImm = 0x29;
inline constexpr std::uint8_t kUcWriteOnly = 0x2a;
inline constexpr std::uint8_t kUcWriteOnlyImm = 0x2b;

inline constexpr std::uint8_t kUdSendOnly = 0x64;
inline constexpr std::uint8_t kUdSendOnlyImm = 0x65;

inline constexpr std::uint8_t kCnp = kCnpOpcode;
// uroce's extensions (docs/homa.md): 0xC0..0xC7 reserved, these in use.
inline constexpr std::uint8_t kHomaGrant = 0xC0;
inline constexpr std::uint8_t kHomaCutoffs = 0xC1;
inline constexpr std::uint8_t kHomaMlen = 0xC2;
// Selective repeat (docs/lossy.md): the SACK, the handshake, and 0xC8 + the
// RC request opcode of the same operation.
inline constexpr std::uint8_t kSrSack = 0xC3;
inline constexpr std::uint8_t kSrHello = 0xC4;
inline constexpr std::uint8_t kSrBase = 0xC8;
inline constexpr std::uint8_t kSrSendFirst = kSrBase + kRcSendFirst;
inline constexpr std::uint8_t kSrSendMiddle = kSrBase + kRcSendMiddle;
inline constexpr std::uint8_t kSrSendLast = kSrBase + kRcSendLast;
inline constexpr std::uint8_t kSrSendLastImm = kSrBase + kRcSendLastImm;
inline constexpr std::uint8_t kSrSendOnly = kSrBase + kRcSendOnly;
inline constexpr std::uint8_t kSrSendOnlyImm = kSrBase + kRcSendOnlyImm;
inline constexpr std::uint8_t kSrWriteFirst = kSrBase + kRcWriteFirst;
inline constexpr std::uint8_t kSrWriteMiddle = kSrBase + kRcWriteMiddle;
inline constexpr std::uint8_t kSrWriteLast = kSrBase + kRcWriteLast;
inline constexpr std::uint8_t kSrWriteLastImm = kSrBase + kRcWriteLastImm;
inline constexpr std::uint8_t kSrWriteOnly = kSrBase + kRcWriteOnly;
inline constexpr std::uint8_t kSrWriteOnlyImm = kSrBase + kRcWriteOnlyImm;
inline constexpr std::uint8_t kSrReadRequest = kSrBase + kRcReadRequest;
inline constexpr std::uint8_t kSrCompareSwap = kSrBase + kRcCompareSwap;
inline constexpr std::uint8_t kSrFetchAdd = kSrBase + kRcFetchAdd;
inline constexpr std::uint8_t kSrSendLastInv = kSrBase + kRcSendLastInv;
inline constexpr std::uint8_t kSrSendOnlyInv = kSrBase + kRcSendOnlyInv;

// DC (docs/dc.md): 0xE0 + the RC opcode of the same operation.
inline constexpr std::uint8_t kDcBase = 0xE0;
inline constexpr std::uint8_t kDcSendFirst = kDcBase + kRcSendFirst;
inline constexpr std::uint8_t kDcSendMiddle = kDcBase + kRcSendMiddle;
inline constexpr std::uint8_t kDcSendLast = kDcBase + kRcSendLast;
inline constexpr std::uint8_t kDcSendLastImm = kDcBase + kRcSendLastImm;
inline constexpr std::uint8_t kDcSendOnly = kDcBase + kRcSendOnly;
inline constexpr std::uint8_t kDcSendOnlyImm = kDcBase + kRcSendOnlyImm;
inline constexpr std::uint8_t kDcWriteFirst = kDcBase + kRcWriteFirst;
inline constexpr std::uint8_t kDcWriteMiddle = kDcBase + kRcWriteMiddle;
inline constexpr std::uint8_t kDcWriteLast = kDcBase + kRcWriteLast;
inline constexpr std::uint8_t kDcWriteLastImm = kDcBase + kRcWriteLastImm;
inline constexpr std::uint8_t kDcWriteOnly = kDcBase + kRcWriteOnly;
inline constexpr std::uint8_t kDcWriteOnlyImm = kDcBase + kRcWriteOnlyImm;
inline constexpr std::uint8_t kDcReadRequest = kDcBase + kRcReadRequest;
inline constexpr std::uint8_t kDcReadResponseFirst = kDcBase + kRcReadResponseFirst;
inline constexpr std::uint8_t kDcReadResponseMiddle = kDcBase + kRcReadResponseMiddle;
inline constexpr std::uint8_t kDcReadResponseLast = kDcBase + kRcReadResponseLast;
inline constexpr std::uint8_t kDcReadResponseOnly = kDcBase + kRcReadResponseOnly;
inline constexpr std::uint8_t kDcAck = kDcBase + kRcAck;
inline constexpr std::uint8_t kDcAtomicAck = kDcBase + kRcAtomicAck;
inline constexpr std::uint8_t kDcCompareSwap = kDcBase + kRcCompareSwap;
inline constexpr std::uint8_t kDcFetchAdd = kDcBase + kRcFetchAdd;
inline constexpr std::uint8_t kDcSendLastInv = kDcBase + kRcSendLastInv;
inline constexpr std::uint8_t kDcSendOnlyInv = kDcBase + kRcSendOnlyInv;
// The stream leaves the target (docs/dc.md "Initiator"); no RC counterpart.
inline constexpr std::uint8_t kDcDisconnect = 0xF8;
}  // namespace op

// The DC opcode of an RC opcode (0x00..0x14, 0x16, 0x17), and back (for a
// DC opcode other than DC_DISCONNECT). Plain arithmetic: the caller passes
// an opcode of the right kind (is_dc_opcode, opcode_info).
constexpr std::uint8_t dc_opcode(std::uint8_t rc_opcode) {
  return static_cast<std::uint8_t>(op::kDcBase + rc_opcode);
}
constexpr std::uint8_t rc_opcode_of_dc(std::uint8_t dc_opcode) {
  return static_cast<std::uint8_t>(dc_opcode - op::kDcBase);
}
// A DC opcode: 0xE0 + a supported RC opcode, or DC_DISCONNECT. 0xF5 is
// none: RC has no opcode 0x15.
constexpr bool is_dc_opcode(std::uint8_t o) {
  constexpr std::uint8_t kNoRcOpcode = 0x15;
  return o >= op::kDcBase && o <= op::kDcDisconnect && o != dc_opcode(kNoRcOpcode);
}

// The SR opcode of an RC request opcode, and back (for an SR data opcode:
// not SR_SACK or SR_HELLO). Plain arithmetic, as dc_opcode.
constexpr std::uint8_t sr_opcode(std::uint8_t rc_opcode) {
  return static_cast<std::uint8_t>(op::kSrBase + rc_opcode);
}
constexpr std::uint8_t rc_opcode_of_sr(std::uint8_t sr_opcode) {
  return static_cast<std::uint8_t>(sr_opcode - op::kSrBase);
}

// The RC opcode of the same operation as a request opcode of RC, SR or DC
// (SR = 0xC8 + it, DC = 0xE0 + it); any other opcode as it is.
constexpr std::uint8_t rc_opcode_of(std::uint8_t o) {
  if (o >= op::kDcBase) return static_cast<std::uint8_t>(o - op::kDcBase);
  if (o >= op::kSrBase) return rc_opcode_of_sr(o);
  return o;
}
static_assert(rc_opcode_of(op::kDcWriteMiddle) == op::kRcWriteMiddle);
static_assert(rc_opcode_of(op::kSrSendOnlyInv) == op::kRcSendOnlyInv);
static_assert(rc_opcode_of(op::kRcFetchAdd) == op::kRcFetchAdd);

// kExt: uroce's own control packets, kDc: the DC-style transport, kSr: RC
// with selective repeat (all three between uroce peers only).
enum class Transport : std::uint8_t { kRc, kUc, kRd, kUd, kCnp, kExt, kDc, kSr };

// What the packet does, independent of transport.
enum class OpClass : std::uint8_t {
  kSend,
  kWrite,
  kReadRequest,
  kReadResponse,
  kAck,
  kAtomic,
  kAtomicAck,
  kCnp,
  kControl,      // uroce's extension packets, DC_DISCONNECT
  kFlush,        // RC FLUSH (Annex A19)
  kAtomicWrite,  // RC ATOMIC_WRITE (Annex A19)
};

// Place in a multi-packet message. Single-packet operations (READ request,
// atomics, ACKs, CNP) are kOnly.
enum class Position : std::uint8_t { kFirst, kMiddle, kLast, kOnly };

// Who sends it: the requester, the responder with data (READ response,
// atomic ACK), the responder's plain ACK/NAK, or the congestion point.
// kControl: uroce's extension packets (to the engine, not a QP's transport).
// DC_DISCONNECT is a kRequest: its DCI sends it to the target.
enum class Direction : std::uint8_t { kRequest, kResponse, kAck, kCnp, kControl };

// Extension headers in canonical wire order; the values index ExtMask bits.
enum class ExtHdr : std::uint8_t {
  kDeth = 0,
  kDcEth,
  kDcAeth,
  kFeth,
  kReth,
  kAtomicEth,
  kAeth,
  kAtomicAckEth,
  kImmDt,
  kIeth,
  kCnp,
  kSrEth,
  kSackEth,
};
inline constexpr std::size_t kNumExtHdrs = 13;
using ExtMask = std::uint16_t;
static_assert(kNumExtHdrs <= sizeof(ExtMask) * 8);

constexpr ExtMask ext_bit(ExtHdr h) { return static_cast<ExtMask>(1u << static_cast<unsigned>(h)); }
constexpr std::size_t ext_hdr_size(ExtHdr h) {
  constexpr std::size_t kSizes[kNumExtHdrs] = {DethHdr::kSize,     DcEthHdr::kSize,
                                               DcAethHdr::kSize,   FethHdr::kSize,
                                               RethHdr::kSize,     AtomicEthHdr::kSize,
                                               AethHdr::kSize,     AtomicAckEthHdr::kSize,
                                               ImmDtHdr::kSize,    IethHdr::kSize,
                                               CnpHdr::kSize,      SrEthHdr::kSize,
                                               SrSackEthHdr::kSize};
  return kSizes[static_cast<std::size_t>(h)];
}
constexpr std::size_t ext_mask_size(ExtMask m) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < kNumExtHdrs; ++i) {
    if ((m >> i) & 1) n += ext_hdr_size(static_cast<ExtHdr>(i));
  }
  return n;
}
std::string_view ext_hdr_name(ExtHdr h);

struct OpcodeInfo {
  std::string_view name;  // e.g. "RC_SEND_FIRST"; empty when !valid
  bool valid = false;
  Transport transport = Transport::kRc;
  OpClass op = OpClass::kSend;
  Position pos = Position::kOnly;
  Direction dir = Direction::kRequest;
  ExtMask ext = 0;           // extension headers present, canonical order
  std::uint8_t ext_len = 0;  // total bytes of those headers
  bool payload = false;      // may carry payload (possibly zero bytes)
  // Selective repeat's rules apply (docs/lossy.md): the SR opcodes, and a
  // DC opcode's SR form (dc_sr_opcode_info), which a flag in its DC header
  // selects.
  bool sr = false;

  constexpr bool has(ExtHdr h) const { return (ext & ext_bit(h)) != 0; }
};

namespace detail {

constexpr OpcodeInfo make_op(std::string_view name, Transport t, OpClass op, Position pos,
                             Direction dir, ExtMask ext, bool payload) {
  OpcodeInfo i;
  i.name = name;
  i.valid = true;
  i.transport = t;
  i.op = op;
  i.pos = pos;
  i.dir = dir;
  i.ext = ext;
  i.ext_len = static_cast<std::uint8_t>(ext_mask_size(ext));
  i.payload = payload;
  return i;
}

constexpr std::array<OpcodeInfo, 256> build_opcode_table() {
  using enum OpClass;
  using enum Position;
  std::array<OpcodeInfo, 256> t{};
  constexpr ExtMask kImm = ext_bit(ExtHdr::kImmDt);
  constexpr ExtMask kReth = ext_bit(ExtHdr::kReth);
  constexpr ExtMask kAeth = ext_bit(ExtHdr::kAeth);
  constexpr Direction kReq = Direction::kRequest;

  // SEND and RDMA WRITE: identical shapes on RC and UC (base 0x00 / 0x20).
  struct Common {
    std::uint8_t off;
    std::string_view rc, uc;
    OpClass op;
    Position pos;
    ExtMask ext;
  };
  constexpr Common kCommon[] = {
      {0x00, "RC_SEND_FIRST", "UC_SEND_FIRST", kSend, kFirst, 0},
      {0x01, "RC_SEND_MIDDLE", "UC_SEND_MIDDLE", kSend, kMiddle, 0},
      {0x02, "RC_SEND_LAST", "UC_SEND_LAST", kSend, kLast, 0},
      {0x03, "RC_SEND_LAST_WITH_IMMEDIATE", "UC_SEND_LAST_WITH_IMMEDIATE", kSend, kLast, kImm},
      {0x04, "RC_SEND_ONLY", "UC_SEND_ONLY", kSend, kOnly, 0},
      {0x05, "RC_SEND_ONLY_WITH_IMMEDIATE", "UC_SEND_ONLY_WITH_IMMEDIATE", kSend, kOnly, kImm},
      {0x06, "RC_RDMA_WRITE_FIRST", "UC_RDMA_WRITE_FIRST", kWrite, kFirst, kReth},
      {0x07, "RC_RDMA_WRITE_MIDDLE", "UC_RDMA_WRITE_MIDDLE", kWrite, kMiddle, 0},
      {0x08, "RC_RDMA_WRITE_LAST", "UC_RDMA_WRITE_LAST", kWrite, kLast, 0},
      {0x09, "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE", kWrite,
       kLast, kImm},
      {0x0a, "RC_RDMA_WRITE_ONLY", "UC_RDMA_WRITE_ONLY", kWrite, kOnly, kReth},
      {0x0b, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", kWrite,
       kOnly, static_cast<ExtMask>(kReth | kImm)},
  };
  for (const Common& c : kCommon) {
    t[c.off] = make_op(c.rc, Transport::kRc, c.op, c.pos, kReq, c.ext, true);
    t[0x20 + c.off] = make_op(c.uc, Transport::kUc, c.op, c.pos, kReq, c.ext, true);
  }

  constexpr Transport kRc = Transport::kRc;
  constexpr Direction kResp = Direction::kResponse;
  t[op::kRcReadRequest] =
      make_op("RC_RDMA_READ_REQUEST", kRc, kReadRequest, kOnly, kReq, kReth, false);
  t[op::kRcReadResponseFirst] =
      make_op("RC_RDMA_READ_RESPONSE_FIRST", kRc, kReadResponse, kFirst, kResp, kAeth, true);
  t[op::kRcReadResponseMiddle] =
      make_op("RC_RDMA_READ_RESPONSE_MIDDLE", kRc, kReadResponse, kMiddle, kResp, 0, true);
  t[op::kRcReadResponseLast] =
      make_op("RC_RDMA_READ_RESPONSE_LAST", kRc, kReadResponse, kLast, kResp, kAeth, true);
  t[op::kRcReadResponseOnly] =
      make_op("RC_RDMA_READ_RESPONSE_ONLY", kRc, kReadResponse, kOnly, kResp, kAeth, true);
  t[op::kRcAck] = make_op("RC_ACKNOWLEDGE", kRc, kAck, kOnly, Direction::kAck, kAeth, false);
  t[op::kRcAtomicAck] =
      make_op("RC_ATOMIC_ACKNOWLEDGE", kRc, kAtomicAck, kOnly, kResp,
              static_cast<ExtMask>(kAeth | ext_bit(ExtHdr::kAtomicAckEth)), false);
  t[op::kRcCompareSwap] =
      make_op("RC_CMP_SWAP", kRc, kAtomic, kOnly, kReq, ext_bit(ExtHdr::kAtomicEth), false);
  t[op::kRcFetchAdd] =
      make_op("RC_FETCH_ADD", kRc, kAtomic, kOnly, kReq, ext_bit(ExtHdr::kAtomicEth), false);
  t[op::kRcSendLastInv] = make_op("RC_SEND_LAST_WITH_INVALIDATE", kRc, kSend, kLast, kReq,
                                  ext_bit(ExtHdr::kIeth), true);
  t[op::kRcSendOnlyInv] = make_op("RC_SEND_ONLY_WITH_INVALIDATE", kRc, kSend, kOnly, kReq,
                                  ext_bit(ExtHdr::kIeth), true);
  t[op::kRcFlush] = make_op("RC_FLUSH", kRc, kFlush, kOnly, kReq,
                            static_cast<ExtMask>(ext_bit(ExtHdr::kFeth) | kReth), false);
  // The 8 bytes to write are the payload.
  t[op::kRcAtomicWrite] = make_op("RC_ATOMIC_WRITE", kRc, kAtomicWrite, kOnly, kReq, kReth, true);

  constexpr ExtMask kDeth = ext_bit(ExtHdr::kDeth);
  t[op::kUdSendOnly] = make_op("UD_SEND_ONLY", Transport::kUd, kSend, kOnly, kReq, kDeth, true);
  t[op::kUdSendOnlyImm] = make_op("UD_SEND_ONLY_WITH_IMMEDIATE", Transport::kUd, kSend, kOnly, kReq,
                                  static_cast<ExtMask>(kDeth | kImm), true);

  t[op::kCnp] =
      make_op("CNP", Transport::kCnp, kCnp, kOnly, Direction::kCnp, ext_bit(ExtHdr::kCnp), false);

  constexpr Transport kExt = Transport::kExt;
  constexpr Direction kCtl = Direction::kControl;
  t[op::kHomaGrant] = make_op("UROCE_HOMA_GRANT", kExt, kControl, kOnly, kCtl, 0, true);
  t[op::kHomaCutoffs] = make_op("UROCE_HOMA_CUTOFFS", kExt, kControl, kOnly, kCtl, 0, true);
  t[op::kHomaMlen] = make_op("UROCE_HOMA_MLEN", kExt, kControl, kOnly, kCtl, 0, true);
  t[op::kSrHello] = make_op("UROCE_SR_HELLO", kExt, kControl, kOnly, kCtl, 0, true);

  // Selective repeat (docs/lossy.md): SR_SACK is an RC ACK with SACKETH;
  // every RC request opcode again at 0xC8 + it, SEND and WRITE with SRETH
  // and every WRITE packet with a RETH.
  constexpr Transport kSr = Transport::kSr;
  t[op::kSrSack] = make_op("SR_SACK", kSr, kAck, kOnly, Direction::kAck,
                           static_cast<ExtMask>(kAeth | ext_bit(ExtHdr::kSackEth)), false);
  constexpr std::string_view kSrNames[] = {
      "SR_SEND_FIRST",
      "SR_SEND_MIDDLE",
      "SR_SEND_LAST",
      "SR_SEND_LAST_WITH_IMMEDIATE",
      "SR_SEND_ONLY",
      "SR_SEND_ONLY_WITH_IMMEDIATE",
      "SR_RDMA_WRITE_FIRST",
      "SR_RDMA_WRITE_MIDDLE",
      "SR_RDMA_WRITE_LAST",
      "SR_RDMA_WRITE_LAST_WITH_IMMEDIATE",
      "SR_RDMA_WRITE_ONLY",
      "SR_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
      "SR_RDMA_READ_REQUEST",
      "",  // 0x0D..0x12: responses and ACKs stay RC's
      "",
      "",
      "",
      "",
      "",
      "SR_CMP_SWAP",
      "SR_FETCH_ADD",
      "",  // 0x15: no RC opcode
      "SR_SEND_LAST_WITH_INVALIDATE",
      "SR_SEND_ONLY_WITH_INVALIDATE",
  };
  for (std::uint8_t o = 0; o < std::size(kSrNames); ++o) {
    const OpcodeInfo& rc = t[o];
    if (kSrNames[o].empty()) continue;
    ExtMask ext = rc.ext;
    if (rc.op == kSend || rc.op == kWrite)
      ext = static_cast<ExtMask>(ext | ext_bit(ExtHdr::kSrEth));
    if (rc.op == kWrite) ext = static_cast<ExtMask>(ext | kReth);
    t[sr_opcode(o)] = make_op(kSrNames[o], kSr, rc.op, rc.pos, rc.dir, ext, rc.payload);
    t[sr_opcode(o)].sr = true;
  }
  t[op::kSrSack].sr = true;

  // DC: every RC opcode again at 0xE0 + it, the same shape plus the DC
  // header of its direction (docs/dc.md "Wire"). Names by RC opcode.
  constexpr std::string_view kDcNames[] = {
      "DC_SEND_FIRST",
      "DC_SEND_MIDDLE",
      "DC_SEND_LAST",
      "DC_SEND_LAST_WITH_IMMEDIATE",
      "DC_SEND_ONLY",
      "DC_SEND_ONLY_WITH_IMMEDIATE",
      "DC_RDMA_WRITE_FIRST",
      "DC_RDMA_WRITE_MIDDLE",
      "DC_RDMA_WRITE_LAST",
      "DC_RDMA_WRITE_LAST_WITH_IMMEDIATE",
      "DC_RDMA_WRITE_ONLY",
      "DC_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
      "DC_RDMA_READ_REQUEST",
      "DC_RDMA_READ_RESPONSE_FIRST",
      "DC_RDMA_READ_RESPONSE_MIDDLE",
      "DC_RDMA_READ_RESPONSE_LAST",
      "DC_RDMA_READ_RESPONSE_ONLY",
      "DC_ACKNOWLEDGE",
      "DC_ATOMIC_ACKNOWLEDGE",
      "DC_CMP_SWAP",
      "DC_FETCH_ADD",
      "",  // 0x15: no RC opcode
      "DC_SEND_LAST_WITH_INVALIDATE",
      "DC_SEND_ONLY_WITH_INVALIDATE",
  };
  for (std::uint8_t o = 0; o < std::size(kDcNames); ++o) {
    const OpcodeInfo& rc = t[o];
    if (!rc.valid) continue;
    const ExtMask dc_hdr = ext_bit(rc.dir == kReq ? ExtHdr::kDcEth : ExtHdr::kDcAeth);
    t[dc_opcode(o)] = make_op(kDcNames[o], Transport::kDc, rc.op, rc.pos, rc.dir,
                              static_cast<ExtMask>(rc.ext | dc_hdr), rc.payload);
  }
  t[op::kDcDisconnect] = make_op("DC_DISCONNECT", Transport::kDc, kControl, kOnly, kReq,
                                 ext_bit(ExtHdr::kDcEth), false);
  return t;
}

}  // namespace detail

inline constexpr std::array<OpcodeInfo, 256> kOpcodeTable = detail::build_opcode_table();

constexpr const OpcodeInfo& opcode_info(std::uint8_t opcode) { return kOpcodeTable[opcode]; }

namespace detail {
// The SR forms of DC's opcodes (docs/lossy.md "DC"), by DC opcode - 0xE0:
// a DC request of a selective-repeat connection (DCETH flag R) has the
// shape of the SR opcode of its operation plus the DCETH (SEND and WRITE
// with SRETH last, every WRITE packet with a RETH); a DC ACKNOWLEDGE with
// the DCAETH flag S carries a SACKETH after its AETH, as SR_SACK. Other DC
// opcodes have none (invalid here): the flag is not looked at on them.
constexpr std::array<OpcodeInfo, 32> build_dc_sr_table() {
  std::array<OpcodeInfo, 32> t{};
  for (std::uint8_t o = 0; o < 0x18; ++o) {
    const OpcodeInfo& sr = kOpcodeTable[sr_opcode(o)];
    const OpcodeInfo& dc = kOpcodeTable[dc_opcode(o)];
    if (!sr.valid || !dc.valid || sr.dir != Direction::kRequest) continue;
    t[o] = dc;
    t[o].ext = static_cast<ExtMask>(sr.ext | ext_bit(ExtHdr::kDcEth));
    t[o].ext_len = static_cast<std::uint8_t>(ext_mask_size(t[o].ext));
    t[o].sr = true;
  }
  constexpr std::uint8_t kAck = op::kRcAck;
  t[kAck] = kOpcodeTable[dc_opcode(kAck)];
  t[kAck].ext = static_cast<ExtMask>(t[kAck].ext | ext_bit(ExtHdr::kSackEth));
  t[kAck].ext_len = static_cast<std::uint8_t>(ext_mask_size(t[kAck].ext));
  t[kAck].sr = true;
  return t;
}
inline constexpr std::array<OpcodeInfo, 32> kDcSrTable = build_dc_sr_table();
inline constexpr OpcodeInfo kNoOpcode{};
}  // namespace detail

// The SR form of DC opcode `opcode` (detail::build_dc_sr_table); invalid
// for any other opcode and for DC opcodes that have none.
constexpr const OpcodeInfo& dc_sr_opcode_info(std::uint8_t opcode) {
  if (opcode < op::kDcBase) return detail::kNoOpcode;
  return detail::kDcSrTable[static_cast<std::uint8_t>(opcode - op::kDcBase) & 0x1f];
}
// The shape of a DC packet whose DC header has (`sr`) or lacks the SR flag
// (DCETH R, DCAETH S): its opcode's SR form where it has one, else the
// opcode's own. The parser and the builder both read shapes through it.
constexpr const OpcodeInfo& dc_form_info(std::uint8_t opcode, bool sr) {
  if (sr) {
    const OpcodeInfo& v = dc_sr_opcode_info(opcode);
    if (v.valid) return v;
  }
  return opcode_info(opcode);
}
static_assert(&dc_form_info(op::kDcDisconnect, true) == &opcode_info(op::kDcDisconnect));
static_assert(dc_sr_opcode_info(op::kDcWriteMiddle).has(ExtHdr::kReth));
static_assert(dc_sr_opcode_info(op::kDcSendFirst).has(ExtHdr::kSrEth));
static_assert(!dc_sr_opcode_info(op::kDcReadRequest).has(ExtHdr::kSrEth));
static_assert(dc_sr_opcode_info(op::kDcReadRequest).sr);
static_assert(dc_sr_opcode_info(op::kDcAck).has(ExtHdr::kSackEth));
static_assert(!dc_sr_opcode_info(op::kDcReadResponseFirst).valid);
static_assert(!dc_sr_opcode_info(op::kDcDisconnect).valid);
// "RC_SEND_FIRST", ..., or "UNKNOWN" for an unsupported opcode.
std::string_view opcode_name(std::uint8_t opcode);
std::string_view transport_name(Transport t);

// Path MTU as IBTA encodes it (and ibv_mtu numbers it).
enum class PathMtu : std::uint8_t {
  k256 = 1,
  k512 = 2,
  k1024 = 3,
  k2048 = 4,
  k4096 = 5,
};
inline constexpr std::uint32_t kMaxPathMtuBytes = 4096;

constexpr bool path_mtu_valid(std::uint8_t code) { return code >= 1 && code <= 5; }
// Payload bytes per packet for a valid code.
constexpr std::uint32_t path_mtu_bytes(PathMtu m) { return 128u << static_cast<unsigned>(m); }
// The code for exactly 256/512/1024/2048/4096 bytes; nullopt otherwise.
std::optional<PathMtu> path_mtu_from_bytes(std::uint32_t bytes);

namespace detail {
// The most extension-header bytes an opcode that may carry payload has, so
// the most that travels beside a full path-MTU payload, over the opcodes
// `of` selects.
template <class Pred>
constexpr std::size_t max_payload_ext_len_of(Pred of) {
  std::size_t n = 0;
  for (const OpcodeInfo& i : kOpcodeTable) {
    if (i.valid && i.payload && of(i) && i.ext_len > n) n = i.ext_len;
  }
  return n;
}
}  // namespace detail

// Over every opcode but DC's and SR's: RETH 16 + ImmDt 4 (RDMA WRITE ONLY
// with immediate, RC and UC). Opcodes with longer headers (AtomicETH 28)
// carry no payload. DC's and SR's are left out so that RC, UC and UD keep
// their path MTU; a DC QP uses the DC mapping below, and a connection uses
// SR only where sr_fits says its packets fit.
constexpr std::size_t max_payload_ext_len() {
  return detail::max_payload_ext_len_of([](const OpcodeInfo& i) {
    return i.transport != Transport::kDc && i.transport != Transport::kSr;
  });
}
// Over SR's opcodes: RETH 16 + ImmDt 4 + SRETH 8 (SR RDMA WRITE ONLY or
// LAST with immediate).
constexpr std::size_t max_sr_payload_ext_len() {
  return detail::max_payload_ext_len_of(
      [](const OpcodeInfo& i) { return i.transport == Transport::kSr; });
}
// Over DC's opcodes: DCETH 24 + RETH 16 + ImmDt 4 (DC RDMA WRITE ONLY with
// immediate).
constexpr std::size_t max_dc_payload_ext_len() {
  return detail::max_payload_ext_len_of(
      [](const OpcodeInfo& i) { return i.transport == Transport::kDc; });
}

// Bytes of an Ethernet MTU that a packet with a full path-MTU payload
// spends on headers. The Ethernet MTU counts the IP packet (not the 14-byte
// Ethernet header nor the FCS): IPv4 20 + UDP 8 + BTH 12 + the largest
// extension headers of a payload opcode (20) + ICRC 4 = 64. A full payload
// is a power of two >= 256, so it needs no pad bytes.
inline constexpr std::uint32_t kPathMtuOverhead = static_cast<std::uint32_t>(
    Ipv4Hdr::kSize + UdpHdr::kSize + BthHdr::kSize + max_payload_ext_len() + kIcrcSize);
static_assert(kPathMtuOverhead == 64);
// The smallest Ethernet MTU that carries the smallest path MTU (256 + 64).
inline constexpr std::uint32_t kMinRoceEthMtu = 256 + kPathMtuOverhead;
// The same for a DC QP's packets: the DCETH's 28 bytes more (48 of
// extension headers), 92.
inline constexpr std::uint32_t kDcPathMtuOverhead = static_cast<std::uint32_t>(
    Ipv4Hdr::kSize + UdpHdr::kSize + BthHdr::kSize + max_dc_payload_ext_len() + kIcrcSize);
static_assert(kDcPathMtuOverhead == 92);
static_assert(kDcPathMtuOverhead == kPathMtuOverhead + DcEthHdr::kSize);
inline constexpr std::uint32_t kMinDcEthMtu = 256 + kDcPathMtuOverhead;
// The same for an SR connection's packets: SRETH's 8 bytes more, 72.
inline constexpr std::uint32_t kSrPathMtuOverhead = static_cast<std::uint32_t>(
    Ipv4Hdr::kSize + UdpHdr::kSize + BthHdr::kSize + max_sr_payload_ext_len() + kIcrcSize);
static_assert(kSrPathMtuOverhead == kPathMtuOverhead + SrEthHdr::kSize);
static_assert(kSrPathMtuOverhead <= kDcPathMtuOverhead);

namespace detail {
constexpr std::optional<PathMtu> path_mtu_within(std::uint32_t eth_mtu, std::uint32_t overhead) {
  for (std::uint8_t c = 5; c >= 1; --c) {
    const auto m = static_cast<PathMtu>(c);
    if (path_mtu_bytes(m) + overhead <= eth_mtu) return m;
  }
  return std::nullopt;
}
}  // namespace detail

// Largest path MTU m with path_mtu_bytes(m) + kPathMtuOverhead <= eth_mtu,
// so that every packet of that path MTU fits: 1500 -> 1024, 9000 -> 4096,
// 4159 -> 2048. nullopt below kMinRoceEthMtu, where even 256 does not fit.
// The one mapping from Ethernet MTU to path MTU for RC, UC and UD (engine,
// uroced, testbed).
constexpr std::optional<PathMtu> path_mtu_for_eth_mtu(std::uint32_t eth_mtu) {
  return detail::path_mtu_within(eth_mtu, kPathMtuOverhead);
}
// The one mapping for a DC QP (DCI or DCT): largest m with
// path_mtu_bytes(m) + kDcPathMtuOverhead <= eth_mtu: 1500 -> 1024, 9000 ->
// 4096, 4187 -> 2048 (4096 needs 4188). nullopt below kMinDcEthMtu.
constexpr std::optional<PathMtu> dc_path_mtu_for_eth_mtu(std::uint32_t eth_mtu) {
  return detail::path_mtu_within(eth_mtu, kDcPathMtuOverhead);
}

// The same for a DC connection with selective repeat: DCETH 28 + RETH 16 +
// ImmDt 4 + SRETH 8 beside a full payload, 100: 1500 fits 1024, 9000
// fits 4096, 4096 needs 4196.
inline constexpr std::uint32_t kDcSrPathMtuOverhead = kDcPathMtuOverhead + SrEthHdr::kSize;
static_assert(kDcSrPathMtuOverhead == Ipv4Hdr::kSize + UdpHdr::kSize + BthHdr::kSize +
                                          dc_sr_opcode_info(op::kDcWriteOnlyImm).ext_len +
                                          kIcrcSize);
constexpr bool dc_sr_fits(PathMtu m, std::uint32_t eth_mtu) {
  return path_mtu_bytes(m) + kDcSrPathMtuOverhead <= eth_mtu;
}

// Whether a connection of path MTU m may use SR over a port of Ethernet
// MTU eth_mtu (docs/lossy.md "Negotiation"): 1500 fits 1024, 9000 fits
// 4096, 4096 needs 4168.
constexpr bool sr_fits(PathMtu m, std::uint32_t eth_mtu) {
  return path_mtu_bytes(m) + kSrPathMtuOverhead <= eth_mtu;
}

// Bytes of zero padding after `payload_len` payload bytes (IBTA 9.2: the
// payload is padded to a multiple of 4; BTH.PadCnt carries this number).
constexpr std::uint8_t pad_count(std::size_t payload_len) {
  return static_cast<std::uint8_t>((4 - (payload_len & 3)) & 3);
}

}  // namespace uroce::wire
