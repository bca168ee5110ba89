#include "apps/uroced/rate_limiter.h"

#include <gtest/gtest.h>

namespace uroce::daemon {
namespace {

TEST(RateLimiter_Allow, BurstPerWindowThenSuppressed) {
  RateLimiter r(3, kNsPerSec);
  std::uint64_t s = 99;
  EXPECT_TRUE(r.allow(0, &s));
  EXPECT_EQ(s, 0u);
  EXPECT_TRUE(r.allow(1, &s));
  EXPECT_TRUE(r.allow(2, &s));
  EXPECT_FALSE(r.allow(3, &s));
  EXPECT_FALSE(r.allow(kNsPerSec - 1, &s));
  // A new window: allowed again, and told how many were held back.
  EXPECT_TRUE(r.allow(kNsPerSec, &s));
  EXPECT_EQ(s, 2u);
  EXPECT_TRUE(r.allow(kNsPerSec + 1, &s));
  EXPECT_EQ(s, 0u);
}

TEST(RateLimiter_Allow, QuietSourceNeverLimited) {
  RateLimiter r(1, kNsPerSec);
  std::uint64_t s = 0;
  for (TimeNs t = 0; t < 10 * kNsPerSec; t += kNsPerSec) {
    EXPECT_TRUE(r.allow(t, &s));
    EXPECT_EQ(s, 0u);
  }
}

}  // namespace
}  // namespace uroce::daemon
