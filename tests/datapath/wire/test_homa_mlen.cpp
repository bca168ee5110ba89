#include "datapath/wire/homa_mlen.h"

#include <gtest/gtest.h>

namespace uroce::wire {
namespace {

TEST(HomaMlenHdr_Make, BigEndianLayout) {
  const HomaMlenHdr h = HomaMlenHdr::make(0x01020304, 0x05060708);
  for (std::size_t i = 0; i < HomaMlenHdr::kSize; ++i) EXPECT_EQ(h.raw[i], i + 1) << i;
}

TEST(HomaMlenHdr_Read, RoundTrip) {
  std::uint8_t buf[HomaMlenHdr::kSize];
  HomaMlenHdr::make(0x80000000u, 60000).write(buf);
  const HomaMlenHdr r = HomaMlenHdr::read(buf);
  EXPECT_EQ(r.length(), 0x80000000u);
  EXPECT_EQ(r.unscheduled(), 60000u);
  EXPECT_EQ(kHomaMlenOpcode >> 5, 0b110);
}

}  // namespace
}  // namespace uroce::wire
