#include "datapath/base/time.h"

#include <gtest/gtest.h>

namespace uroce {
namespace {

TEST(VirtualClock_AdvanceTo, MovesForwardOnly) {
  VirtualClock c(100);
  c.advance_to(250);
  EXPECT_EQ(c.now(), 250u);
  c.advance_to(200);
  EXPECT_EQ(c.now(), 250u);
}

TEST(VirtualClock_AdvanceBy, AddsDelta) {
  VirtualClock c;
  c.advance_by(kNsPerUs);
  c.advance_by(5);
  EXPECT_EQ(c.now(), 1005u);
}

}  // namespace
}  // namespace uroce
