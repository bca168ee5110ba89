#include "datapath/wire/dc_eth.h"

#include <gtest/gtest.h>

namespace uroce::wire {
namespace {

TEST(DcEthHdr_Make, BigEndianLayout) {
  const DcEthHdr h =
      DcEthHdr::make(0x0102030405060708ull, true, 0x0a0b0c, 0x0d0e, 0x11121314, 0x161718, 0x191a1b);
  const std::uint8_t want[DcEthHdr::kSize] = {1,    2,    3,    4,    5,    6,    7,
                                              8,    0x80, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e,
                                              0,    0,    0x11, 0x12, 0x13, 0x14, 0,
                                              0x16, 0x17, 0x18, 0,    0x19, 0x1a, 0x1b};
  for (std::size_t i = 0; i < DcEthHdr::kSize; ++i) EXPECT_EQ(h.raw[i], want[i]) << i;
}

TEST(DcEthHdr_Read, RoundTrip) {
  const DcEthHdr h = DcEthHdr::make(0xfedcba9876543210ull, false, 0x00abcdef, 0xffff, 0xffffffffu,
                                    0x00fffffe, 0xff123456);
  std::uint8_t buf[DcEthHdr::kSize];
  h.write(buf);
  const DcEthHdr r = DcEthHdr::read(buf);
  EXPECT_EQ(r.key(), 0xfedcba9876543210ull);
  EXPECT_FALSE(r.syn());
  EXPECT_EQ(r.flags(), 0);
  EXPECT_EQ(r.dci_qpn(), 0x00abcdefu);
  EXPECT_EQ(r.lane(), 0xffff);
  EXPECT_EQ(r.conn(), 0xffffffffu);
  EXPECT_EQ(r.first_psn(), 0x00fffffeu);
  EXPECT_EQ(r.acked_psn(), 0x00123456u);  // 24 bits kept
  EXPECT_EQ(r.raw[24], 0);
}

// The 24-bit fields keep their low 24 bits and leave the bytes beside them
// (the flags, the reserved byte) alone.
TEST(DcEthHdr_Set, TwentyFourBitFieldsAreMasked) {
  DcEthHdr h;
  h.set_syn(true);
  h.set_dci_qpn(0xff123456);
  h.set_first_psn(0xee654321);
  EXPECT_EQ(h.dci_qpn(), 0x123456u);
  EXPECT_EQ(h.first_psn(), 0x654321u);
  EXPECT_EQ(h.raw[8], DcEthHdr::kFlagSyn);
  EXPECT_EQ(h.raw[20], 0);
  EXPECT_TRUE(h.syn());
}

// SYN is bit 7 of byte 8; the reserved flag bits are the receiver's to
// ignore and set_syn leaves them as they are.
TEST(DcEthHdr_Set, SynIsBitSevenOfTheFlags) {
  DcEthHdr h;
  h.set_flags(0x7f);
  EXPECT_FALSE(h.syn());
  h.set_syn(true);
  EXPECT_EQ(h.flags(), 0xff);
  EXPECT_TRUE(h.syn());
  h.set_syn(false);
  EXPECT_EQ(h.flags(), 0x7f);
  EXPECT_EQ(DcEthHdr::make(0, true, 0, 0, 0, 0).flags(), 0x80);
  EXPECT_EQ(DcEthHdr::make(0, false, 0, 0, 0, 0).flags(), 0x00);
}

// SR is bit 6 of byte 8, beside SYN; the other bits stay as they are.
TEST(DcEthHdr_Set, SrIsBitSixOfTheFlags) {
  DcEthHdr h = DcEthHdr::make(0, true, 0, 0, 0, 0);
  EXPECT_FALSE(h.sr());
  h.set_sr(true);
  EXPECT_EQ(h.flags(), 0xc0);
  EXPECT_TRUE(h.sr());
  EXPECT_TRUE(h.syn());
  h.set_syn(false);
  EXPECT_TRUE(h.sr());
  h.set_sr(false);
  EXPECT_EQ(h.flags(), 0x00);
}

TEST(DcEthHdr_Set, ReservedBytesStayZero) {
  const DcEthHdr h = DcEthHdr::make(~0ull, true, ~0u, 0xffff, ~0u, ~0u);
  EXPECT_EQ(h.raw[14], 0);
  EXPECT_EQ(h.raw[15], 0);
  EXPECT_EQ(h.raw[20], 0);
  EXPECT_EQ(h.dci_qpn(), 0xffffffu);
  EXPECT_EQ(h.first_psn(), 0xffffffu);
}

}  // namespace
}  // namespace uroce::wire
