#include "datapath/wire/ieth.h"

#include <gtest/gtest.h>

namespace uroce::wire {
namespace {

TEST(IethHdr_Make, BigEndianLayout) {
  const IethHdr h = IethHdr::make(0x0badcafe);
  EXPECT_EQ(h.raw[0], 0x0b);
  EXPECT_EQ(h.raw[3], 0xfe);
  EXPECT_EQ(IethHdr::read(h.raw).rkey(), 0x0badcafeu);
}

}  // namespace
}  // namespace uroce::wire
