#include "datapath/wire/homa_grant.h"

#include <gtest/gtest.h>

namespace uroce::wire {
namespace {

TEST(HomaGrantHdr_Make, BigEndianLayout) {
  const HomaGrantHdr h = HomaGrantHdr::make(0x0102030405060708ull, 0x09, 0x0a, 0x0d0e0f10);
  const std::uint8_t want[HomaGrantHdr::kSize] = {1, 2,  3, 4, 5,  6,  7,  8,
                                                  9, 10, 0, 0, 13, 14, 15, 16};
  for (std::size_t i = 0; i < HomaGrantHdr::kSize; ++i) EXPECT_EQ(h.raw[i], want[i]) << i;
}

TEST(HomaGrantHdr_Read, RoundTrip) {
  const HomaGrantHdr h =
      HomaGrantHdr::make(0xffffffff00000001ull, 7,
                         HomaGrantHdr::kFlagResend | HomaGrantHdr::kFlagFifo, 42);
  std::uint8_t buf[HomaGrantHdr::kSize];
  h.write(buf);
  const HomaGrantHdr r = HomaGrantHdr::read(buf);
  EXPECT_EQ(r.offset(), 0xffffffff00000001ull);
  EXPECT_EQ(r.priority(), 7);
  EXPECT_EQ(r.flags(), 3);
  EXPECT_EQ(r.generation(), 42u);
  EXPECT_EQ(kHomaGrantOpcode >> 5, 0b110);  // manufacturer-specific range
}

}  // namespace
}  // namespace uroce::wire
