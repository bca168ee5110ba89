#include "datapath/wire/bth.h"

#include <gtest/gtest.h>

#include <cstring>

namespace uroce::wire {
namespace {

TEST(BthHdr_Layout, FieldsLandInIbtaPositions) {
  BthHdr h;
  h.set_opcode(0x0a);
  h.set_se(true);
  h.set_mig_req(true);
  h.set_pad_count(3);
  h.set_tver(0);
  h.set_pkey(0xffff);
  h.set_fecn(true);
  h.set_becn(false);
  h.set_dest_qp(0x123456);
  h.set_ack_req(true);
  h.set_psn(0xabcdef);
  const std::uint8_t want[BthHdr::kSize] = {0x0a, 0xf0, 0xff, 0xff, 0x80, 0x12,
                                            0x34, 0x56, 0x80, 0xab, 0xcd, 0xef};
  EXPECT_EQ(std::memcmp(h.raw, want, sizeof want), 0);
}

TEST(BthHdr_Accessors, RoundTripEveryField) {
  BthHdr h;
  h.set_opcode(0x81);
  h.set_se(false);
  h.set_mig_req(true);
  h.set_pad_count(2);
  h.set_tver(0x5);
  h.set_pkey(0x8001);
  h.set_fecn(false);
  h.set_becn(true);
  h.set_dest_qp(0xfedcba);
  h.set_ack_req(false);
  h.set_psn(0x000001);
  const BthHdr r = BthHdr::read(h.raw);
  EXPECT_EQ(r.opcode(), 0x81);
  EXPECT_FALSE(r.se());
  EXPECT_TRUE(r.mig_req());
  EXPECT_EQ(r.pad_count(), 2);
  EXPECT_EQ(r.tver(), 5);
  EXPECT_EQ(r.pkey(), 0x8001);
  EXPECT_FALSE(r.fecn());
  EXPECT_TRUE(r.becn());
  EXPECT_EQ(r.resv6(), 0);
  EXPECT_EQ(r.dest_qp(), 0xfedcbau);
  EXPECT_FALSE(r.ack_req());
  EXPECT_EQ(r.resv7(), 0);
  EXPECT_EQ(r.psn(), 1u);
}

TEST(BthHdr_Setters, TruncateTo24BitsAndLeaveNeighboursAlone) {
  BthHdr h;
  std::memset(h.raw, 0xff, sizeof h.raw);
  h.set_dest_qp(0x01000002);  // bit 24 must not leak into byte 4
  h.set_psn(0xff000000);
  EXPECT_EQ(h.raw[4], 0xff);
  EXPECT_EQ(h.dest_qp(), 0x000002u);
  EXPECT_EQ(h.raw[8], 0xff);
  EXPECT_EQ(h.psn(), 0u);
  h.set_pad_count(0);
  EXPECT_EQ(h.raw[1], 0xcf);
  h.set_tver(0);
  EXPECT_EQ(h.raw[1], 0xc0);
  h.set_se(false);
  h.set_becn(false);
  h.set_ack_req(false);
  EXPECT_EQ(h.raw[1], 0x40);
  EXPECT_EQ(h.raw[4], 0xbf);
  EXPECT_EQ(h.raw[8], 0x7f);
}

TEST(BthHdr_Write, CopiesRawBytes) {
  BthHdr h;
  h.set_psn(0x123456);
  std::uint8_t buf[BthHdr::kSize + 2] = {};
  h.write(buf + 1);
  EXPECT_EQ(buf[0], 0);
  EXPECT_EQ(buf[10], 0x12);
  EXPECT_EQ(buf[12], 0x56);
  EXPECT_EQ(buf[13], 0);
}

}  // namespace
}  // namespace uroce::wire
