#include "apps/uroced/qp_attr_convert.h"

#include <cerrno>
#include <cstring>

#include "datapath/port/gid_table.h"
#include "datapath/wire/bth.h"

namespace uroce::daemon {
namespace {

namespace qa = transport::qp_attr;

constexpr std::uint32_t kMax24 = 0xffffff;

bool valid_state(ibv_qp_state s) {
  return static_cast<unsigned>(s) <= static_cast<unsigned>(transport::QpState::kErr);
}

bool unicast_host(wire::Ipv4Addr ip) {
  const std::uint32_t top = ip.v >> 24;
  return ip.v != 0 && top != 0 && top < 224 && ip.v != 0xffffffffu;
}

}  // namespace

int values_from_ibv(std::uint32_t mask, const ibv_qp_attr& a, wire::PathMtu active_mtu,
                    std::uint32_t max_rd_atomic, transport::QpAttrValues* out) {
  if ((mask & ~kSupportedQpAttrMask) != 0) return EINVAL;
  transport::QpAttrValues v{};
  if ((mask & qa::kState) != 0) {
    if (!valid_state(a.qp_state)) return EINVAL;
    v.qp_state = static_cast<transport::QpState>(a.qp_state);
  }
  if ((mask & qa::kCurState) != 0) {
    if (!valid_state(a.cur_qp_state)) return EINVAL;
    v.cur_qp_state = static_cast<transport::QpState>(a.cur_qp_state);
  }
  if ((mask & qa::kAccessFlags) != 0) {
    if ((a.qp_access_flags & ~kQpAccessMask) != 0) return EINVAL;
    v.qp_access_flags = a.qp_access_flags;
  }
  if ((mask & qa::kPkeyIndex) != 0) {
    if (a.pkey_index >= transport::kPkeyTableSize) return EINVAL;
    v.pkey_index = a.pkey_index;
  }
  if ((mask & qa::kPort) != 0) {
    if (a.port_num != transport::kPortNum) return EINVAL;
    v.port_num = a.port_num;
  }
  if ((mask & qa::kQkey) != 0) v.qkey = a.qkey;
  if ((mask & qa::kPathMtu) != 0) {
    const auto code = static_cast<std::uint32_t>(a.path_mtu);
    if (code > 0xff || !wire::path_mtu_valid(static_cast<std::uint8_t>(code)) ||
        code > static_cast<std::uint32_t>(active_mtu)) {
      return EINVAL;
    }
    v.path_mtu = static_cast<wire::PathMtu>(code);
  }
  if ((mask & qa::kTimeout) != 0) {
    if (a.timeout > 31) return EINVAL;
    v.timeout = a.timeout;
  }
  if ((mask & qa::kRetryCnt) != 0) {
    if (a.retry_cnt > 7) return EINVAL;
    v.retry_cnt = a.retry_cnt;
  }
  if ((mask & qa::kRnrRetry) != 0) {
    if (a.rnr_retry > 7) return EINVAL;
    v.rnr_retry = a.rnr_retry;
  }
  if ((mask & qa::kMinRnrTimer) != 0) {
    if (a.min_rnr_timer > 31) return EINVAL;
    v.min_rnr_timer = a.min_rnr_timer;
  }
  if ((mask & qa::kMaxQpRdAtomic) != 0) {
    if (a.max_rd_atomic > max_rd_atomic) return EINVAL;
    v.max_rd_atomic = a.max_rd_atomic;
  }
  if ((mask & qa::kMaxDestRdAtomic) != 0) {
    if (a.max_dest_rd_atomic > max_rd_atomic) return EINVAL;
    v.max_dest_rd_atomic = a.max_dest_rd_atomic;
  }
  if ((mask & qa::kRqPsn) != 0) {
    if (a.rq_psn > kMax24) return EINVAL;
    v.rq_psn = a.rq_psn;
  }
  if ((mask & qa::kSqPsn) != 0) {
    if (a.sq_psn > kMax24) return EINVAL;
    v.sq_psn = a.sq_psn;
  }
  if ((mask & qa::kDestQpn) != 0) {
    if (a.dest_qp_num > kMax24) return EINVAL;
    v.dest_qp_num = a.dest_qp_num;
  }
  *out = v;
  return 0;
}

int av_from_ibv(const ibv_ah_attr& ah, const engine::PfcEndpointConfig& pfc,
                const port::GidTable& gids, transport::PathAddr* av, bool group) {
  if (ah.is_global != 1 || ah.port_num != transport::kPortNum) return EINVAL;
  const auto sgid = gids.at(ah.grh.sgid_index);
  if (!sgid) return EINVAL;
  port::Gid g;
  std::memcpy(g.raw.data(), ah.grh.dgid.raw, g.raw.size());
  transport::PathAddr a = *av;
  if (sgid->gid.is_ipv4_mapped()) {
    const auto ip = g.ipv4();
    if (!ip || !(unicast_host(*ip) || (group && ip->is_multicast()))) return EINVAL;
    a.dip = *ip;
    a.ipv6 = false;
    a.ttl = pfc.ttl.tx_ttl;
  } else {
    // RoCEv2 over IPv6: a unicast IPv6 destination (not IPv4-mapped, not
    // multicast unless `group`, not ::) from the link-local or the global GID.
    const wire::Ipv6Addr d = g.ipv6();
    if (d.is_zero() || (d.is_multicast() && !group) || d.is_ipv4_mapped()) return EINVAL;
    a.ipv6 = true;
    a.global_src = ah.grh.sgid_index != port::GidTable::kLinkLocalIndex;
    a.route6 = wire::Ipv6Route{sgid->gid.ipv6(), d, 0};
    a.dip = wire::Ipv4Addr{};
    a.ttl = ah.grh.hop_limit != 0 ? ah.grh.hop_limit : pfc.ttl.tx_ttl;
  }
  a.dscp = ah.grh.traffic_class != 0 ? static_cast<std::uint8_t>(ah.grh.traffic_class >> 2)
                                     : pfc.map.tx_dscp_of_sl(ah.sl);
  *av = a;
  return 0;
}

int dc_av_from_ibv(const ibv_ah_attr& ah, const engine::PfcEndpointConfig& pfc,
                   transport::PathAddr* av) {
  if (ah.port_num != transport::kPortNum) return EINVAL;
  transport::PathAddr a;
  a.ttl = pfc.ttl.tx_ttl;
  a.dscp = ah.is_global != 0 && ah.grh.traffic_class != 0
               ? static_cast<std::uint8_t>(ah.grh.traffic_class >> 2)
               : pfc.map.tx_dscp_of_sl(ah.sl);
  *av = a;
  return 0;
}

void ibv_from_query(const engine::QpQuery& q, const port::GidTable& gids, ibv_qp_attr* out) {
  const transport::QpAttrValues& v = q.values;
  ibv_qp_attr a;
  std::memset(&a, 0, sizeof(a));
  a.qp_state = static_cast<ibv_qp_state>(q.state);
  a.cur_qp_state = static_cast<ibv_qp_state>(q.state);
  a.path_mtu = static_cast<ibv_mtu>(v.path_mtu);
  a.path_mig_state = IBV_MIG_MIGRATED;
  a.qkey = v.qkey;
  a.rq_psn = v.rq_psn;
  a.sq_psn = v.sq_psn;
  a.dest_qp_num = v.dest_qp_num;
  a.qp_access_flags = v.qp_access_flags;
  a.pkey_index = v.pkey_index;
  a.port_num = transport::kPortNum;
  a.max_rd_atomic = v.max_rd_atomic;
  a.max_dest_rd_atomic = v.max_dest_rd_atomic;
  a.min_rnr_timer = v.min_rnr_timer;
  a.timeout = v.timeout;
  a.retry_cnt = v.retry_cnt;
  a.rnr_retry = v.rnr_retry;
  if (v.av.dip.v != 0 || v.av.ipv6) {
    const port::Gid g =
        v.av.ipv6 ? port::Gid::from_ipv6(v.av.route6.dst) : port::Gid::ipv4_mapped(v.av.dip);
    a.ah_attr.is_global = 1;
    std::memcpy(a.ah_attr.grh.dgid.raw, g.raw.data(), g.raw.size());
    a.ah_attr.grh.sgid_index = static_cast<std::uint8_t>(
        !v.av.ipv6        ? port::GidTable::kIpv4Index
        : v.av.global_src ? gids.ipv6_index().value_or(port::GidTable::kLinkLocalIndex)
                          : port::GidTable::kLinkLocalIndex);
    a.ah_attr.grh.hop_limit = v.av.ttl;
    a.ah_attr.grh.traffic_class = static_cast<std::uint8_t>(v.av.dscp << 2);
    a.ah_attr.port_num = transport::kPortNum;
  }
  *out = a;
}

transport::SrqAttr srq_attr_from_ibv(const ibv_srq_attr& a) {
  return transport::SrqAttr{a.max_wr, a.max_sge, a.srq_limit};
}

ibv_srq_attr ibv_from_srq_attr(const transport::SrqAttr& a) {
  ibv_srq_attr out{};
  out.max_wr = a.max_wr;
  out.max_sge = a.max_sge;
  out.srq_limit = a.srq_limit;
  return out;
}

int sched_from_req(const ctl::SetQpSchedReq& r, engine::QpSched* out) {
  if ((r.flags & ~(ctl::kSchedRate | ctl::kSchedClass)) != 0) return EINVAL;
  engine::QpSched s;
  if ((r.flags & ctl::kSchedClass) != 0) {
    if (r.tx_class >= sched::kNumClasses && r.tx_class != ctl::kSchedClassFromDscp) return EINVAL;
    s.set_class = true;
    s.tx_class =
        r.tx_class == ctl::kSchedClassFromDscp ? engine::QpSched::kClassFromDscp : r.tx_class;
  }
  if ((r.flags & ctl::kSchedRate) != 0) {
    const std::uint64_t bps = std::uint64_t{r.rate_kbps} * 1000;
    if (r.rate_kbps != 0 && (r.rate_kbps < ctl::kMinRateKbps || r.rate_kbps > ctl::kMaxRateKbps)) {
      return EINVAL;
    }
    s.set_rate = true;
    s.pace.rate_bps = bps;
    s.pace.burst_bytes = r.max_burst_bytes;
    s.pace.typical_bytes = r.typical_pkt_bytes;
  }
  *out = s;
  return 0;
}

}  // namespace uroce::daemon
