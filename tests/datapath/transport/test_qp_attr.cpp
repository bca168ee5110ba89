#include "datapath/transport/qp_attr.h"

#include <gtest/gtest.h>

namespace uroce::transport {
namespace {

TEST(QpStateName, NamesEveryState) {
  const char* want[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};
  for (int s = 0; s < kNumQpStates; ++s)
    EXPECT_STREQ(qp_state_name(static_cast<QpState>(s)), want[s]);
  EXPECT_STREQ(qp_state_name(static_cast<QpState>(9)), "?");
}

TEST(QpAttrValues, MatchVerbsAbi) {
  // ibv_qp_state / ibv_qp_type / ibv_qp_attr_mask values of libibverbs.
  EXPECT_EQ(static_cast<int>(QpState::kRts), 3);
  EXPECT_EQ(static_cast<int>(QpType::kUd), 4);
  EXPECT_EQ(qp_attr::kDestQpn, 1u << 20);
  EXPECT_EQ(qp_attr::kSqPsn, 1u << 16);
}

}  // namespace
}  // namespace uroce::transport
