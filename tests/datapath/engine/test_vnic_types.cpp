#include "datapath/engine/vnic_types.h"

#include <gtest/gtest.h>

namespace uroce::engine {
namespace {

TEST(ActiveMtuFor, FromEthernetMtu) {
  EXPECT_EQ(active_mtu_for(1500), wire::PathMtu::k1024);
  EXPECT_EQ(active_mtu_for(9000), wire::PathMtu::k4096);
  EXPECT_EQ(active_mtu_for(4096 + 57), wire::PathMtu::k2048);
  EXPECT_EQ(active_mtu_for(4096 + 58), wire::PathMtu::k4096);
  EXPECT_EQ(active_mtu_for(2048 + 58), wire::PathMtu::k2048);
  EXPECT_EQ(active_mtu_for(1024 + 57), wire::PathMtu::k512);
  EXPECT_EQ(active_mtu_for(300), wire::PathMtu::k256);
}

}  // namespace
}  // namespace uroce::engine
