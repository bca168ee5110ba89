#include "datapath/wire/immdt.h"

#include <gtest/gtest.h>

namespace uroce::wire {
namespace {

TEST(ImmDtHdr_Make, BigEndianLayout) {
  const ImmDtHdr h = ImmDtHdr::make(0xdeadbeef);
  EXPECT_EQ(h.raw[0], 0xde);
  EXPECT_EQ(h.raw[3], 0xef);
  EXPECT_EQ(ImmDtHdr::read(h.raw).imm(), 0xdeadbeefu);
}

}  // namespace
}  // namespace uroce::wire
