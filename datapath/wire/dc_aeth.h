// DC ACK Extended Transport Header (uroce extension, between uroce peers
// only; docs/dc.md, "The protocol"). Right after the BTH of every DC
// response: DC RDMA READ response first/middle/last/only, DC ACKNOWLEDGE
// and DC ATOMIC ACKNOWLEDGE (opcodes 0xE0 + the RC opcode), ahead of the RC
// extension headers the opcode carries (opcodes.h). BTH DestQP is the
// DCI's QPN (the DCETH's DCI QPN of the request answered).
//
//   0                   1                   2                   3
//   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |             Lane              |    Status     |S|  Reserved   |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                       Connection Number                       |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//  |                             Value                             |
//  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// Lane: the stream the response is for (the request's DCETH lane).
// Connection Number: the connection answered (the request's), so an
// initiator drops any answer that is not about its current connection.
// Status 0 (OK): a normal RC response of that connection; everything after
// the DCAETH is exactly RC's (PSN, AETH, MSN, the data); Value 0.
// S (SACK): on a DC ACKNOWLEDGE with status OK of a selective-repeat
// connection (dc_eth.h, R), a SACKETH follows the AETH: the DC form of
// SR_SACK (sr_sack_eth.h, docs/lossy.md). Not looked at on other packets.
//
// Any other status goes in a DC ACKNOWLEDGE (0xF1: BTH, DCAETH, AETH).
// The target has no context for the request when it answers one (docs/dc.md
// "Target"), so there is no MSN to report: the AETH MSN is 0. BTH PSN: the
// answered connection's first PSN (its DCETH's), never the request's:
// answers come per request, and an RNR NAK or NAK at a later PSN would
// acknowledge the connection's earlier requests, which did not run (a GONE
// notice, which answers no request, carries the retired context's expected
// PSN - 1). By status:
//   GONE           the connection was retired. Value: the retired
//                  context's expected PSN (24 bits): the requests before
//                  it ran and none after it. AETH: ACK without credits
//                  (0x1f). The GONE notice a target sends when it retires
//                  a context has the same form.
//   UNKNOWN        no context and no record of the connection. Value: the
//                  record slot's floor (the initiator's next connection
//                  must be newer than it). AETH: ACK without credits.
//   BUSY           every context is busy. AETH: RNR NAK with the DCT's
//                  min_rnr_timer code, the wait before the initiator tries
//                  again. Value 0.
//   KEY_VIOLATION  the DC access key differs from the DCT's. AETH: NAK
//                  remote access error (the WR completes with
//                  IBV_WC_REM_ACCESS_ERR). Value 0.
//   NO_SR          the request asked for selective repeat (DCETH R) and the
//                  target's device does not run it: no context opened,
//                  nothing ran. The initiator starts the connection again
//                  with go-back-N. AETH: ACK without credits. Value 0.
// Other status values are reserved: a receiver drops such a response.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "datapath/wire/byteorder.h"

namespace uroce::wire {

enum class DcStatus : std::uint8_t {
  kOk = 0,
  kGone = 1,
  kUnknown = 2,
  kBusy = 3,
  kKeyViolation = 4,
  kNoSr = 5,
};
inline constexpr std::uint8_t kNumDcStatuses = 6;

// "OK", "GONE", "UNKNOWN", "BUSY", "KEY_VIOLATION", "NO_SR"; "RESERVED" for any
// other value (not "UNKNOWN", which names a status).
constexpr std::string_view dc_status_name(DcStatus s) {
  switch (s) {
    case DcStatus::kOk: return "OK";
    case DcStatus::kGone: return "GONE";
    case DcStatus::kUnknown: return "UNKNOWN";
    case DcStatus::kBusy: return "BUSY";
    case DcStatus::kKeyViolation: return "KEY_VIOLATION";
    case DcStatus::kNoSr: return "NO_SR";
  }
  return "RESERVED";
}

struct DcAethHdr {
  static constexpr std::size_t kSize = 12;
  static constexpr std::uint8_t kFlagSack = 0x80;
  std::uint8_t raw[kSize]{};

  static DcAethHdr read(const std::uint8_t* p) {
    DcAethHdr h;
    std::memcpy(h.raw, p, kSize);
    return h;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }
  static DcAethHdr make(std::uint16_t lane, DcStatus status, std::uint32_t conn,
                        std::uint32_t value = 0) {
    DcAethHdr h;
    h.set_lane(lane);
    h.set_status(status);
    h.set_conn(conn);
    h.set_value(value);
    return h;
  }

  std::uint16_t lane() const { return load_be16(raw); }
  // The status byte as sent: a reserved value is kept as it is, so check
  // status_valid() before acting on it.
  DcStatus status() const { return static_cast<DcStatus>(raw[2]); }
  bool status_valid() const { return raw[2] < kNumDcStatuses; }
  bool sack() const { return (raw[3] & kFlagSack) != 0; }
  std::uint32_t conn() const { return load_be32(raw + 4); }
  std::uint32_t value() const { return load_be32(raw + 8); }

  void set_lane(std::uint16_t v) { store_be16(raw, v); }
  void set_status(DcStatus v) { raw[2] = static_cast<std::uint8_t>(v); }
  void set_sack(bool v) {
    raw[3] = static_cast<std::uint8_t>(v ? (raw[3] | kFlagSack) : (raw[3] & ~kFlagSack));
  }
  void set_conn(std::uint32_t v) { store_be32(raw + 4, v); }
  void set_value(std::uint32_t v) { store_be32(raw + 8, v); }
};
static_assert(sizeof(DcAethHdr) == DcAethHdr::kSize);
static_assert(alignof(DcAethHdr) == 1);

}  // namespace uroce::wire
