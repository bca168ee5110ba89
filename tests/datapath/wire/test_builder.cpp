#include "datapath/wire/builder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "datapath/wire/checksum.h"
#include "datapath/wire/icrc.h"
#include "datapath/wire/parser.h"
#include "tests/datapath/wire/sample_packets.h"

namespace uroce::wire {
namespace {

using testing::sample_spec;

std::string to_hex(std::span<const std::uint8_t> b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (auto x : b) {
    s += d[x >> 4];
    s += d[x & 15];
  }
  return s;
}

std::span<const std::uint8_t> bytes(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

PacketSpec scapy_like(std::uint8_t opcode) {
  PacketSpec s;
  s.eth_src = MacAddr{{0x02, 0, 0, 0, 0, 0x01}};
  s.eth_dst = MacAddr{{0x02, 0, 0, 0, 0, 0x02}};
  s.ip_src = Ipv4Addr{0x0a000001};
  s.ip_dst = Ipv4Addr{0x0a000002};
  s.opcode = opcode;
  return s;
}

// The same packets as test_icrc's scapy vectors.
TEST(BuildRoce, SendOnlyMatchesScapyByteForByte) {
  PacketSpec s = scapy_like(op::kRcSendOnly);
  s.dscp = 0x8a >> 2;
  s.ecn = 0x8a & 3;
  s.ip_id = 0x1234;
  s.udp_src = 0xc123;
  s.becn = true;
  s.dest_qp = 0x123456;
  s.psn = 0xabc;
  s.ack_req = true;
  s.payload = bytes("hello world");
  std::array<std::uint8_t, 128> buf{};
  const int n = build_roce(s, buf);
  ASSERT_EQ(n, 70);
  EXPECT_EQ(to_hex(std::span(buf.data(), 70)),
            "0200000000020200000000010800458a003812344000401113f50a0000010a00"
            "0002c12312b7002400000410ffff4012345680000abc68656c6c6f20776f726c"
            "64006a564965");
}

TEST(BuildRoce, AckMatchesScapyByteForByte) {
  PacketSpec s = scapy_like(op::kRcAck);
  s.dest_qp = 0x11;
  s.psn = 7;
  s.aeth = AethHdr::make(0x1f, 5);
  std::array<std::uint8_t, 128> buf{};
  ASSERT_EQ(build_roce(s, buf), 62);
  EXPECT_EQ(to_hex(std::span(buf.data(), 62)),
            "02000000000202000000000108004500003000004000401126bb0a0000010a00"
            "0002c00012b7001c00001100ffff00000011000000071f0000059e141385");
}

TEST(BuildRoce, ExtensionHeadersInCanonicalOrder) {
  const std::uint8_t payload[5] = {1, 2, 3, 4, 5};
  std::array<std::uint8_t, 256> buf{};
  const PacketSpec s = sample_spec(op::kRcWriteOnlyImm, payload);
  const int n = build_roce(s, buf);
  ASSERT_EQ(n, 14 + 20 + 8 + 12 + 16 + 4 + 8 + 4);
  EXPECT_EQ(RethHdr::read(buf.data() + 54).rkey(), testing::kSampleRkey);
  EXPECT_EQ(ImmDtHdr::read(buf.data() + 70).imm(), testing::kSampleImm);
  EXPECT_EQ(buf[74], 1);
  EXPECT_EQ(buf[78], 5);
  EXPECT_EQ(BthHdr::read(buf.data() + 42).pad_count(), 3);

  const PacketSpec a = sample_spec(op::kRcAtomicAck);
  ASSERT_EQ(build_roce(a, buf), 14 + 20 + 8 + 12 + 4 + 8 + 4);
  EXPECT_EQ(AethHdr::read(buf.data() + 54).msn(), testing::kSampleMsn);
  EXPECT_EQ(AtomicAckEthHdr::read(buf.data() + 58).orig_remote_data(), testing::kSampleOrig);

  const PacketSpec u = sample_spec(op::kUdSendOnlyImm, payload);
  ASSERT_GT(build_roce(u, buf), 0);
  EXPECT_EQ(DethHdr::read(buf.data() + 54).src_qp(), testing::kSampleSrcQp);
  EXPECT_EQ(ImmDtHdr::read(buf.data() + 62).imm(), testing::kSampleImm);
}

TEST(BuildRoce, LengthsChecksumAndIcrcAreConsistent) {
  std::vector<std::uint8_t> payload(1000, 0xab);
  std::array<std::uint8_t, 2048> buf{};
  const int n = build_roce(sample_spec(op::kRcSendFirst, payload), buf);
  ASSERT_EQ(n, 14 + 20 + 8 + 12 + 1000 + 4);
  const Ipv4Hdr ip = Ipv4Hdr::read(buf.data() + 14);
  EXPECT_EQ(ip.total_length(), n - 14);
  EXPECT_TRUE(ip.checksum_ok());
  EXPECT_EQ(ip.flags_frag(), kIpv4FlagDf);
  EXPECT_EQ(ip.ttl(), 64);
  EXPECT_EQ(ip.dscp(), 26);
  EXPECT_EQ(ip.ecn(), 2);
  const UdpHdr udp = UdpHdr::read(buf.data() + 34);
  EXPECT_EQ(udp.length(), n - 34);
  EXPECT_EQ(udp.dst_port(), kRoceV2Port);
  EXPECT_EQ(udp.checksum(), 0);
  EXPECT_TRUE(icrc_ok(std::span(buf.data() + 14, static_cast<std::size_t>(n - 14))));
}

// Every opcode that may carry payload, built with a full 4096-byte payload:
// its IP packet (the frame less the Ethernet header) fits an Ethernet MTU of
// 4096 + kPathMtuOverhead (DC's: + kDcPathMtuOverhead), the largest one of
// each fills it exactly, and the largest DC one over IPv6 is kMaxRoceFrame.
TEST(BuildRoce, FullMtuPacketsFitThePathMtuOverhead) {
  const std::vector<std::uint8_t> payload(kMaxPathMtuBytes, 0x5a);
  std::vector<std::uint8_t> buf(kMaxRoceFrame);
  std::size_t largest = 0, largest_dc = 0, largest_sr = 0;
  for (int o = 0; o < 256; ++o) {
    const OpcodeInfo& i = opcode_info(static_cast<std::uint8_t>(o));
    if (!i.valid || !i.payload) continue;
    const int n = build_roce(sample_spec(static_cast<std::uint8_t>(o), payload), buf);
    ASSERT_GT(n, 0) << o;
    const std::size_t ip_bytes = static_cast<std::size_t>(n) - EthHdr::kSize;
    if (i.transport == Transport::kDc) {
      EXPECT_LE(ip_bytes, kMaxPathMtuBytes + kDcPathMtuOverhead) << o;
      largest_dc = std::max(largest_dc, ip_bytes);
    } else if (i.transport == Transport::kSr) {
      // Selective repeat: used only where sr_fits (opcodes.h).
      EXPECT_LE(ip_bytes, kMaxPathMtuBytes + kSrPathMtuOverhead) << o;
      largest_sr = std::max(largest_sr, ip_bytes);
    } else {
      EXPECT_LE(ip_bytes, kMaxPathMtuBytes + kPathMtuOverhead) << o;
      largest = std::max(largest, ip_bytes);
    }
  }
  EXPECT_EQ(largest, kMaxPathMtuBytes + kPathMtuOverhead);
  EXPECT_EQ(largest_dc, kMaxPathMtuBytes + kDcPathMtuOverhead);
  EXPECT_EQ(largest_sr, kMaxPathMtuBytes + kSrPathMtuOverhead);
  EXPECT_EQ(largest_dc + EthHdr::kSize + kIpv6ExtraBytes, kMaxRoceFrame);
}

TEST(BuildRoce, PadBytesAreZeroAndCounted) {
  std::array<std::uint8_t, 256> buf;
  for (std::size_t len = 0; len <= 8; ++len) {
    buf.fill(0xcc);
    std::vector<std::uint8_t> payload(len, 0xff);
    const int n = build_roce(sample_spec(op::kRcSendOnly, payload), buf);
    const std::size_t pad = (4 - len % 4) % 4;
    ASSERT_EQ(n, static_cast<int>(58 + len + pad)) << len;
    EXPECT_EQ(BthHdr::read(buf.data() + 42).pad_count(), pad) << len;
    for (std::size_t i = 0; i < pad; ++i) EXPECT_EQ(buf[54 + len + i], 0) << len;
    EXPECT_EQ(buf[static_cast<std::size_t>(n)], 0xcc);  // nothing past the end
  }
}

TEST(BuildRoce, CnpHasSixteenZeroBytes) {
  std::array<std::uint8_t, 128> buf;
  buf.fill(0xee);
  const int n = build_roce(sample_spec(op::kCnp), buf);
  ASSERT_EQ(n, 14 + 20 + 8 + 12 + 16 + 4);
  for (std::size_t i = 54; i < 70; ++i) EXPECT_EQ(buf[i], 0) << i;
  EXPECT_TRUE(BthHdr::read(buf.data() + 42).becn());
}

TEST(BuildRoce, OptionalUdpChecksumIsValidAndLeavesIcrc) {
  std::array<std::uint8_t, 128> a{}, b{};
  const std::uint8_t payload[3] = {9, 8, 7};
  PacketSpec s = sample_spec(op::kRcSendOnly, payload);
  const int n = build_roce(s, a);
  s.udp_checksum = true;
  ASSERT_EQ(build_roce(s, b), n);
  const auto seg = std::span<const std::uint8_t>(b.data() + 34, static_cast<std::size_t>(n - 34));
  EXPECT_NE(UdpHdr::read(b.data() + 34).checksum(), 0);
  EXPECT_TRUE(udp_ipv4_checksum_ok(s.ip_src, s.ip_dst, seg));
  EXPECT_TRUE(std::equal(a.begin() + n - 4, a.begin() + n, b.begin() + n - 4));
}

TEST(BuildRoce, BufferTooSmallAtEverySize) {
  const std::uint8_t payload[7] = {};
  const PacketSpec s = sample_spec(op::kRcWriteFirst, payload);
  std::array<std::uint8_t, 256> buf{};
  const int n = build_roce(s, buf);
  ASSERT_GT(n, 0);
  EXPECT_EQ(static_cast<std::size_t>(n), roce_frame_size(s));
  for (int len = 0; len < n; ++len) {
    EXPECT_EQ(build_roce(s, std::span(buf.data(), static_cast<std::size_t>(len))),
              static_cast<int>(BuildError::kBufferTooSmall))
        << len;
  }
}

TEST(BuildRoce, RejectsUnknownOpcode) {
  std::array<std::uint8_t, 256> buf{};
  for (std::uint8_t o : {0x15, 0x2c, 0x40, 0x60, 0x66, 0x80, 0xff}) {
    PacketSpec s = sample_spec(op::kRcSendOnly);
    s.opcode = o;
    EXPECT_EQ(build_roce(s, buf), static_cast<int>(BuildError::kUnknownOpcode)) << int{o};
  }
}

TEST(BuildRoce, RejectsMissingAndUnexpectedExtHeaders) {
  std::array<std::uint8_t, 256> buf{};
  PacketSpec s = sample_spec(op::kRcReadRequest);
  s.reth.reset();
  EXPECT_EQ(build_roce(s, buf), static_cast<int>(BuildError::kMissingExtHeader));
  s = sample_spec(op::kRcAtomicAck);
  s.atomic_ack_eth.reset();
  EXPECT_EQ(build_roce(s, buf), static_cast<int>(BuildError::kMissingExtHeader));
  s = sample_spec(op::kUdSendOnly);
  s.deth.reset();
  EXPECT_EQ(build_roce(s, buf), static_cast<int>(BuildError::kMissingExtHeader));
  s = sample_spec(op::kRcSendOnly);
  s.immdt = ImmDtHdr::make(1);
  EXPECT_EQ(build_roce(s, buf), static_cast<int>(BuildError::kUnexpectedExtHeader));
  s = sample_spec(op::kCnp);
  s.aeth = AethHdr{};
  EXPECT_EQ(build_roce(s, buf), static_cast<int>(BuildError::kUnexpectedExtHeader));
}

// A DC spec whose DC header carries the SR flag is checked against the
// opcode's SR form (opcodes.h, dc_sr_opcode_info): it needs SRETH (and a
// WRITE MIDDLE its RETH), and the same headers without the flag are
// unexpected; its frame is as long as the SR form says.
TEST(BuildRoce, DcSrFormIsCheckedByTheFlag) {
  std::array<std::uint8_t, 512> buf{};
  PacketSpec s = sample_spec(op::kDcWriteMiddle);
  s.dc_eth->set_sr(true);
  EXPECT_EQ(build_roce(s, buf), static_cast<int>(BuildError::kMissingExtHeader));
  s.reth = RethHdr::make(1, 2, 3);
  s.sr_eth = SrEthHdr::make(0, 1024);
  const int n = build_roce(s, buf);
  ASSERT_GT(n, 0);
  EXPECT_EQ(static_cast<std::size_t>(n), roce_frame_size(s));
  EXPECT_EQ(roce_frame_size(s),
            roce_frame_size(op::kDcWriteMiddle, false, 0) + RethHdr::kSize + SrEthHdr::kSize);
  s.dc_eth->set_sr(false);
  EXPECT_EQ(build_roce(s, buf), static_cast<int>(BuildError::kUnexpectedExtHeader));
  PacketSpec a = sample_spec(op::kDcAck);
  a.dc_aeth->set_sack(true);
  EXPECT_EQ(build_roce(a, buf), static_cast<int>(BuildError::kMissingExtHeader));
  a.sack_eth = SrSackEthHdr::make(0, 1, 2);
  EXPECT_GT(build_roce(a, buf), 0);
}

// The DC headers are checked like RC's: each DC opcode needs its own and
// takes no other.
TEST(BuildRoce, RejectsMissingAndUnexpectedDcHeaders) {
  std::array<std::uint8_t, 256> buf{};
  const auto missing = static_cast<int>(BuildError::kMissingExtHeader);
  const auto unexpected = static_cast<int>(BuildError::kUnexpectedExtHeader);
  PacketSpec s = sample_spec(op::kDcSendOnly);
  s.dc_eth.reset();
  EXPECT_EQ(build_roce(s, buf), missing);
  s = sample_spec(op::kDcDisconnect);
  s.dc_eth.reset();
  EXPECT_EQ(build_roce(s, buf), missing);
  s = sample_spec(op::kDcAck);
  s.dc_aeth.reset();
  EXPECT_EQ(build_roce(s, buf), missing);
  s = sample_spec(op::kDcWriteOnly);
  s.reth.reset();
  EXPECT_EQ(build_roce(s, buf), missing);
  s = sample_spec(op::kDcAck);
  s.dc_eth = DcEthHdr{};
  EXPECT_EQ(build_roce(s, buf), unexpected);
  s = sample_spec(op::kDcSendOnly);
  s.dc_aeth = DcAethHdr{};
  EXPECT_EQ(build_roce(s, buf), unexpected);
  s = sample_spec(op::kRcSendOnly);
  s.dc_eth = DcEthHdr{};
  EXPECT_EQ(build_roce(s, buf), unexpected);
  s = sample_spec(op::kRcAck);
  s.dc_aeth = DcAethHdr{};
  EXPECT_EQ(build_roce(s, buf), unexpected);
  const std::uint8_t payload[1] = {1};
  s = sample_spec(op::kDcDisconnect);
  s.payload = payload;
  EXPECT_EQ(build_roce(s, buf), static_cast<int>(BuildError::kPayloadNotAllowed));
}

// The DC header sits right after the BTH, RC's headers and the payload
// after it, and the ICRC covers it. Byte for byte for a DC RDMA WRITE ONLY
// with immediate (DCETH, RETH, ImmDt) and a DC ATOMIC ACKNOWLEDGE (DCAETH,
// AETH, AtomicAckETH).
TEST(BuildRoce, DcHeaderRightAfterBth) {
  const std::uint8_t payload[5] = {1, 2, 3, 4, 5};
  std::array<std::uint8_t, 256> buf{};
  PacketSpec s = sample_spec(op::kDcWriteOnlyImm, payload);
  s.dc_eth =
      DcEthHdr::make(0x0102030405060708ull, true, 0x0a0b0c, 0x0d0e, 0x11121314, 0x161718, 0x191a1b);
  int n = build_roce(s, buf);
  ASSERT_EQ(n, 14 + 20 + 8 + 12 + 28 + 16 + 4 + 8 + 4);
  EXPECT_EQ(buf[42], 0xeb);
  EXPECT_EQ(to_hex(std::span(buf.data() + 54, 28)),
            "0102030405060708"
            "800a0b0c"
            "0d0e0000"
            "11121314"
            "00161718"
            "00191a1b");
  EXPECT_EQ(RethHdr::read(buf.data() + 82).rkey(), testing::kSampleRkey);
  EXPECT_EQ(ImmDtHdr::read(buf.data() + 98).imm(), testing::kSampleImm);
  EXPECT_EQ(buf[102], 1);
  EXPECT_EQ(roce_payload_offset(s), 102u);
  EXPECT_TRUE(icrc_ok(std::span(buf.data() + 14, static_cast<std::size_t>(n - 14))));

  s = sample_spec(op::kDcAtomicAck);
  s.dc_aeth = DcAethHdr::make(0x0102, DcStatus::kOk, 0x0a0b0c0d, 0x00102030);
  n = build_roce(s, buf);
  ASSERT_EQ(n, 14 + 20 + 8 + 12 + 12 + 4 + 8 + 4);
  EXPECT_EQ(buf[42], 0xf2);
  EXPECT_EQ(to_hex(std::span(buf.data() + 54, 12)), "010200000a0b0c0d00102030");
  EXPECT_EQ(AethHdr::read(buf.data() + 66).msn(), testing::kSampleMsn);
  EXPECT_EQ(AtomicAckEthHdr::read(buf.data() + 70).orig_remote_data(), testing::kSampleOrig);
  EXPECT_TRUE(icrc_ok(std::span(buf.data() + 14, static_cast<std::size_t>(n - 14))));

  s = testing::sample_spec_ipv6(op::kDcDisconnect);
  n = build_roce(s, buf);
  ASSERT_EQ(n, 14 + 40 + 8 + 12 + 28 + 4);
  EXPECT_EQ(buf[62], 0xf8);
  EXPECT_EQ(DcEthHdr::read(buf.data() + 74).conn(), testing::kSampleConn);
  EXPECT_TRUE(icrc_ok(std::span(buf.data() + 14, static_cast<std::size_t>(n - 14))));
}

TEST(BuildRoce, RejectsPayloadWhereNoneAllowed) {
  std::array<std::uint8_t, 256> buf{};
  const std::uint8_t payload[1] = {1};
  for (std::uint8_t o : {op::kRcReadRequest, op::kRcAck, op::kRcAtomicAck, op::kRcCompareSwap,
                         op::kRcFetchAdd, op::kCnp}) {
    PacketSpec s = sample_spec(o);
    s.payload = payload;
    EXPECT_EQ(build_roce(s, buf), static_cast<int>(BuildError::kPayloadNotAllowed)) << int{o};
  }
}

TEST(BuildRoce, RejectsPayloadOverPathMtu) {
  std::vector<std::uint8_t> buf(kMaxRoceFrame + 16);
  std::vector<std::uint8_t> payload(257);
  PacketSpec s = sample_spec(op::kRcSendMiddle, payload);
  s.pmtu = PathMtu::k256;
  EXPECT_EQ(build_roce(s, buf), static_cast<int>(BuildError::kPayloadTooLarge));
  s.payload = std::span(payload).first(256);
  EXPECT_GT(build_roce(s, buf), 0);
  std::vector<std::uint8_t> big(kMaxPathMtuBytes);
  s = sample_spec(op::kRcWriteOnlyImm, big);
  EXPECT_EQ(build_roce(s, buf),
            static_cast<int>(kMaxRoceFrame - kIpv6ExtraBytes - DcEthHdr::kSize));
  s = testing::sample_spec_ipv6(op::kRcWriteOnlyImm, big);
  EXPECT_EQ(build_roce(s, buf), static_cast<int>(kMaxRoceFrame - DcEthHdr::kSize));
  s = testing::sample_spec_ipv6(op::kDcWriteOnlyImm, big);
  EXPECT_EQ(build_roce(s, buf), static_cast<int>(kMaxRoceFrame));
  big.push_back(0);
  s.payload = big;
  EXPECT_EQ(build_roce(s, buf), static_cast<int>(BuildError::kPayloadTooLarge));
}

TEST(BuildRoce, RejectsFieldsOutOfRange) {
  std::array<std::uint8_t, 256> buf{};
  const auto bad = static_cast<int>(BuildError::kFieldOutOfRange);
  PacketSpec s = sample_spec(op::kRcAck);
  s.dest_qp = 1u << 24;
  EXPECT_EQ(build_roce(s, buf), bad);
  s = sample_spec(op::kRcAck);
  s.psn = 1u << 24;
  EXPECT_EQ(build_roce(s, buf), bad);
  s = sample_spec(op::kRcAck);
  s.tver = 16;
  EXPECT_EQ(build_roce(s, buf), bad);
  s = sample_spec(op::kRcAck);
  s.dscp = 64;
  EXPECT_EQ(build_roce(s, buf), bad);
  s = sample_spec(op::kRcAck);
  s.ecn = 4;
  EXPECT_EQ(build_roce(s, buf), bad);
  s = sample_spec(op::kRcAck);
  s.pmtu = static_cast<PathMtu>(0);
  EXPECT_EQ(build_roce(s, buf), bad);
  Ipv6Route r = testing::kSampleRoute;
  r.flow_label = kFlowLabelMask + 1;
  s = testing::sample_spec_ipv6(op::kRcAck);
  s.ip6 = &r;
  EXPECT_EQ(build_roce(s, buf), bad);
  EXPECT_EQ(build_error_name(BuildError::kFieldOutOfRange), "FieldOutOfRange");
}

// Over IPv6: EtherType 0x86DD, the fixed header as RFC 8200 lays it out, UDP
// 20 bytes later than over IPv4, and the frame 20 bytes longer.
TEST(BuildRoce, Ipv6Layout) {
  std::vector<std::uint8_t> buf(kMaxRoceFrame);
  const std::uint8_t payload[5] = {1, 2, 3, 4, 5};
  const PacketSpec s = testing::sample_spec_ipv6(op::kRcSendOnly, payload);
  const int n = build_roce(s, buf);
  ASSERT_GT(n, 0);
  EXPECT_EQ(static_cast<std::size_t>(n), roce_frame_size(s));
  EXPECT_EQ(roce_frame_size(s), roce_frame_size(sample_spec(op::kRcSendOnly, payload)) + 20);
  EXPECT_EQ(roce_payload_offset(s), 14u + 40 + 8 + 12);
  EXPECT_EQ(load_be16(buf.data() + 12), kEtherTypeIpv6);
  // Version 6, traffic class 26 << 2 | 2 = 0x6a, flow label 0x9abcd.
  EXPECT_EQ(to_hex(std::span(buf.data() + 14, 4)), "66a9abcd");
  const Ipv6Hdr ip = Ipv6Hdr::read(buf.data() + 14);
  EXPECT_EQ(ip.payload_length(), n - 54);
  EXPECT_EQ(ip.next_header(), kIpProtoUdp);
  EXPECT_EQ(ip.hop_limit(), 64);
  EXPECT_EQ(ip.src(), testing::kSampleIp6Src);
  EXPECT_EQ(ip.dst(), testing::kSampleIp6Dst);
  const UdpHdr udp = UdpHdr::read(buf.data() + 54);
  EXPECT_EQ(udp.length(), n - 54);
  EXPECT_EQ(udp.dst_port(), kRoceV2Port);
  EXPECT_EQ(udp.checksum(), 0);  // as rxe sends it
  EXPECT_EQ(buf[62], op::kRcSendOnly);
  EXPECT_TRUE(icrc_ok(std::span(buf.data() + 14, static_cast<std::size_t>(n - 14))));
}

TEST(BuildRoce, Ipv6UdpChecksumOnRequest) {
  std::vector<std::uint8_t> buf(kMaxRoceFrame);
  PacketSpec s = testing::sample_spec_ipv6(op::kUdSendOnly);
  s.udp_checksum = true;
  const int n = build_roce(s, buf);
  ASSERT_GT(n, 0);
  const auto seg = std::span<const std::uint8_t>(buf.data() + 54, static_cast<std::size_t>(n - 54));
  EXPECT_NE(load_be16(buf.data() + 60), 0);
  EXPECT_TRUE(ipv6_checksum_ok(testing::kSampleIp6Src, testing::kSampleIp6Dst, kIpProtoUdp, seg));
}

// A spec of random field values for `opcode`, over IPv4 or IPv6, with a
// payload of random length up to the path MTU where the opcode takes one.
PacketSpec random_spec(std::mt19937& rng, std::uint8_t opcode, const Ipv6Route* ip6,
                       std::vector<std::uint8_t>& payload) {
  PacketSpec s = testing::sample_spec(opcode);
  s.ip6 = ip6;
  s.dscp = static_cast<std::uint8_t>(rng() & 0x3f);
  s.ecn = static_cast<std::uint8_t>(rng() & 0x03);
  s.ttl = static_cast<std::uint8_t>(rng());
  s.ip_id = static_cast<std::uint16_t>(rng());
  s.df = (rng() & 1) != 0;
  s.udp_src = static_cast<std::uint16_t>(rng());
  s.udp_checksum = (rng() & 3) == 0;
  s.se = (rng() & 1) != 0;
  s.mig_req = (rng() & 1) != 0;
  s.pkey = static_cast<std::uint16_t>(rng());
  s.fecn = (rng() & 1) != 0;
  s.becn = (rng() & 1) != 0;
  s.dest_qp = rng() & kQpnMask;
  s.ack_req = (rng() & 1) != 0;
  s.psn = rng() & kPsnMask;
  s.pmtu = PathMtu::k4096;
  payload.resize(opcode_info(opcode).payload ? rng() % (kMaxPathMtuBytes + 1) : 0);
  for (auto& b : payload) b = static_cast<std::uint8_t>(rng());
  s.payload = payload;
  return s;
}

TEST(CheckRoceSpec, AgreesWithBuildRoce) {
  std::vector<std::uint8_t> buf(kMaxRoceFrame);
  PacketSpec s = sample_spec(op::kRcSendOnly);
  EXPECT_EQ(check_roce_spec(s, buf.size()), 0);
  EXPECT_EQ(check_roce_spec(s, roce_frame_size(s) - 1),
            static_cast<int>(BuildError::kBufferTooSmall));
  s.dscp = 64;
  EXPECT_EQ(check_roce_spec(s, buf.size()), static_cast<int>(BuildError::kFieldOutOfRange));
  EXPECT_EQ(build_roce(s, buf), check_roce_spec(s, buf.size()));
  s = sample_spec(op::kRcWriteOnly);
  s.reth.reset();
  EXPECT_EQ(check_roce_spec(s, buf.size()), static_cast<int>(BuildError::kMissingExtHeader));
}

// write_roce writes what build_roce does for every valid spec, with the
// payload copied from elsewhere or already in place in the frame.
TEST(WriteRoce, SameFrameAsBuildRoce) {
  std::mt19937 rng(4791);
  std::vector<std::uint8_t> payload;
  std::vector<std::uint8_t> want(kMaxRoceFrame);
  std::vector<std::uint8_t> got(kMaxRoceFrame);
  for (int op = 0; op < 256; ++op) {
    if (!opcode_info(static_cast<std::uint8_t>(op)).valid) continue;
    for (const Ipv6Route* ip6 : {static_cast<const Ipv6Route*>(nullptr), &testing::kSampleRoute}) {
      PacketSpec s = random_spec(rng, static_cast<std::uint8_t>(op), ip6, payload);
      const int n = build_roce(s, want);
      ASSERT_GT(n, 0) << op;
      std::fill(got.begin(), got.end(), 0xee);
      EXPECT_EQ(write_roce(s, got), n) << op;
      EXPECT_TRUE(std::equal(want.begin(), want.begin() + n, got.begin())) << op;
      // The payload gathered into the frame first, as rc_emit does.
      std::fill(got.begin(), got.end(), 0xee);
      std::copy(payload.begin(), payload.end(), got.begin() + roce_payload_offset(s));
      s.payload = std::span(got.data() + roce_payload_offset(s), payload.size());
      EXPECT_EQ(write_roce(s, got), n) << op;
      EXPECT_TRUE(std::equal(want.begin(), want.begin() + n, got.begin())) << op;
    }
  }
}

// Every payload length from 0 to 300 (frames checksummed whole below
// kIcrcWholeFrameBelow, as a running value from there), IPv4 and IPv6,
// built whole and in three steps: the ICRC is the old formula's, the
// masked headers (icrc_prefix) continued over the rest in place.
TEST(WriteRoce, EveryPayloadLengthHasTheTwoCallIcrc) {
  std::vector<std::uint8_t> payload(300);
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::uint8_t>(i * 7);
  std::vector<std::uint8_t> frame(kMaxRoceFrame);
  std::vector<std::uint8_t> steps(kMaxRoceFrame);
  for (const Ipv6Route* ip6 : {static_cast<const Ipv6Route*>(nullptr), &testing::kSampleRoute}) {
    for (const std::uint8_t opcode : {op::kRcSendOnly, op::kRcWriteOnly}) {
      for (std::size_t len = 0; len <= payload.size(); ++len) {
        PacketSpec s = testing::sample_spec(opcode);
        s.ip6 = ip6;
        s.udp_checksum = (len & 1) != 0;
        s.payload = std::span<const std::uint8_t>(payload.data(), len);
        const int n = write_roce(s, frame);
        ASSERT_GT(n, 0);
        const std::span<const std::uint8_t> ip(frame.data() + EthHdr::kSize,
                                               static_cast<std::size_t>(n) - EthHdr::kSize);
        const std::size_t prefix = ip6 != nullptr ? kIcrcMaskedPrefixIpv6 : kIcrcMaskedPrefix;
        const std::uint32_t want = crc32_zlib(icrc_prefix(ip.data(), ip6 != nullptr),
                                              ip.subspan(prefix, ip.size() - prefix - kIcrcSize));
        EXPECT_EQ(read_icrc(ip), want) << len;
        EXPECT_TRUE(icrc_ok(ip)) << len;
        // The three steps, the payload put in two pieces.
        const std::size_t off = roce_payload_offset(s);
        const std::span<std::uint8_t> area(steps.data() + off, len);
        PacketSpec w_spec = s;
        w_spec.payload = area;
        PayloadWriter w(area, write_roce_headers(w_spec, steps));
        w.put(payload.data(), len / 2);
        w.put(payload.data() + len / 2, len - len / 2);
        ASSERT_EQ(finish_roce(w_spec, w.crc(), steps), n);
        EXPECT_TRUE(std::equal(frame.begin(), frame.begin() + n, steps.begin())) << len;
      }
    }
  }
}

// The three steps (headers, payload through a PayloadWriter in pieces of
// any size, finish) give build_roce's frame; its ICRC checks and it parses.
TEST(WriteRoceHeaders, WithPayloadWriterAndFinishSameFrameAsBuildRoce) {
  std::mt19937 rng(17);
  std::vector<std::uint8_t> payload;
  std::vector<std::uint8_t> want(kMaxRoceFrame);
  std::vector<std::uint8_t> got(kMaxRoceFrame);
  const std::uint8_t ops[] = {op::kRcSendOnly, op::kRcSendFirst,          op::kRcWriteOnly,
                              op::kRcAck,      op::kRcReadResponseMiddle, op::kUdSendOnlyImm};
  for (int i = 0; i < 300; ++i) {
    const std::uint8_t opcode = ops[rng() % std::size(ops)];
    const Ipv6Route* ip6 = (rng() & 1) != 0 ? &testing::kSampleRoute : nullptr;
    PacketSpec s = random_spec(rng, opcode, ip6, payload);
    const int n = build_roce(s, want);
    ASSERT_GT(n, 0);
    std::fill(got.begin(), got.end(), 0xee);
    const std::size_t off = roce_payload_offset(s);
    PacketSpec w_spec = s;
    const std::span<std::uint8_t> area(got.data() + off, payload.size());
    w_spec.payload = area;
    PayloadWriter w(area, write_roce_headers(w_spec, got));
    EXPECT_EQ(w.size(), payload.size());
    while (w.written() < w.size()) {
      const std::size_t k = std::min<std::size_t>(rng() % 300, w.size() - w.written());
      w.put(payload.data() + w.written(), k);
    }
    ASSERT_EQ(finish_roce(w_spec, w.crc(), got), n);
    EXPECT_TRUE(std::equal(want.begin(), want.begin() + n, got.begin())) << int{opcode};
    ParsedPacket p;
    EXPECT_EQ(parse_roce(std::span<const std::uint8_t>(got.data(), static_cast<std::size_t>(n)), p),
              ParseError::kOk)
        << int{opcode};
    EXPECT_EQ(p.bth.psn(), s.psn);
    EXPECT_EQ(p.payload.size(), payload.size());
  }
}

}  // namespace
}  // namespace uroce::wire
