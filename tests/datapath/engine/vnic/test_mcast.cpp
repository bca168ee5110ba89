// UD multicast in the Vnic (vnic/mcast.h): host B's UD QPs 20 and 21 join
// a group, QP 22 does not; host A sends through an AH to the group's MAC
// and address with DestQP 0xFFFFFF. Each attached QP gets a copy, with its
// own QP number; the rest is dropped with its counter.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

#include "tests/datapath/engine/vnic_test_support.h"

namespace uroce::engine::test {
namespace {

constexpr std::uint32_t kQkey = 0x11111111;
const wire::Ipv4Addr kGroup{0xef010203};  // 239.1.2.3
const wire::Ipv6Addr kGroupGid{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 239, 1, 2, 3}};

struct McastHosts : TwoHosts {
  std::unique_ptr<ProvCq> acq, bcq20, bcq21, bcq22;
  std::unique_ptr<ProvQp> aqp, b20, b21, b22;
  void SetUp() override {
    acq = a.make_cq(1);
    bcq20 = b.make_cq(20);
    bcq21 = b.make_cq(21);
    bcq22 = b.make_cq(22);
    aqp = a.make_qp(10, QpType::kUd, 1, 1);
    b20 = b.make_qp(20, QpType::kUd, 20, 20);
    b21 = b.make_qp(21, QpType::kUd, 21, 21);
    b22 = b.make_qp(22, QpType::kUd, 22, 22);
    a.ud_up(10, kQkey);
    for (ObjId id : {20, 21, 22}) b.ud_up(id, kQkey);
    AhCreate h;
    h.id = 5;
    h.client = Host::kClient;
    h.pd = Host::kPd;
    h.dmac = kGroup.multicast_mac();
    h.dip = kGroup;
    ASSERT_EQ(a.vnic.create_ah(h), 0);
  }
  // A SEND of `len` bytes to the group (DestQP 0xFFFFFF) with `qkey`.
  void send_to_group(std::uint64_t id, std::uint32_t len, std::uint32_t qkey = kQkey) {
    shm::SendWqeFields f = wqe(id, IBV_WR_SEND);
    f.remote_qpn = wire::kMulticastQpn;
    f.remote_qkey = qkey;
    f.ah_num = 5;
    aqp->post_send(f, {a.sge(0, len)});
    run(10);
  }
};

TEST_F(McastHosts, AttachMcast_EveryAttachedQpReceivesACopy) {
  ASSERT_EQ(b.vnic.attach_mcast(20, kGroupGid), 0);
  ASSERT_EQ(b.vnic.attach_mcast(21, kGroupGid), 0);
  EXPECT_EQ(b.vnic.mcast_groups(), 1u);
  b20->post_recv(1, {b.sge(0, 40 + 256)});
  b21->post_recv(2, {b.sge(1024, 40 + 256)});
  b22->post_recv(3, {b.sge(2048, 40 + 256)});
  send_to_group(7, 256);
  const auto r20 = bcq20->poll();
  const auto r21 = bcq21->poll();
  ASSERT_EQ(r20.size(), 1u);
  ASSERT_EQ(r21.size(), 1u);
  EXPECT_EQ(st(r20[0]), WcStatus::kSuccess);
  EXPECT_EQ(r20[0].qp_num, b20->qpn);
  EXPECT_EQ(r21[0].qp_num, b21->qpn);
  EXPECT_EQ(r20[0].src_qp, aqp->qpn);
  EXPECT_EQ(r21[0].byte_len, 40u + 256u);
  EXPECT_EQ(std::memcmp(b.mem.data() + 40, a.mem.data(), 256), 0);
  EXPECT_EQ(std::memcmp(b.mem.data() + 1024 + 40, a.mem.data(), 256), 0);
  EXPECT_TRUE(bcq22->poll().empty());
  EXPECT_EQ(b.vnic.counters().rx_mcast, 1u);
  EXPECT_EQ(b.vnic.counters().rx_dispatched, 2u);
  EXPECT_EQ(b.vnic.counters().rx_mcast_drop, 0u);
}

TEST_F(McastHosts, AttachMcast_RefusesWhatRxeRefuses) {
  EXPECT_EQ(b.vnic.attach_mcast(99, kGroupGid), ENOENT);
  const wire::Ipv6Addr unicast{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2}};
  EXPECT_EQ(b.vnic.attach_mcast(20, unicast), EINVAL);
  ASSERT_EQ(b.vnic.attach_mcast(20, kGroupGid), 0);
  EXPECT_EQ(b.vnic.attach_mcast(20, kGroupGid), EEXIST);
  EXPECT_EQ(b.vnic.detach_mcast(21, kGroupGid), EINVAL);
  auto rc = b.make_qp(30, QpType::kRc, 20, 20);
  EXPECT_EQ(b.vnic.attach_mcast(30, kGroupGid), EINVAL);
}

TEST_F(McastHosts, DetachMcast_StopsDeliveryAndDropsAnEmptyGroup) {
  ASSERT_EQ(b.vnic.attach_mcast(20, kGroupGid), 0);
  ASSERT_EQ(b.vnic.attach_mcast(21, kGroupGid), 0);
  ASSERT_EQ(b.vnic.detach_mcast(21, kGroupGid), 0);
  b20->post_recv(1, {b.sge(0, 40 + 64)});
  b21->post_recv(2, {b.sge(1024, 40 + 64)});
  send_to_group(7, 64);
  EXPECT_EQ(bcq20->poll().size(), 1u);
  EXPECT_TRUE(bcq21->poll().empty());
  ASSERT_EQ(b.vnic.detach_mcast(20, kGroupGid), 0);
  EXPECT_EQ(b.vnic.mcast_groups(), 0u);
  // No group left: a group frame is not ours, as before any attach.
  send_to_group(8, 64);
  EXPECT_EQ(b.vnic.counters().rx_not_our_mac, 1u);
  EXPECT_EQ(b.vnic.counters().rx_mcast, 1u);
}

TEST_F(McastHosts, MulticastRx_OtherGroupAndWrongQkeyAreDropped) {
  const wire::Ipv6Addr other{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 239, 9, 9, 9}};
  ASSERT_EQ(b.vnic.attach_mcast(20, other), 0);
  b20->post_recv(1, {b.sge(0, 40 + 64)});
  send_to_group(7, 64);  // a group B has no QP in
  EXPECT_EQ(b.vnic.counters().rx_mcast_drop, 1u);
  ASSERT_EQ(b.vnic.attach_mcast(20, kGroupGid), 0);
  send_to_group(8, 64, kQkey + 1);  // the QP's Q_Key check drops it
  EXPECT_EQ(b.vnic.counters().rx_mcast, 1u);
  EXPECT_TRUE(bcq20->poll().empty());
  send_to_group(9, 64);
  EXPECT_EQ(bcq20->poll().size(), 1u);
}

TEST_F(McastHosts, DestroyQp_LeavesItsGroups) {
  ASSERT_EQ(b.vnic.attach_mcast(20, kGroupGid), 0);
  ASSERT_EQ(b.vnic.destroy_qp(20), 0);
  EXPECT_EQ(b.vnic.mcast_groups(), 0u);
  send_to_group(7, 64);
  EXPECT_EQ(b.vnic.counters().rx_not_our_mac, 1u);
}

}  // namespace
}  // namespace uroce::engine::test
