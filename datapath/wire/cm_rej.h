// CM REJ, Reject (IBTA Vol.1 section 12.6.7, Tables 103 and 104), attribute
// 0x0012.
//
//  byte  field (bits, most significant first)
//     0  Local Communication ID (32)
//     4  Remote Communication ID (32)
//     8  Message Rejected (2) | reserved (6)
//     9  Reject Info Length (7) | reserved (1)
//    10  Reason (16)
//    12  Additional Reject Information, ARI (72 bytes)
//    84  PrivateData (148 bytes)
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/byteorder.h"
#include "datapath/wire/mad.h"

namespace uroce::wire {

// Reject reasons uroce sends or acts on (Table 104).
inline constexpr std::uint16_t kRejNoQp = 1;
inline constexpr std::uint16_t kRejTimeout = 5;
inline constexpr std::uint16_t kRejInvalidCommId = 6;
inline constexpr std::uint16_t kRejInvalidServiceId = 8;
inline constexpr std::uint16_t kRejStaleConn = 10;
inline constexpr std::uint16_t kRejConsumer = 28;
inline constexpr std::uint16_t kRejInvalidClassVersion = 31;

struct CmRej {
  static constexpr std::size_t kSize = kMadDataBytes;
  static constexpr std::size_t kAriOffset = 12;
  static constexpr std::size_t kAriBytes = 72;
  static constexpr std::size_t kPrivateOffset = 84;
  static constexpr std::size_t kPrivateBytes = 148;
  std::uint8_t raw[kSize]{};

  static CmRej read(const std::uint8_t* p) {
    CmRej m;
    std::memcpy(m.raw, p, kSize);
    return m;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }

  std::uint32_t local_comm_id() const { return load_be32(raw); }
  std::uint32_t remote_comm_id() const { return load_be32(raw + 4); }
  std::uint8_t message_rejected() const { return get_bits(raw[8], 6, 2); }
  std::uint8_t reject_info_length() const { return get_bits(raw[9], 1, 7); }
  std::uint16_t reason() const { return load_be16(raw + 10); }
  const std::uint8_t* private_data() const { return raw + kPrivateOffset; }

  void set_local_comm_id(std::uint32_t v) { store_be32(raw, v); }
  void set_remote_comm_id(std::uint32_t v) { store_be32(raw + 4, v); }
  void set_message_rejected(std::uint8_t v) { set_bits(&raw[8], 6, 2, v); }
  void set_reject_info_length(std::uint8_t v) { set_bits(&raw[9], 1, 7, v); }
  void set_reason(std::uint16_t v) { store_be16(raw + 10, v); }
  void set_private_data(const void* p, std::size_t n) {
    std::memcpy(raw + kPrivateOffset, p, n < kPrivateBytes ? n : kPrivateBytes);
  }
};
static_assert(sizeof(CmRej) == CmRej::kSize);
static_assert(CmRej::kPrivateOffset + CmRej::kPrivateBytes == CmRej::kSize);

}  // namespace uroce::wire
