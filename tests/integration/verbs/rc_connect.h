// RESET -> INIT -> RTR -> RTS of an RC or UC QP for the integration programs
// (one definition of the bring-up they all need; each keeps its own error
// reporting). PSNs start at 0 on both sides, port 1, a GRH to `dgid`.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

namespace uroce_it {

struct RcConnect {
  std::uint32_t dest_qpn = 0;
  ibv_gid dgid{};
  int sgid_index = 1;
  ibv_mtu mtu = IBV_MTU_1024;
  unsigned access = 0;         // qp_access_flags at INIT
  std::uint8_t rd_atomic = 1;  // max_dest_rd_atomic and max_rd_atomic
  std::uint8_t min_rnr_timer = 12;
  std::uint8_t rnr_retry = 7;
};

namespace detail {

// RESET -> INIT with the access flags.
inline int to_init(ibv_qp* qp, const RcConnect& c, const char** step) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.qp_access_flags = c.access;
  *step = "INIT";
  return ibv_modify_qp(qp, &a,
                       IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

// What RTR takes for both kinds: the path and the peer's QPN.
inline ibv_qp_attr rtr_attr(const RcConnect& c) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = c.mtu;
  a.dest_qp_num = c.dest_qpn;
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = c.dgid;
  a.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(c.sgid_index);
  a.ah_attr.grh.hop_limit = 64;
  a.ah_attr.port_num = 1;
  return a;
}

inline constexpr int kRtrMask =
    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;

}  // namespace detail

// Returns 0, or ibv_modify_qp's error with *step naming the state that failed.
inline int rc_connect(ibv_qp* qp, const RcConnect& c, const char** step) {
  if (int rc = detail::to_init(qp, c, step); rc != 0) return rc;
  ibv_qp_attr a = detail::rtr_attr(c);
  a.max_dest_rd_atomic = c.rd_atomic;
  a.min_rnr_timer = c.min_rnr_timer;
  *step = "RTR";
  if (int rc = ibv_modify_qp(qp, &a,
                             detail::kRtrMask | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
      rc != 0) {
    return rc;
  }
  a = {};
  a.qp_state = IBV_QPS_RTS;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = c.rnr_retry;
  a.max_rd_atomic = c.rd_atomic;
  *step = "RTS";
  return ibv_modify_qp(qp, &a,
                       IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                           IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

// The same for a UC QP: no read/atomic resources, no RNR or retry timers.
inline int uc_connect(ibv_qp* qp, const RcConnect& c, const char** step) {
  if (int rc = detail::to_init(qp, c, step); rc != 0) return rc;
  ibv_qp_attr a = detail::rtr_attr(c);
  *step = "RTR";
  if (int rc = ibv_modify_qp(qp, &a, detail::kRtrMask); rc != 0) return rc;
  a = {};
  a.qp_state = IBV_QPS_RTS;
  *step = "RTS";
  return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

}  // namespace uroce_it
