#include "apps/uroced/cm_handles.h"

#include <gtest/gtest.h>

#include <set>

namespace uroce::daemon {
namespace {

TEST(CmHandles_Take, CountsUpFromTheFirst) {
  CmHandles h;
  const auto none = [](std::uint32_t) { return false; };
  EXPECT_EQ(h.take(none), 1u);
  EXPECT_EQ(h.take(none), 2u);
  EXPECT_EQ(h.take(none), 3u);
}

// After the wrap, the numbers still in use and 0 are skipped: a live id's
// handle is never given to a new one.
TEST(CmHandles_Take, SkipsZeroAndLiveNumbersAfterTheWrap) {
  CmHandles h(0xfffffffeu);
  const std::set<std::uint32_t> live{0xffffffffu, 1, 2, 4};
  const auto in_use = [&](std::uint32_t n) { return live.contains(n); };
  EXPECT_EQ(h.take(in_use), 0xfffffffeu);
  EXPECT_EQ(h.take(in_use), 3u);
  EXPECT_EQ(h.take(in_use), 5u);
}

}  // namespace
}  // namespace uroce::daemon
