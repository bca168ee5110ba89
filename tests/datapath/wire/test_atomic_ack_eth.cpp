#include "datapath/wire/atomic_ack_eth.h"

#include <gtest/gtest.h>

namespace uroce::wire {
namespace {

TEST(AtomicAckEthHdr_Make, BigEndianLayout) {
  const AtomicAckEthHdr h = AtomicAckEthHdr::make(0x0102030405060708ull);
  for (std::size_t i = 0; i < AtomicAckEthHdr::kSize; ++i) {
    EXPECT_EQ(h.raw[i], i + 1) << i;
  }
  EXPECT_EQ(AtomicAckEthHdr::read(h.raw).orig_remote_data(), 0x0102030405060708ull);
}

}  // namespace
}  // namespace uroce::wire
