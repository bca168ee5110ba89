#include "datapath/transport/qp_attr.h"

#include <gtest/gtest.h>
#include <infiniband/verbs.h>

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

TEST(QpType, DcValuesAreNoIbvQpType) {
  // A client's qp_type cast to QpType never names a DC type.
  for (int t : {IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD, IBV_QPT_RAW_PACKET, IBV_QPT_XRC_SEND,
                IBV_QPT_XRC_RECV, IBV_QPT_DRIVER}) {
    EXPECT_FALSE(is_dc(static_cast<QpType>(t))) << t;
  }
  EXPECT_TRUE(is_dc(QpType::kDci));
  EXPECT_TRUE(is_dc(QpType::kDct));
  EXPECT_EQ(static_cast<int>(QpType::kRc), IBV_QPT_RC);
  EXPECT_EQ(static_cast<int>(QpType::kUc), IBV_QPT_UC);
}

TEST(DciStreamsValid, Limits) {
  EXPECT_TRUE(dci_streams_valid(0, 0));  // one stream, errors move the DCI to ERR
  EXPECT_TRUE(dci_streams_valid(4, 4));  // 16 streams
  EXPECT_TRUE(dci_streams_valid(4, 1));
  EXPECT_FALSE(dci_streams_valid(5, 0));  // 32 streams: over the limit
  EXPECT_FALSE(dci_streams_valid(2, 3));  // more errored streams than streams
  EXPECT_FALSE(dci_streams_valid(0, 1));
  EXPECT_EQ(kMaxDciLogStreams, 4);
  EXPECT_EQ(kMaxDciLogErrored, 4);
}

}  // namespace
}  // namespace uroce::transport
