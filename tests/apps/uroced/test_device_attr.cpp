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
  EXPECT_EQ(a.max_cqe, (1 << 19) - 1);  // 2^19 slots (one kept empty): one arena chunk
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
  // Only capabilities uroce implements.
  EXPECT_NE(a.device_cap_flags & IBV_DEVICE_RC_RNR_NAK_GEN, 0);
  EXPECT_NE(a.device_cap_flags & IBV_DEVICE_SYS_IMAGE_GUID, 0);
  EXPECT_NE(a.device_cap_flags & IBV_DEVICE_PORT_ACTIVE_EVENT, 0);
  EXPECT_NE(a.device_cap_flags & IBV_DEVICE_UD_AV_PORT_ENFORCE, 0);
  EXPECT_EQ(a.device_cap_flags &
                (IBV_DEVICE_AUTO_PATH_MIG | IBV_DEVICE_SRQ_RESIZE | IBV_DEVICE_BAD_PKEY_CNTR |
                 IBV_DEVICE_BAD_QKEY_CNTR | IBV_DEVICE_N_NOTIFY_CQ | IBV_DEVICE_XRC),
            0);
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
  EXPECT_EQ(p.port_cap_flags, static_cast<std::uint32_t>(IBV_PORT_CM_SUP));
  EXPECT_EQ(p.pkey_tbl_len, 1);
  EXPECT_EQ(p.phys_state, 5);
  EXPECT_EQ(p.link_layer, IBV_LINK_LAYER_ETHERNET);
}

}  // namespace
}  // namespace uroce::daemon
