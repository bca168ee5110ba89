#include "testbed/frame_record.h"

#include <gtest/gtest.h>

#include <vector>

#include "datapath/wire/builder.h"
#include "datapath/wire/ipv4.h"
#include "datapath/wire/parser.h"
#include "testbed/switch/ecmp.h"

namespace uroce::testbed {
namespace {

const std::vector<wire::Ipv4Addr> kIps{wire::Ipv4Addr{0x0a000001}, wire::Ipv4Addr{0x0a000002},
                                       wire::Ipv4Addr{0x0a000003}};

std::vector<std::uint8_t> rc_frame(wire::Ipv4Addr dst, std::uint8_t dscp, std::uint8_t ttl,
                                   std::uint16_t udp_src = 0xc000) {
  std::vector<std::uint8_t> payload(100, 0x5a);
  wire::PacketSpec s;
  s.eth_src = wire::MacAddr{{2, 0, 0, 0, 0, 1}};
  s.eth_dst = wire::MacAddr{{2, 0, 0, 0, 0, 3}};
  s.ip_src = kIps[0];
  s.ip_dst = dst;
  s.dscp = dscp;
  s.ttl = ttl;
  s.udp_src = udp_src;
  s.opcode = wire::op::kRcSendOnly;
  s.dest_qp = 0x11;
  s.psn = 42;
  s.payload = payload;
  std::vector<std::uint8_t> out(512);
  const int n = wire::build_roce(s, out);
  EXPECT_GT(n, 0);
  out.resize(static_cast<std::size_t>(n));
  return out;
}

TEST(FrameRecord_FromFrame, DestinationPriorityTtlEcnAndLength) {
  const auto f = rc_frame(kIps[2], 26, 64);
  pfc::PriorityMap map;
  SwitchPacket p;
  ASSERT_EQ(record_from_frame(f, map, kIps, &p), FrameRecordError::kOk);
  EXPECT_EQ(p.dst, 2);
  EXPECT_EQ(p.prio, 3);  // DSCP 26 -> priority 3 in the default map
  EXPECT_EQ(p.ttl, 64);
  EXPECT_EQ(p.ecn, kEcnNotEct);
  EXPECT_EQ(p.bytes, f.size());
}

// The entropy is the 5-tuple's: the UDP source port a sender varies moves
// it, the rest of the frame does not.
TEST(FrameRecord_FromFrame, EntropyIsTheFiveTuples) {
  pfc::PriorityMap map;
  SwitchPacket a;
  SwitchPacket b;
  SwitchPacket c;
  ASSERT_EQ(record_from_frame(rc_frame(kIps[2], 26, 64, 0xc000), map, kIps, &a),
            FrameRecordError::kOk);
  ASSERT_EQ(record_from_frame(rc_frame(kIps[2], 10, 3, 0xc000), map, kIps, &b),
            FrameRecordError::kOk);
  ASSERT_EQ(record_from_frame(rc_frame(kIps[2], 26, 64, 0xc001), map, kIps, &c),
            FrameRecordError::kOk);
  EXPECT_EQ(a.entropy, five_tuple_entropy(kIps[0].v, kIps[2].v, 0xc000, 4791, 17));
  EXPECT_EQ(a.entropy, b.entropy);  // DSCP and TTL are not in the tuple
  EXPECT_NE(a.entropy, c.entropy);
}

TEST(FrameRecord_FromFrame, ArpAndUnknownDestinationsAreRefused) {
  pfc::PriorityMap map;
  SwitchPacket p;
  std::vector<std::uint8_t> arp(60, 0);
  arp[12] = 0x08;
  arp[13] = 0x06;
  EXPECT_EQ(record_from_frame(arp, map, kIps, &p), FrameRecordError::kNotIpv4);
  EXPECT_EQ(record_from_frame(std::vector<std::uint8_t>(20, 0), map, kIps, &p),
            FrameRecordError::kNotIpv4);
  EXPECT_EQ(record_from_frame(rc_frame(wire::Ipv4Addr{0x0a000009}, 24, 64), map, kIps, &p),
            FrameRecordError::kUnknownDestination);
  auto bad = rc_frame(kIps[1], 24, 64);
  bad[14] = 0x46;  // IHL 6: options
  EXPECT_EQ(record_from_frame(bad, map, kIps, &p), FrameRecordError::kBadIpHeader);
  EXPECT_EQ(frame_record_error_name(FrameRecordError::kUnknownDestination), "unknown_destination");
}

TEST(FrameRecord_Patch, TtlAndEcnWrittenChecksumAndIcrcStayValid) {
  auto f = rc_frame(kIps[1], 24, 64);
  ASSERT_TRUE(patch_frame(f, 61, kEcnCe));
  const wire::Ipv4Addr dst = kIps[1];
  const wire::Ipv4Hdr ip = wire::Ipv4Hdr::read(f.data() + 14);
  EXPECT_EQ(ip.ttl(), 61);
  EXPECT_EQ(ip.ecn(), kEcnCe);
  EXPECT_EQ(ip.dscp(), 24);
  EXPECT_TRUE(ip.checksum_ok());
  EXPECT_EQ(ip.dst(), dst);
  wire::ParsedPacket pkt{};
  EXPECT_EQ(wire::parse_roce(f, pkt), wire::ParseError::kOk);  // ICRC included
  std::vector<std::uint8_t> arp(60, 0);
  EXPECT_FALSE(patch_frame(arp, 1, 0));
}

}  // namespace
}  // namespace uroce::testbed
