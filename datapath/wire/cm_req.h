// CM REQ, ConnectRequest (IBTA Vol.1 section 12.6.5, Table 99): the 232
// bytes of class data after the MAD header (mad.h), attribute 0x0010.
//
//  byte  field (bits, most significant first)
//     0  Local Communication ID (32)
//     4  reserved (32)
//     8  ServiceID (64)
//    16  Local CA GUID (64)
//    24  reserved (32)
//    28  Local Q_Key (32)
//    32  Local QPN (24) | Responder Resources (8)
//    36  Local EECN (24) | Initiator Depth (8)
//    40  Remote EECN (24) | Remote CM Response Timeout (5) |
//        Transport Service Type (2) | End-to-End Flow Control (1)
//    44  Starting PSN (24) | Local CM Response Timeout (5) | Retry Count (3)
//    48  Partition Key (16)
//    50  Path Packet Payload MTU (4) | RDC Exists (1) | RNR Retry Count (3)
//    51  Max CM Retries (4) | SRQ (1) | Extended Transport Type (3)
//    52  Primary Local Port LID (16) | Primary Remote Port LID (16)
//    56  Primary Local Port GID (128)
//    72  Primary Remote Port GID (128)
//    88  Primary Flow Label (20) | reserved (6) | Primary Packet Rate (6)
//    92  Primary Traffic Class (8) | Primary Hop Limit (8) |
//        Primary SL (4) | Primary Subnet Local (1) | reserved (3) |
//        Primary Local ACK Timeout (5) | reserved (3)
//    96  Alternate path, same layout as bytes 52..95 (44 bytes)
//   140  PrivateData (92 bytes)
//
// On RoCE the LIDs are 0xffff (permissive) and the GIDs the ports' RoCEv2
// GIDs (::ffff:IPv4 in uroce).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/byteorder.h"
#include "datapath/wire/mad.h"

namespace uroce::wire {

// Transport Service Type values (Table 99).
inline constexpr std::uint8_t kCmTransportRc = 0;
inline constexpr std::uint8_t kCmTransportUc = 1;
inline constexpr std::uint8_t kCmTransportRd = 2;

struct CmReq {
  static constexpr std::size_t kSize = kMadDataBytes;
  static constexpr std::size_t kPrivateOffset = 140;
  static constexpr std::size_t kPrivateBytes = 92;
  std::uint8_t raw[kSize]{};

  static CmReq read(const std::uint8_t* p) {
    CmReq m;
    std::memcpy(m.raw, p, kSize);
    return m;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }

  std::uint32_t local_comm_id() const { return load_be32(raw); }
  std::uint64_t service_id() const { return load_be64(raw + 8); }
  std::uint64_t local_ca_guid() const { return load_be64(raw + 16); }
  std::uint32_t local_qkey() const { return load_be32(raw + 28); }
  std::uint32_t local_qpn() const { return load_be24(raw + 32); }
  std::uint8_t responder_resources() const { return raw[35]; }
  std::uint32_t local_eecn() const { return load_be24(raw + 36); }
  std::uint8_t initiator_depth() const { return raw[39]; }
  std::uint32_t remote_eecn() const { return load_be24(raw + 40); }
  std::uint8_t remote_cm_response_timeout() const { return get_bits(raw[43], 3, 5); }
  std::uint8_t transport_type() const { return get_bits(raw[43], 1, 2); }
  bool flow_control() const { return get_bits(raw[43], 0, 1) != 0; }
  std::uint32_t starting_psn() const { return load_be24(raw + 44); }
  std::uint8_t local_cm_response_timeout() const { return get_bits(raw[47], 3, 5); }
  std::uint8_t retry_count() const { return get_bits(raw[47], 0, 3); }
  std::uint16_t pkey() const { return load_be16(raw + 48); }
  std::uint8_t path_mtu() const { return get_bits(raw[50], 4, 4); }
  bool rdc_exists() const { return get_bits(raw[50], 3, 1) != 0; }
  std::uint8_t rnr_retry_count() const { return get_bits(raw[50], 0, 3); }
  std::uint8_t max_cm_retries() const { return get_bits(raw[51], 4, 4); }
  bool srq() const { return get_bits(raw[51], 3, 1) != 0; }
  std::uint8_t extended_transport_type() const { return get_bits(raw[51], 0, 3); }
  std::uint16_t primary_local_lid() const { return load_be16(raw + 52); }
  std::uint16_t primary_remote_lid() const { return load_be16(raw + 54); }
  std::array<std::uint8_t, 16> primary_local_gid() const { return gid_at(56); }
  std::array<std::uint8_t, 16> primary_remote_gid() const { return gid_at(72); }
  std::uint32_t primary_flow_label() const { return load_be32(raw + 88) >> 12; }
  std::uint8_t primary_packet_rate() const { return get_bits(raw[91], 0, 6); }
  std::uint8_t primary_traffic_class() const { return raw[92]; }
  std::uint8_t primary_hop_limit() const { return raw[93]; }
  std::uint8_t primary_sl() const { return get_bits(raw[94], 4, 4); }
  bool primary_subnet_local() const { return get_bits(raw[94], 3, 1) != 0; }
  std::uint8_t primary_local_ack_timeout() const { return get_bits(raw[95], 3, 5); }
  const std::uint8_t* private_data() const { return raw + kPrivateOffset; }

  void set_local_comm_id(std::uint32_t v) { store_be32(raw, v); }
  void set_service_id(std::uint64_t v) { store_be64(raw + 8, v); }
  void set_local_ca_guid(std::uint64_t v) { store_be64(raw + 16, v); }
  void set_local_qkey(std::uint32_t v) { store_be32(raw + 28, v); }
  void set_local_qpn(std::uint32_t v) { store_be24(raw + 32, v); }
  void set_responder_resources(std::uint8_t v) { raw[35] = v; }
  void set_local_eecn(std::uint32_t v) { store_be24(raw + 36, v); }
  void set_initiator_depth(std::uint8_t v) { raw[39] = v; }
  void set_remote_eecn(std::uint32_t v) { store_be24(raw + 40, v); }
  void set_remote_cm_response_timeout(std::uint8_t v) { set_bits(&raw[43], 3, 5, v); }
  void set_transport_type(std::uint8_t v) { set_bits(&raw[43], 1, 2, v); }
  void set_flow_control(bool v) { set_bits(&raw[43], 0, 1, v ? 1 : 0); }
  void set_starting_psn(std::uint32_t v) { store_be24(raw + 44, v); }
  void set_local_cm_response_timeout(std::uint8_t v) { set_bits(&raw[47], 3, 5, v); }
  void set_retry_count(std::uint8_t v) { set_bits(&raw[47], 0, 3, v); }
  void set_pkey(std::uint16_t v) { store_be16(raw + 48, v); }
  void set_path_mtu(std::uint8_t v) { set_bits(&raw[50], 4, 4, v); }
  void set_rdc_exists(bool v) { set_bits(&raw[50], 3, 1, v ? 1 : 0); }
  void set_rnr_retry_count(std::uint8_t v) { set_bits(&raw[50], 0, 3, v); }
  void set_max_cm_retries(std::uint8_t v) { set_bits(&raw[51], 4, 4, v); }
  void set_srq(bool v) { set_bits(&raw[51], 3, 1, v ? 1 : 0); }
  void set_extended_transport_type(std::uint8_t v) { set_bits(&raw[51], 0, 3, v); }
  void set_primary_local_lid(std::uint16_t v) { store_be16(raw + 52, v); }
  void set_primary_remote_lid(std::uint16_t v) { store_be16(raw + 54, v); }
  void set_primary_local_gid(const std::array<std::uint8_t, 16>& g) {
    std::memcpy(raw + 56, g.data(), 16);
  }
  void set_primary_remote_gid(const std::array<std::uint8_t, 16>& g) {
    std::memcpy(raw + 72, g.data(), 16);
  }
  // Keeps the packet rate (the low 6 bits of byte 91).
  void set_primary_flow_label(std::uint32_t v) {
    const std::uint32_t w = (load_be32(raw + 88) & 0xfffu) | ((v & 0xfffffu) << 12);
    store_be32(raw + 88, w);
  }
  void set_primary_packet_rate(std::uint8_t v) { set_bits(&raw[91], 0, 6, v); }
  void set_primary_traffic_class(std::uint8_t v) { raw[92] = v; }
  void set_primary_hop_limit(std::uint8_t v) { raw[93] = v; }
  void set_primary_sl(std::uint8_t v) { set_bits(&raw[94], 4, 4, v); }
  void set_primary_subnet_local(bool v) { set_bits(&raw[94], 3, 1, v ? 1 : 0); }
  void set_primary_local_ack_timeout(std::uint8_t v) { set_bits(&raw[95], 3, 5, v); }
  // Copies min(n, kPrivateBytes) bytes; the rest stays zero.
  void set_private_data(const void* p, std::size_t n) {
    std::memcpy(raw + kPrivateOffset, p, n < kPrivateBytes ? n : kPrivateBytes);
  }

 private:
  std::array<std::uint8_t, 16> gid_at(std::size_t off) const {
    std::array<std::uint8_t, 16> g{};
    std::memcpy(g.data(), raw + off, 16);
    return g;
  }
};
static_assert(sizeof(CmReq) == CmReq::kSize);
static_assert(CmReq::kPrivateOffset + CmReq::kPrivateBytes == CmReq::kSize);

}  // namespace uroce::wire
