// Completions: the transport emits struct ib_uverbs_wc, the layout the CQ
// ring in shared memory holds and ibv_poll_cq returns (bit-identical to
// struct ibv_wc), so nothing is translated between the engine and the app.
#pragma once

#include <rdma/ib_user_verbs.h>

#include <cstdint>

namespace uroce::transport {

using Cqe = ib_uverbs_wc;
static_assert(sizeof(Cqe) == 48);

// ibv_wc_status values.
enum class WcStatus : std::uint32_t {
  kSuccess = 0,
  kLocLenErr = 1,
  kLocQpOpErr = 2,
  kLocProtErr = 4,
  kWrFlushErr = 5,
  kMwBindErr = 6,
  kBadRespErr = 7,
  kLocAccessErr = 8,
  kRemInvReqErr = 9,
  kRemAccessErr = 10,
  kRemOpErr = 11,
  kRetryExcErr = 12,
  kRnrRetryExcErr = 13,
  kRemAbortErr = 16,  // a DC connection retired with the outcome unknown (dc_lane.h)
  kFatalErr = 19,
  kRespTimeoutErr = 20,
  kGeneralErr = 21,
};

// ibv_wc_opcode values.
enum class WcOpcode : std::uint32_t {
  kSend = IB_UVERBS_WC_SEND,
  kRdmaWrite = IB_UVERBS_WC_RDMA_WRITE,
  kRdmaRead = IB_UVERBS_WC_RDMA_READ,
  kCompSwap = IB_UVERBS_WC_COMP_SWAP,
  kFetchAdd = IB_UVERBS_WC_FETCH_ADD,
  kLocalInv = IB_UVERBS_WC_LOCAL_INV,
  kBindMw = IB_UVERBS_WC_BIND_MW,
  kRecv = 128,
  kRecvRdmaWithImm = 129,
};

// Whether `c` completes work whose data came from the peer: a receive, or a
// READ's or an atomic's response (not a SEND or WRITE that an ACK
// completed).
inline bool carries_peer_data(const Cqe& c) {
  switch (static_cast<WcOpcode>(c.opcode)) {
    case WcOpcode::kRecv:
    case WcOpcode::kRecvRdmaWithImm:
    case WcOpcode::kRdmaRead:
    case WcOpcode::kCompSwap:
    case WcOpcode::kFetchAdd: return true;
    default: return false;
  }
}

// ibv_wc_flags values.
namespace wc_flag {
inline constexpr std::uint32_t kGrh = 1u << 0;
inline constexpr std::uint32_t kWithImm = 1u << 1;
inline constexpr std::uint32_t kWithInv = 1u << 3;
}  // namespace wc_flag

// The solicited-event request of the packet that completed a receive (BTH
// SE, IBTA 9.2.1), carried from the transport to the CQ in the completion's
// reserved byte, which struct ibv_wc does not expose. The CQ sink reads it
// for solicited-only arming (IBTA 11.4.2.2) and clears it before the
// completion reaches the ring, so the application never sees it.
inline constexpr std::uint8_t kCqeSolicited = 1;
inline void set_solicited(Cqe& c, bool se) { c.reserved = se ? kCqeSolicited : 0; }
inline bool is_solicited(const Cqe& c) { return (c.reserved & kCqeSolicited) != 0; }
// Whether `c` fires a CQ armed for the next solicited completion: a
// receive whose packet asked for it, or any completion in error (IBTA
// 11.4.2.2: "the next Solicited or unsuccessful completion"; rxe posts its
// flush completions as solicited).
inline bool fires_solicited_arm(const Cqe& c) {
  return is_solicited(c) || c.status != static_cast<std::uint32_t>(WcStatus::kSuccess);
}

// ibv_wc.sl of a UD receive completion on RoCE: the packet's network (L3)
// type, as mlx5 devices report it. Verbs consumers (UCX's ud_verbs among
// them) read it to know where the addresses are in the 40-byte GRH area:
// IPv4 puts the IPv4 header in its last 20 bytes, IPv6 a real GRH.
inline constexpr std::uint8_t kWcSlRoceIpv6 = 1;
inline constexpr std::uint8_t kWcSlRoceIpv4 = 2;

}  // namespace uroce::transport
