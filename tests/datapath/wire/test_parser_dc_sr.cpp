// The parser's tests of DC's selective-repeat forms (docs/lossy-dc.md); the
// rest of the parser's are in test_parser.cpp.
#include <gtest/gtest.h>

#include "datapath/wire/parser.h"
#include "tests/datapath/wire/parser_test_frames.h"
#include "tests/datapath/wire/sample_packets.h"

namespace uroce::wire {
namespace {

using testing::build;
using testing::Frame;
using testing::kExt;
using testing::kIp;
using testing::kPayload;
using testing::parse;
using testing::sample_spec;
using testing::set_lengths;

// The DC packets of a selective-repeat connection (docs/lossy.md "DC"):
// the flag in the DC header selects the opcode's SR form: SRETH last on a
// SEND or WRITE, a RETH on every WRITE packet, SACKETH after a DC
// ACKNOWLEDGE's AETH; every field back as built, over IPv4 and IPv6.
TEST(Parser_Parse, DcSrPacketsRoundTrip) {
  for (const bool v6 : {false, true}) {
    for (std::uint8_t o :
         {op::kDcSendFirst, op::kDcSendLastImm, op::kDcSendOnlyInv, op::kDcWriteMiddle,
          op::kDcWriteOnlyImm, op::kDcReadRequest, op::kDcCompareSwap, op::kDcAck}) {
      const OpcodeInfo& v = dc_sr_opcode_info(o);
      ASSERT_TRUE(v.valid) << opcode_name(o);
      PacketSpec s = sample_spec(o, std::span(kPayload, 7));
      if (v6) s.ip6 = &testing::kSampleRoute;
      if (s.dc_eth) {
        s.dc_eth->set_sr(true);
      } else {
        s.dc_aeth->set_sack(true);
      }
      if (v.has(ExtHdr::kReth) && !s.reth) {
        s.reth = RethHdr::make(testing::kSampleVa, testing::kSampleRkey, testing::kSampleDmaLen);
      }
      if (v.has(ExtHdr::kSrEth)) s.sr_eth = SrEthHdr::make(testing::kSampleRsn, 3 * 1024);
      if (v.has(ExtHdr::kSackEth)) {
        s.sack_eth = SrSackEthHdr::make(0, testing::kSampleTriggerPsn, testing::kSampleWindow);
      }
      const Frame f = build(s);
      ParsedPacket p;
      ASSERT_EQ(parse_roce(f, p), ParseError::kOk) << opcode_name(o) << " v6 " << v6;
      const std::size_t dc_off = v6 ? kExt + kIpv6ExtraBytes : kExt;
      EXPECT_EQ(p.info, &v) << opcode_name(o);
      EXPECT_TRUE(p.info->sr);
      EXPECT_EQ(p.info->transport, Transport::kDc);
      EXPECT_EQ(p.bth.opcode(), o);
      EXPECT_EQ(p.info->op, opcode_info(o).op);
      EXPECT_EQ(p.info->pos, opcode_info(o).pos);
      if (v.has(ExtHdr::kSrEth)) {
        const SrEthHdr h = SrEthHdr::read(f.data() + dc_off + v.ext_len - SrEthHdr::kSize);
        EXPECT_EQ(h.rsn(), testing::kSampleRsn);
        EXPECT_EQ(p.sr_eth.offset(), 3u * 1024);
      }
      if (v.has(ExtHdr::kReth)) {
        EXPECT_EQ(p.reth.va(), testing::kSampleVa) << opcode_name(o);
      }
      if (v.has(ExtHdr::kSackEth)) {
        EXPECT_EQ(SrSackEthHdr::read(f.data() + dc_off + v.ext_len - SrSackEthHdr::kSize)
                      .trigger_psn(),
                  testing::kSampleTriggerPsn);
        EXPECT_EQ(p.aeth.msn(), testing::kSampleMsn);
      }
      EXPECT_EQ(p.payload_offset, dc_off + v.ext_len);
      EXPECT_EQ(p.payload.size(), v.payload ? 7u : 0u) << opcode_name(o);
    }
  }
}

// The SR flag on a DC opcode without an SR form (a READ response, the
// DISCONNECT) is not looked at: the packet parses as plain DC.
TEST(Parser_Parse, DcSrFlagWithoutAnSrFormIsNotLookedAt) {
  PacketSpec r = sample_spec(op::kDcReadResponseFirst, std::span(kPayload, 7));
  r.dc_aeth->set_sack(true);
  ParsedPacket p;
  ASSERT_EQ(parse_roce(build(r), p), ParseError::kOk);
  EXPECT_EQ(p.info, &opcode_info(op::kDcReadResponseFirst));
  EXPECT_FALSE(p.info->sr);
  PacketSpec d = sample_spec(op::kDcDisconnect);
  d.dc_eth->set_sr(true);
  ASSERT_EQ(parse_roce(build(d), p), ParseError::kOk);
  EXPECT_EQ(p.info, &opcode_info(op::kDcDisconnect));
  EXPECT_FALSE(p.info->sr);
}

// A DC SR packet ending inside its SRETH gives exactly that truncation.
TEST(Parser_Parse, DcSrHeaderCutGivesItsTruncation) {
  PacketSpec s = sample_spec(op::kDcSendMiddle);
  s.dc_eth->set_sr(true);
  s.sr_eth = SrEthHdr::make(1, 1024);
  const Frame full = build(s);
  const std::size_t at = kExt + DcEthHdr::kSize;
  for (std::size_t n = at; n <= at + SrEthHdr::kSize; ++n) {
    Frame f(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    set_lengths(f, n - kIp);
    EXPECT_EQ(parse(f),
              n < at + SrEthHdr::kSize ? ParseError::kTruncatedSrEth : ParseError::kTruncatedIcrc)
        << n;
  }
}

}  // namespace
}  // namespace uroce::wire
