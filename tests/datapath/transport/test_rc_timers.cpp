#include "datapath/transport/rc_timers.h"

#include <gtest/gtest.h>

namespace uroce::transport {
namespace {

TEST(RnrTimerNs, Table45Values) {
  EXPECT_EQ(rnr_timer_ns(0), 655'360 * kNsPerUs);
  EXPECT_EQ(rnr_timer_ns(1), 10 * kNsPerUs);
  EXPECT_EQ(rnr_timer_ns(14), 1'280 * kNsPerUs);
  EXPECT_EQ(rnr_timer_ns(18), 5'120 * kNsPerUs);
  EXPECT_EQ(rnr_timer_ns(31), 491'520 * kNsPerUs);
}

TEST(RnrTimerNs, OnlyLowFiveBitsCount) { EXPECT_EQ(rnr_timer_ns(0x21), rnr_timer_ns(1)); }

TEST(LocalAckTimeoutNs, ZeroIsInfinite) { EXPECT_EQ(local_ack_timeout_ns(0), 0u); }

TEST(LocalAckTimeoutNs, Is4096NsTimesPowerOfTwo) {
  EXPECT_EQ(local_ack_timeout_ns(1), 8'192u);
  EXPECT_EQ(local_ack_timeout_ns(14), 4'096ull << 14);  // 67.1 ms
  EXPECT_EQ(local_ack_timeout_ns(31), 4'096ull << 31);
}

}  // namespace
}  // namespace uroce::transport
