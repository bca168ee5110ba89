#include <gtest/gtest.h>

#include <vector>

#include "engine_test_support.h"
#include "testbed/rc_driver.h"

namespace uroce::testbed {
namespace {

using testing::EnginePair;

// A DCI on a (4 streams), a DCT on b's SRQ: one SEND with immediate goes
// through the WQE's DC block and the AH, lands in the SRQ's receive, and
// both objects show their kind and state.
TEST(RcDriverDc_Send, DciToDctThroughSrqAndAh) {
  EnginePair p;
  RcDriver& da = p.a.driver();
  RcDriver& db = p.b.driver();
  std::vector<std::uint8_t> src(2000, 0x5a);
  std::vector<std::uint8_t> dst(2000, 0);
  std::uint32_t ka = 0, kb = 0;
  std::uint64_t ia = 0, ib = 0;
  ASSERT_EQ(da.reg_mr(src.data(), src.size(), &ka, &ia), 0);
  ASSERT_EQ(db.reg_mr(dst.data(), dst.size(), &kb, &ib), 0);
  std::uint32_t ca = 0, cb = 0, srq = 0, dci = 0, dct = 0, ah = 0;
  ASSERT_EQ(da.create_cq(4, &ca), 0);
  ASSERT_EQ(db.create_cq(4, &cb), 0);
  ASSERT_EQ(db.create_srq(4, &srq), 0);
  ASSERT_EQ(da.create_dci(ca, 4, 2, DciConnect{}, &dci), 0);
  ASSERT_EQ(db.create_dct(cb, srq, 0xabcdef, wire::PathMtu::k1024, 24, 1, &dct), 0);
  ASSERT_EQ(da.create_ah(p.b.config().mac, p.b.config().ip, 24, 64, &ah), 0);
  ASSERT_EQ(db.post_srq_recv(srq, 9, ib, 2000, kb), 0);
  RcSend wr;
  wr.wr_id = 3;
  wr.opcode = IB_UVERBS_WR_SEND_WITH_IMM;
  wr.addr = ia;
  wr.length = 2000;
  wr.lkey = ka;
  wr.imm = 0x01020304;
  ASSERT_EQ(da.post_dc_send(dci, wr, DcTarget{ah, db.qpn(dct), 0xabcdef, 3}), 0);
  p.settle(0);
  ib_uverbs_wc wc[4];
  ASSERT_EQ(da.poll_cq(ca, wc), 1u);
  EXPECT_EQ(wc[0].wr_id, 3u);
  EXPECT_EQ(wc[0].status, 0u);
  ASSERT_EQ(db.poll_cq(cb, wc), 1u);
  EXPECT_EQ(wc[0].wr_id, 9u);
  EXPECT_EQ(wc[0].byte_len, 2000u);
  EXPECT_EQ(wc[0].ex.imm_data, 0x01020304u);
  EXPECT_EQ(dst, src);
  engine::QpStatus st;
  ASSERT_EQ(da.status(dci, &st), 0);
  EXPECT_EQ(st.type, transport::QpType::kDci);
  EXPECT_EQ(st.state, transport::QpState::kRts);
  ASSERT_EQ(st.dci_streams.size(), 4u);
  EXPECT_EQ(st.dci_streams[3].ctr.connects, 1u);
  ASSERT_EQ(db.status(dct, &st), 0);
  EXPECT_EQ(st.type, transport::QpType::kDct);
  EXPECT_EQ(st.state, transport::QpState::kRtr);
  EXPECT_EQ(st.dct.rx_requests, 2u);  // 1,024-byte DC path MTU at eth_mtu 9000: two packets
  ASSERT_NE(db.vnic().dc_pool(), nullptr);
  EXPECT_EQ(db.vnic().dc_pool()->table().counters().opened, 1u);
}

// A DCT has no SQ and a DCI no RQ: posting to the missing ring is refused
// before any ring is touched; bad indices too.
TEST(RcDriverDc_Errors, MissingRingsAndBadHandles) {
  EnginePair p;
  RcDriver& d = p.a.driver();
  std::uint32_t cq = 0, srq = 0, dci = 0, dct = 0;
  ASSERT_EQ(d.create_cq(4, &cq), 0);
  ASSERT_EQ(d.create_srq(2, &srq), 0);
  ASSERT_EQ(d.create_dci(cq, 2, 0, DciConnect{}, &dci), 0);
  ASSERT_EQ(d.create_dct(cq, srq, 1, wire::PathMtu::k1024, 0, 1, &dct), 0);
  RcSend wr;
  wr.opcode = IB_UVERBS_WR_SEND;
  EXPECT_EQ(d.post_dc_send(dct, wr, DcTarget{}), EINVAL);
  EXPECT_EQ(d.post_recv(dci, 1, 0, 0, 0), EINVAL);
  EXPECT_EQ(d.post_dc_send(9, wr, DcTarget{}), EINVAL);
  EXPECT_EQ(d.post_srq_recv(9, 1, 0, 0, 0), EINVAL);
  EXPECT_EQ(d.create_dct(cq, 9, 1, wire::PathMtu::k1024, 0, 1, &dct), EINVAL);
  EXPECT_EQ(d.create_dci(9, 2, 0, DciConnect{}, &dci), EINVAL);
  // Five streams' worth is beyond the DCI's limit (16 streams).
  EXPECT_EQ(d.create_dci(cq, 2, 5, DciConnect{}, &dci), EINVAL);
}

}  // namespace
}  // namespace uroce::testbed
