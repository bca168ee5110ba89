// CM REP, Reply to Request for Communication (IBTA Vol.1 section 12.6.8,
// Table 105), attribute 0x0013.
//
//  byte  field (bits, most significant first)
//     0  Local Communication ID (32)
//     4  Remote Communication ID (32)
//     8  Local Q_Key (32)
//    12  Local QPN (24) | reserved (8)
//    16  Local EE Context Number (24) | reserved (8)
//    20  Starting PSN (24) | reserved (8)
//    24  Responder Resources (8)
//    25  Initiator Depth (8)
//    26  Target ACK Delay (5) | Failover Accepted (2) |
//        End-to-End Flow Control (1)
//    27  RNR Retry Count (3) | SRQ (1) | reserved (4)
//    28  Local CA GUID (64)
//    36  PrivateData (196 bytes)
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/byteorder.h"
#include "datapath/wire/mad.h"

namespace uroce::wire {

struct CmRep {
  static constexpr std::size_t kSize = kMadDataBytes;
  static constexpr std::size_t kPrivateOffset = 36;
  static constexpr std::size_t kPrivateBytes = 196;
  std::uint8_t raw[kSize]{};

  static CmRep read(const std::uint8_t* p) {
    CmRep m;
    std::memcpy(m.raw, p, kSize);
    return m;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }

  std::uint32_t local_comm_id() const { return load_be32(raw); }
  std::uint32_t remote_comm_id() const { return load_be32(raw + 4); }
  std::uint32_t local_qkey() const { return load_be32(raw + 8); }
  std::uint32_t local_qpn() const { return load_be24(raw + 12); }
  std::uint32_t local_eecn() const { return load_be24(raw + 16); }
  std::uint32_t starting_psn() const { return load_be24(raw + 20); }
  std::uint8_t responder_resources() const { return raw[24]; }
  std::uint8_t initiator_depth() const { return raw[25]; }
  std::uint8_t target_ack_delay() const { return get_bits(raw[26], 3, 5); }
  std::uint8_t failover_accepted() const { return get_bits(raw[26], 1, 2); }
  bool flow_control() const { return get_bits(raw[26], 0, 1) != 0; }
  std::uint8_t rnr_retry_count() const { return get_bits(raw[27], 5, 3); }
  bool srq() const { return get_bits(raw[27], 4, 1) != 0; }
  std::uint64_t local_ca_guid() const { return load_be64(raw + 28); }
  const std::uint8_t* private_data() const { return raw + kPrivateOffset; }

  void set_local_comm_id(std::uint32_t v) { store_be32(raw, v); }
  void set_remote_comm_id(std::uint32_t v) { store_be32(raw + 4, v); }
  void set_local_qkey(std::uint32_t v) { store_be32(raw + 8, v); }
  void set_local_qpn(std::uint32_t v) { store_be24(raw + 12, v); }
  void set_local_eecn(std::uint32_t v) { store_be24(raw + 16, v); }
  void set_starting_psn(std::uint32_t v) { store_be24(raw + 20, v); }
  void set_responder_resources(std::uint8_t v) { raw[24] = v; }
  void set_initiator_depth(std::uint8_t v) { raw[25] = v; }
  void set_target_ack_delay(std::uint8_t v) { set_bits(&raw[26], 3, 5, v); }
  void set_failover_accepted(std::uint8_t v) { set_bits(&raw[26], 1, 2, v); }
  void set_flow_control(bool v) { set_bits(&raw[26], 0, 1, v ? 1 : 0); }
  void set_rnr_retry_count(std::uint8_t v) { set_bits(&raw[27], 5, 3, v); }
  void set_srq(bool v) { set_bits(&raw[27], 4, 1, v ? 1 : 0); }
  void set_local_ca_guid(std::uint64_t v) { store_be64(raw + 28, v); }
  void set_private_data(const void* p, std::size_t n) {
    std::memcpy(raw + kPrivateOffset, p, n < kPrivateBytes ? n : kPrivateBytes);
  }
};
static_assert(sizeof(CmRep) == CmRep::kSize);
static_assert(CmRep::kPrivateOffset + CmRep::kPrivateBytes == CmRep::kSize);

}  // namespace uroce::wire
