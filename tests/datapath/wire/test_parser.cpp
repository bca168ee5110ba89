#include "datapath/wire/parser.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "datapath/wire/builder.h"
#include "datapath/wire/checksum.h"
#include "datapath/wire/homa_grant.h"
#include "datapath/wire/icrc.h"
#include "tests/datapath/wire/parser_test_frames.h"
#include "tests/datapath/wire/sample_packets.h"

namespace uroce::wire {

// Readable failure messages (found by ADL, so outside the unnamed namespace).
void PrintTo(ParseError e, std::ostream* os) { *os << parse_error_name(e); }

namespace {

using testing::build;
using testing::fix_icrc;
using testing::fix_ip_checksum;
using testing::Frame;
using testing::kBth;
using testing::kExt;
using testing::kIp;
using testing::kPayload;
using testing::kUdp;
using testing::parse;
using testing::sample_spec;
using testing::set_lengths;

Frame sample(std::uint8_t opcode, std::size_t payload_len = 5) {
  return build(sample_spec(opcode, std::span(kPayload, payload_len)));
}

std::vector<std::uint8_t> valid_opcodes() {
  std::vector<std::uint8_t> v;
  for (int o = 0; o < 256; ++o) {
    if (opcode_info(static_cast<std::uint8_t>(o)).valid) {
      v.push_back(static_cast<std::uint8_t>(o));
    }
  }
  return v;
}

// Restatement of the spec for what follows the BTH: `rem` bytes up to the end
// of the IP packet, pad count `pad`. A well-formed tail with a wrong ICRC
// gives kBadIcrc.
ParseError expect_tail(const OpcodeInfo& info, std::size_t rem, std::size_t pad) {
  struct Step {
    ExtHdr h;
    ParseError e;
  };
  constexpr Step kSteps[] = {
      {ExtHdr::kDeth, ParseError::kTruncatedDeth},
      {ExtHdr::kDcEth, ParseError::kTruncatedDcEth},
      {ExtHdr::kDcAeth, ParseError::kTruncatedDcAeth},
      {ExtHdr::kFeth, ParseError::kTruncatedFeth},
      {ExtHdr::kReth, ParseError::kTruncatedReth},
      {ExtHdr::kAtomicEth, ParseError::kTruncatedAtomicEth},
      {ExtHdr::kAeth, ParseError::kTruncatedAeth},
      {ExtHdr::kAtomicAckEth, ParseError::kTruncatedAtomicAckEth},
      {ExtHdr::kImmDt, ParseError::kTruncatedImmDt},
      {ExtHdr::kIeth, ParseError::kTruncatedIeth},
      {ExtHdr::kCnp, ParseError::kTruncatedCnp},
      {ExtHdr::kSrEth, ParseError::kTruncatedSrEth},
      {ExtHdr::kSackEth, ParseError::kTruncatedSackEth},
  };
  for (const Step& s : kSteps) {
    if (!info.has(s.h)) continue;
    if (rem < ext_hdr_size(s.h)) return s.e;
    rem -= ext_hdr_size(s.h);
  }
  if (rem < kIcrcSize) return ParseError::kTruncatedIcrc;
  rem -= kIcrcSize;
  if (!info.payload && rem != 0) return ParseError::kUnexpectedPayload;
  if (pad > rem) return ParseError::kPadExceedsPayload;
  return ParseError::kBadIcrc;
}

// The exact error a single flipped bit must produce in a frame built with
// UDP checksum 0 and no Ethernet padding.
ParseError expect_flip(const Frame& f, std::size_t byte, int bit) {
  const std::uint8_t m = static_cast<std::uint8_t>(1u << bit);
  if (byte < 12) return ParseError::kOk;  // MACs: covered by nothing here
  if (byte < kIp) return ParseError::kNotIp;
  if (byte == kIp) {
    return bit >= 4 ? ParseError::kBadIpVersion : ParseError::kBadIpHeaderLength;
  }
  if (byte < kUdp) return ParseError::kBadIpChecksum;
  if (byte < kUdp + 2) return ParseError::kBadIcrc;  // source port
  if (byte < kUdp + 4) return ParseError::kNotRoceV2Port;
  if (byte < kUdp + 6) return ParseError::kBadUdpLength;
  if (byte < kBth) return ParseError::kBadUdpChecksum;  // 0 -> non-zero
  const std::size_t rem = f.size() - kExt;
  const std::size_t pad = (f[kBth + 1] >> 4) & 3;
  if (byte == kBth) {
    const OpcodeInfo& info = opcode_info(static_cast<std::uint8_t>(f[kBth] ^ m));
    if (!info.valid) return ParseError::kUnsupportedOpcode;
    return expect_tail(info, rem, pad);
  }
  if (byte == kBth + 1) {
    if (bit >= 6) return ParseError::kBadIcrc;  // SE, MigReq
    if (bit < 4) return ParseError::kBadBthVersion;
    return expect_tail(opcode_info(f[kBth]), rem, pad ^ (m >> 4));
  }
  if (byte == kBth + BthHdr::kIcrcMaskedByte) return ParseError::kOk;
  // The SR flag of a DC header (DCETH R, DCAETH S) selects the opcode's SR
  // form, whose headers are longer (opcodes.h, dc_sr_opcode_info).
  const OpcodeInfo& info = opcode_info(f[kBth]);
  const bool dc_sr_flag = (info.has(ExtHdr::kDcEth) && byte == kExt + 8 && bit == 6) ||
                          (info.has(ExtHdr::kDcAeth) && byte == kExt + 3 && bit == 7);
  if (dc_sr_flag && dc_sr_opcode_info(f[kBth]).valid) {
    return expect_tail(dc_sr_opcode_info(f[kBth]), rem, pad);
  }
  return ParseError::kBadIcrc;
}

TEST(Parser_Parse, EveryOpcodeRoundTripsAllFields) {
  for (std::uint8_t o : valid_opcodes()) {
    const PacketSpec s = sample_spec(o, std::span(kPayload, 5));
    const Frame f = build(s);
    ParsedPacket p;
    ASSERT_EQ(parse_roce(f, p), ParseError::kOk) << opcode_name(o);
    const OpcodeInfo& info = opcode_info(o);
    EXPECT_EQ(p.info, &info);
    EXPECT_EQ(p.eth.src(), s.eth_src);
    EXPECT_EQ(p.eth.dst(), s.eth_dst);
    EXPECT_EQ(p.ip.src(), s.ip_src);
    EXPECT_EQ(p.ip.dst(), s.ip_dst);
    EXPECT_EQ(p.ip.dscp(), s.dscp);
    EXPECT_EQ(p.ip.ecn(), s.ecn);
    EXPECT_EQ(p.udp.src_port(), s.udp_src);
    EXPECT_EQ(p.bth.opcode(), o);
    EXPECT_EQ(p.bth.dest_qp(), s.dest_qp);
    EXPECT_EQ(p.bth.psn(), s.psn);
    EXPECT_EQ(p.bth.ack_req(), s.ack_req);
    EXPECT_EQ(p.bth.becn(), s.becn);
    if (info.has(ExtHdr::kDeth)) {
      EXPECT_EQ(p.deth.qkey(), testing::kSampleQkey);
      EXPECT_EQ(p.deth.src_qp(), testing::kSampleSrcQp);
    }
    if (info.has(ExtHdr::kDcEth)) {
      EXPECT_EQ(p.dc_eth.key(), testing::kSampleDcKey);
      EXPECT_TRUE(p.dc_eth.syn());
      EXPECT_EQ(p.dc_eth.dci_qpn(), testing::kSampleDciQpn);
      EXPECT_EQ(p.dc_eth.lane(), testing::kSampleLane);
      EXPECT_EQ(p.dc_eth.conn(), testing::kSampleConn);
      EXPECT_EQ(p.dc_eth.first_psn(), testing::kSampleFirstPsn);
    }
    if (info.has(ExtHdr::kDcAeth)) {
      EXPECT_EQ(p.dc_aeth.lane(), testing::kSampleLane);
      EXPECT_EQ(p.dc_aeth.status(), testing::kSampleDcStatus);
      EXPECT_EQ(p.dc_aeth.conn(), testing::kSampleConn);
    }
    if (info.has(ExtHdr::kFeth)) {
      EXPECT_EQ(p.feth.sel(), testing::kSampleFethSel);
      EXPECT_EQ(p.feth.plt(), testing::kSampleFethPlt);
    }
    if (info.has(ExtHdr::kReth)) {
      EXPECT_EQ(p.reth.va(), testing::kSampleVa);
      EXPECT_EQ(p.reth.rkey(), testing::kSampleRkey);
      EXPECT_EQ(p.reth.dma_len(), testing::kSampleDmaLen);
    }
    if (info.has(ExtHdr::kAtomicEth)) {
      EXPECT_EQ(p.atomic_eth.swap_add(), testing::kSampleSwapAdd);
      EXPECT_EQ(p.atomic_eth.compare(), testing::kSampleCompare);
    }
    if (info.has(ExtHdr::kAeth)) {
      EXPECT_EQ(p.aeth.msn(), testing::kSampleMsn);
    }
    if (info.has(ExtHdr::kAtomicAckEth)) {
      EXPECT_EQ(p.atomic_ack_eth.orig_remote_data(), testing::kSampleOrig);
    }
    if (info.has(ExtHdr::kImmDt)) {
      EXPECT_EQ(p.immdt.imm(), testing::kSampleImm);
    }
    if (info.has(ExtHdr::kIeth)) {
      EXPECT_EQ(p.ieth.rkey(), testing::kSampleInvRkey);
    }
    if (info.has(ExtHdr::kSrEth)) {
      EXPECT_EQ(p.sr_eth.rsn(), testing::kSampleRsn);
      EXPECT_EQ(p.sr_eth.offset(), testing::kSampleOffset);
    }
    if (info.has(ExtHdr::kSackEth)) {
      EXPECT_TRUE(p.sack_eth.dup());
      EXPECT_EQ(p.sack_eth.trigger_psn(), testing::kSampleTriggerPsn);
      EXPECT_EQ(p.sack_eth.window(), testing::kSampleWindow);
      for (std::size_t b : testing::kSampleSackBits) EXPECT_TRUE(p.sack_eth.bit(b)) << b;
    }
    EXPECT_EQ(p.bth_offset, kBth);
    EXPECT_EQ(p.payload_offset, kExt + info.ext_len);
    EXPECT_EQ(p.frame_len, f.size());
    EXPECT_EQ(p.icrc_offset, f.size() - 4);
    EXPECT_EQ(p.icrc, load_le32(f.data() + f.size() - 4));
    if (info.payload) {
      ASSERT_EQ(p.payload.size(), 5u);
      EXPECT_EQ(p.payload.data(), f.data() + p.payload_offset);
      EXPECT_EQ(p.payload[4], 0x50);
    } else {
      EXPECT_TRUE(p.payload.empty());
    }
  }
}

TEST(Parser_Parse, FrameCutAtEveryLengthGivesLayerError) {
  for (std::uint8_t o : valid_opcodes()) {
    const Frame full = sample(o);
    for (std::size_t n = 0; n < full.size(); ++n) {
      const Frame f(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
      const ParseError want = n < 14   ? ParseError::kTruncatedEth
                              : n < 34 ? ParseError::kTruncatedIpv4
                                       : ParseError::kBadIpTotalLength;
      EXPECT_EQ(parse(f), want) << opcode_name(o) << " len " << n;
    }
  }
}

TEST(Parser_Parse, ConsistentlyShortPacketGivesExactTruncation) {
  for (std::uint8_t o : valid_opcodes()) {
    for (std::size_t payload_len : {0u, 5u}) {
      const Frame full = sample(o, payload_len);
      const std::size_t pad = (full[kBth + 1] >> 4) & 3;
      for (std::size_t n = kUdp; n < full.size(); ++n) {
        Frame f(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
        set_lengths(f, n - kIp);
        ParseError want;
        if (n < kBth) {
          want = ParseError::kTruncatedUdp;
        } else if (n < kExt) {
          want = ParseError::kTruncatedBth;
        } else {
          want = expect_tail(opcode_info(o), n - kExt, pad);
        }
        EXPECT_EQ(parse(f), want) << opcode_name(o) << " payload " << payload_len << " len " << n;
      }
    }
  }
}

TEST(Parser_Parse, EveryFlippedBitGivesItsError) {
  std::size_t checked = 0;
  for (std::uint8_t o : valid_opcodes()) {
    for (std::size_t payload_len : {0u, 5u, 7u}) {
      const Frame orig = sample(o, payload_len);
      ASSERT_EQ(parse(orig), ParseError::kOk);
      for (std::size_t byte = 0; byte < orig.size(); ++byte) {
        for (int bit = 0; bit < 8; ++bit) {
          Frame f = orig;
          f[byte] ^= static_cast<std::uint8_t>(1u << bit);
          ASSERT_EQ(parse(f), expect_flip(orig, byte, bit))
              << opcode_name(o) << " payload " << payload_len << " byte " << byte << " bit " << bit;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 38u * 3 * 60 * 8);
}

TEST(Parser_Parse, EveryFlippedBitWithUdpChecksum) {
  PacketSpec s = sample_spec(op::kRcSendOnly, std::span(kPayload, 7));
  s.udp_checksum = true;
  const Frame orig = build(s);
  ASSERT_EQ(parse(orig), ParseError::kOk);
  for (std::size_t byte = kUdp; byte < orig.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      Frame f = orig;
      f[byte] ^= static_cast<std::uint8_t>(1u << bit);
      ParseError want = ParseError::kBadUdpChecksum;
      if (byte == kUdp + 2 || byte == kUdp + 3) want = ParseError::kNotRoceV2Port;
      if (byte == kUdp + 4 || byte == kUdp + 5) want = ParseError::kBadUdpLength;
      if ((byte == kUdp + 6 || byte == kUdp + 7) && load_be16(f.data() + kUdp + 6) == 0) {
        want = ParseError::kOk;  // became "no checksum"; ICRC still good
      }
      EXPECT_EQ(parse(f), want) << byte << " bit " << bit;
    }
  }
}

TEST(Parser_Parse, EthernetPaddingIsIgnored) {
  const Frame tiny = sample(op::kRcSendMiddle, 0);
  ASSERT_EQ(tiny.size(), 58u);
  for (std::uint8_t fill : {0x00, 0xa5}) {
    Frame f = tiny;
    f.resize(100, fill);
    ParsedPacket p;
    ASSERT_EQ(parse_roce(f, p), ParseError::kOk);
    EXPECT_EQ(p.frame_len, 58u);
    EXPECT_TRUE(p.payload.empty());
    EXPECT_EQ(p.icrc_offset, 54u);
  }
}

TEST(Parser_Parse, NotIp) {
  Frame f = sample(op::kRcAck);
  store_be16(f.data() + 12, kEtherTypeArp);
  EXPECT_EQ(parse(f), ParseError::kNotIp);
}

TEST(Parser_Parse, BadIpVersion) {
  Frame f = sample(op::kRcAck);
  f[kIp] = 0x65;
  fix_ip_checksum(f);
  EXPECT_EQ(parse(f), ParseError::kBadIpVersion);
}

TEST(Parser_Parse, IpOptionsRejected) {
  Frame f = sample(op::kRcAck);
  f[kIp] = 0x46;
  fix_ip_checksum(f);
  EXPECT_EQ(parse(f), ParseError::kBadIpHeaderLength);
}

TEST(Parser_Parse, BadIpChecksum) {
  Frame f = sample(op::kRcAck);
  f[kIp + 10] ^= 0x01;
  EXPECT_EQ(parse(f), ParseError::kBadIpChecksum);
}

TEST(Parser_Parse, IpTotalLengthBelowHeader) {
  Frame f = sample(op::kRcAck);
  store_be16(f.data() + kIp + 2, 19);
  fix_ip_checksum(f);
  EXPECT_EQ(parse(f), ParseError::kBadIpTotalLength);
}

TEST(Parser_Parse, IpTotalLengthBeyondFrame) {
  Frame f = sample(op::kRcAck);
  store_be16(f.data() + kIp + 2, static_cast<std::uint16_t>(f.size() - kIp + 1));
  fix_ip_checksum(f);
  EXPECT_EQ(parse(f), ParseError::kBadIpTotalLength);
}

TEST(Parser_Parse, FragmentsRejected) {
  for (std::uint16_t ff :
       {std::uint16_t{kIpv4FlagMf}, std::uint16_t{0x0001}, std::uint16_t{kIpv4FlagDf | 0x1000}}) {
    Frame f = sample(op::kRcAck);
    store_be16(f.data() + kIp + 6, ff);
    fix_ip_checksum(f);
    EXPECT_EQ(parse(f), ParseError::kIpFragment) << ff;
  }
  Frame f = sample(op::kRcAck);
  store_be16(f.data() + kIp + 6, 0);  // DF clear is fine
  fix_ip_checksum(f);
  fix_icrc(f);  // the flags are covered by the ICRC
  EXPECT_EQ(parse(f), ParseError::kOk);
}

TEST(Parser_Parse, NotUdp) {
  Frame f = sample(op::kRcAck);
  f[kIp + 9] = 6;
  fix_ip_checksum(f);
  EXPECT_EQ(parse(f), ParseError::kNotUdp);
}

TEST(Parser_Parse, UdpLengthMismatch) {
  for (int delta : {-1, 1, -8}) {
    Frame f = sample(op::kRcAck);
    store_be16(f.data() + kUdp + 4,
               static_cast<std::uint16_t>(load_be16(f.data() + kUdp + 4) + delta));
    EXPECT_EQ(parse(f), ParseError::kBadUdpLength) << delta;
  }
}

TEST(Parser_Parse, WrongUdpPort) {
  PacketSpec s = sample_spec(op::kRcAck);
  s.udp_dst = 4792;
  EXPECT_EQ(parse(build(s)), ParseError::kNotRoceV2Port);
}

TEST(Parser_Parse, UdpChecksumVerifiedWhenNonZero) {
  PacketSpec s = sample_spec(op::kUdSendOnly, std::span(kPayload, 7));
  s.udp_checksum = true;
  Frame f = build(s);
  EXPECT_EQ(parse(f), ParseError::kOk);
  f[kUdp + 7] ^= 0x80;
  EXPECT_EQ(parse(f), ParseError::kBadUdpChecksum);
}

TEST(Parser_Parse, BadBthVersion) {
  PacketSpec s = sample_spec(op::kRcAck);
  s.tver = 1;
  EXPECT_EQ(parse(build(s)), ParseError::kBadBthVersion);
}

TEST(Parser_Parse, UnsupportedOpcodes) {
  for (std::uint8_t o : {0x15, 0x18, 0x2c, 0x40, 0x4a, 0x60, 0x66, 0x80, 0xc5, 0xc7, 0xd5, 0xd9,
                         0xdd, 0xf5, 0xf9, 0xff}) {
    Frame f = sample(op::kRcAck);
    f[kBth] = o;
    fix_icrc(f);
    EXPECT_EQ(parse(f), ParseError::kUnsupportedOpcode) << int{o};
  }
}

// uroce's extension packets (docs/homa.md) parse with their header where a
// payload would be; the header's reader checks its length, not the parser.
TEST(Parser_Parse, ExtensionPackets_HeaderAsPayload) {
  const HomaGrantHdr g = HomaGrantHdr::make(123456, 2, HomaGrantHdr::kFlagResend, 9);
  PacketSpec s = sample_spec(op::kHomaGrant, std::span<const std::uint8_t>(g.raw, sizeof g.raw));
  const Frame f = build(s);
  ParsedPacket p;
  ASSERT_EQ(parse_roce(f, p), ParseError::kOk);
  EXPECT_EQ(p.info->transport, Transport::kExt);
  ASSERT_EQ(p.payload.size(), HomaGrantHdr::kSize);
  const HomaGrantHdr r = HomaGrantHdr::read(p.payload.data());
  EXPECT_EQ(r.offset(), 123456u);
  EXPECT_EQ(r.priority(), 2);
  EXPECT_EQ(r.generation(), 9u);
  // A short one still parses: the engine counts it (homa_rx_bad).
  EXPECT_EQ(parse(sample(op::kHomaMlen, 3)), ParseError::kOk);
}

// The DC packets of docs/dc.md, over IPv4 and IPv6: the DC header right
// after the BTH, RC's headers after it, every field back as built.
TEST(Parser_Parse, DcPacketsRoundTrip) {
  for (const bool v6 : {false, true}) {
    for (std::uint8_t o : {op::kDcSendOnly, op::kDcWriteFirst, op::kDcWriteOnlyImm,
                           op::kDcReadRequest, op::kDcReadResponseFirst, op::kDcReadResponseOnly,
                           op::kDcAck, op::kDcCompareSwap, op::kDcAtomicAck, op::kDcDisconnect}) {
      PacketSpec s = sample_spec(o, std::span(kPayload, 7));
      if (v6) s.ip6 = &testing::kSampleRoute;
      const Frame f = build(s);
      ParsedPacket p;
      ASSERT_EQ(parse_roce(f, p), ParseError::kOk) << opcode_name(o) << " v6 " << v6;
      const OpcodeInfo& info = opcode_info(o);
      const std::size_t dc_off = v6 ? kExt + kIpv6ExtraBytes : kExt;
      EXPECT_EQ(p.ipv6, v6);
      EXPECT_EQ(p.info, &info);
      EXPECT_EQ(p.info->transport, Transport::kDc);
      EXPECT_EQ(p.bth.opcode(), o);
      EXPECT_EQ(p.bth.dest_qp(), testing::kSampleQpn);
      EXPECT_EQ(p.bth.psn(), testing::kSamplePsn);
      std::size_t rc_off = dc_off;
      if (info.dir == Direction::kRequest) {
        ASSERT_TRUE(p.has(ExtHdr::kDcEth));
        EXPECT_FALSE(p.has(ExtHdr::kDcAeth));
        EXPECT_EQ(DcEthHdr::read(f.data() + dc_off).conn(), testing::kSampleConn);
        EXPECT_EQ(p.dc_eth.key(), testing::kSampleDcKey);
        EXPECT_EQ(p.dc_eth.dci_qpn(), testing::kSampleDciQpn);
        EXPECT_EQ(p.dc_eth.first_psn(), testing::kSampleFirstPsn);
        rc_off += DcEthHdr::kSize;
      } else {
        ASSERT_TRUE(p.has(ExtHdr::kDcAeth));
        EXPECT_FALSE(p.has(ExtHdr::kDcEth));
        EXPECT_EQ(DcAethHdr::read(f.data() + dc_off).lane(), testing::kSampleLane);
        EXPECT_EQ(p.dc_aeth.conn(), testing::kSampleConn);
        rc_off += DcAethHdr::kSize;
      }
      if (info.has(ExtHdr::kReth)) {
        EXPECT_EQ(RethHdr::read(f.data() + rc_off).rkey(), testing::kSampleRkey);
        EXPECT_EQ(p.reth.va(), testing::kSampleVa);
      }
      if (info.has(ExtHdr::kAeth)) {
        EXPECT_EQ(AethHdr::read(f.data() + rc_off).msn(), testing::kSampleMsn);
        EXPECT_EQ(p.aeth.msn(), testing::kSampleMsn);
      }
      if (info.has(ExtHdr::kAtomicEth)) {
        EXPECT_EQ(AtomicEthHdr::read(f.data() + rc_off).compare(), testing::kSampleCompare);
      }
      if (info.has(ExtHdr::kAtomicAckEth)) {
        EXPECT_EQ(p.atomic_ack_eth.orig_remote_data(), testing::kSampleOrig);
      }
      if (info.has(ExtHdr::kImmDt)) {
        EXPECT_EQ(p.immdt.imm(), testing::kSampleImm);
      }
      EXPECT_EQ(p.payload_offset, dc_off + info.ext_len);
      EXPECT_EQ(p.payload.size(), info.payload ? 7u : 0u) << opcode_name(o);
    }
  }
}

// The selective-repeat packets of docs/lossy.md: SRETH last before the
// payload (after a WRITE's RETH and ImmDt, a SEND's IETH), SACKETH after
// the AETH; every field back as built.
TEST(Parser_Parse, SrPacketsRoundTrip) {
  for (std::uint8_t o : {op::kSrSendFirst, op::kSrSendLastImm, op::kSrSendOnlyInv,
                         op::kSrWriteMiddle, op::kSrWriteLastImm, op::kSrWriteOnly,
                         op::kSrReadRequest, op::kSrCompareSwap, op::kSrSack}) {
    const Frame f = build(sample_spec(o, std::span(kPayload, 7)));
    ParsedPacket p;
    ASSERT_EQ(parse_roce(f, p), ParseError::kOk) << opcode_name(o);
    const OpcodeInfo& info = opcode_info(o);
    EXPECT_EQ(p.info->transport, Transport::kSr);
    std::size_t ibta = info.ext_len;
    if (info.has(ExtHdr::kSrEth)) {
      ibta -= SrEthHdr::kSize;
      const SrEthHdr h = SrEthHdr::read(f.data() + kExt + ibta);
      EXPECT_EQ(h.rsn(), testing::kSampleRsn) << opcode_name(o);
      EXPECT_EQ(h.offset(), testing::kSampleOffset);
    }
    if (info.has(ExtHdr::kReth)) {
      EXPECT_EQ(RethHdr::read(f.data() + kExt).va(), testing::kSampleVa) << opcode_name(o);
    }
    if (info.has(ExtHdr::kSackEth)) {
      ibta -= SrSackEthHdr::kSize;
      EXPECT_EQ(AethHdr::read(f.data() + kExt).msn(), testing::kSampleMsn);
      EXPECT_EQ(SrSackEthHdr::read(f.data() + kExt + ibta).trigger_psn(),
                testing::kSampleTriggerPsn);
      EXPECT_EQ(p.sack_eth.word(0), (1ull << 62) | (1ull << 56) | (1ull << 55) | 1ull);
    }
    EXPECT_EQ(p.payload_offset, kExt + info.ext_len);
    EXPECT_EQ(p.payload.size(), info.payload ? 7u : 0u) << opcode_name(o);
  }
}

// An IP packet ending inside SRETH or SACKETH gives exactly its
// truncation; one ending right after it the next layer's.
TEST(Parser_Parse, SrHeaderCutGivesItsTruncation) {
  struct Case {
    std::uint8_t opcode;
    std::size_t before;
    ParseError cut;
    std::size_t hdr;
  };
  const Case cases[] = {
      {op::kSrSendMiddle, 0, ParseError::kTruncatedSrEth, SrEthHdr::kSize},
      {op::kSrWriteLastImm, RethHdr::kSize + ImmDtHdr::kSize, ParseError::kTruncatedSrEth,
       SrEthHdr::kSize},
      {op::kSrSack, AethHdr::kSize, ParseError::kTruncatedSackEth, SrSackEthHdr::kSize},
  };
  for (const Case& c : cases) {
    const Frame full = sample(c.opcode, 0);
    for (std::size_t n = kExt + c.before; n <= kExt + c.before + c.hdr; ++n) {
      Frame f(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
      set_lengths(f, n - kIp);
      EXPECT_EQ(parse(f), n < kExt + c.before + c.hdr ? c.cut : ParseError::kTruncatedIcrc)
          << opcode_name(c.opcode) << " " << n;
    }
  }
}

// A non-zero status goes in a DC ACKNOWLEDGE (dc_aeth.h): GONE with the
// record's expected PSN - 1 in the BTH, wrapping at 24 bits.
TEST(Parser_Parse, DcAckWithStatusGone) {
  for (const bool v6 : {false, true}) {
    PacketSpec s = sample_spec(op::kDcAck);
    if (v6) s.ip6 = &testing::kSampleRoute;
    s.dest_qp = testing::kSampleDciQpn;
    const std::uint32_t expected_psn = 0;
    s.psn = (expected_psn - 1) & kPsnMask;
    s.dc_aeth = DcAethHdr::make(3, DcStatus::kGone, 0x00000001);
    s.aeth = AethHdr::make(aeth_ack_syndrome(), 0);
    ParsedPacket p;
    ASSERT_EQ(parse_roce(build(s), p), ParseError::kOk);
    EXPECT_EQ(p.bth.dest_qp(), testing::kSampleDciQpn);
    EXPECT_EQ(p.bth.psn(), 0xffffffu);
    EXPECT_EQ(p.dc_aeth.status(), DcStatus::kGone);
    EXPECT_TRUE(p.dc_aeth.status_valid());
    EXPECT_EQ(p.dc_aeth.lane(), 3);
    EXPECT_EQ(p.dc_aeth.conn(), 1u);
    EXPECT_TRUE(p.aeth.is_ack());
    EXPECT_EQ(p.aeth.msn(), 0u);
  }
}

// An IP packet ending inside the DC header gives exactly that header's
// truncation (over IPv6: test_parser_ipv6.cpp); one ending right after it
// the next layer's.
TEST(Parser_Parse, DcHeaderCutGivesItsTruncation) {
  struct Case {
    std::uint8_t opcode;
    ParseError cut;
    std::size_t hdr;
    ParseError after;
  };
  const Case cases[] = {
      {op::kDcSendOnly, ParseError::kTruncatedDcEth, DcEthHdr::kSize, ParseError::kTruncatedIcrc},
      {op::kDcReadRequest, ParseError::kTruncatedDcEth, DcEthHdr::kSize,
       ParseError::kTruncatedReth},
      {op::kDcDisconnect, ParseError::kTruncatedDcEth, DcEthHdr::kSize, ParseError::kTruncatedIcrc},
      {op::kDcAck, ParseError::kTruncatedDcAeth, DcAethHdr::kSize, ParseError::kTruncatedAeth},
      {op::kDcReadResponseMiddle, ParseError::kTruncatedDcAeth, DcAethHdr::kSize,
       ParseError::kTruncatedIcrc},
  };
  for (const Case& c : cases) {
    const Frame full = sample(c.opcode, 0);
    for (std::size_t n = kExt; n <= kExt + c.hdr; ++n) {
      Frame f(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
      set_lengths(f, n - kIp);
      EXPECT_EQ(parse(f), n < kExt + c.hdr ? c.cut : c.after) << opcode_name(c.opcode) << " " << n;
    }
  }
}

TEST(Parser_Parse, PadLargerThanPayload) {
  Frame f = sample(op::kRcSendOnly, 0);
  f[kBth + 1] |= 0x10;
  fix_icrc(f);
  EXPECT_EQ(parse(f), ParseError::kPadExceedsPayload);
  Frame g = sample(op::kRcSendOnly, 1);  // 1 byte + 3 pad: pad 3 fits, 0 too
  g[kBth + 1] &= 0xcf;
  fix_icrc(g);
  ParsedPacket p;
  ASSERT_EQ(parse_roce(g, p), ParseError::kOk);
  EXPECT_EQ(p.payload.size(), 4u);  // pad bytes count as payload when PadCnt=0
}

TEST(Parser_Parse, PayloadWhereOpcodeAllowsNone) {
  for (std::uint8_t o : {op::kRcAck, op::kRcReadRequest, op::kRcCompareSwap, op::kCnp, op::kDcAck,
                         op::kDcDisconnect}) {
    Frame f = sample(o);
    f.insert(f.end() - 4, {1, 2, 3, 4});
    set_lengths(f, f.size() - kIp);
    fix_icrc(f);
    EXPECT_EQ(parse(f), ParseError::kUnexpectedPayload) << opcode_name(o);
  }
}

TEST(Parser_Parse, BadIcrc) {
  Frame f = sample(op::kRcWriteOnly, 7);
  f.back() ^= 0x01;
  EXPECT_EQ(parse(f), ParseError::kBadIcrc);
}

TEST(Parser_Parse, VariantFieldsMayChangeInFlight) {
  // A router rewrites TTL and DSCP/ECN (fixing the IP checksum), a switch
  // sets FECN: the ICRC still holds.
  Frame f = sample(op::kRcSendOnly, 5);
  f[kIp + 8] = 3;
  f[kIp + 1] = 0xbb;
  fix_ip_checksum(f);
  f[kBth + 4] |= 0x80;
  ParsedPacket p;
  ASSERT_EQ(parse_roce(f, p), ParseError::kOk);
  EXPECT_TRUE(p.bth.fecn());
  EXPECT_EQ(p.ip.ttl(), 3);
}

TEST(ParseErrorName, DistinctForEveryCode) {
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < kNumParseErrors; ++i) {
    const auto n = parse_error_name(static_cast<ParseError>(i));
    EXPECT_NE(n, "Unknown") << i;
    names.insert(n);
  }
  EXPECT_EQ(names.size(), kNumParseErrors);
  EXPECT_EQ(parse_error_name(ParseError::kBadIcrc), "BadIcrc");
  EXPECT_EQ(parse_error_name(ParseError::kTruncatedDcEth), "TruncatedDcEth");
  EXPECT_EQ(parse_error_name(ParseError::kTruncatedDcAeth), "TruncatedDcAeth");
  EXPECT_EQ(parse_error_name(ParseError::kTruncatedSrEth), "TruncatedSrEth");
  EXPECT_EQ(parse_error_name(ParseError::kTruncatedSackEth), "TruncatedSackEth");
}

// The destination QP of a RoCEv2 frame over IPv4 and IPv6, read without
// parsing; anything that is not Ethernet/IP/UDP 4791 up to the BTH gives
// kNoDestQp.
TEST(PeekDestQp, ReadsTheBthOfRoceFramesOnly) {
  for (const bool v6 : {false, true}) {
    PacketSpec s = sample_spec(op::kRcSendOnly, std::span(kPayload, 5));
    s.dest_qp = 0xabcdef;
    if (v6) s.ip6 = &testing::kSampleRoute;
    Frame f = build(s);
    EXPECT_EQ(peek_dest_qp(f), 0xabcdefu) << "v6 " << v6;
    const std::size_t bth = v6 ? kBth + kIpv6ExtraBytes : kBth;
    EXPECT_EQ(peek_dest_qp(std::span(f).first(bth + BthHdr::kSize)), 0xabcdefu);
    EXPECT_EQ(peek_dest_qp(std::span(f).first(bth + BthHdr::kSize - 1)), kNoDestQp);
    Frame other_port = f;
    other_port[bth - UdpHdr::kSize + 3] ^= 1;  // UDP destination port 4790
    EXPECT_EQ(peek_dest_qp(other_port), kNoDestQp);
    Frame not_udp = f;
    not_udp.at(v6 ? kIp + 6 : kIp + 9) = 6;  // TCP
    EXPECT_EQ(peek_dest_qp(not_udp), kNoDestQp);
  }
  Frame options = sample(op::kRcSendOnly);
  options[kIp] = 0x46;  // IPv4 with options: the parser's business
  EXPECT_EQ(peek_dest_qp(options), kNoDestQp);
  Frame arp = sample(op::kRcSendOnly);
  arp[12] = 0x08;
  arp[13] = 0x06;
  EXPECT_EQ(peek_dest_qp(arp), kNoDestQp);
  EXPECT_EQ(peek_dest_qp({}), kNoDestQp);
}

// An ACK is an RC ACKNOWLEDGE whose AETH says ACK, over IPv4 or IPv6; a NAK,
// an RNR NAK, an atomic ACK, a request and a frame cut inside the AETH are
// not.
TEST(PeekPlainAck, RcAcknowledgeWithAnAckSyndromeOnly) {
  for (const bool v6 : {false, true}) {
    PacketSpec s = sample_spec(op::kRcAck);
    if (v6) s.ip6 = &testing::kSampleRoute;
    const Frame ack = build(s);
    EXPECT_TRUE(peek_plain_ack(ack)) << "v6 " << v6;
    const std::size_t aeth = (v6 ? kBth + kIpv6ExtraBytes : kBth) + BthHdr::kSize;
    EXPECT_TRUE(peek_plain_ack(std::span(ack).first(aeth + AethHdr::kSize)));
    EXPECT_FALSE(peek_plain_ack(std::span(ack).first(aeth + AethHdr::kSize - 1)));
    s.aeth = AethHdr::make(aeth_nak_syndrome(NakCode::kPsnSeqError), testing::kSampleMsn);
    EXPECT_FALSE(peek_plain_ack(build(s))) << "v6 " << v6;
    s.aeth = AethHdr::make(aeth_rnr_nak_syndrome(3), testing::kSampleMsn);
    EXPECT_FALSE(peek_plain_ack(build(s))) << "v6 " << v6;
  }
  EXPECT_FALSE(peek_plain_ack(sample(op::kRcAtomicAck)));
  EXPECT_FALSE(peek_plain_ack(sample(op::kRcSendOnly)));
  EXPECT_FALSE(peek_plain_ack(sample(op::kRcReadResponseOnly)));
  EXPECT_FALSE(peek_plain_ack({}));
}

// ICMPv6 (neighbour discovery) is told by the IPv6 Next Header alone; IPv4
// carrying protocol 58, a UDP frame and a truncated header are not it.
TEST(PeekIcmpv6, NextHeader58OverIpv6Only) {
  PacketSpec s = sample_spec(op::kRcSendOnly, std::span(kPayload, 5));
  s.ip6 = &testing::kSampleRoute;
  Frame f = build(s);
  EXPECT_FALSE(peek_icmpv6(f));  // UDP
  f[kIp + 6] = kIpProtoIcmpv6;
  EXPECT_TRUE(peek_icmpv6(f));
  EXPECT_TRUE(peek_icmpv6(std::span(f).first(kIp + Ipv6Hdr::kSize)));
  EXPECT_FALSE(peek_icmpv6(std::span(f).first(kIp + Ipv6Hdr::kSize - 1)));
  Frame v4 = sample(op::kRcSendOnly);
  v4[kIp + 9] = kIpProtoIcmpv6;
  v4[kIp + 6] = kIpProtoIcmpv6;
  EXPECT_FALSE(peek_icmpv6(v4));
  EXPECT_FALSE(peek_icmpv6({}));
}

}  // namespace
}  // namespace uroce::wire
