#include <gtest/gtest.h>

#include <cstring>

#include "datapath/transport/qp_attr.h"
#include "tests/verbs-provider/fake_daemon.h"
#include "verbs-provider/cq.h"
#include "verbs-provider/qp.h"
#include "verbs-provider/srq.h"

namespace uroce::provider {
namespace {

using testing::FakeContext;
using testing::Reply;
using testing::Request;

struct Rig {
  Rig() {
    pd = fc.alloc_pd();
    cq = fc.create_cq(32);
    srq = fc.create_srq(pd, 16, 1);
    fc.daemon.tweak = [this](const Request& r, Reply&) {
      if (r.op == ctl::Op::kCreateQp) sent = r.as<ctl::CreateQpReq>();
    };
  }
  ~Rig() {
    destroy_srq(srq);
    destroy_cq(cq);
    dealloc_pd(pd);
  }
  // How many CreateQp requests reached the daemon.
  int creates() {
    int n = 0;
    for (ctl::Op op : fc.server().ops()) n += op == ctl::Op::kCreateQp ? 1 : 0;
    return n;
  }
  // A valid DCT's or DCI's attributes, for a test to break one field of.
  ibv_qp_init_attr_ex dct_attr() {
    ibv_qp_init_attr_ex a{};
    a.qp_type = IBV_QPT_DRIVER;
    a.recv_cq = cq;
    a.srq = srq;
    a.comp_mask = IBV_QP_INIT_ATTR_PD;
    a.pd = pd;
    return a;
  }
  ibv_qp_init_attr_ex dci_attr() {
    ibv_qp_init_attr_ex a{};
    a.qp_type = IBV_QPT_DRIVER;
    a.send_cq = cq;
    a.cap = {8, 0, 2, 0, 64};
    a.comp_mask = IBV_QP_INIT_ATTR_PD;
    a.pd = pd;
    return a;
  }
  // Any int in the dc_type field, as a C program may store one (copied as
  // bytes: a value outside the enumerators is not a valid C++ enum value).
  static uroce_dv_qp_init_attr dv(int t) {
    uroce_dv_qp_init_attr d{};
    d.comp_mask = UROCE_DV_QP_INIT_ATTR_MASK_DC;
    static_assert(sizeof(d.dc_init_attr.dc_type) == sizeof t);
    std::memcpy(&d.dc_init_attr.dc_type, &t, sizeof t);
    return d;
  }
  // errno of a create that must fail.
  int refused(ibv_qp_init_attr_ex a, const uroce_dv_qp_init_attr& d) {
    errno = 0;
    ibv_qp* qp = dv_create_qp(fc.ctx(), &a, &d);
    if (qp != nullptr) {
      destroy_qp(qp);
      return 0;
    }
    return errno;
  }

  FakeContext fc;
  ibv_pd* pd;
  ibv_cq* cq;
  ibv_srq* srq;
  ctl::CreateQpReq sent{};
};

TEST(DvCreateQp_Plain, CompMaskZeroIsCreateQpEx) {
  Rig rig;
  ibv_qp_init_attr_ex a{};
  a.qp_type = IBV_QPT_RC;
  a.send_cq = a.recv_cq = rig.cq;
  a.cap = {4, 4, 1, 1, 0};
  a.comp_mask = IBV_QP_INIT_ATTR_PD;
  a.pd = rig.pd;
  const uroce_dv_qp_init_attr d{};
  ibv_qp* qp = dv_create_qp(rig.fc.ctx(), &a, &d);
  ASSERT_NE(qp, nullptr) << strerror(errno);
  EXPECT_EQ(rig.sent.qp_type, static_cast<std::uint32_t>(IBV_QPT_RC));
  EXPECT_EQ(rig.sent.dc_type, ctl::kDcNone);
  EXPECT_TRUE(to_uqp(qp)->has_rq);
  EXPECT_FALSE(is_dc(*to_uqp(qp)));
  EXPECT_EQ(destroy_qp(qp), 0);
}

TEST(DvCreateQp_Dct, SrqAndRecvCqOnlyAndTheKey) {
  Rig rig;
  ibv_qp_init_attr_ex a = rig.dct_attr();
  a.send_cq = rig.cq;           // ignored
  a.cap = {100, 4, 3, 1, 128};  // the send side is ignored
  uroce_dv_qp_init_attr d = Rig::dv(UROCE_DV_DCTYPE_DCT);
  d.dc_init_attr.dct_access_key = 0x0123456789ABCDEFull;
  ibv_qp* qp = dv_create_qp(rig.fc.ctx(), &a, &d);
  ASSERT_NE(qp, nullptr) << strerror(errno);
  EXPECT_EQ(rig.sent.qp_type, static_cast<std::uint32_t>(IBV_QPT_DRIVER));
  EXPECT_EQ(rig.sent.dc_type, ctl::kDcDct);
  EXPECT_EQ(rig.sent.dct_key, 0x0123456789ABCDEFull);
  EXPECT_EQ(rig.sent.send_cq_handle, 0u);
  EXPECT_EQ(rig.sent.recv_cq_handle, to_ucq(rig.cq)->handle);
  EXPECT_EQ(rig.sent.srq_handle, to_usrq(rig.srq)->handle);
  EXPECT_EQ(rig.sent.cap.max_send_wr, 0u);
  EXPECT_EQ(rig.sent.cap.max_send_sge, 0u);
  EXPECT_EQ(rig.sent.cap.max_inline_data, 0u);
  EXPECT_EQ(rig.sent.dci_log_streams, 0u);
  EXPECT_EQ(a.cap.max_send_wr, 0u);  // granted: no send queue
  EXPECT_EQ(qp->qp_type, IBV_QPT_DRIVER);
  EXPECT_EQ(qp->qp_num, 0x11u);  // the DCT number
  EXPECT_EQ(qp->send_cq, nullptr);
  EXPECT_EQ(qp->recv_cq, rig.cq);
  EXPECT_EQ(qp->srq, rig.srq);
  const UroceQp* u = to_uqp(qp);
  EXPECT_EQ(u->dc_type, ctl::kDcDct);
  EXPECT_FALSE(u->has_sq);
  EXPECT_FALSE(u->has_rq);
  EXPECT_EQ(reinterpret_cast<verbs_abi::verbs_qp*>(qp)->comp_mask & verbs_abi::kVerbsQpEx, 0u);
  EXPECT_EQ(destroy_qp(qp), 0);
}

TEST(DvCreateQp_Dci, SendCqOnlyAndTheStreams) {
  Rig rig;
  ibv_qp_init_attr_ex a = rig.dci_attr();
  a.recv_cq = rig.cq;  // ignored
  a.cap.max_recv_sge = 3;
  a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
  a.send_ops_flags = IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
  uroce_dv_qp_init_attr d = Rig::dv(UROCE_DV_DCTYPE_DCI);
  d.comp_mask |= UROCE_DV_QP_INIT_ATTR_MASK_DCI_STREAMS;
  d.dc_init_attr.dci_streams = {transport::kMaxDciLogStreams, 2};
  ibv_qp* qp = dv_create_qp(rig.fc.ctx(), &a, &d);
  ASSERT_NE(qp, nullptr) << strerror(errno);
  EXPECT_EQ(rig.sent.dc_type, ctl::kDcDci);
  EXPECT_EQ(rig.sent.dci_log_streams, 4u);
  EXPECT_EQ(rig.sent.dci_log_errored, 2u);
  EXPECT_EQ(rig.sent.dct_key, 0u);
  EXPECT_EQ(rig.sent.send_cq_handle, to_ucq(rig.cq)->handle);
  EXPECT_EQ(rig.sent.recv_cq_handle, 0u);
  EXPECT_EQ(rig.sent.srq_handle, 0u);
  EXPECT_EQ(rig.sent.cap.max_recv_wr, 0u);
  EXPECT_EQ(rig.sent.cap.max_recv_sge, 0u);
  EXPECT_EQ(rig.sent.cap.max_send_wr, 8u);
  EXPECT_EQ(qp->send_cq, rig.cq);
  EXPECT_EQ(qp->recv_cq, nullptr);
  const UroceQp* u = to_uqp(qp);
  EXPECT_EQ(u->dc_type, ctl::kDcDci);
  EXPECT_EQ(u->dci_log_streams, 4u);
  EXPECT_TRUE(u->has_sq);
  EXPECT_FALSE(u->has_rq);
  auto* x = &reinterpret_cast<verbs_abi::verbs_qp*>(qp)->qp_ex;
  EXPECT_NE(x->wr_rdma_read, nullptr);
  EXPECT_NE(x->wr_atomic_fetch_add, nullptr);
  EXPECT_EQ(x->wr_send, nullptr);
  EXPECT_EQ(u->dv.qp, u);
  EXPECT_NE(u->dv.pub.wr_set_dc_addr, nullptr);
  EXPECT_NE(u->dv.pub.wr_set_dc_addr_stream, nullptr);
  EXPECT_EQ(destroy_qp(qp), 0);

  // Without the streams attribute: one stream, no per-stream errors.
  ibv_qp_init_attr_ex b = rig.dci_attr();
  const uroce_dv_qp_init_attr one = Rig::dv(UROCE_DV_DCTYPE_DCI);
  qp = dv_create_qp(rig.fc.ctx(), &b, &one);
  ASSERT_NE(qp, nullptr) << strerror(errno);
  EXPECT_EQ(rig.sent.dci_log_streams, 0u);
  EXPECT_EQ(rig.sent.dci_log_errored, 0u);
  EXPECT_EQ(destroy_qp(qp), 0);
}

TEST(DvCreateQp_Refused, MasksAndTypes) {
  Rig rig;
  uroce_dv_qp_init_attr d = Rig::dv(UROCE_DV_DCTYPE_DCT);
  d.comp_mask |= 1u << 0;  // mlx5's create flags: not ours
  EXPECT_EQ(rig.refused(rig.dct_attr(), d), EOPNOTSUPP);
  d = Rig::dv(UROCE_DV_DCTYPE_DCT);
  d.comp_mask |= 1u << 3;
  EXPECT_EQ(rig.refused(rig.dct_attr(), d), EOPNOTSUPP);
  ibv_qp_init_attr_ex a = rig.dct_attr();
  a.comp_mask |= IBV_QP_INIT_ATTR_XRCD;
  EXPECT_EQ(rig.refused(a, Rig::dv(UROCE_DV_DCTYPE_DCT)), EOPNOTSUPP);

  a = rig.dct_attr();
  a.qp_type = IBV_QPT_RC;  // MASK_DC needs IBV_QPT_DRIVER
  a.send_cq = rig.cq;
  EXPECT_EQ(rig.refused(a, Rig::dv(UROCE_DV_DCTYPE_DCT)), EINVAL);
  EXPECT_EQ(rig.refused(rig.dct_attr(), uroce_dv_qp_init_attr{}), EINVAL);  // DRIVER needs it
  for (int t : {0, 3, 0x7fffffff}) {
    EXPECT_EQ(rig.refused(rig.dct_attr(), Rig::dv(t)), EINVAL) << t;
  }
  d = Rig::dv(UROCE_DV_DCTYPE_DCT);
  d.comp_mask |= UROCE_DV_QP_INIT_ATTR_MASK_DCI_STREAMS;  // streams are a DCI's
  EXPECT_EQ(rig.refused(rig.dct_attr(), d), EINVAL);
  a = rig.dct_attr();
  a.qp_type = IBV_QPT_RC;
  a.send_cq = rig.cq;
  d = uroce_dv_qp_init_attr{};
  d.comp_mask = UROCE_DV_QP_INIT_ATTR_MASK_DCI_STREAMS;
  EXPECT_EQ(rig.refused(a, d), EINVAL);
  EXPECT_EQ(rig.creates(), 0);
}

TEST(DvCreateQp_Refused, DctRules) {
  Rig rig;
  const uroce_dv_qp_init_attr d = Rig::dv(UROCE_DV_DCTYPE_DCT);
  ibv_qp_init_attr_ex a = rig.dct_attr();
  a.srq = nullptr;
  EXPECT_EQ(rig.refused(a, d), EINVAL);
  a = rig.dct_attr();
  a.recv_cq = nullptr;
  EXPECT_EQ(rig.refused(a, d), EINVAL);
  a = rig.dct_attr();
  a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;  // no send queue
  a.send_ops_flags = IBV_QP_EX_WITH_SEND;
  EXPECT_EQ(rig.refused(a, d), EINVAL);
  a = rig.dct_attr();
  a.comp_mask = 0;  // no PD
  EXPECT_EQ(rig.refused(a, d), EINVAL);
  FakeContext other;
  ibv_cq* foreign = other.create_cq(4);
  a = rig.dct_attr();
  a.recv_cq = foreign;
  EXPECT_EQ(rig.refused(a, d), EINVAL);
  EXPECT_EQ(rig.creates(), 0);
  destroy_cq(foreign);
}

TEST(DvCreateQp_Refused, DciRules) {
  Rig rig;
  uroce_dv_qp_init_attr d = Rig::dv(UROCE_DV_DCTYPE_DCI);
  ibv_qp_init_attr_ex a = rig.dci_attr();
  a.srq = rig.srq;
  EXPECT_EQ(rig.refused(a, d), EINVAL);
  a = rig.dci_attr();
  a.cap.max_recv_wr = 1;
  EXPECT_EQ(rig.refused(a, d), EINVAL);
  a = rig.dci_attr();
  a.send_cq = nullptr;
  EXPECT_EQ(rig.refused(a, d), EINVAL);
  a = rig.dci_attr();
  a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
  a.send_ops_flags = IBV_QP_EX_WITH_BIND_MW;  // RC's, but not a DCI's
  EXPECT_EQ(rig.refused(a, d), EOPNOTSUPP);
  d.comp_mask |= UROCE_DV_QP_INIT_ATTR_MASK_DCI_STREAMS;
  d.dc_init_attr.dci_streams = {transport::kMaxDciLogStreams + 1, 0};
  EXPECT_EQ(rig.refused(rig.dci_attr(), d), EINVAL);
  d.dc_init_attr.dci_streams = {2, 3};  // more errored than streams
  EXPECT_EQ(rig.refused(rig.dci_attr(), d), EINVAL);
  EXPECT_EQ(rig.creates(), 0);
  d.dc_init_attr.dci_streams = {2, 2};
  EXPECT_EQ(rig.refused(rig.dci_attr(), d), 0);
}

TEST(DvQueryDevice_Caps, DciStreamsFromTheSharedLimits) {
  const ctl::HelloRep hello{};
  uroce_dv_context c{};
  c.comp_mask = UROCE_DV_CONTEXT_MASK_DCI_STREAMS | (1u << 7);
  EXPECT_EQ(dv_query_device(hello, &c), 0);
  EXPECT_EQ(c.comp_mask, static_cast<std::uint64_t>(UROCE_DV_CONTEXT_MASK_DCI_STREAMS));
  EXPECT_EQ(c.dci_streams_caps.max_log_num_concurent, transport::kMaxDciLogStreams);
  EXPECT_EQ(c.dci_streams_caps.max_log_num_errored, transport::kMaxDciLogErrored);
  uroce_dv_context none{};
  EXPECT_EQ(dv_query_device(hello, &none), 0);
  EXPECT_EQ(none.comp_mask, 0u);
  EXPECT_EQ(none.dci_streams_caps.max_log_num_concurent, 0u);
}

TEST(DvQueryDevice_Shard, FromHelloOnlyWhenAsked) {
  ctl::HelloRep hello{};
  hello.shard = 1;
  hello.shards = 2;
  uroce_dv_context c{};
  c.comp_mask = UROCE_DV_CONTEXT_MASK_ENGINE_SHARD;
  EXPECT_EQ(dv_query_device(hello, &c), 0);
  EXPECT_EQ(c.comp_mask, static_cast<std::uint64_t>(UROCE_DV_CONTEXT_MASK_ENGINE_SHARD));
  EXPECT_EQ(c.engine_shard, 1u);
  EXPECT_EQ(c.engine_shards, 2u);
  uroce_dv_context caps{};
  caps.comp_mask = UROCE_DV_CONTEXT_MASK_DCI_STREAMS;
  EXPECT_EQ(dv_query_device(hello, &caps), 0);
  EXPECT_EQ(caps.engine_shards, 0u);
}

}  // namespace
}  // namespace uroce::provider
