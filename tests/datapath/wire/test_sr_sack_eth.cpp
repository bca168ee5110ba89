#include "datapath/wire/sr_sack_eth.h"

#include <gtest/gtest.h>

namespace uroce::wire {
namespace {

TEST(SrSackEthHdr_Make, BigEndianLayoutAndClearBitmap) {
  const SrSackEthHdr h = SrSackEthHdr::make(SrSackEthHdr::kFlagDup, 0x00abcdef, 0x0102);
  const std::uint8_t want[8] = {1, 0xab, 0xcd, 0xef, 1, 2, 0, 0};
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(h.raw[i], want[i]) << i;
  for (std::size_t i = 8; i < SrSackEthHdr::kSize; ++i) EXPECT_EQ(h.raw[i], 0) << i;
  EXPECT_EQ(SrSackEthHdr::kSize, 40u);
}

// Bit i is byte 8 + i / 8, most significant bit first; word(i) reads 64 of
// them with bit 64 i as its most significant bit.
TEST(SrSackEthHdr_SetBit, MostSignificantBitFirst) {
  SrSackEthHdr h;
  h.set_bit(0);
  h.set_bit(9);
  h.set_bit(255);
  EXPECT_EQ(h.raw[8], 0x80);
  EXPECT_EQ(h.raw[9], 0x40);
  EXPECT_EQ(h.raw[39], 0x01);
  EXPECT_TRUE(h.bit(0));
  EXPECT_TRUE(h.bit(9));
  EXPECT_TRUE(h.bit(255));
  EXPECT_FALSE(h.bit(1));
  EXPECT_FALSE(h.bit(254));
  EXPECT_EQ(h.word(0), (1ull << 63) | (1ull << 54));
  EXPECT_EQ(h.word(3), 1ull);
  EXPECT_EQ(h.word(1), 0u);
}

TEST(SrSackEthHdr_Read, RoundTrip) {
  SrSackEthHdr h = SrSackEthHdr::make(0, 0x00ffffff, 256);
  h.set_word(2, 0x8000000000000001ull);
  std::uint8_t buf[SrSackEthHdr::kSize];
  h.write(buf);
  const SrSackEthHdr r = SrSackEthHdr::read(buf);
  EXPECT_FALSE(r.dup());
  EXPECT_EQ(r.flags(), 0);
  EXPECT_EQ(r.trigger_psn(), 0xffffffu);
  EXPECT_EQ(r.window(), 256);
  EXPECT_TRUE(r.bit(128));
  EXPECT_TRUE(r.bit(191));
  EXPECT_FALSE(r.bit(129));
  EXPECT_EQ(r.word(2), 0x8000000000000001ull);
}

// ECE is flag bit 1; the CE offset is a signed big-endian 16-bit number in
// the bytes a peer from before ECE sent as zero.
TEST(SrSackEthHdr_SetCe, FlagAndSignedOffset) {
  SrSackEthHdr h = SrSackEthHdr::make(SrSackEthHdr::kFlagDup, 5, 256);
  EXPECT_FALSE(h.ece());
  h.set_ce(-2);
  EXPECT_EQ(h.raw[0], 0x03);
  EXPECT_EQ(h.raw[6], 0xff);
  EXPECT_EQ(h.raw[7], 0xfe);
  EXPECT_TRUE(h.ece());
  EXPECT_TRUE(h.dup());
  EXPECT_EQ(h.ce_offset(), -2);
  h = SrSackEthHdr::make(0, 5, 256);
  h.set_ce(300);
  EXPECT_EQ(h.raw[6], 0x01);
  EXPECT_EQ(h.raw[7], 0x2c);
  EXPECT_EQ(h.ce_offset(), 300);
}

}  // namespace
}  // namespace uroce::wire
