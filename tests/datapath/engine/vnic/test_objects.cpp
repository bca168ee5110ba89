// The Vnic's control path (datapath/engine/vnic/objects.h): destroying a QP
// leaves the others reachable, and its QPN unreachable; max_mrs
// registrations fit.
#include <gtest/gtest.h>

#include "tests/datapath/engine/vnic_test_support.h"

namespace uroce::engine::test {
namespace {

TEST_F(TwoHosts, DestroyQp_KeepsTheOtherQpsReachable) {
  auto acq = a.make_cq(1);  // A's QPs complete here
  auto bcq = b.make_cq(1);
  // B: three RC QPs; A: one QP towards the second and one towards the third.
  auto b1 = b.make_qp(11, QpType::kRc, 1, 1);
  auto b2 = b.make_qp(12, QpType::kRc, 1, 1);
  auto b3 = b.make_qp(13, QpType::kRc, 1, 1);
  auto a2 = a.make_qp(22, QpType::kRc, 1, 1);
  auto a3 = a.make_qp(23, QpType::kRc, 1, 1);
  a.connect(22, QpType::kRc, b2->qpn, kMacB, kIpB, 1, 1);
  b.connect(12, QpType::kRc, a2->qpn, kMacA, kIpA, 1, 1);
  a.connect(23, QpType::kRc, b3->qpn, kMacB, kIpB, 1, 1);
  b.connect(13, QpType::kRc, a3->qpn, kMacA, kIpA, 1, 1);
  // Destroying the first moves the last QP's bookkeeping into its place.
  ASSERT_EQ(b.vnic.destroy_qp(11), 0);
  EXPECT_EQ(b.vnic.destroy_qp(11), ENOENT);
  EXPECT_EQ(b.vnic.qp_count(), 2u);
  b3->post_recv(3, {b.sge(0, 64)});
  a3->post_send(send_wqe(30), {a.sge(0, 64)});
  run(30);
  const auto r = bcq->poll();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].wr_id, 3u);
  EXPECT_EQ(r[0].qp_num, b3->qpn);
  // And the second goes too: its QPN no longer reaches anything.
  ASSERT_EQ(b.vnic.destroy_qp(12), 0);
  const std::uint64_t no_qp = b.vnic.counters().rx_no_qp;
  a2->post_send(send_wqe(20), {a.sge(0, 64)});
  run(10);
  EXPECT_GT(b.vnic.counters().rx_no_qp, no_qp);
  std::vector<QpStatus> st;
  b.vnic.qp_status(&st);
  ASSERT_EQ(st.size(), 1u);
  EXPECT_EQ(st[0].qpn, b3->qpn);
  EXPECT_EQ(acq->poll().size(), 1u);  // the send to the third QP
}

TEST_F(TwoHosts, RegMr_DeviceMaxIsReachable) {
  // max_mrs (16) registrations, as ibv_device_attr.max_mr says; not one more.
  MrCreate m;
  m.desc = {a.kPd, 0x1000, 64, transport::access::kLocalWrite, a.mem.data()};
  int err = 0;
  while (a.vnic.mr_count() < 16) ASSERT_NE(a.vnic.reg_mr(m, &err), 0u) << a.vnic.mr_count();
  EXPECT_EQ(a.vnic.reg_mr(m, &err), 0u);
  EXPECT_EQ(err, ENOMEM);
}

}  // namespace
}  // namespace uroce::engine::test
