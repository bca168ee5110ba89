// QP states, types and modify-attribute mask bits, with the numeric values of
// the verbs ABI (enum ibv_qp_state, ibv_qp_type, ibv_qp_attr_mask) so the
// provider can pass them through unchanged. Defined here so the transport
// does not depend on libibverbs headers.
#pragma once

#include <cstdint>

namespace uroce::transport {

enum class QpState : std::uint8_t {
  kReset = 0,
  kInit = 1,
  kRtr = 2,
  kRts = 3,
  kSqd = 4,
  kSqe = 5,
  kErr = 6,
};
inline constexpr int kNumQpStates = 7;

// kRc, kUc and kUd are ibv_qp_type's values. The DC types (docs/dc.md) are
// IBV_QPT_DRIVER in verbs, told apart by uroce_dv_create_qp's dc_type, so
// they have values of their own: never an ibv_qp_type value (2..10, and
// IBV_QPT_DRIVER 0xff), so that casting a client's qp_type can never yield
// a DC type; the daemon maps (IBV_QPT_DRIVER, dc_type) to them.
enum class QpType : std::uint8_t {
  kRc = 2,
  kUc = 3,
  kUd = 4,
  kDci = 0x80,  // DC initiator: one send queue, any number of targets
  kDct = 0x81,  // DC target: receives through an SRQ, no send queue
};

constexpr bool is_dc(QpType t) { return t == QpType::kDci || t == QpType::kDct; }

// A DCI's streams (docs/dc.md, "Semantics"): 2^log_streams of them, and
// per-stream error handling when log_errored > 0. The one definition of the
// limits: the provider checks them (uroce_dv_create_qp), uroced checks them
// again, and uroce_dv_query_device reports them. At most 16 streams; a DCI
// cannot have more errored streams than streams.
inline constexpr std::uint8_t kMaxDciLogStreams = 4;
inline constexpr std::uint8_t kMaxDciLogErrored = kMaxDciLogStreams;

constexpr bool dci_streams_valid(std::uint8_t log_streams, std::uint8_t log_errored) {
  return log_streams <= kMaxDciLogStreams && log_errored <= log_streams;
}

// ibv_qp_attr_mask bits.
namespace qp_attr {
inline constexpr std::uint32_t kState = 1u << 0;
inline constexpr std::uint32_t kCurState = 1u << 1;
inline constexpr std::uint32_t kEnSqdAsyncNotify = 1u << 2;
inline constexpr std::uint32_t kAccessFlags = 1u << 3;
inline constexpr std::uint32_t kPkeyIndex = 1u << 4;
inline constexpr std::uint32_t kPort = 1u << 5;
inline constexpr std::uint32_t kQkey = 1u << 6;
inline constexpr std::uint32_t kAv = 1u << 7;
inline constexpr std::uint32_t kPathMtu = 1u << 8;
inline constexpr std::uint32_t kTimeout = 1u << 9;
inline constexpr std::uint32_t kRetryCnt = 1u << 10;
inline constexpr std::uint32_t kRnrRetry = 1u << 11;
inline constexpr std::uint32_t kRqPsn = 1u << 12;
inline constexpr std::uint32_t kMaxQpRdAtomic = 1u << 13;
inline constexpr std::uint32_t kAltPath = 1u << 14;
inline constexpr std::uint32_t kMinRnrTimer = 1u << 15;
inline constexpr std::uint32_t kSqPsn = 1u << 16;
inline constexpr std::uint32_t kMaxDestRdAtomic = 1u << 17;
inline constexpr std::uint32_t kPathMigState = 1u << 18;
inline constexpr std::uint32_t kCap = 1u << 19;
inline constexpr std::uint32_t kDestQpn = 1u << 20;
inline constexpr std::uint32_t kRateLimit = 1u << 25;
}  // namespace qp_attr

const char* qp_state_name(QpState s);

}  // namespace uroce::transport
