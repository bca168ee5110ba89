#include "datapath/wire/reth.h"

#include <gtest/gtest.h>

#include <cstring>

namespace uroce::wire {
namespace {

TEST(RethHdr_Make, BigEndianLayout) {
  const RethHdr h = RethHdr::make(0x0102030405060708ull, 0x090a0b0c, 0x0d0e0f10);
  for (std::size_t i = 0; i < RethHdr::kSize; ++i) {
    EXPECT_EQ(h.raw[i], i + 1) << i;
  }
}

TEST(RethHdr_Read, RoundTrip) {
  const RethHdr h = RethHdr::make(0xfffffffffffff000ull, 0x1, 0x80000000);
  const RethHdr r = RethHdr::read(h.raw);
  EXPECT_EQ(r.va(), 0xfffffffffffff000ull);
  EXPECT_EQ(r.rkey(), 1u);
  EXPECT_EQ(r.dma_len(), 0x80000000u);
}

}  // namespace
}  // namespace uroce::wire
