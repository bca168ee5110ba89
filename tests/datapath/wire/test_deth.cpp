#include "datapath/wire/deth.h"

#include <gtest/gtest.h>

namespace uroce::wire {
namespace {

TEST(DethHdr_Make, LayoutWithReservedByteZero) {
  const DethHdr h = DethHdr::make(0x11111111, 0xff000017);
  const std::uint8_t want[DethHdr::kSize] = {0x11, 0x11, 0x11, 0x11, 0x00, 0x00, 0x00, 0x17};
  for (std::size_t i = 0; i < DethHdr::kSize; ++i) EXPECT_EQ(h.raw[i], want[i]);
  const DethHdr r = DethHdr::read(h.raw);
  EXPECT_EQ(r.qkey(), 0x11111111u);
  EXPECT_EQ(r.src_qp(), 0x17u);
}

}  // namespace
}  // namespace uroce::wire
