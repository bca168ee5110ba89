#include "datapath/port/arp_agent.h"

#include <algorithm>
#include <cstring>

#include "datapath/wire/eth.h"

namespace uroce::port {

const char* to_string(ArpDrop d) {
  switch (d) {
    case ArpDrop::kNone: return "none";
    case ArpDrop::kNotArp: return "not_arp";
    case ArpDrop::kTruncated: return "truncated";
    case ArpDrop::kBadHwType: return "bad_hw_type";
    case ArpDrop::kBadProtoType: return "bad_proto_type";
    case ArpDrop::kBadAddrLen: return "bad_addr_len";
    case ArpDrop::kBadOp: return "bad_op";
    case ArpDrop::kBadSender: return "bad_sender";
    case ArpDrop::kOwnFrame: return "own_frame";
    case ArpDrop::kConflict: return "conflict";
    case ArpDrop::kNotForUs: return "not_for_us";
    case ArpDrop::kTableFull: return "table_full";
    case ArpDrop::kCount: break;
  }
  return "?";
}

void build_arp_frame(std::span<std::uint8_t, kArpFrameSize> out, const wire::MacAddr& eth_dst,
                     const wire::MacAddr& eth_src, std::uint16_t op,
                     const wire::MacAddr& sender_mac, wire::Ipv4Addr sender_ip,
                     const wire::MacAddr& target_mac, wire::Ipv4Addr target_ip) {
  std::memset(out.data(), 0, out.size());
  wire::EthHdr eth;
  eth.set_dst(eth_dst);
  eth.set_src(eth_src);
  eth.set_ether_type(wire::kEtherTypeArp);
  eth.write(out.data());
  wire::ArpHdr arp;
  arp.init_eth_ipv4(op);
  arp.set_sender(sender_mac, sender_ip);
  arp.set_target(target_mac, target_ip);
  arp.write(out.data() + wire::EthHdr::kSize);
}

ArpAgent::ArpAgent(const ArpConfig& cfg) : cfg_(cfg), neighbors_(cfg.neighbors) {}

TimeNs ArpAgent::scan_interval() const {
  // Never later than a retransmission that resolve() may schedule after a
  // scan; ageing only needs second-scale resolution.
  return std::min<TimeNs>(cfg_.retransmit_time, kNsPerSec);
}

ArpDrop ArpAgent::process(std::span<const std::uint8_t> frame, TimeNs now) {
  ++counters_.rx_frames;
  if (frame.size() < wire::EthHdr::kSize) return drop(ArpDrop::kTruncated);
  const wire::EthHdr eth = wire::EthHdr::read(frame.data());
  if (eth.ether_type() != wire::kEtherTypeArp) return drop(ArpDrop::kNotArp);
  if (frame.size() < kArpFrameLen) return drop(ArpDrop::kTruncated);
  const wire::ArpHdr arp = wire::ArpHdr::read(frame.data() + wire::EthHdr::kSize);
  if (arp.hw_type() != wire::kArpHwEthernet) return drop(ArpDrop::kBadHwType);
  if (arp.proto_type() != wire::kEtherTypeIpv4) return drop(ArpDrop::kBadProtoType);
  if (arp.hw_len() != 6 || arp.proto_len() != 4) return drop(ArpDrop::kBadAddrLen);
  const std::uint16_t op = arp.op();
  if (op != wire::kArpOpRequest && op != wire::kArpOpReply) return drop(ArpDrop::kBadOp);
  const wire::MacAddr sha = arp.sender_mac();
  const wire::Ipv4Addr spa = arp.sender_ip();
  const wire::Ipv4Addr tpa = arp.target_ip();
  if (sha.is_multicast() || sha.is_zero()) return drop(ArpDrop::kBadSender);
  if (sha == cfg_.mac) return drop(ArpDrop::kOwnFrame);
  const bool have_ip = cfg_.ip.v != 0;
  if (have_ip && spa == cfg_.ip) return drop(ArpDrop::kConflict);
  // A promiscuous port also sees frames unicast to other hosts.
  const wire::MacAddr dst = eth.dst();
  if (dst != cfg_.mac && !dst.is_broadcast()) return drop(ArpDrop::kNotForUs);

  // Gratuitous ARP (announcement or unsolicited reply): refresh only.
  if (spa == tpa) {
    if (spa.v == 0 || !learn(spa, sha, now, /*create=*/false)) return drop(ArpDrop::kNotForUs);
    ++counters_.rx_gratuitous;
    return ArpDrop::kNone;
  }
  if (!have_ip || tpa != cfg_.ip) return drop(ArpDrop::kNotForUs);

  // Addressed to us: learn the sender (an RFC 5227 probe has sender IP 0 and
  // teaches nothing).
  const bool learned_ok = spa.v == 0 || learn(spa, sha, now, /*create=*/true);
  if (op == wire::kArpOpRequest) {
    ++counters_.rx_requests;
    build_arp_frame(tx_, sha, cfg_.mac, wire::kArpOpReply, cfg_.mac, cfg_.ip, sha, spa);
    tx_ready_ = true;
    ++counters_.tx_replies;
    // Answered even if it could not be learned: the asker still needs us.
    if (!learned_ok) (void)drop(ArpDrop::kTableFull);
    return ArpDrop::kNone;
  }
  ++counters_.rx_replies;
  return learned_ok ? ArpDrop::kNone : drop(ArpDrop::kTableFull);
}

void ArpAgent::build_request(const wire::MacAddr& eth_dst, wire::Ipv4Addr target) {
  build_arp_frame(tx_, eth_dst, cfg_.mac, wire::kArpOpRequest, cfg_.mac, cfg_.ip, wire::MacAddr{},
                  target);
  tx_ready_ = true;
}

Resolution ArpAgent::resolve_step(wire::Ipv4Addr ip, TimeNs now) {
  if (ip.v == 0 || cfg_.ip.v == 0) {
    ++counters_.resolve_failed;
    return {ResolveStatus::kFailed, {}};
  }
  if (ip == cfg_.ip) {
    ++counters_.resolve_resolved;
    return {ResolveStatus::kResolved, cfg_.mac};
  }
  return neighbor_resolve(neighbors_, ip, now, cfg_, counters_, next_scan_,
                          [&](wire::Ipv4Addr t, const wire::MacAddr* mac) { request(t, mac); });
}

void ArpAgent::timer_step(NeighborEntry& n, TimeNs now) {
  neighbor_retransmit(n, now, cfg_, counters_,
                      [&](wire::Ipv4Addr t, const wire::MacAddr* mac) { request(t, mac); });
}

}  // namespace uroce::port
