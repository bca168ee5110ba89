#include "verbs-provider/qp.h"

#include <gtest/gtest.h>

#include <thread>

#include "tests/verbs-provider/fake_daemon.h"
#include "verbs-provider/cq.h"

namespace uroce::provider {
namespace {

using testing::FakeContext;
using testing::Reply;
using testing::Request;

struct Rig {
  Rig() {
    pd = fc.alloc_pd();
    cq = fc.create_cq(32);
  }
  ~Rig() {
    destroy_cq(cq);
    dealloc_pd(pd);
  }
  FakeContext fc;
  ibv_pd* pd;
  ibv_cq* cq;
};

TEST(CreateQp_Rc, FillsTheIbvQpAndWritesGrantedCaps) {
  Rig rig;
  ctl::CreateQpReq sent{};
  rig.fc.daemon.tweak = [&](const Request& r, Reply&) {
    if (r.op == ctl::Op::kCreateQp) sent = r.as<ctl::CreateQpReq>();
  };
  ibv_qp_init_attr a{};
  a.qp_context = &rig;
  a.send_cq = rig.cq;
  a.recv_cq = rig.cq;
  a.cap.max_send_wr = 10;
  a.cap.max_recv_wr = 5;
  a.cap.max_send_sge = 2;
  a.cap.max_recv_sge = 3;
  a.cap.max_inline_data = 32;
  a.qp_type = IBV_QPT_RC;
  a.sq_sig_all = 1;
  ibv_qp* qp = create_qp(rig.pd, &a);
  ASSERT_NE(qp, nullptr) << strerror(errno);
  EXPECT_EQ(qp->context, rig.fc.ctx());
  EXPECT_EQ(qp->qp_context, &rig);
  EXPECT_EQ(qp->pd, rig.pd);
  EXPECT_EQ(qp->send_cq, rig.cq);
  EXPECT_EQ(qp->recv_cq, rig.cq);
  EXPECT_EQ(qp->srq, nullptr);
  EXPECT_EQ(qp->state, IBV_QPS_RESET);
  EXPECT_EQ(qp->qp_type, IBV_QPT_RC);
  EXPECT_EQ(qp->qp_num, 0x11u);
  EXPECT_EQ(a.cap.max_send_wr, 15u);  // granted = ring capacity
  EXPECT_EQ(a.cap.max_recv_wr, 7u);
  EXPECT_EQ(sent.pd_handle, rig.pd->handle);
  EXPECT_EQ(sent.qp_type, static_cast<std::uint32_t>(IBV_QPT_RC));
  EXPECT_EQ(sent.send_cq_handle, to_ucq(rig.cq)->handle);
  EXPECT_EQ(sent.sq_sig_all, 1u);
  EXPECT_EQ(sent.cap.max_recv_sge, 3u);
  EXPECT_EQ(sent.user_handle, reinterpret_cast<std::uintptr_t>(qp));
  // Plain ibv_create_qp gives no ibv_qp_ex.
  EXPECT_EQ(reinterpret_cast<verbs_abi::verbs_qp*>(qp)->comp_mask & verbs_abi::kVerbsQpEx, 0u);
  UroceQp* u = to_uqp(qp);
  EXPECT_TRUE(u->has_rq);
  EXPECT_EQ(u->max_send_sge, 2u);
  EXPECT_EQ(u->max_inline, 32u);
  EXPECT_EQ(destroy_qp(qp), 0);
}

TEST(CreateQpEx_SendOps, AsksForQpExAndInstallsTheBuilders) {
  Rig rig;
  ibv_qp* qp = rig.fc.create_qp(rig.pd, rig.cq, IBV_QPT_RC, nullptr,
                                IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE);
  ASSERT_NE(qp, nullptr);
  auto* vqp = reinterpret_cast<verbs_abi::verbs_qp*>(qp);
  EXPECT_NE(vqp->comp_mask & verbs_abi::kVerbsQpEx, 0u);
  ibv_qp_ex* x = &vqp->qp_ex;
  EXPECT_NE(x->wr_send, nullptr);
  EXPECT_NE(x->wr_rdma_write, nullptr);
  EXPECT_EQ(x->wr_rdma_read, nullptr);
  EXPECT_NE(x->wr_start, nullptr);
  EXPECT_NE(x->wr_complete, nullptr);
  EXPECT_NE(x->wr_set_sge_list, nullptr);
  EXPECT_EQ(destroy_qp(qp), 0);
}

TEST(CreateQpEx_Refused, UnsupportedTypesFlagsAndOps) {
  Rig rig;
  errno = 0;
  EXPECT_EQ(rig.fc.create_qp(rig.pd, rig.cq, IBV_QPT_XRC_SEND), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
  EXPECT_EQ(rig.fc.create_qp(rig.pd, rig.cq, IBV_QPT_RAW_PACKET), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
  EXPECT_EQ(rig.fc.create_qp(rig.pd, rig.cq, IBV_QPT_RC, nullptr, IBV_QP_EX_WITH_TSO), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
  EXPECT_EQ(rig.fc.create_qp(rig.pd, rig.cq, IBV_QPT_UD, nullptr, IBV_QP_EX_WITH_RDMA_WRITE),
            nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
  EXPECT_EQ(rig.fc.create_qp(rig.pd, rig.cq, IBV_QPT_UC, nullptr, IBV_QP_EX_WITH_RDMA_READ),
            nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);

  ibv_qp_init_attr_ex a{};
  a.qp_type = IBV_QPT_RC;
  a.send_cq = a.recv_cq = rig.cq;
  a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS;
  a.pd = rig.pd;
  a.create_flags = IBV_QP_CREATE_SCATTER_FCS;
  EXPECT_EQ(create_qp_ex(rig.fc.ctx(), &a), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
  a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD;
  EXPECT_EQ(create_qp_ex(rig.fc.ctx(), &a), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
  a.comp_mask = 0;  // no PD
  EXPECT_EQ(create_qp_ex(rig.fc.ctx(), &a), nullptr);
  EXPECT_EQ(errno, EINVAL);
  a.comp_mask = IBV_QP_INIT_ATTR_PD;
  a.send_cq = nullptr;
  EXPECT_EQ(create_qp_ex(rig.fc.ctx(), &a), nullptr);
  EXPECT_EQ(errno, EINVAL);
  for (ctl::Op op : rig.fc.server().ops()) EXPECT_NE(op, ctl::Op::kCreateQp);

  rig.fc.daemon.refuse = {ctl::Op::kCreateQp};
  EXPECT_EQ(rig.fc.create_qp(rig.pd, rig.cq, IBV_QPT_RC), nullptr);
  EXPECT_EQ(errno, EINVAL);
}

TEST(CreateQp_Errors, BadRingGeometryDestroysTheDaemonsQp) {
  Rig rig;
  rig.fc.daemon.tweak = [](const Request& r, Reply& rep) {
    if (r.op != ctl::Op::kCreateQp) return;
    ctl::CreateQpRep c;
    std::memcpy(&c, rep.body.data(), sizeof(c));
    c.sq_log2_elem_size = 4;  // too small for a send WQE
    std::memcpy(rep.body.data(), &c, sizeof(c));
  };
  errno = 0;
  EXPECT_EQ(rig.fc.create_qp(rig.pd, rig.cq, IBV_QPT_RC), nullptr);
  EXPECT_EQ(errno, EPROTO);
  EXPECT_EQ(rig.fc.server().ops().back(), ctl::Op::kDestroyQp);
  std::lock_guard<std::mutex> g(rig.fc.daemon.mu);
  EXPECT_TRUE(rig.fc.daemon.qps.empty());
}

TEST(CreateQp_Srq, NoReceiveRingOfItsOwn) {
  Rig rig;
  ibv_srq* srq = rig.fc.create_srq(rig.pd, 16, 1);
  ASSERT_NE(srq, nullptr);
  ctl::CreateQpReq sent{};
  rig.fc.daemon.tweak = [&](const Request& r, Reply&) {
    if (r.op == ctl::Op::kCreateQp) sent = r.as<ctl::CreateQpReq>();
  };
  ibv_qp* qp = rig.fc.create_qp(rig.pd, rig.cq, IBV_QPT_RC, srq);
  ASSERT_NE(qp, nullptr);
  EXPECT_EQ(sent.srq_handle, srq->handle);
  EXPECT_FALSE(to_uqp(qp)->has_rq);
  EXPECT_EQ(qp->srq, srq);
  EXPECT_EQ(destroy_qp(qp), 0);
  EXPECT_EQ(destroy_srq(srq), 0);
}

TEST(ModifyQp_Pass, AttrAndMaskReachTheDaemon) {
  Rig rig;
  ibv_qp* qp = rig.fc.create_qp(rig.pd, rig.cq, IBV_QPT_RC);
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = IBV_MTU_1024;
  attr.dest_qp_num = 0x99;
  attr.ah_attr.is_global = 1;
  attr.ah_attr.grh.sgid_index = 1;
  const int mask = IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_AV;
  ASSERT_EQ(modify_qp(qp, &attr, mask), 0);
  {
    std::lock_guard<std::mutex> g(rig.fc.daemon.mu);
    const ctl::ModifyQpReq& m = rig.fc.daemon.last_modify.at(qp->handle);
    EXPECT_EQ(m.attr_mask, static_cast<std::uint32_t>(mask));
    EXPECT_EQ(m.attr.dest_qp_num, 0x99u);
    EXPECT_EQ(m.attr.ah_attr.grh.sgid_index, 1);
  }
  rig.fc.daemon.refuse = {ctl::Op::kModifyQp};
  EXPECT_EQ(modify_qp(qp, &attr, mask), EINVAL);
  rig.fc.daemon.refuse.clear();
  EXPECT_EQ(destroy_qp(qp), 0);
}

// The DC transitions reach the daemon as they are (the engine's transport
// checks them); a move to RESET cleans the one CQ a DC QP has.
TEST(ModifyQp_Dc, DctAndDciTransitionsReachTheDaemon) {
  Rig rig;
  ibv_srq* srq = rig.fc.create_srq(rig.pd, 8, 1);
  ibv_cq* other = rig.fc.create_cq(8);
  ibv_qp* dct = rig.fc.create_dct(rig.pd, rig.cq, srq, 0x77);
  ibv_qp* dci = rig.fc.create_dci(rig.pd, other, 1);
  ASSERT_NE(dct, nullptr);
  ASSERT_NE(dci, nullptr);
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.port_num = 1;
  attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
  const int dct_init = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
  ASSERT_EQ(modify_qp(dct, &attr, dct_init), 0);
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = IBV_MTU_1024;
  attr.min_rnr_timer = 12;
  attr.ah_attr.is_global = 1;
  const int dct_rtr = IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER | IBV_QP_AV | IBV_QP_PATH_MTU;
  ASSERT_EQ(modify_qp(dct, &attr, dct_rtr), 0);
  attr.qp_state = IBV_QPS_RTS;
  attr.timeout = 14;
  attr.retry_cnt = 7;
  attr.rnr_retry = 7;
  attr.sq_psn = 5;
  attr.max_rd_atomic = 1;
  const int dci_rts = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                      IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
  ASSERT_EQ(modify_qp(dci, &attr, dci_rts), 0);
  {
    std::lock_guard<std::mutex> g(rig.fc.daemon.mu);
    EXPECT_EQ(rig.fc.daemon.last_modify.at(dct->handle).attr_mask,
              static_cast<std::uint32_t>(dct_rtr));
    EXPECT_EQ(rig.fc.daemon.last_modify.at(dct->handle).attr.min_rnr_timer, 12);
    EXPECT_EQ(rig.fc.daemon.last_modify.at(dci->handle).attr_mask,
              static_cast<std::uint32_t>(dci_rts));
  }
  // RESET: the DCT's completions leave its receive CQ, the DCI's its send
  // CQ; the CQ a DC QP does not have is null and left alone.
  auto push = [&](ibv_cq* cq, std::uint32_t qpn) {
    auto engine = testing::engine_end<shm::CqProducer>(*rig.fc.daemon.cqs.at(to_ucq(cq)->handle));
    ib_uverbs_wc wc{};
    wc.qp_num = qpn;
    ASSERT_TRUE(engine.try_push(wc));
  };
  push(rig.cq, dct->qp_num);
  push(other, dci->qp_num);
  attr.qp_state = IBV_QPS_RESET;
  ASSERT_EQ(modify_qp(dct, &attr, IBV_QP_STATE), 0);
  ASSERT_EQ(modify_qp(dci, &attr, IBV_QP_STATE), 0);
  ibv_wc wc[2];
  EXPECT_EQ(poll_cq(rig.cq, 2, wc), 0);
  EXPECT_EQ(poll_cq(other, 2, wc), 0);
  EXPECT_EQ(destroy_qp(dct), 0);
  EXPECT_EQ(destroy_qp(dci), 0);
  EXPECT_EQ(destroy_cq(other), 0);
  EXPECT_EQ(destroy_srq(srq), 0);
}

TEST(QueryQp_Fill, AttrCapsAndInitAttr) {
  Rig rig;
  ibv_qp* qp = rig.fc.create_qp(rig.pd, rig.cq, IBV_QPT_UC);
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.qkey = 0;
  ASSERT_EQ(modify_qp(qp, &attr, IBV_QP_STATE), 0);
  ibv_qp_attr got{};
  ibv_qp_init_attr init{};
  ASSERT_EQ(query_qp(qp, &got, IBV_QP_STATE | IBV_QP_CAP, &init), 0);
  EXPECT_EQ(got.qp_state, IBV_QPS_INIT);
  EXPECT_EQ(got.cap.max_send_sge, 2u);
  EXPECT_EQ(init.qp_type, IBV_QPT_UC);
  EXPECT_EQ(init.send_cq, rig.cq);
  EXPECT_EQ(init.cap.max_inline_data, 64u);
  EXPECT_EQ(destroy_qp(qp), 0);
}

TEST(DestroyQp_Events, WaitsUntilHandedOutEventsAreAcked) {
  Rig rig;
  ibv_qp* qp = rig.fc.create_qp(rig.pd, rig.cq, IBV_QPT_RC);
  ibv_async_event ev{};
  ev.event_type = IBV_EVENT_QP_FATAL;
  ev.element.qp = qp;
  async_event(rig.fc.ctx(), &ev);
  std::atomic<bool> acked{false};
  std::thread acker([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    acked = true;
    pthread_mutex_lock(&qp->mutex);  // ibv_ack_async_event
    ++qp->events_completed;
    pthread_cond_signal(&qp->cond);
    pthread_mutex_unlock(&qp->mutex);
  });
  EXPECT_EQ(destroy_qp(qp), 0);
  EXPECT_TRUE(acked.load());
  acker.join();
}

TEST(DestroyQp_Dead, SucceedsLocally) {
  Rig rig;
  ibv_qp* qp = rig.fc.create_qp(rig.pd, rig.cq, IBV_QPT_UD);
  rig.fc.st()->ctl.mark_dead();
  EXPECT_EQ(destroy_qp(qp), 0);
}

TEST(SendOpcodeAllowed_Table, PerQpType) {
  EXPECT_TRUE(send_opcode_allowed(IBV_QPT_UD, IBV_WR_SEND));
  EXPECT_TRUE(send_opcode_allowed(IBV_QPT_UD, IBV_WR_SEND_WITH_IMM));
  EXPECT_FALSE(send_opcode_allowed(IBV_QPT_UD, IBV_WR_RDMA_WRITE));
  EXPECT_TRUE(send_opcode_allowed(IBV_QPT_UC, IBV_WR_RDMA_WRITE_WITH_IMM));
  EXPECT_FALSE(send_opcode_allowed(IBV_QPT_UC, IBV_WR_RDMA_READ));
  EXPECT_FALSE(send_opcode_allowed(IBV_QPT_UC, IBV_WR_SEND_WITH_INV));
  EXPECT_TRUE(send_opcode_allowed(IBV_QPT_RC, IBV_WR_ATOMIC_FETCH_AND_ADD));
  EXPECT_TRUE(send_opcode_allowed(IBV_QPT_RC, IBV_WR_LOCAL_INV));
  EXPECT_TRUE(send_opcode_allowed(IBV_QPT_RC, IBV_WR_BIND_MW));
  EXPECT_TRUE(send_opcode_allowed(IBV_QPT_UC, IBV_WR_BIND_MW));  // as rxe
  EXPECT_FALSE(send_opcode_allowed(IBV_QPT_UC, IBV_WR_LOCAL_INV));
  EXPECT_FALSE(send_opcode_allowed(IBV_QPT_UD, IBV_WR_BIND_MW));
  EXPECT_FALSE(send_opcode_allowed(IBV_QPT_RC, IBV_WR_TSO));
  EXPECT_FALSE(send_opcode_allowed(IBV_QPT_RC, IBV_WR_ATOMIC_WRITE));
}

TEST(SqAccepts_States, RtsOnwardsForSendsAnythingButResetForReceives) {
  ibv_qp qp{};
  for (ibv_qp_state s : {IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR}) {
    qp.state = s;
    EXPECT_FALSE(sq_accepts(qp)) << s;
  }
  for (ibv_qp_state s : {IBV_QPS_RTS, IBV_QPS_SQD, IBV_QPS_SQE, IBV_QPS_ERR}) {
    qp.state = s;
    EXPECT_TRUE(sq_accepts(qp)) << s;
  }
  qp.state = IBV_QPS_RESET;
  EXPECT_FALSE(rq_accepts(qp));
  qp.state = IBV_QPS_INIT;
  EXPECT_TRUE(rq_accepts(qp));
}

}  // namespace
}  // namespace uroce::provider
