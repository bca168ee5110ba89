// CM SIDR_REP, Service ID Resolution Response (IBTA Vol.1 section 12.11.2,
// Table 112), attribute 0x0018.
//
//  byte  field (bits, most significant first)
//     0  Request ID (32)
//     4  Status (8)                   kSidr* below
//     5  AdditionalInfoLength (8)
//     6  reserved (16)
//     8  QPN (24) | reserved (8)
//    12  ServiceID (64)
//    20  Q_Key (32)
//    24  ClassPortInfo (72 bytes; redirection only)
//    96  PrivateData (136 bytes)
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/byteorder.h"
#include "datapath/wire/mad.h"

namespace uroce::wire {

// SIDR_REP Status values (Table 112).
inline constexpr std::uint8_t kSidrSuccess = 0;
inline constexpr std::uint8_t kSidrUnsupportedSid = 1;
inline constexpr std::uint8_t kSidrRejected = 2;
inline constexpr std::uint8_t kSidrNoQp = 3;

struct CmSidrRep {
  static constexpr std::size_t kSize = kMadDataBytes;
  static constexpr std::size_t kPrivateOffset = 96;
  static constexpr std::size_t kPrivateBytes = 136;
  std::uint8_t raw[kSize]{};

  static CmSidrRep read(const std::uint8_t* p) {
    CmSidrRep m;
    std::memcpy(m.raw, p, kSize);
    return m;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }

  std::uint32_t request_id() const { return load_be32(raw); }
  std::uint8_t status() const { return raw[4]; }
  std::uint8_t additional_info_length() const { return raw[5]; }
  std::uint32_t qpn() const { return load_be24(raw + 8); }
  std::uint64_t service_id() const { return load_be64(raw + 12); }
  std::uint32_t qkey() const { return load_be32(raw + 20); }
  const std::uint8_t* private_data() const { return raw + kPrivateOffset; }

  void set_request_id(std::uint32_t v) { store_be32(raw, v); }
  void set_status(std::uint8_t v) { raw[4] = v; }
  void set_additional_info_length(std::uint8_t v) { raw[5] = v; }
  void set_qpn(std::uint32_t v) { store_be24(raw + 8, v); }
  void set_service_id(std::uint64_t v) { store_be64(raw + 12, v); }
  void set_qkey(std::uint32_t v) { store_be32(raw + 20, v); }
  void set_private_data(const void* p, std::size_t n) {
    std::memcpy(raw + kPrivateOffset, p, n < kPrivateBytes ? n : kPrivateBytes);
  }
};
static_assert(sizeof(CmSidrRep) == CmSidrRep::kSize);
static_assert(CmSidrRep::kPrivateOffset + CmSidrRep::kPrivateBytes == CmSidrRep::kSize);

}  // namespace uroce::wire
