#include "sched/homa_settings.h"

#include <gtest/gtest.h>

#include <vector>

namespace uroce::sched::homa {
namespace {

// Settings that pass first_bad_field() must let the scheduler grant a long
// message once its unscheduled bytes arrived; those that cannot are refused.
std::size_t grants_after_unscheduled(const HomaSettings& s) {
  GrantScheduler g(s.grant_config());
  std::vector<Grant> out;
  g.on_data(1, 7, 1'000'000, s.unsched_bytes, 0);
  g.poll(0, &out);
  return out.size();
}

TEST(HomaSettings, FirstBadField_DefaultsAreUsable) {
  const HomaSettings s;
  EXPECT_EQ(s.first_bad_field(), "");
  EXPECT_EQ(grants_after_unscheduled(s), 1u);
}

TEST(HomaSettings, FirstBadField_RttBytesBelowTheGrantIncrementNeverGrants) {
  HomaSettings s;
  s.rtt_bytes = s.grant_increment - 1;
  EXPECT_EQ(grants_after_unscheduled(s), 0u);
  EXPECT_EQ(s.first_bad_field(), "homa_rtt_bytes");
  s.rtt_bytes = s.grant_increment;
  EXPECT_EQ(s.first_bad_field(), "");
  EXPECT_EQ(grants_after_unscheduled(s), 1u);
}

TEST(HomaSettings, FirstBadField_MaxIncomingBelowTheGrantIncrementNeverGrants) {
  HomaSettings s;
  s.max_incoming = s.grant_increment - 1;
  EXPECT_EQ(grants_after_unscheduled(s), 0u);
  EXPECT_EQ(s.first_bad_field(), "homa_max_incoming");
  s.max_incoming = s.grant_increment;
  EXPECT_EQ(s.first_bad_field(), "");
  EXPECT_EQ(grants_after_unscheduled(s), 1u);
}

TEST(HomaSettings, FirstBadField_ZeroIncrementStillNeedsABytePerGrant) {
  HomaSettings s;
  s.grant_increment = 0;
  s.rtt_bytes = 0;
  EXPECT_EQ(s.first_bad_field(), "homa_rtt_bytes");
  s.rtt_bytes = 1;
  s.max_incoming = 0;
  EXPECT_EQ(s.first_bad_field(), "homa_max_incoming");
}

}  // namespace
}  // namespace uroce::sched::homa
