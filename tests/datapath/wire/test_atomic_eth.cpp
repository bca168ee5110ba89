#include "datapath/wire/atomic_eth.h"

#include <gtest/gtest.h>

namespace uroce::wire {
namespace {

TEST(AtomicEthHdr_Make, BigEndianLayout) {
  const AtomicEthHdr h = AtomicEthHdr::make(0x0102030405060708ull, 0x090a0b0c,
                                            0x0d0e0f1011121314ull, 0x15161718191a1b1cull);
  for (std::size_t i = 0; i < AtomicEthHdr::kSize; ++i) {
    EXPECT_EQ(h.raw[i], i + 1) << i;
  }
  const AtomicEthHdr r = AtomicEthHdr::read(h.raw);
  EXPECT_EQ(r.va(), 0x0102030405060708ull);
  EXPECT_EQ(r.rkey(), 0x090a0b0cu);
  EXPECT_EQ(r.swap_add(), 0x0d0e0f1011121314ull);
  EXPECT_EQ(r.compare(), 0x15161718191a1b1cull);
}

}  // namespace
}  // namespace uroce::wire
