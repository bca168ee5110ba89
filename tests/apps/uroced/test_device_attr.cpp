#include "apps/uroced/device_attr.h"

#include <gtest/gtest.h>

#include <cstring>

#include "tests/apps/uroced/fake_device.h"

namespace uroce::daemon {
namespace {

using testing::FakeDevice;

TEST(DeviceAttr, ValuesFromConfigAndLimits) {
  FakeDevice d("uroce0", 9000, 0x01);
  const ibv_device_attr a = device_attr(d);
  EXPECT_STREQ(a.fw_ver, "uroce " UROCE_VERSION);
  EXPECT_EQ(a.node_guid, node_guid_be(d.config().mac));
  EXPECT_EQ(a.sys_image_guid, a.node_guid);
  EXPECT_EQ(a.vendor_id, 0xFFFFFFu);
  EXPECT_EQ(a.max_qp, 1024);
  EXPECT_EQ(a.max_qp_wr, 16384);
  EXPECT_EQ(a.max_sge, 32);
  EXPECT_EQ(a.max_cq, 1024);
  EXPECT_EQ(a.max_cqe, 65535);
  EXPECT_EQ(a.max_mr, 4096);
  EXPECT_EQ(a.max_qp_rd_atom, 16);
  EXPECT_EQ(a.max_qp_init_rd_atom, 16);
  EXPECT_EQ(a.atomic_cap, IBV_ATOMIC_HCA);
  EXPECT_EQ(a.max_srq, 256);
  EXPECT_EQ(a.max_srq_wr, 16384);
  EXPECT_EQ(a.max_ah, 4096);
  EXPECT_EQ(a.max_pkeys, 1);
  EXPECT_EQ(a.phys_port_cnt, 1);
  EXPECT_EQ(a.page_size_cap, 4096u);
  EXPECT_EQ(a.max_mr_size, kMaxMrBytes);
}

TEST(PortAttr, ActiveMtuFromEthernetMtu) {
  EXPECT_EQ(port_attr(FakeDevice("a", 9000)).active_mtu, IBV_MTU_4096);
  EXPECT_EQ(port_attr(FakeDevice("a", 1500)).active_mtu, IBV_MTU_1024);
  EXPECT_EQ(port_attr(FakeDevice("a", 4160)).active_mtu, IBV_MTU_4096);
  EXPECT_EQ(port_attr(FakeDevice("a", 4154)).active_mtu, IBV_MTU_2048);
  EXPECT_EQ(port_attr(FakeDevice("a", 4153)).active_mtu, IBV_MTU_2048);
  const ibv_port_attr p = port_attr(FakeDevice("a", 1500));
  EXPECT_EQ(p.state, IBV_PORT_ACTIVE);
  EXPECT_EQ(p.max_mtu, IBV_MTU_4096);
  EXPECT_EQ(p.gid_tbl_len, 16);
  EXPECT_EQ(p.max_msg_sz, 1u << 31);
  EXPECT_EQ(p.pkey_tbl_len, 1);
  EXPECT_EQ(p.phys_state, 5);
  EXPECT_EQ(p.link_layer, IBV_LINK_LAYER_ETHERNET);
}

}  // namespace
}  // namespace uroce::daemon
