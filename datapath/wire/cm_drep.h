// CM DREP, Reply to Request for Communication Release (IBTA Vol.1 section
// 12.6.11, Table 108), attribute 0x0016.
//
//  byte  field
//     0  Local Communication ID (32)
//     4  Remote Communication ID (32)
//     8  PrivateData (224 bytes)
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/byteorder.h"
#include "datapath/wire/mad.h"

namespace uroce::wire {

struct CmDrep {
  static constexpr std::size_t kSize = kMadDataBytes;
  static constexpr std::size_t kPrivateOffset = 8;
  static constexpr std::size_t kPrivateBytes = 224;
  std::uint8_t raw[kSize]{};

  static CmDrep read(const std::uint8_t* p) {
    CmDrep m;
    std::memcpy(m.raw, p, kSize);
    return m;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }

  std::uint32_t local_comm_id() const { return load_be32(raw); }
  std::uint32_t remote_comm_id() const { return load_be32(raw + 4); }
  const std::uint8_t* private_data() const { return raw + kPrivateOffset; }

  void set_local_comm_id(std::uint32_t v) { store_be32(raw, v); }
  void set_remote_comm_id(std::uint32_t v) { store_be32(raw + 4, v); }
  void set_private_data(const void* p, std::size_t n) {
    std::memcpy(raw + kPrivateOffset, p, n < kPrivateBytes ? n : kPrivateBytes);
  }
};
static_assert(sizeof(CmDrep) == CmDrep::kSize);
static_assert(CmDrep::kPrivateOffset + CmDrep::kPrivateBytes == CmDrep::kSize);

}  // namespace uroce::wire
