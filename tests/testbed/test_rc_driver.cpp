#include "testbed/rc_driver.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "engine_test_support.h"

namespace uroce::testbed {
namespace {

using testing::EnginePair;
using testing::path_to;

TEST(RcDriver_Send, PostedThroughRingsCompletesOnBothCqs) {
  EnginePair p;
  RcDriver& da = p.a.driver();
  RcDriver& db = p.b.driver();
  std::vector<std::uint8_t> src(3000);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(i * 7);
  std::vector<std::uint8_t> dst(3000, 0);
  std::uint32_t ka = 0, kb = 0;
  std::uint64_t ia = 0, ib = 0;
  ASSERT_EQ(da.reg_mr(src.data(), src.size(), &ka, &ia), 0);
  ASSERT_EQ(db.reg_mr(dst.data(), dst.size(), &kb, &ib), 0);
  EXPECT_EQ(ia, RcDriver::kIovaBase);  // not the heap address: runs repeat
  std::uint32_t ca = 0, cb = 0, qa = 0, qb = 0;
  ASSERT_EQ(da.create_cq(4, &ca), 0);
  ASSERT_EQ(db.create_cq(4, &cb), 0);
  ASSERT_EQ(da.create_qp(ca, 4, &qa), 0);
  ASSERT_EQ(db.create_qp(cb, 4, &qb), 0);
  ASSERT_EQ(da.connect(qa, path_to(p.b.config(), db.qpn(qb), 100, 200)), 0);
  ASSERT_EQ(db.connect(qb, path_to(p.a.config(), da.qpn(qa), 200, 100)), 0);
  ASSERT_EQ(db.post_recv(qb, 77, ib, 3000, kb), 0);
  RcSend wr;
  wr.wr_id = 5;
  wr.opcode = IB_UVERBS_WR_SEND;
  wr.addr = ia;
  wr.length = 3000;
  wr.lkey = ka;
  ASSERT_EQ(da.post_send(qa, wr), 0);
  p.settle(0);
  ib_uverbs_wc wc[4];
  ASSERT_EQ(da.poll_cq(ca, wc), 1u);
  EXPECT_EQ(wc[0].wr_id, 5u);
  EXPECT_EQ(wc[0].status, 0u);
  ASSERT_EQ(db.poll_cq(cb, wc), 1u);
  EXPECT_EQ(wc[0].wr_id, 77u);
  EXPECT_EQ(wc[0].byte_len, 3000u);
  EXPECT_EQ(dst, src);
  engine::QpStatus st;
  ASSERT_EQ(da.status(qa, &st), 0);
  EXPECT_EQ(st.rc.tx_requests, 3u);  // 1024-byte path MTU
  EXPECT_EQ(st.rc.tx_retransmits, 0u);
}

TEST(RcDriver_Errors, FullRingsAndBadHandles) {
  EnginePair p;
  RcDriver& d = p.a.driver();
  std::uint32_t cq = 0, qp = 0;
  ASSERT_EQ(d.create_cq(2, &cq), 0);
  ASSERT_EQ(d.create_qp(cq, 1, &qp), 0);
  EXPECT_EQ(d.create_qp(9, 1, &qp), EINVAL);
  EXPECT_EQ(d.connect(9, RcConnect{}), EINVAL);
  RcSend wr;
  wr.opcode = IB_UVERBS_WR_SEND;
  const std::uint32_t room = d.sq_room(qp);
  for (std::uint32_t i = 0; i < room; ++i) ASSERT_EQ(d.post_send(qp, wr), 0);
  EXPECT_EQ(d.post_send(qp, wr), EAGAIN);
  engine::QpStatus st;
  EXPECT_EQ(d.status(9, &st), EINVAL);
}

}  // namespace
}  // namespace uroce::testbed
