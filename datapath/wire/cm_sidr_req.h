// CM SIDR_REQ, Service ID Resolution Request (IBTA Vol.1 section 12.11.1,
// Table 111), attribute 0x0017: "which UD QP and Q_Key serve this Service
// ID?" rdma_cm's RDMA_PS_UDP connect.
//
//  byte  field
//     0  Request ID (32)
//     4  Partition Key (16) | reserved (16)
//     8  ServiceID (64)
//    16  PrivateData (216 bytes; for an IP Service ID it starts with the
//        Annex A11 header, cm_ip_private.h)
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/byteorder.h"
#include "datapath/wire/mad.h"

namespace uroce::wire {

struct CmSidrReq {
  static constexpr std::size_t kSize = kMadDataBytes;
  static constexpr std::size_t kPrivateOffset = 16;
  static constexpr std::size_t kPrivateBytes = 216;
  std::uint8_t raw[kSize]{};

  static CmSidrReq read(const std::uint8_t* p) {
    CmSidrReq m;
    std::memcpy(m.raw, p, kSize);
    return m;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }

  std::uint32_t request_id() const { return load_be32(raw); }
  std::uint16_t pkey() const { return load_be16(raw + 4); }
  std::uint64_t service_id() const { return load_be64(raw + 8); }
  const std::uint8_t* private_data() const { return raw + kPrivateOffset; }

  void set_request_id(std::uint32_t v) { store_be32(raw, v); }
  void set_pkey(std::uint16_t v) { store_be16(raw + 4, v); }
  void set_service_id(std::uint64_t v) { store_be64(raw + 8, v); }
  void set_private_data(const void* p, std::size_t n) {
    std::memcpy(raw + kPrivateOffset, p, n < kPrivateBytes ? n : kPrivateBytes);
  }
};
static_assert(sizeof(CmSidrReq) == CmSidrReq::kSize);
static_assert(CmSidrReq::kPrivateOffset + CmSidrReq::kPrivateBytes == CmSidrReq::kSize);

}  // namespace uroce::wire
