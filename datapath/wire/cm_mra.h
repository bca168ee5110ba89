// CM MRA, Message Receipt Acknowledgement (IBTA Vol.1 section 12.6.6, Table
// 102), attribute 0x0011: "I got your REQ/REP/LAP, give me longer".
//
//  byte  field (bits, most significant first)
//     0  Local Communication ID (32)
//     4  Remote Communication ID (32)
//     8  Message MRAed (2) | reserved (6)
//     9  Service Timeout (5) | reserved (3)
//    10  PrivateData (222 bytes)
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "datapath/wire/byteorder.h"
#include "datapath/wire/mad.h"

namespace uroce::wire {

// Message MRAed / Message Rejected values (Tables 102 and 103).
inline constexpr std::uint8_t kCmMsgReq = 0;
inline constexpr std::uint8_t kCmMsgRep = 1;
inline constexpr std::uint8_t kCmMsgOther = 2;

struct CmMra {
  static constexpr std::size_t kSize = kMadDataBytes;
  static constexpr std::size_t kPrivateOffset = 10;
  static constexpr std::size_t kPrivateBytes = 222;
  std::uint8_t raw[kSize]{};

  static CmMra read(const std::uint8_t* p) {
    CmMra m;
    std::memcpy(m.raw, p, kSize);
    return m;
  }
  void write(std::uint8_t* p) const { std::memcpy(p, raw, kSize); }

  std::uint32_t local_comm_id() const { return load_be32(raw); }
  std::uint32_t remote_comm_id() const { return load_be32(raw + 4); }
  std::uint8_t message_mraed() const { return get_bits(raw[8], 6, 2); }
  std::uint8_t service_timeout() const { return get_bits(raw[9], 3, 5); }

  void set_local_comm_id(std::uint32_t v) { store_be32(raw, v); }
  void set_remote_comm_id(std::uint32_t v) { store_be32(raw + 4, v); }
  void set_message_mraed(std::uint8_t v) { set_bits(&raw[8], 6, 2, v); }
  void set_service_timeout(std::uint8_t v) { set_bits(&raw[9], 3, 5, v); }
};
static_assert(sizeof(CmMra) == CmMra::kSize);
static_assert(CmMra::kPrivateOffset + CmMra::kPrivateBytes == CmMra::kSize);

}  // namespace uroce::wire
