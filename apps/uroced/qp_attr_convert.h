// Translation between the verbs structs a client sends (ibv_qp_attr,
// ibv_ah_attr, ibv_srq_attr) and the transport's values, with every field
// checked first: the bytes come from an untrusted client.
//
// Address vectors: uroce is RoCEv2 over IPv4 only, so an AV must have a GRH
// (is_global = 1), name port 1 and source GID index 1 (the ::ffff:<IPv4>
// entry; index 0 is the IPv6 link-local GID, which we cannot send from), and
// its destination GID must be IPv4-mapped (::ffff:a.b.c.d) and a unicast
// host address. Anything else is EINVAL. The MAC is not here: the caller
// resolves the destination with ARP (resolve_mac in client_session.cpp).
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

#include "datapath/engine/vnic_types.h"
#include "datapath/transport/qp_attr.h"
#include "datapath/transport/qp_common.h"
#include "datapath/transport/srq.h"
#include "datapath/wire/addr.h"

namespace uroce::daemon {

// The ibv_qp_attr_mask bits uroced implements. Alternate paths / APM,
// changing the capabilities, rate limits and SQD async notification are not
// implemented and get EINVAL.
inline constexpr std::uint32_t kSupportedQpAttrMask =
    transport::qp_attr::kState | transport::qp_attr::kCurState | transport::qp_attr::kAccessFlags |
    transport::qp_attr::kPkeyIndex | transport::qp_attr::kPort | transport::qp_attr::kQkey |
    transport::qp_attr::kAv | transport::qp_attr::kPathMtu | transport::qp_attr::kTimeout |
    transport::qp_attr::kRetryCnt | transport::qp_attr::kRnrRetry | transport::qp_attr::kRqPsn |
    transport::qp_attr::kMaxQpRdAtomic | transport::qp_attr::kMinRnrTimer |
    transport::qp_attr::kSqPsn | transport::qp_attr::kMaxDestRdAtomic |
    transport::qp_attr::kDestQpn;

// The QP access flags the transport honours.
inline constexpr std::uint32_t kQpAccessMask = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                                               IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

// The fields of `a` that `mask` selects, range-checked, into `out` (its AV
// part is left to av_from_ibv). EINVAL for a mask bit outside
// kSupportedQpAttrMask or a value out of range: a state past ERR, a path MTU
// code outside 1..5 or above `active_mtu` (as rxe), timeout or
// min_rnr_timer over 31, retry_cnt or rnr_retry over 7, rd_atomic values
// over max_qp_rd_atom, a port other than 1, a P_Key index other than 0, a
// QPN or PSN wider than 24 bits, unknown access flags.
int values_from_ibv(std::uint32_t mask, const ibv_qp_attr& a, wire::PathMtu active_mtu,
                    std::uint32_t max_rd_atomic, transport::QpAttrValues* out);

// Checks an address vector (rules in the header comment) and extracts the
// destination IPv4 address, the DSCP and the TTL the device sends with
// (`pfc`: its priority map and TX TTL). DSCP: traffic_class >> 2 when the
// application gave a traffic class (non-zero), else the DSCP of the service
// level's priority (PriorityMap::tx_dscp_of_sl(ah.sl)). TTL: always the
// device's tx_ttl (default 64), whatever hop_limit says: rdma-core's
// examples pass hop_limit 1, which would expire at the first router, and
// the TTL loop signals need one known TX TTL per device. 0 or EINVAL.
int av_from_ibv(const ibv_ah_attr& ah, const engine::PfcEndpointConfig& pfc, wire::Ipv4Addr* dip,
                std::uint8_t* dscp, std::uint8_t* ttl);

// ibv_qp_attr for ibv_query_qp from the engine's answer. The AV is shown as
// it was set: GRH with dgid ::ffff:<dip>, sgid_index 1, traffic class and
// hop limit; port 1.
void ibv_from_query(const engine::QpQuery& q, ibv_qp_attr* out);

// A SetQpSched request as the engine applies it. EINVAL for unknown flags,
// a class neither in [0, 8) nor kSchedClassFromDscp, or a non-zero rate
// outside [kMinRateKbps, kMaxRateKbps].
int sched_from_req(const ctl::SetQpSchedReq& r, engine::QpSched* out);

// SRQ attributes (ibv_srq_attr <-> transport::SrqAttr).
transport::SrqAttr srq_attr_from_ibv(const ibv_srq_attr& a);
ibv_srq_attr ibv_from_srq_attr(const transport::SrqAttr& a);

}  // namespace uroce::daemon
