#include "datapath/base/yield_policy.h"

#include <gtest/gtest.h>

namespace uroce {
namespace {

YieldPolicyConfig small() { return YieldPolicyConfig{2, 10 * kNsPerUs, 1500}; }

TEST(YieldPolicy_Idle, SpinsBeforeTheFirstYield) {
  YieldPolicy p(small());
  EXPECT_FALSE(p.idle());
  EXPECT_FALSE(p.idle());
  EXPECT_TRUE(p.idle());
  // Work starts the spins over.
  p.worked();
  EXPECT_FALSE(p.idle());
  EXPECT_FALSE(p.idle());
  EXPECT_TRUE(p.idle());
}

TEST(YieldPolicy_Due, AloneProbesOncePerPeriod) {
  YieldPolicy p(small());
  const TimeNs start = 100 * kNsPerUs;
  ASSERT_TRUE(p.due(start));
  EXPECT_FALSE(p.yielded(start, start + 300));
  // Quick yields leave the CPU uncontended: the next probe is one period
  // after the last yield ended, not before.
  EXPECT_FALSE(p.due(start + 300 + 10 * kNsPerUs - 1));
  EXPECT_TRUE(p.due(start + 300 + 10 * kNsPerUs));
  EXPECT_FALSE(p.contended());
}

TEST(YieldPolicy_Yielded, ALongYieldMakesEveryIdlePollYield) {
  YieldPolicy p(small());
  EXPECT_TRUE(p.yielded(0, 1500));
  EXPECT_TRUE(p.contended());
  EXPECT_TRUE(p.due(1501));
  // Just under the switch time is a yield alone.
  EXPECT_FALSE(p.yielded(2000, 3499));
}

// The kernel's word decides a quick yield: switched out, it ran another
// thread however short it was (a fast switch there and back).
TEST(YieldPolicy_Yielded, AQuickYieldTheKernelSwitchedIsContention) {
  YieldPolicy p(small());
  EXPECT_TRUE(p.yielded(0, 300, true));
  EXPECT_TRUE(p.contended());
  TimeNs t = 400;
  for (std::uint32_t i = 0; i < 3 * YieldPolicy::kFastYields; ++i, t += 400) {
    EXPECT_TRUE(p.yielded(t, t + 300, true));
  }
  EXPECT_TRUE(p.contended());
  EXPECT_TRUE(p.due(t));
  // Quick yields that ran nobody end it as before.
  for (std::uint32_t i = 0; i < YieldPolicy::kFastYields; ++i, t += 400)
    p.yielded(t, t + 300, false);
  EXPECT_FALSE(p.contended());
}

// The kernel is asked only for a yield quicker than switch_ns.
TEST(YieldPolicy_Yielded, AsksTheKernelOnlyForAQuickYield) {
  YieldPolicy p(small());
  int asked = 0;
  const auto ask = [&] {
    ++asked;
    return false;
  };
  EXPECT_TRUE(p.yielded(1000, 2500, ask));
  EXPECT_EQ(asked, 0);
  EXPECT_FALSE(p.yielded(3000, 4499, ask));
  EXPECT_EQ(asked, 1);
}

TEST(YieldPolicy_Yielded, EightQuickYieldsEndTheContention) {
  YieldPolicy p(small());
  p.yielded(0, 3000);
  TimeNs t = 3000;
  for (std::uint32_t i = 0; i + 1 < YieldPolicy::kFastYields; ++i, t += 400) {
    EXPECT_FALSE(p.yielded(t, t + 300));
    EXPECT_TRUE(p.contended()) << "after " << i + 1 << " quick yields";
  }
  EXPECT_FALSE(p.yielded(t, t + 300));
  EXPECT_FALSE(p.contended());
  EXPECT_FALSE(p.due(t + 400));
}

TEST(YieldPolicy_Yielded, ALongYieldStartsTheQuickCountOver) {
  YieldPolicy p(small());
  p.yielded(0, 3000);
  TimeNs t = 3000;
  for (std::uint32_t i = 0; i + 1 < YieldPolicy::kFastYields; ++i, t += 400) p.yielded(t, t + 300);
  EXPECT_TRUE(p.yielded(t, t + 2000));
  for (std::uint32_t i = 0; i + 1 < YieldPolicy::kFastYields; ++i, t += 400) p.yielded(t, t + 300);
  EXPECT_TRUE(p.contended());
}

TEST(YieldPolicy_Config, DefaultsAreTheDaemonsOwn) {
  const YieldPolicyConfig c{};
  EXPECT_EQ(c.spins, 16u);
  EXPECT_EQ(c.probe_ns, 50 * kNsPerUs);
  EXPECT_EQ(c.switch_ns, 1500u);
}

}  // namespace
}  // namespace uroce
