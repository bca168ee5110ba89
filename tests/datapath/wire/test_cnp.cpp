#include "datapath/wire/cnp.h"

#include <gtest/gtest.h>

namespace uroce::wire {
namespace {

TEST(CnpHdr_Default, SixteenZeroBytes) {
  const CnpHdr h;
  for (std::size_t i = 0; i < CnpHdr::kSize; ++i) EXPECT_EQ(h.raw[i], 0);
  EXPECT_EQ(kCnpOpcode, 0x81);
}

TEST(CnpHdr_Read, KeepsReservedBytes) {
  std::uint8_t buf[CnpHdr::kSize];
  for (std::size_t i = 0; i < sizeof buf; ++i) buf[i] = static_cast<std::uint8_t>(i);
  const CnpHdr h = CnpHdr::read(buf);
  EXPECT_EQ(h.raw[15], 15);
}

}  // namespace
}  // namespace uroce::wire
