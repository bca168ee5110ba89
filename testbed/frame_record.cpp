#include "testbed/frame_record.h"

#include "datapath/wire/byteorder.h"
#include "datapath/wire/eth.h"
#include "datapath/wire/ipv4.h"
#include "testbed/switch/ecmp.h"

namespace uroce::testbed {

namespace {

constexpr std::size_t kIpOffset = wire::EthHdr::kSize;

bool is_ipv4(std::span<const std::uint8_t> f) {
  return f.size() >= kIpOffset + wire::Ipv4Hdr::kSize &&
         wire::load_be16(f.data() + 12) == wire::kEtherTypeIpv4;
}

}  // namespace

std::string_view frame_record_error_name(FrameRecordError e) {
  switch (e) {
    case FrameRecordError::kOk: return "ok";
    case FrameRecordError::kNotIpv4: return "not_ipv4";
    case FrameRecordError::kBadIpHeader: return "bad_ip_header";
    case FrameRecordError::kUnknownDestination: return "unknown_destination";
    case FrameRecordError::kCount: break;
  }
  return "?";
}

FrameRecordError record_from_frame(std::span<const std::uint8_t> frame, const pfc::PriorityMap& map,
                                   const std::vector<wire::Ipv4Addr>& host_ips, SwitchPacket* out) {
  if (!is_ipv4(frame)) return FrameRecordError::kNotIpv4;
  const wire::Ipv4Hdr ip = wire::Ipv4Hdr::read(frame.data() + kIpOffset);
  if (ip.version() != 4 || ip.ihl() != 5) return FrameRecordError::kBadIpHeader;
  // A handful of hosts per scenario: a scan is cheaper than a map.
  std::size_t h = 0;
  while (h < host_ips.size() && host_ips[h] != ip.dst()) ++h;
  if (h == host_ips.size()) return FrameRecordError::kUnknownDestination;
  out->dst = static_cast<std::uint16_t>(h);
  out->prio = map.priority_of_dscp(ip.dscp());
  out->ttl = ip.ttl();
  out->ecn = ip.ecn();
  out->bytes = static_cast<std::uint32_t>(frame.size());
  // The 5-tuple's ports when the frame holds a UDP header; zeros otherwise.
  constexpr std::size_t kUdpOffset = kIpOffset + wire::Ipv4Hdr::kSize;
  std::uint16_t sport = 0;
  std::uint16_t dport = 0;
  if (ip.protocol() == wire::kIpProtoUdp && frame.size() >= kUdpOffset + 4) {
    sport = wire::load_be16(frame.data() + kUdpOffset);
    dport = wire::load_be16(frame.data() + kUdpOffset + 2);
  }
  out->entropy = five_tuple_entropy(ip.src().v, ip.dst().v, sport, dport, ip.protocol());
  return FrameRecordError::kOk;
}

bool patch_frame(std::span<std::uint8_t> frame, std::uint8_t ttl, std::uint8_t ecn) {
  if (!is_ipv4(frame)) return false;
  std::uint8_t* p = frame.data() + kIpOffset;
  wire::Ipv4Hdr ip = wire::Ipv4Hdr::read(p);
  ip.set_dscp_ecn(ip.dscp(), ecn);
  ip.set_ttl(ttl);
  ip.fill_checksum();
  ip.write(p);
  return true;
}

}  // namespace uroce::testbed
