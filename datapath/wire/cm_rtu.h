// CM RTU, Ready To Use (IBTA Vol.1 section 12.6.9, Table 106), attribute 0x0014.
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

struct CmRtu {
  static constexpr std::size_t kSize = kMadDataBytes;
  static constexpr std::size_t kPrivateOffset = 8;
  static constexpr std::size_t kPrivateBytes = 224;
  std::uint8_t raw[kSize]{};

  static CmRtu read(const std::uint8_t* p) {
    CmRtu m;
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
static_assert(sizeof(CmRtu) == CmRtu::kSize);
static_assert(CmRtu::kPrivateOffset + CmRtu::kPrivateBytes == CmRtu::kSize);

}  // namespace uroce::wire
