// ClientSession's CQ, QP, SRQ and AH handlers (session_queues.cpp).
#include <algorithm>

#include "tests/apps/uroced/session_test_support.h"

namespace uroce::daemon {
namespace {

TEST_F(ClientSessionTest, CreateCq_AbsurdCqe_Einval) {
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  ctl::CreateCqReq r{};
  r.cqe = 1u << 30;
  EXPECT_EQ(a_.call(Op::kCreateCq, r).status, EINVAL);
  r.cqe = 0;
  EXPECT_EQ(a_.call(Op::kCreateCq, r).status, EINVAL);
  r.cqe = kMaxCqe + 1;
  EXPECT_EQ(a_.call(Op::kCreateCq, r).status, EINVAL);
  r.cqe = 16;
  r.comp_vector = 1;  // one completion vector only
  EXPECT_EQ(a_.call(Op::kCreateCq, r).status, EINVAL);
  r.comp_vector = 0;
  r.channel_handle = 12345;  // no such channel
  EXPECT_EQ(a_.call(Op::kCreateCq, r).status, ENOENT);
  expect_still_served(b_);
}

// ibv_device_attr.max_cqe is the largest CQ one arena chunk holds: a CQ of
// exactly that many entries is created and resized to, and so is the
// 65,536 CQEs libfabric's rxm asks for at its defaults.
TEST_F(ClientSessionTest, CreateCq_MaxCqeIsReachable) {
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  ctl::CreateCqReq r{};
  r.cqe = kMaxCqe;
  Reply rep = a_.call(Op::kCreateCq, r);
  ASSERT_EQ(rep.status, 0);
  const auto c = rep.as<ctl::CreateCqRep>();
  EXPECT_EQ(c.cqe, kMaxCqe);
  EXPECT_EQ(c.log2_slots, kMaxCqLog2Slots);
  r.cqe = 65536;
  rep = a_.call(Op::kCreateCq, r);
  ASSERT_EQ(rep.status, 0);
  const auto small = rep.as<ctl::CreateCqRep>();
  EXPECT_EQ(small.cqe, (1u << 17) - 1);
  ctl::ResizeCqReq rz{};
  rz.cq_handle = small.cq_handle;
  rz.cqe = kMaxCqe;
  rep = a_.call(Op::kResizeCq, rz);
  ASSERT_EQ(rep.status, 0);
  EXPECT_EQ(rep.as<ctl::ResizeCqRep>().cqe, kMaxCqe);
  rz.cqe = kMaxCqe + 1;
  EXPECT_EQ(a_.call(Op::kResizeCq, rz).status, EINVAL);
}

TEST_F(ClientSessionTest, CreateCq_RingRegionSharedWithClient) {
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  ctl::CreateCqReq r{};
  r.cqe = 100;
  r.user_handle = 0x1234;
  Reply rep = a_.call(Op::kCreateCq, r);
  ASSERT_EQ(rep.status, 0);
  EXPECT_EQ(rep.fds.size(), 0u);  // the ring is in the arena Hello sent
  const auto c = rep.as<ctl::CreateCqRep>();
  EXPECT_EQ(c.cqe, 127u);  // 128 slots, one kept empty
  EXPECT_EQ(c.log2_slots, 7u);
  EXPECT_EQ(1u << c.log2_elem_size, 64u);  // ib_uverbs_wc (48) rounded up
  EXPECT_EQ(c.ring_bytes, 384u + 128u * 64u);
  EXPECT_EQ(c.region_bytes % 4096, 0u);
  EXPECT_GE(c.region_bytes, c.ring_bytes + ctl::kCqNotifyBytes);
  EXPECT_EQ(c.region_offset % 4096, 0u);
  void* m = a_.in_arena(c.region_offset, c.region_bytes);
  ASSERT_NE(m, nullptr);
  shm::RingGeometry g;
  EXPECT_EQ(shm::read_geometry(m, c.ring_bytes, &g), shm::RingError::kOk);
  EXPECT_EQ(g.log2_slots, c.log2_slots);
  EXPECT_EQ(a_.call(Op::kDestroyCq, ctl::DestroyCqReq{c.cq_handle, 0}).status, 0);
  EXPECT_EQ(a_.call(Op::kDestroyCq, ctl::DestroyCqReq{c.cq_handle, 0}).status, ENOENT);
  // The region went back to the arena: the next CQ of that size gets it,
  // with a fresh ring.
  const auto again = a_.call(Op::kCreateCq, r).as<ctl::CreateCqRep>();
  EXPECT_EQ(again.region_offset, c.region_offset);
  EXPECT_EQ(shm::read_geometry(m, again.ring_bytes, &g), shm::RingError::kOk);
}

// Create and destroy in a loop: the arena's extents are reused, so the
// offsets stay within what the first round used.
TEST_F(ClientSessionTest, CreateDestroy_ReusesArenaSpace) {
  const Reply h = a_.hello("uroce0");
  ASSERT_EQ(h.status, 0);
  ASSERT_EQ(h.fds.size(), 1u);
  const auto hello = h.as<ctl::HelloRep>();
  EXPECT_EQ(hello.doorbell_offset, 0u);
  EXPECT_GT(hello.arena_chunk_bytes, 0u);
  const std::uint32_t pd = a_.alloc_pd();
  std::uint64_t highest = 0;
  for (int round = 0; round < 50; ++round) {
    ctl::CreateCqReq cr{};
    cr.cqe = 256;
    const auto cq = a_.call(Op::kCreateCq, cr).as<ctl::CreateCqRep>();
    ctl::CreateQpReq q{};
    q.pd_handle = pd;
    q.send_cq_handle = cq.cq_handle;
    q.recv_cq_handle = cq.cq_handle;
    q.qp_type = IBV_QPT_RC;
    q.cap = {64, 64, 2, 2, 64};
    const Reply qr = a_.call(Op::kCreateQp, q);
    ASSERT_EQ(qr.status, 0);
    const auto qp = qr.as<ctl::CreateQpRep>();
    const std::uint64_t top = std::max({cq.region_offset + cq.region_bytes,
                                        qp.sq_offset + qp.sq_bytes, qp.rq_offset + qp.rq_bytes});
    if (round == 0) highest = top;
    EXPECT_LE(top, highest) << "round " << round;
    ASSERT_EQ(a_.call(Op::kDestroyQp, ctl::DestroyQpReq{qp.qp_handle, 0}).status, 0);
    ASSERT_EQ(a_.call(Op::kDestroyCq, ctl::DestroyCqReq{cq.cq_handle, 0}).status, 0);
  }
}

TEST_F(ClientSessionTest, ResizeCq_NewRegion) {
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  ctl::CreateCqReq r{};
  r.cqe = 16;
  const std::uint32_t cq = a_.call(Op::kCreateCq, r).as<ctl::CreateCqRep>().cq_handle;
  Reply rep = a_.call(Op::kResizeCq, ctl::ResizeCqReq{cq, 64});
  ASSERT_EQ(rep.status, 0);
  EXPECT_EQ(rep.fds.size(), 0u);  // a new region in the arena, no fd
  const auto c = rep.as<ctl::ResizeCqRep>();
  EXPECT_EQ(c.cq_handle, cq);
  EXPECT_EQ(c.cqe, 127u);
  EXPECT_NE(a_.in_arena(c.region_offset, c.region_bytes), nullptr);
  EXPECT_EQ(a_.call(Op::kResizeCq, ctl::ResizeCqReq{cq, 0}).status, EINVAL);
  EXPECT_EQ(a_.call(Op::kResizeCq, ctl::ResizeCqReq{cq, 1u << 20}).status, EINVAL);
  EXPECT_EQ(b_.call(Op::kResizeCq, ctl::ResizeCqReq{cq, 64}).status, ENOENT);
  EXPECT_EQ(a_.call(Op::kDestroyCq, ctl::DestroyCqReq{cq, 0}).status, 0);
}

TEST_F(ClientSessionTest, Srq_CreateModifyQueryDestroy) {
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  ctl::CreateSrqReq r{};
  r.pd_handle = a_.alloc_pd();
  r.attr = {100, 2, 10};
  ctl::CreateSrqReq bad = r;
  bad.attr.max_wr = 0;
  EXPECT_EQ(a_.call(Op::kCreateSrq, bad).status, EINVAL);
  bad = r;
  bad.attr.srq_limit = 101;
  EXPECT_EQ(a_.call(Op::kCreateSrq, bad).status, EINVAL);
  bad = r;
  bad.attr.max_sge = 33;
  EXPECT_EQ(a_.call(Op::kCreateSrq, bad).status, EINVAL);
  Reply rep = a_.call(Op::kCreateSrq, r);
  ASSERT_EQ(rep.status, 0);
  EXPECT_EQ(rep.fds.size(), 0u);
  const auto s = rep.as<ctl::CreateSrqRep>();
  EXPECT_NE(a_.in_arena(s.rq_offset, s.rq_bytes), nullptr);
  EXPECT_EQ(s.attr.max_wr, 127u);
  EXPECT_GE(s.attr.max_sge, 2u);
  EXPECT_EQ(s.attr.srq_limit, 10u);
  // Resizing is not supported (the ring went to the client); the limit is.
  EXPECT_EQ(a_.call(Op::kModifySrq, ctl::ModifySrqReq{s.srq_handle, IBV_SRQ_MAX_WR, {200, 0, 0}})
                .status,
            EINVAL);
  EXPECT_EQ(a_.call(Op::kModifySrq, ctl::ModifySrqReq{s.srq_handle, IBV_SRQ_LIMIT, {0, 0, 20}})
                .status,
            0);
  Reply q = a_.call(Op::kQuerySrq, ctl::QuerySrqReq{s.srq_handle, 0});
  ASSERT_EQ(q.status, 0);
  EXPECT_EQ(q.as<ctl::QuerySrqRep>().attr.srq_limit, 20u);
  EXPECT_EQ(b_.call(Op::kQuerySrq, ctl::QuerySrqReq{s.srq_handle, 0}).status, ENOENT);
  EXPECT_EQ(a_.call(Op::kDestroySrq, ctl::DestroySrqReq{s.srq_handle, 0}).status, 0);
  EXPECT_EQ(a_.call(Op::kDestroySrq, ctl::DestroySrqReq{s.srq_handle, 0}).status, ENOENT);
}

TEST_F(ClientSessionTest, CreateQp_BadArguments) {
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  const std::uint32_t pd = a_.alloc_pd();
  ctl::CreateCqReq cr{};
  cr.cqe = 16;
  const std::uint32_t cq = a_.call(Op::kCreateCq, cr).as<ctl::CreateCqRep>().cq_handle;
  ctl::CreateQpReq q{};
  q.pd_handle = pd;
  q.send_cq_handle = cq;
  q.recv_cq_handle = cq;
  q.qp_type = IBV_QPT_RC;
  q.cap.max_send_wr = 16;
  q.cap.max_recv_wr = 16;
  q.cap.max_send_sge = 1;
  q.cap.max_recv_sge = 1;
  ctl::CreateQpReq bad = q;
  bad.qp_type = IBV_QPT_RAW_PACKET;
  EXPECT_EQ(a_.call(Op::kCreateQp, bad).status, EINVAL);
  bad = q;
  bad.cap.max_send_wr = 1u << 20;
  EXPECT_EQ(a_.call(Op::kCreateQp, bad).status, EINVAL);
  bad = q;
  bad.cap.max_send_sge = 33;
  EXPECT_EQ(a_.call(Op::kCreateQp, bad).status, EINVAL);
  bad = q;
  bad.cap.max_inline_data = 100000;
  EXPECT_EQ(a_.call(Op::kCreateQp, bad).status, EINVAL);
  bad = q;
  bad.recv_cq_handle = 777777;
  EXPECT_EQ(a_.call(Op::kCreateQp, bad).status, ENOENT);
  bad = q;
  bad.srq_handle = 777777;
  EXPECT_EQ(a_.call(Op::kCreateQp, bad).status, ENOENT);
  bad = q;
  bad.sq_sig_all = 2;
  EXPECT_EQ(a_.call(Op::kCreateQp, bad).status, EINVAL);
  expect_still_served(b_);
}

TEST_F(ClientSessionTest, CreateQp_RingsAndQpn) {
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  const std::uint32_t pd = a_.alloc_pd();
  ctl::CreateCqReq cr{};
  cr.cqe = 16;
  const std::uint32_t cq = a_.call(Op::kCreateCq, cr).as<ctl::CreateCqRep>().cq_handle;
  ctl::CreateQpReq q{};
  q.pd_handle = pd;
  q.send_cq_handle = cq;
  q.recv_cq_handle = cq;
  q.qp_type = IBV_QPT_RC;
  q.cap = {10, 20, 2, 1, 64};
  Reply r = a_.call(Op::kCreateQp, q);
  ASSERT_EQ(r.status, 0);
  EXPECT_EQ(r.fds.size(), 0u);
  const auto rep = r.as<ctl::CreateQpRep>();
  EXPECT_NE(a_.in_arena(rep.sq_offset, rep.sq_bytes), nullptr);
  EXPECT_NE(a_.in_arena(rep.rq_offset, rep.rq_bytes), nullptr);
  EXPECT_NE(rep.sq_offset, rep.rq_offset);
  EXPECT_GE(rep.qpn, 2u);
  EXPECT_LE(rep.qpn, 0xffffffu);
  EXPECT_EQ(rep.cap.max_send_wr, 15u);
  EXPECT_EQ(rep.cap.max_recv_wr, 31u);
  EXPECT_GE(rep.cap.max_send_sge, 2u);
  EXPECT_GE(rep.cap.max_inline_data, 64u);
  EXPECT_GT(rep.sq_bytes, 0u);
  EXPECT_GT(rep.rq_bytes, 0u);
  // Query returns what was granted.
  Reply qq = a_.call(Op::kQueryQp, ctl::QueryQpReq{rep.qp_handle, 0});
  ASSERT_EQ(qq.status, 0);
  EXPECT_EQ(qq.as<ctl::QueryQpRep>().attr.qp_state, IBV_QPS_RESET);
  EXPECT_EQ(qq.as<ctl::QueryQpRep>().cap.max_send_wr, 15u);
  // The CQ is in use.
  EXPECT_EQ(a_.call(Op::kDestroyCq, ctl::DestroyCqReq{cq, 0}).status, EBUSY);
  EXPECT_EQ(a_.call(Op::kDestroyQp, ctl::DestroyQpReq{rep.qp_handle, 0}).status, 0);
  EXPECT_EQ(a_.call(Op::kDestroyCq, ctl::DestroyCqReq{cq, 0}).status, 0);
}

// Every per-QP and per-SRQ maximum ibv_query_device advertises is granted
// at once (max_qp_wr, max_sge, the inline bytes, max_srq_wr, max_srq_sge),
// and the engine holds the QP and the SRQ that result.
TEST_F(ClientSessionTest, CreateQp_AdvertisedMaximaAreReachable) {
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  const std::uint32_t pd = a_.alloc_pd();
  ctl::CreateCqReq cr{};
  cr.cqe = kMaxCqe;
  const std::uint32_t cq = a_.call(Op::kCreateCq, cr).as<ctl::CreateCqRep>().cq_handle;
  ctl::CreateQpReq q{};
  q.pd_handle = pd;
  q.send_cq_handle = cq;
  q.recv_cq_handle = cq;
  q.qp_type = IBV_QPT_RC;
  q.cap = {kMaxQpWr, kMaxQpWr, kMaxSge, kMaxSge, kMaxInline};
  Reply r = a_.call(Op::kCreateQp, q);
  ASSERT_EQ(r.status, 0);
  const auto rep = r.as<ctl::CreateQpRep>();
  EXPECT_GE(rep.cap.max_send_wr, kMaxQpWr);
  EXPECT_GE(rep.cap.max_recv_wr, kMaxQpWr);
  EXPECT_EQ(rep.cap.max_send_sge, kMaxSge);
  EXPECT_EQ(rep.cap.max_recv_sge, kMaxSge);
  EXPECT_EQ(rep.cap.max_inline_data, kMaxInline);
  ctl::CreateSrqReq sr{};
  sr.pd_handle = pd;
  sr.attr = {kMaxSrqWr, kMaxSge, 0};
  Reply srep = a_.call(Op::kCreateSrq, sr);
  ASSERT_EQ(srep.status, 0);
  EXPECT_GE(srep.as<ctl::CreateSrqRep>().attr.max_wr, kMaxSrqWr);
  EXPECT_EQ(srep.as<ctl::CreateSrqRep>().attr.max_sge, kMaxSge);
  sr.attr.max_wr = kMaxSrqWr + 1;
  EXPECT_EQ(a_.call(Op::kCreateSrq, sr).status, EINVAL);
}

// DC QPs (docs/dc.md): the session checks the request's shape and looks up
// only the handles the type uses; the engine makes the QPs (a DCT without
// rings, a DCI with its SQ only), which hold their CQ and SRQ until
// destroyed, and then the session keeps nothing: no reference, no extent.
TEST_F(ClientSessionTest, CreateQp_DcShapeHandlesAndNoLeak) {
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  const std::uint32_t pd = a_.alloc_pd();
  ctl::CreateCqReq cr{};
  cr.cqe = 16;
  const std::uint32_t cq = a_.call(Op::kCreateCq, cr).as<ctl::CreateCqRep>().cq_handle;
  ctl::CreateSrqReq sr{};
  sr.pd_handle = pd;
  sr.attr = {16, 1, 0};
  const std::uint32_t srq = a_.call(Op::kCreateSrq, sr).as<ctl::CreateSrqRep>().srq_handle;
  ctl::CreateQpReq rc{};
  rc.pd_handle = pd;
  rc.send_cq_handle = cq;
  rc.recv_cq_handle = cq;
  rc.qp_type = IBV_QPT_RC;
  rc.cap = {16, 16, 1, 1, 0};
  const auto first = a_.call(Op::kCreateQp, rc).as<ctl::CreateQpRep>();
  ASSERT_EQ(a_.call(Op::kDestroyQp, ctl::DestroyQpReq{first.qp_handle, 0}).status, 0);

  ctl::CreateQpReq dct{};
  dct.pd_handle = pd;
  dct.qp_type = IBV_QPT_DRIVER;
  dct.dc_type = ctl::kDcDct;
  dct.recv_cq_handle = cq;
  dct.srq_handle = srq;
  dct.dct_key = 0x1234;
  ctl::CreateQpReq bad = dct;
  bad.srq_handle = 777777;
  EXPECT_EQ(a_.call(Op::kCreateQp, bad).status, ENOENT);
  bad = dct;
  bad.recv_cq_handle = 777777;
  EXPECT_EQ(a_.call(Op::kCreateQp, bad).status, ENOENT);
  bad = dct;
  bad.send_cq_handle = cq;
  EXPECT_EQ(a_.call(Op::kCreateQp, bad).status, EINVAL);
  const auto dct_rep = a_.call(Op::kCreateQp, dct);
  ASSERT_EQ(dct_rep.status, 0);
  const auto dct_qp = dct_rep.as<ctl::CreateQpRep>();
  EXPECT_NE(dct_qp.qpn, 0u);  // the DCT number
  EXPECT_EQ(dct_qp.sq_bytes, 0u);
  EXPECT_EQ(dct_qp.rq_bytes, 0u);
  EXPECT_EQ(dct_qp.cap.max_send_wr, 0u);
  // Its AV gives only the reply's traffic class: a zero destination GID is
  // fine and nothing is resolved.
  ctl::ModifyQpReq m{};
  m.qp_handle = dct_qp.qp_handle;
  m.attr_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
  m.attr.qp_state = IBV_QPS_INIT;
  m.attr.port_num = 1;
  ASSERT_EQ(a_.call(Op::kModifyQp, m).status, 0);
  m.attr_mask = IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER | IBV_QP_AV | IBV_QP_PATH_MTU;
  m.attr.qp_state = IBV_QPS_RTR;
  m.attr.path_mtu = IBV_MTU_1024;
  m.attr.min_rnr_timer = 12;
  m.attr.ah_attr.is_global = 1;
  m.attr.ah_attr.port_num = 1;
  m.attr.ah_attr.grh.traffic_class = 26 << 2;
  ASSERT_EQ(a_.call(Op::kModifyQp, m).status, 0);
  const auto qq = a_.call(Op::kQueryQp, ctl::QueryQpReq{dct_qp.qp_handle, 0});
  ASSERT_EQ(qq.status, 0);
  EXPECT_EQ(qq.as<ctl::QueryQpRep>().attr.qp_state, IBV_QPS_RTR);

  ctl::CreateQpReq dci{};
  dci.pd_handle = pd;
  dci.qp_type = IBV_QPT_DRIVER;
  dci.dc_type = ctl::kDcDci;
  dci.send_cq_handle = cq;
  dci.cap = {16, 0, 1, 0, 0};
  dci.dci_log_streams = 2;
  dci.dci_log_errored = 2;
  bad = dci;
  bad.send_cq_handle = 777777;
  EXPECT_EQ(a_.call(Op::kCreateQp, bad).status, ENOENT);
  bad = dci;
  bad.recv_cq_handle = cq;
  EXPECT_EQ(a_.call(Op::kCreateQp, bad).status, EINVAL);
  bad = dci;
  bad.dci_log_streams = 5;
  EXPECT_EQ(a_.call(Op::kCreateQp, bad).status, EINVAL);
  const auto dci_rep = a_.call(Op::kCreateQp, dci);
  ASSERT_EQ(dci_rep.status, 0);
  const auto dci_qp = dci_rep.as<ctl::CreateQpRep>();
  EXPECT_NE(dci_qp.sq_bytes, 0u);
  EXPECT_EQ(dci_qp.rq_bytes, 0u);
  EXPECT_GE(dci_qp.cap.max_send_wr, 16u);  // the ring's capacity
  EXPECT_EQ(dci_qp.cap.max_recv_wr, 0u);
  // Both hold the CQ, the DCT the SRQ.
  EXPECT_EQ(a_.call(Op::kDestroyCq, ctl::DestroyCqReq{cq, 0}).status, EBUSY);
  EXPECT_EQ(a_.call(Op::kDestroySrq, ctl::DestroySrqReq{srq, 0}).status, EBUSY);
  ASSERT_EQ(a_.call(Op::kDestroyQp, ctl::DestroyQpReq{dct_qp.qp_handle, 0}).status, 0);
  ASSERT_EQ(a_.call(Op::kDestroyQp, ctl::DestroyQpReq{dci_qp.qp_handle, 0}).status, 0);

  // Nothing was kept: the rings went back (the same RC QP gets the same
  // extents again) and the CQ and SRQ have no reference.
  const auto again = a_.call(Op::kCreateQp, rc).as<ctl::CreateQpRep>();
  EXPECT_EQ(again.sq_offset, first.sq_offset);
  EXPECT_EQ(again.rq_offset, first.rq_offset);
  ASSERT_EQ(a_.call(Op::kDestroyQp, ctl::DestroyQpReq{again.qp_handle, 0}).status, 0);
  EXPECT_EQ(a_.call(Op::kDestroySrq, ctl::DestroySrqReq{srq, 0}).status, 0);
  EXPECT_EQ(a_.call(Op::kDestroyCq, ctl::DestroyCqReq{cq, 0}).status, 0);
  expect_still_served(b_);
}

TEST_F(ModifyQpTest, AvRules_Einval) {
  ctl::ModifyQpReq m = to_rtr(qp_, "10.0.0.2");
  m.attr.ah_attr.is_global = 0;
  EXPECT_EQ(a_.call(Op::kModifyQp, m).status, EINVAL);
  m = to_rtr(qp_, "10.0.0.2");
  m.attr.ah_attr.grh.dgid.raw[10] = 0;  // not ::ffff:a.b.c.d
  EXPECT_EQ(a_.call(Op::kModifyQp, m).status, EINVAL);
  m = to_rtr(qp_, "10.0.0.2");
  m.attr.ah_attr.grh.sgid_index = 0;  // the IPv6 link-local GID
  EXPECT_EQ(a_.call(Op::kModifyQp, m).status, EINVAL);
  m = to_rtr(qp_, "224.0.0.1");
  EXPECT_EQ(a_.call(Op::kModifyQp, m).status, EINVAL);
  m = to_rtr(qp_, "10.0.0.2");
  m.attr.path_mtu = static_cast<ibv_mtu>(6);
  EXPECT_EQ(a_.call(Op::kModifyQp, m).status, EINVAL);
  m = to_rtr(qp_, "10.0.0.2");
  m.attr_mask |= IBV_QP_ALT_PATH;
  EXPECT_EQ(a_.call(Op::kModifyQp, m).status, EINVAL);
  EXPECT_EQ(a_.call(Op::kModifyQp, ctl::ModifyQpReq{999999, IBV_QP_STATE, {}}).status, ENOENT);
  expect_still_served(b_);
}

TEST_F(ModifyQpTest, UnansweredArp_Ehostunreach) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(a_.call(Op::kModifyQp, to_rtr(qp_, "10.0.0.77")).status, EHOSTUNREACH);
  // The test daemon waits 300 ms (the real one 3 s).
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(250));
  expect_still_served(b_);
}

TEST_F(ModifyQpTest, ToRtr_ResolvesPeerOverTheLink) {
  ASSERT_EQ(a_.call(Op::kModifyQp, to_rtr(qp_, "10.0.0.2")).status, 0);
  Reply q = a_.call(Op::kQueryQp, ctl::QueryQpReq{qp_, 0});
  ASSERT_EQ(q.status, 0);
  const ibv_qp_attr attr = q.as<ctl::QueryQpRep>().attr;
  EXPECT_EQ(attr.qp_state, IBV_QPS_RTR);
  EXPECT_EQ(attr.dest_qp_num, 0x123u);
  EXPECT_EQ(attr.path_mtu, IBV_MTU_1024);
  EXPECT_EQ(attr.ah_attr.is_global, 1);
  EXPECT_EQ(attr.ah_attr.grh.sgid_index, 1);
  EXPECT_EQ(attr.ah_attr.grh.dgid.raw[15], 2);
}

TEST_F(ModifyQpTest, PathMtuAboveActive_Einval) {
  // uroce1 has Ethernet MTU 1500: active MTU 1024, so 2048 is refused (as
  // rxe does), before any ARP.
  const std::uint32_t qp = init_qp(b_);
  ASSERT_NE(qp, 0u);
  ctl::ModifyQpReq m = to_rtr(qp, "10.0.0.1");
  m.attr.path_mtu = IBV_MTU_2048;
  EXPECT_EQ(b_.call(Op::kModifyQp, m).status, EINVAL);
  m.attr.path_mtu = IBV_MTU_1024;
  EXPECT_EQ(b_.call(Op::kModifyQp, m).status, 0);
}

TEST_F(ClientSessionTest, CreateAh_ResolvesAndNumbers) {
  ASSERT_EQ(a_.hello("uroce0").status, 0);
  ctl::CreateAhReq r{};
  r.pd_handle = a_.alloc_pd();
  r.attr = to_rtr(0, "10.0.0.2").attr.ah_attr;
  Reply rep = a_.call(Op::kCreateAh, r);
  ASSERT_EQ(rep.status, 0);
  const std::uint32_t ah = rep.as<ctl::CreateAhRep>().ah_handle;
  EXPECT_NE(ah, 0u);
  r.attr.is_global = 0;
  EXPECT_EQ(a_.call(Op::kCreateAh, r).status, EINVAL);
  EXPECT_EQ(b_.call(Op::kDestroyAh, ctl::DestroyAhReq{ah, 0}).status, ENOENT);
  EXPECT_EQ(a_.call(Op::kDestroyAh, ctl::DestroyAhReq{ah, 0}).status, 0);
}

}  // namespace
}  // namespace uroce::daemon
