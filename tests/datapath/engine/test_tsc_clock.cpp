#include "datapath/engine/tsc_clock.h"

#include <gtest/gtest.h>

namespace uroce::engine {
namespace {

TEST(TscClock_ToNs, ConvertsCyclesSinceTheOrigin) {
  const TscClock c(2'000'000'000, 1000);  // 2 GHz
  EXPECT_EQ(c.to_ns(1000), 0u);
  EXPECT_EQ(c.to_ns(1000 + 2'000'000'000), kNsPerSec);
  EXPECT_EQ(c.to_ns(1000 + 3000), 1500u);
}

TEST(TscClock_ToNs, BeforeTheOriginIsZero) {
  const TscClock c(1'000'000'000, 5000);
  EXPECT_EQ(c.to_ns(4000), 0u);
}

TEST(TscClock_ToNs, NoOverflowAfterAYear) {
  const std::uint64_t hz = 3'000'000'000;
  const TscClock c(hz, 0);
  const std::uint64_t year_s = 365ull * 24 * 3600;
  const TimeNs ns = c.to_ns(hz * year_s);
  EXPECT_NEAR(static_cast<double>(ns), static_cast<double>(year_s * kNsPerSec),
              1e-6 * static_cast<double>(year_s * kNsPerSec));
}

TEST(TscClock_Now, MovesForwardWithEalsCalibration) {
  const TscClock c = TscClock::from_eal();
  const TimeNs a = c.now();
  rte_delay_us_block(1000);
  const TimeNs b = c.now();
  EXPECT_GE(b - a, 900 * kNsPerUs);
  EXPECT_LT(b - a, 500 * kNsPerMs);
}

}  // namespace
}  // namespace uroce::engine
