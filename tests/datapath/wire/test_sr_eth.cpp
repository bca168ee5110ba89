#include "datapath/wire/sr_eth.h"

#include <gtest/gtest.h>

namespace uroce::wire {
namespace {

TEST(SrEthHdr_Make, BigEndianLayout) {
  const SrEthHdr h = SrEthHdr::make(0x00abcdef, 0x01020304);
  const std::uint8_t want[SrEthHdr::kSize] = {0, 0xab, 0xcd, 0xef, 1, 2, 3, 4};
  for (std::size_t i = 0; i < SrEthHdr::kSize; ++i) EXPECT_EQ(h.raw[i], want[i]) << i;
}

TEST(SrEthHdr_Read, RoundTrip) {
  std::uint8_t buf[SrEthHdr::kSize];
  SrEthHdr::make(0x00ffffff, 0xfffff000).write(buf);
  const SrEthHdr r = SrEthHdr::read(buf);
  EXPECT_EQ(r.rsn(), 0xffffffu);
  EXPECT_EQ(r.offset(), 0xfffff000u);
}

// The RSN is 24 bits: the reserved byte stays zero, and a reserved byte
// set by a sender is ignored.
TEST(SrEthHdr_SetRsn, KeepsLow24BitsAndReservedByte) {
  SrEthHdr h = SrEthHdr::make(0x12345678, 0);
  EXPECT_EQ(h.rsn(), 0x345678u);
  EXPECT_EQ(h.raw[0], 0);
  h.raw[0] = 0xff;
  EXPECT_EQ(h.rsn(), 0x345678u);
}

}  // namespace
}  // namespace uroce::wire
