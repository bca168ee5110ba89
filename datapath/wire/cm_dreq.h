// CM DREQ, Request for Communication Release (IBTA Vol.1 section 12.6.10,
// Table 107), attribute 0x0015.
//
//  byte  field (bits, most significant first)
//     0  Local Communication ID (32)
//     4  Remote Communication ID (32)
//     8  Remote QPN/EECN (24) | reserved (8)
//    12  PrivateData (220 bytes)
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/byteorder.h"
#include "datapath/wire/mad.h"

namespace uroce::wire {

struct CmDreq {
  static constexpr std::size_t kSize = kMadDataBytes;
  static constexpr std::size_t kPrivateOffset = 12;
  static constexpr std::size_t kPrivateBytes = 220;
  std::uint8_t raw[kSize]{};

  static CmDreq read(const std::uint8_t* p) {
    CmDreq m;
    std::memcpy(m.raw, p, kSize);
    return m;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }

  std::uint32_t local_comm_id() const { return load_be32(raw); }
  std::uint32_t remote_comm_id() const { return load_be32(raw + 4); }
  std::uint32_t remote_qpn() const { return load_be24(raw + 8); }

  void set_local_comm_id(std::uint32_t v) { store_be32(raw, v); }
  void set_remote_comm_id(std::uint32_t v) { store_be32(raw + 4, v); }
  void set_remote_qpn(std::uint32_t v) { store_be24(raw + 8, v); }
};
static_assert(sizeof(CmDreq) == CmDreq::kSize);
static_assert(CmDreq::kPrivateOffset + CmDreq::kPrivateBytes == CmDreq::kSize);

}  // namespace uroce::wire
