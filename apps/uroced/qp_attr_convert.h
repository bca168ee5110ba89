// Translation between the verbs structs a client sends (ibv_qp_attr,
// ibv_ah_attr, ibv_srq_attr) and the transport's values, with every field
// checked first: the bytes come from an untrusted client.
//
// Address vectors: an AV must have a GRH (is_global = 1), name port 1 and a
// source GID index with an entry in the device's GID table (gid_table.h).
// From the IPv4-mapped entry (::ffff:<IPv4>, index 1) the destination GID
// must be IPv4-mapped (::ffff:a.b.c.d) and a unicast host address: RoCEv2
// over IPv4. From index 0 (fe80:: link-local) or the global IPv6 entry it
// must be a unicast IPv6 address that is not IPv4-mapped: RoCEv2 over IPv6.
// Anything else is EINVAL. The MAC is not here: the caller resolves the
// destination with ARP or neighbour discovery (resolve_mac in
// session_queues.cpp).
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

#include "datapath/ctl/protocol.h"
#include "datapath/engine/vnic_api.h"
#include "datapath/engine/vnic_types.h"
#include "datapath/port/gid_table.h"
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

// The device's GID table: link-local from its MAC, its IPv4 and global IPv6
// addresses (the table its sysfs gids, hence ibv_query_gid, show).
inline port::GidTable gid_table(const engine::VnicConfig& c) {
  return port::GidTable(c.mac, c.ip, c.ip6);
}

// Checks an address vector against the device's GID table `gids` (rules in
// the header comment) and fills `av` but its MAC: the destination, the DSCP
// and the TTL or hop limit the device sends with (`pfc`: its priority map
// and TX TTL). DSCP: traffic_class >> 2 when the application gave a traffic
// class (non-zero), else the DSCP of the service level's priority
// (PriorityMap::tx_dscp_of_sl(ah.sl)). Over IPv4 the TTL is always the
// device's tx_ttl (default 64), whatever hop_limit says: rdma-core's
// examples pass hop_limit 1, which would expire at the first router, and
// the TTL loop signals need one known TX TTL per device. Over IPv6 the hop
// limit is the AH's, as rxe sends it (tx_ttl when it is 0); the TTL monitor
// does not watch IPv6. With `group` (an AH, which may address a UD
// multicast group: docs/multicast.md) the destination may also be a
// multicast address (224.0.0.0/4 IPv4-mapped, or ff00::/8). 0 or EINVAL.
int av_from_ibv(const ibv_ah_attr& ah, const engine::PfcEndpointConfig& pfc,
                const port::GidTable& gids, transport::PathAddr* av, bool group = false);

// ibv_qp_attr for ibv_query_qp from the engine's answer. The AV is shown as
// it was set: GRH with dgid ::ffff:<dip> and sgid_index 1, or over IPv6 the
// IPv6 destination and the index of the source in `gids`; traffic class and
// hop limit; port 1.
// A DC QP's IBV_QP_AV (docs/dc.md): a DCT answers whoever sent the
// request and a DCI's targets come with each WR, so the AV gives only the
// traffic class (DSCP, or the SL's through the PFC map) and, with the TX
// TTL, the hop limit; its destination GID is not looked at (mlx5 DC users
// leave it zero) and nothing is resolved. EINVAL for a port other than 1.
int dc_av_from_ibv(const ibv_ah_attr& ah, const engine::PfcEndpointConfig& pfc,
                   transport::PathAddr* av);

void ibv_from_query(const engine::QpQuery& q, const port::GidTable& gids, ibv_qp_attr* out);

// A SetQpSched request as the engine applies it. EINVAL for unknown flags,
// a class neither in [0, 8) nor kSchedClassFromDscp, or a non-zero rate
// outside [kMinRateKbps, kMaxRateKbps].
int sched_from_req(const ctl::SetQpSchedReq& r, engine::QpSched* out);

// SRQ attributes (ibv_srq_attr <-> transport::SrqAttr).
transport::SrqAttr srq_attr_from_ibv(const ibv_srq_attr& a);
ibv_srq_attr ibv_from_srq_attr(const transport::SrqAttr& a);

}  // namespace uroce::daemon
