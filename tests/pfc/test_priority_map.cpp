#include "pfc/priority_map.h"

#include <gtest/gtest.h>

namespace uroce::pfc {
namespace {

TEST(PriorityMap_Defaults, ServiceLevelWrapsToEightPriorities) {
  PriorityMap m;
  EXPECT_EQ(m.priority_of_sl(0), 0);
  EXPECT_EQ(m.priority_of_sl(3), 3);
  EXPECT_EQ(m.priority_of_sl(11), 3);
  EXPECT_EQ(m.priority_of_sl(15), 7);
}

TEST(PriorityMap_Defaults, DscpClassSelectors) {
  PriorityMap m;
  EXPECT_EQ(m.dscp_of_priority(0), 0);
  EXPECT_EQ(m.dscp_of_priority(3), 24);
  EXPECT_EQ(m.dscp_of_priority(7), 56);
  EXPECT_EQ(m.priority_of_dscp(26), 3);  // RoCE's customary DSCP
  EXPECT_EQ(m.priority_of_dscp(48), 6);  // CNP
  EXPECT_EQ(m.priority_of_dscp(63), 7);
  EXPECT_EQ(m.tx_dscp_of_sl(3), 24);
  EXPECT_EQ(m.first_inconsistent_priority(), -1);
}

TEST(PriorityMap_TrafficClass, TopSixBitsAreDscp) {
  PriorityMap m;
  // tclass 0x6a = DSCP 26, ECN 2.
  EXPECT_EQ(m.priority_of_traffic_class(0x6a), 3);
  EXPECT_EQ(m.priority_of_traffic_class(0xc0), 6);
}

TEST(PriorityMap_Set, ConfiguredTablesAreUsed) {
  PriorityMap m;
  ASSERT_EQ(m.set_sl_priority(2, 5), PriorityMapError::kOk);
  ASSERT_EQ(m.set_priority_dscp(5, 46), PriorityMapError::kOk);
  ASSERT_EQ(m.set_dscp_priority(46, 5), PriorityMapError::kOk);
  EXPECT_EQ(m.priority_of_sl(2), 5);
  EXPECT_EQ(m.tx_dscp_of_sl(2), 46);
  EXPECT_EQ(m.priority_of_dscp(46), 5);
  EXPECT_EQ(m.first_inconsistent_priority(), -1);
}

TEST(PriorityMap_Set, OutOfRangeRefusedAndTableUnchanged) {
  PriorityMap m;
  EXPECT_EQ(m.set_sl_priority(16, 1), PriorityMapError::kBadServiceLevel);
  EXPECT_EQ(m.set_sl_priority(1, 8), PriorityMapError::kBadPriority);
  EXPECT_EQ(m.set_dscp_priority(64, 1), PriorityMapError::kBadDscp);
  EXPECT_EQ(m.set_dscp_priority(1, 8), PriorityMapError::kBadPriority);
  EXPECT_EQ(m.set_priority_dscp(8, 1), PriorityMapError::kBadPriority);
  EXPECT_EQ(m.set_priority_dscp(1, 64), PriorityMapError::kBadDscp);
  EXPECT_EQ(m.priority_of_sl(1), 1);
  EXPECT_EQ(m.priority_of_dscp(1), 0);
  EXPECT_EQ(m.dscp_of_priority(1), 8);
  EXPECT_EQ(priority_map_error_name(PriorityMapError::kBadDscp), "BadDscp");
}

TEST(PriorityMap_Consistency, TxDscpClassifiedElsewhereIsReported) {
  PriorityMap m;
  ASSERT_EQ(m.set_priority_dscp(4, 8), PriorityMapError::kOk);  // DSCP 8 -> prio 1
  EXPECT_EQ(m.first_inconsistent_priority(), 4);
}

}  // namespace
}  // namespace uroce::pfc
