#include "datapath/port/nd_agent.h"

#include <algorithm>
#include <cstring>

#include "datapath/wire/checksum.h"
#include "datapath/wire/eth.h"
#include "datapath/wire/ipv6.h"
#include "datapath/wire/nd.h"
#include "datapath/wire/nd_lla_option.h"

namespace uroce::port {

namespace {

constexpr std::size_t kIpOff = wire::EthHdr::kSize;
constexpr std::size_t kNdOff = kIpOff + wire::Ipv6Hdr::kSize;
constexpr std::size_t kOptOff = kNdOff + wire::NdHdr::kSize;

// ff02::1, all nodes on the link (RFC 4291 2.7.1).
const wire::Ipv6Addr kAllNodes{{0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}};

}  // namespace

const char* to_string(NdDrop d) {
  switch (d) {
    case NdDrop::kNone: return "none";
    case NdDrop::kNotNd: return "not_nd";
    case NdDrop::kTruncated: return "truncated";
    case NdDrop::kBadHopLimit: return "bad_hop_limit";
    case NdDrop::kBadChecksum: return "bad_checksum";
    case NdDrop::kBadCode: return "bad_code";
    case NdDrop::kBadOption: return "bad_option";
    case NdDrop::kBadSender: return "bad_sender";
    case NdDrop::kOwnFrame: return "own_frame";
    case NdDrop::kConflict: return "conflict";
    case NdDrop::kNotForUs: return "not_for_us";
    case NdDrop::kTableFull: return "table_full";
    case NdDrop::kCount: break;
  }
  return "?";
}

void build_nd_frame(std::span<std::uint8_t, kNdFrameSize> out, const wire::MacAddr& eth_dst,
                    const wire::MacAddr& eth_src, const wire::Ipv6Addr& ip_src,
                    const wire::Ipv6Addr& ip_dst, std::uint8_t type, std::uint32_t flags,
                    const wire::Ipv6Addr& target, std::uint8_t opt_type) {
  wire::EthHdr eth;
  eth.set_dst(eth_dst);
  eth.set_src(eth_src);
  eth.set_ether_type(wire::kEtherTypeIpv6);
  eth.write(out.data());
  wire::Ipv6Hdr ip;
  ip.set_version_tc_flow(6, 0, 0);
  ip.set_payload_length(static_cast<std::uint16_t>(kNdFrameSize - kNdOff));
  ip.set_next_header(wire::kIpProtoIcmpv6);
  ip.set_hop_limit(wire::kNdHopLimit);
  ip.set_src(ip_src);
  ip.set_dst(ip_dst);
  ip.write(out.data() + kIpOff);
  wire::NdHdr nd;
  nd.set_type(type);
  nd.set_code(0);
  nd.set_flags(flags);
  nd.set_target(target);
  nd.write(out.data() + kNdOff);
  wire::NdLlaOption::make(opt_type, eth_src).write(out.data() + kOptOff);
  const std::uint16_t c = wire::ipv6_checksum(ip_src, ip_dst, wire::kIpProtoIcmpv6,
                                              std::span<const std::uint8_t>(out.data() + kNdOff,
                                                                            kNdFrameSize - kNdOff));
  wire::store_be16(out.data() + kNdOff + 2, c);
}

NdAgent::NdAgent(const NdConfig& cfg) : cfg_(cfg), neighbors_(cfg.neighbors) {}

TimeNs NdAgent::scan_interval() const { return std::min<TimeNs>(cfg_.retransmit_time, kNsPerSec); }

const wire::Ipv6Addr& NdAgent::source_for(const wire::Ipv6Addr& peer) const {
  return !peer.is_link_local() && !cfg_.global.is_zero() ? cfg_.global : cfg_.link_local;
}

NdDrop NdAgent::process(std::span<const std::uint8_t> frame, TimeNs now) {
  ++counters_.rx_frames;
  if (frame.size() < kOptOff) {
    if (frame.size() < kNdOff || wire::load_be16(frame.data() + 12) != wire::kEtherTypeIpv6) {
      return drop(NdDrop::kNotNd);
    }
    return drop(NdDrop::kTruncated);
  }
  const wire::EthHdr eth = wire::EthHdr::read(frame.data());
  const wire::Ipv6Hdr ip = wire::Ipv6Hdr::read(frame.data() + kIpOff);
  if (eth.ether_type() != wire::kEtherTypeIpv6 || ip.version() != 6 ||
      ip.next_header() != wire::kIpProtoIcmpv6) {
    return drop(NdDrop::kNotNd);
  }
  const wire::NdHdr nd = wire::NdHdr::read(frame.data() + kNdOff);
  if (nd.type() != wire::kIcmpv6NeighborSolicit && nd.type() != wire::kIcmpv6NeighborAdvert) {
    return drop(NdDrop::kNotNd);
  }
  const std::size_t icmp_len = ip.payload_length();
  if (icmp_len < wire::NdHdr::kSize || icmp_len > frame.size() - kNdOff) {
    return drop(NdDrop::kTruncated);
  }
  if (ip.hop_limit() != wire::kNdHopLimit) return drop(NdDrop::kBadHopLimit);
  const auto icmp = frame.subspan(kNdOff, icmp_len);
  if (!wire::ipv6_checksum_ok(ip.src(), ip.dst(), wire::kIpProtoIcmpv6, icmp)) {
    return drop(NdDrop::kBadChecksum);
  }
  if (nd.code() != 0) return drop(NdDrop::kBadCode);
  const bool solicit = nd.type() == wire::kIcmpv6NeighborSolicit;
  // The link-layer address option the message type carries, if present.
  const std::uint8_t want_opt = solicit ? wire::kNdOptSourceLla : wire::kNdOptTargetLla;
  const wire::MacAddr* lla = nullptr;
  wire::MacAddr lla_mac;
  for (std::size_t off = wire::NdHdr::kSize; off < icmp_len;) {
    if (icmp_len - off < 2 || icmp[off + 1] == 0 || icmp[off + 1] * 8u > icmp_len - off) {
      return drop(NdDrop::kBadOption);
    }
    if (icmp[off] == want_opt && icmp[off + 1] == 1) {
      lla_mac = wire::NdLlaOption::read(icmp.data() + off).mac();
      lla = &lla_mac;
    }
    off += icmp[off + 1] * 8u;
  }
  const wire::MacAddr src_mac = eth.src();
  if (src_mac.is_multicast() || src_mac.is_zero()) return drop(NdDrop::kBadSender);
  if (src_mac == cfg_.mac) return drop(NdDrop::kOwnFrame);
  const wire::Ipv6Addr target = nd.target();

  if (!solicit) {
    if (is_ours(target)) return drop(NdDrop::kConflict);
    const Neighbor6Entry* n = neighbors_.peek(target);
    if (n == nullptr) return drop(NdDrop::kNotForUs);
    ++counters_.rx_adverts;
    learn(target, lla != nullptr ? *lla : src_mac, now, /*create=*/false);
    return NdDrop::kNone;
  }

  const wire::Ipv6Addr dst = ip.dst();
  if (!is_ours(target) || (dst != target && dst != target.solicited_node())) {
    return drop(NdDrop::kNotForUs);
  }
  ++counters_.rx_solicits;
  const wire::Ipv6Addr src = ip.src();
  if (src.is_zero()) {
    // Someone probes for our address (duplicate address detection): defend
    // it to all nodes, learn nothing.
    ++counters_.rx_dad;
    build_nd_frame(tx_, kAllNodes.multicast_mac(), cfg_.mac, target, kAllNodes,
                   wire::kIcmpv6NeighborAdvert, wire::kNdFlagOverride, target,
                   wire::kNdOptTargetLla);
    tx_ready_ = true;
    ++counters_.tx_adverts;
    return NdDrop::kNone;
  }
  const wire::MacAddr peer_mac = lla != nullptr ? *lla : src_mac;
  const bool learned_ok = learn(src, peer_mac, now, /*create=*/true);
  build_nd_frame(tx_, peer_mac, cfg_.mac, target, src, wire::kIcmpv6NeighborAdvert,
                 wire::kNdFlagSolicited | wire::kNdFlagOverride, target, wire::kNdOptTargetLla);
  tx_ready_ = true;
  ++counters_.tx_adverts;
  return learned_ok ? NdDrop::kNone : drop(NdDrop::kTableFull);
}

void NdAgent::build_solicit(const wire::Ipv6Addr& target, const wire::MacAddr* eth_dst) {
  const wire::Ipv6Addr snm = target.solicited_node();
  build_nd_frame(tx_, eth_dst != nullptr ? *eth_dst : snm.multicast_mac(), cfg_.mac,
                 source_for(target), eth_dst != nullptr ? target : snm,
                 wire::kIcmpv6NeighborSolicit, 0, target, wire::kNdOptSourceLla);
  tx_ready_ = true;
}

Resolution NdAgent::resolve_step(const wire::Ipv6Addr& ip, TimeNs now) {
  if (ip.is_zero() || ip.is_multicast() || ip.is_ipv4_mapped()) {
    ++counters_.resolve_failed;
    return {ResolveStatus::kFailed, {}};
  }
  if (is_ours(ip)) {
    ++counters_.resolve_resolved;
    return {ResolveStatus::kResolved, cfg_.mac};
  }
  return neighbor_resolve(neighbors_, ip, now, cfg_, counters_, next_scan_,
                          [&](const wire::Ipv6Addr& t, const wire::MacAddr* mac) {
                            build_solicit(t, mac);
                          });
}

void NdAgent::timer_step(Neighbor6Entry& n, TimeNs now) {
  neighbor_retransmit(n, now, cfg_, counters_,
                      [&](const wire::Ipv6Addr& t, const wire::MacAddr* mac) {
                        build_solicit(t, mac);
                      });
}

}  // namespace uroce::port
