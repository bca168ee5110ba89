#include <gtest/gtest.h>

#include "datapath/shm/wqe_copy.h"
#include "tests/verbs-provider/fake_daemon.h"
#include "verbs-provider/qp.h"

namespace uroce::provider {
namespace {

using testing::FakeContext;
using transport::QpType;
using transport::WrOpcode;

constexpr std::uint64_t kAllRc = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
                                 IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_RDMA_WRITE |
                                 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |
                                 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
                                 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_LOCAL_INV;

struct Rig {
  explicit Rig(ibv_qp_type type = IBV_QPT_RC, std::uint64_t ops = kAllRc,
               std::uint32_t max_wr = 8) {
    pd = fc.alloc_pd();
    cq = fc.create_cq(64);
    qp = fc.create_qp(pd, cq, type, nullptr, ops, max_wr);
    if (qp == nullptr) std::abort();
    qp->state = IBV_QPS_RTS;
    x = &reinterpret_cast<verbs_abi::verbs_qp*>(qp)->qp_ex;
    sq = testing::engine_end<shm::SqConsumer>(fc.sq_of(qp));
    type_ = type == IBV_QPT_UD ? QpType::kUd : QpType::kRc;
  }
  ~Rig() {
    destroy_qp(qp);
    destroy_cq(cq);
    dealloc_pd(pd);
  }
  shm::WqeError take(transport::SendWr* wr, std::uint32_t* ah = nullptr) {
    std::uint32_t dummy;
    const auto e = shm::copy_send_wqe(sq.element(), shm::SqLimits{type_, 2, 64}, wr,
                                      ah != nullptr ? ah : &dummy);
    sq.release();
    return e;
  }
  FakeContext fc;
  ibv_pd* pd;
  ibv_cq* cq;
  ibv_qp* qp;
  ibv_qp_ex* x;
  shm::SqConsumer sq;
  QpType type_;
};

TEST(WrComplete_Batch, BuildersAndSettersReachTheEngine) {
  Rig rig;
  ibv_wr_start(rig.x);
  rig.x->wr_id = 1;
  rig.x->wr_flags = IBV_SEND_SIGNALED;
  ibv_wr_send(rig.x);
  ibv_wr_set_sge(rig.x, 7, 0x1000, 100);
  rig.x->wr_id = 2;
  rig.x->wr_flags = 0;
  ibv_wr_rdma_write(rig.x, 0x55, 0xABC000);
  char text[] = "hello";
  ibv_wr_set_inline_data(rig.x, text, 5);
  rig.x->wr_id = 3;
  ibv_wr_atomic_fetch_add(rig.x, 0x66, 0x8000, 3);
  ibv_wr_set_sge(rig.x, 9, 0x3000, 8);
  rig.x->wr_id = 4;
  ibv_wr_rdma_read(rig.x, 0x77, 0x9000);
  const ibv_sge list[2] = {{0x4000, 10, 1}, {0x5000, 20, 2}};
  ibv_wr_set_sge_list(rig.x, 2, list);
  EXPECT_EQ(rig.sq.ready(), 0u);  // nothing visible before complete
  ASSERT_EQ(ibv_wr_complete(rig.x), 0);
  ASSERT_EQ(rig.sq.ready(), 4u);

  transport::SendWr wr;
  ASSERT_EQ(rig.take(&wr), shm::WqeError::kOk);
  EXPECT_EQ(wr.wr_id, 1u);
  EXPECT_EQ(wr.opcode, WrOpcode::kSend);
  EXPECT_EQ(wr.flags, static_cast<std::uint32_t>(IBV_SEND_SIGNALED));
  EXPECT_EQ(wr.sge[0].lkey, 7u);
  EXPECT_EQ(wr.length(), 100u);
  ASSERT_EQ(rig.take(&wr), shm::WqeError::kOk);
  EXPECT_EQ(wr.opcode, WrOpcode::kRdmaWrite);
  EXPECT_EQ(wr.flags, static_cast<std::uint32_t>(IBV_SEND_INLINE));  // set by set_inline_data
  EXPECT_EQ(wr.inline_len, 5u);
  EXPECT_EQ(std::memcmp(wr.inline_data.data(), "hello", 5), 0);
  EXPECT_EQ(wr.remote_addr, 0xABC000u);
  ASSERT_EQ(rig.take(&wr), shm::WqeError::kOk);
  EXPECT_EQ(wr.opcode, WrOpcode::kFetchAdd);
  EXPECT_EQ(wr.compare_add, 3u);
  EXPECT_EQ(wr.rkey, 0x66u);
  ASSERT_EQ(rig.take(&wr), shm::WqeError::kOk);
  EXPECT_EQ(wr.opcode, WrOpcode::kRdmaRead);
  EXPECT_EQ(wr.num_sge, 2u);
  EXPECT_EQ(wr.length(), 30u);
}

TEST(WrComplete_Ops, ImmInvalidateCmpSwapAndInlineList) {
  Rig rig;
  ibv_wr_start(rig.x);
  ibv_wr_send_imm(rig.x, htobe32(0xBEEF));
  ibv_wr_send_inv(rig.x, 0x1234);
  ibv_wr_local_inv(rig.x, 0x4321);
  ibv_wr_rdma_write_imm(rig.x, 1, 0x100, htobe32(9));
  ibv_wr_set_sge(rig.x, 1, 0x1000, 0);  // zero length: no payload, as rxe
  ibv_wr_atomic_cmp_swp(rig.x, 2, 0x200, 10, 20);
  ibv_wr_set_sge(rig.x, 1, 0x1000, 8);
  ibv_wr_send(rig.x);
  const char a[] = "ab", b[] = "cd";
  const ibv_data_buf bufs[3] = {{const_cast<char*>(a), 2}, {nullptr, 0}, {const_cast<char*>(b), 2}};
  ibv_wr_set_inline_data_list(rig.x, 3, bufs);
  ASSERT_EQ(ibv_wr_complete(rig.x), 0);
  transport::SendWr wr;
  ASSERT_EQ(rig.take(&wr), shm::WqeError::kOk);
  EXPECT_EQ(wr.imm_or_inv, htobe32(0xBEEF));
  ASSERT_EQ(rig.take(&wr), shm::WqeError::kOk);
  EXPECT_EQ(wr.opcode, WrOpcode::kSendInv);
  EXPECT_EQ(wr.imm_or_inv, 0x1234u);
  ASSERT_EQ(rig.take(&wr), shm::WqeError::kOk);
  EXPECT_EQ(wr.opcode, WrOpcode::kLocalInv);
  EXPECT_EQ(wr.imm_or_inv, 0x4321u);
  ASSERT_EQ(rig.take(&wr), shm::WqeError::kOk);
  EXPECT_EQ(wr.opcode, WrOpcode::kRdmaWriteImm);
  EXPECT_EQ(wr.num_sge, 0u);
  ASSERT_EQ(rig.take(&wr), shm::WqeError::kOk);
  EXPECT_EQ(wr.opcode, WrOpcode::kCmpSwap);
  EXPECT_EQ(wr.compare_add, 10u);
  EXPECT_EQ(wr.swap, 20u);
  ASSERT_EQ(rig.take(&wr), shm::WqeError::kOk);
  EXPECT_EQ(wr.inline_len, 4u);
  EXPECT_EQ(std::memcmp(wr.inline_data.data(), "abcd", 4), 0);
}

TEST(WrComplete_Ud, SetUdAddrCarriesTheAh) {
  Rig rig(IBV_QPT_UD, IBV_QP_EX_WITH_SEND);
  ibv_ah* ah = rig.fc.create_ah(rig.pd);
  ibv_wr_start(rig.x);
  ibv_wr_send(rig.x);
  ibv_wr_set_ud_addr(rig.x, ah, 0x99, 0x11111111);
  ibv_wr_set_sge(rig.x, 1, 0x1000, 16);
  ASSERT_EQ(ibv_wr_complete(rig.x), 0);
  transport::SendWr wr;
  std::uint32_t ah_num = 0;
  ASSERT_EQ(rig.take(&wr, &ah_num), shm::WqeError::kOk);
  EXPECT_EQ(ah_num, ah->handle);
  EXPECT_EQ(wr.ud.remote_qpn, 0x99u);
  EXPECT_EQ(wr.ud.remote_qkey, 0x11111111u);
  destroy_ah(ah);
}

TEST(WrComplete_Errors, FullRingGivesEnospcAndPublishesNothing) {
  Rig rig(IBV_QPT_RC, kAllRc, 2);  // 4 slots: 3 fit
  ibv_wr_start(rig.x);
  for (int i = 0; i < 4; ++i) ibv_wr_send(rig.x);
  EXPECT_EQ(ibv_wr_complete(rig.x), ENOSPC);
  EXPECT_EQ(rig.sq.ready(), 0u);
  ibv_wr_start(rig.x);
  for (int i = 0; i < 3; ++i) ibv_wr_send(rig.x);
  EXPECT_EQ(ibv_wr_complete(rig.x), 0);
  EXPECT_EQ(rig.sq.ready(), 3u);
}

TEST(WrComplete_Errors, SetterErrorsAndAbort) {
  Rig rig;
  ibv_wr_start(rig.x);
  ibv_wr_set_sge(rig.x, 1, 0x1000, 8);  // no WQE yet
  EXPECT_EQ(ibv_wr_complete(rig.x), EINVAL);

  ibv_wr_start(rig.x);
  ibv_wr_send(rig.x);
  const ibv_sge three[3] = {};
  ibv_wr_set_sge_list(rig.x, 3, three);  // max_send_sge is 2
  EXPECT_EQ(ibv_wr_complete(rig.x), EINVAL);

  ibv_wr_start(rig.x);
  ibv_wr_send(rig.x);
  char big[65] = {};
  ibv_wr_set_inline_data(rig.x, big, sizeof(big));  // max_inline is 64
  EXPECT_EQ(ibv_wr_complete(rig.x), ENOSPC);

  ibv_wr_start(rig.x);
  ibv_wr_atomic_cmp_swp(rig.x, 1, 0x1003, 0, 0);  // misaligned
  EXPECT_EQ(ibv_wr_complete(rig.x), EINVAL);

  ibv_wr_start(rig.x);
  ibv_wr_send(rig.x);
  ibv_wr_abort(rig.x);
  EXPECT_EQ(rig.sq.ready(), 0u);

  rig.qp->state = IBV_QPS_RTR;
  ibv_wr_start(rig.x);
  ibv_wr_send(rig.x);
  EXPECT_EQ(ibv_wr_complete(rig.x), EINVAL);
  rig.qp->state = IBV_QPS_RTS;
  rig.fc.st()->ctl.mark_dead();
  ibv_wr_start(rig.x);
  ibv_wr_send(rig.x);
  EXPECT_EQ(ibv_wr_complete(rig.x), EIO);
  EXPECT_EQ(rig.sq.ready(), 0u);
}

TEST(WrComplete_Errors, ForeignAhGivesEinval) {
  Rig rig(IBV_QPT_UD, IBV_QP_EX_WITH_SEND);
  FakeContext other;
  ibv_pd* other_pd = other.alloc_pd();
  ibv_ah* ah = other.create_ah(other_pd);
  ibv_wr_start(rig.x);
  ibv_wr_send(rig.x);
  ibv_wr_set_ud_addr(rig.x, ah, 1, 1);
  EXPECT_EQ(ibv_wr_complete(rig.x), EINVAL);
  destroy_ah(ah);
  dealloc_pd(other_pd);
}

// A DCI with 4 streams, in RTS, with the ibv_wr_* API and an AH to aim at.
struct DciRig {
  DciRig() {
    pd = fc.alloc_pd();
    cq = fc.create_cq(64);
    ah = fc.create_ah(pd);
    ibv_qp_init_attr_ex a{};
    a.qp_type = IBV_QPT_DRIVER;
    a.send_cq = cq;
    a.cap.max_send_wr = 8;
    a.cap.max_send_sge = 2;
    a.cap.max_inline_data = 64;
    a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
    a.pd = pd;
    a.send_ops_flags = kAllRc;
    qp = create_qp_dc(fc.ctx(), &a, DcInit{ctl::kDcDci, 0, 2, 1});
    if (qp == nullptr) std::abort();
    qp->state = IBV_QPS_RTS;
    x = &reinterpret_cast<verbs_abi::verbs_qp*>(qp)->qp_ex;
    dv = &to_uqp(qp)->dv.pub;
    sq = testing::engine_end<shm::SqConsumer>(fc.sq_of(qp));
  }
  ~DciRig() {
    destroy_qp(qp);
    destroy_ah(ah);
    destroy_cq(cq);
    dealloc_pd(pd);
  }
  shm::WqeError take(transport::SendWr* wr, std::uint32_t* ah_num) {
    shm::SqLimits lim{QpType::kDci, 2, 64};
    lim.dci_log_streams = 2;
    const auto e = shm::copy_send_wqe(sq.element(), lim, wr, ah_num);
    sq.release();
    return e;
  }
  FakeContext fc;
  ibv_pd* pd;
  ibv_cq* cq;
  ibv_ah* ah;
  ibv_qp* qp;
  ibv_qp_ex* x;
  uroce_dv_qp_ex* dv;
  shm::SqConsumer sq;
};

TEST(WrSetDcAddr_Dci, EveryOpcodeCarriesItsTarget) {
  DciRig rig;
  ibv_wr_start(rig.x);
  rig.x->wr_id = 1;
  ibv_wr_send_imm(rig.x, htobe32(5));
  uroce_dv_wr_set_dc_addr(rig.dv, rig.ah, 0x100, 0xAAAA);
  ibv_wr_set_sge(rig.x, 1, 0x1000, 10);
  rig.x->wr_id = 2;
  ibv_wr_rdma_write(rig.x, 0x55, 0x2000);
  uroce_dv_wr_set_dc_addr_stream(rig.dv, rig.ah, 0x200, 0xBBBB, 3);
  ibv_wr_set_sge(rig.x, 1, 0x1000, 10);
  rig.x->wr_id = 3;
  ibv_wr_rdma_read(rig.x, 0x56, 0x3000);
  uroce_dv_wr_set_dc_addr_stream(rig.dv, rig.ah, 0x300, 0xCCCC, 1);
  ibv_wr_set_sge(rig.x, 1, 0x1000, 10);
  rig.x->wr_id = 4;
  ibv_wr_atomic_cmp_swp(rig.x, 0x57, 0x4000, 7, 8);
  uroce_dv_wr_set_dc_addr_stream(rig.dv, rig.ah, 0x400, 0xDDDD, 2);
  ibv_wr_set_sge(rig.x, 1, 0x1000, 8);
  rig.x->wr_id = 5;
  ibv_wr_local_inv(rig.x, 0x99);  // local: no target
  ASSERT_EQ(ibv_wr_complete(rig.x), 0);
  ASSERT_EQ(rig.sq.ready(), 5u);

  struct Want {
    WrOpcode op;
    std::uint32_t dctn;
    std::uint64_t key;
    std::uint16_t stream;
  };
  const Want want[] = {{WrOpcode::kSendImm, 0x100, 0xAAAA, 0},
                       {WrOpcode::kRdmaWrite, 0x200, 0xBBBB, 3},
                       {WrOpcode::kRdmaRead, 0x300, 0xCCCC, 1},
                       {WrOpcode::kCmpSwap, 0x400, 0xDDDD, 2}};
  for (const Want& w : want) {
    transport::SendWr wr;
    std::uint32_t ah_num = 0;
    ASSERT_EQ(rig.take(&wr, &ah_num), shm::WqeError::kOk);
    EXPECT_EQ(wr.opcode, w.op);
    EXPECT_EQ(ah_num, rig.ah->handle);
    EXPECT_EQ(wr.ud.remote_qpn, w.dctn);
    EXPECT_EQ(wr.ud.dc_key, w.key);
    EXPECT_EQ(wr.ud.dc_stream, w.stream);
    if (w.op == WrOpcode::kCmpSwap) {
      EXPECT_EQ(wr.remote_addr, 0x4000u);
      EXPECT_EQ(wr.compare_add, 7u);
      EXPECT_EQ(wr.swap, 8u);
      EXPECT_EQ(wr.rkey, 0x57u);
    }
  }
  transport::SendWr wr;
  std::uint32_t ah_num = 1;
  ASSERT_EQ(rig.take(&wr, &ah_num), shm::WqeError::kOk);
  EXPECT_EQ(wr.opcode, WrOpcode::kLocalInv);
  EXPECT_EQ(ah_num, 0u);
}

TEST(WrSetDcAddr_Dci, WrWithoutTargetFailsTheBatch) {
  DciRig rig;
  ibv_wr_start(rig.x);
  ibv_wr_send(rig.x);
  EXPECT_EQ(ibv_wr_complete(rig.x), EINVAL);  // the last WR has none
  ibv_wr_start(rig.x);
  ibv_wr_send(rig.x);
  ibv_wr_send(rig.x);  // the first one had none
  uroce_dv_wr_set_dc_addr(rig.dv, rig.ah, 1, 2);
  EXPECT_EQ(ibv_wr_complete(rig.x), EINVAL);
  EXPECT_EQ(rig.sq.ready(), 0u);
  // A batch that went wrong leaves nothing behind for the next one.
  ibv_wr_start(rig.x);
  ibv_wr_send(rig.x);
  ibv_wr_abort(rig.x);
  ibv_wr_start(rig.x);
  ibv_wr_send(rig.x);
  uroce_dv_wr_set_dc_addr(rig.dv, rig.ah, 1, 2);
  EXPECT_EQ(ibv_wr_complete(rig.x), 0);
  EXPECT_EQ(rig.sq.ready(), 1u);
}

TEST(WrSetDcAddr_Dci, BadTargetGivesEinval) {
  DciRig rig;
  FakeContext other;
  ibv_pd* other_pd = other.alloc_pd();
  ibv_ah* foreign = other.create_ah(other_pd);
  const auto fails = [&](auto set) {
    ibv_wr_start(rig.x);
    ibv_wr_send(rig.x);
    set();
    return ibv_wr_complete(rig.x);
  };
  EXPECT_EQ(fails([&] { uroce_dv_wr_set_dc_addr(rig.dv, foreign, 1, 2); }), EINVAL);
  EXPECT_EQ(fails([&] { uroce_dv_wr_set_dc_addr(rig.dv, nullptr, 1, 2); }), EINVAL);
  EXPECT_EQ(fails([&] { uroce_dv_wr_set_dc_addr(rig.dv, rig.ah, 0x1000000, 2); }), EINVAL);
  EXPECT_EQ(fails([&] { uroce_dv_wr_set_dc_addr_stream(rig.dv, rig.ah, 1, 2, 4); }), EINVAL);
  EXPECT_EQ(fails([&] { ibv_wr_set_ud_addr(rig.x, rig.ah, 1, 2); }), EINVAL);
  EXPECT_EQ(fails([&] { uroce_dv_wr_set_dc_addr_stream(rig.dv, rig.ah, 1, 2, 3); }), 0);
  ibv_wr_start(rig.x);
  uroce_dv_wr_set_dc_addr(rig.dv, rig.ah, 1, 2);  // no WQE yet
  EXPECT_EQ(ibv_wr_complete(rig.x), EINVAL);
  EXPECT_EQ(rig.sq.ready(), 1u);
  destroy_ah(foreign);
  dealloc_pd(other_pd);
}

TEST(WrSetDcAddr_Rc, NotADciGivesEinval) {
  Rig rig;
  ibv_ah* ah = rig.fc.create_ah(rig.pd);
  uroce_dv_qp_ex* dv = &to_uqp(rig.qp)->dv.pub;
  EXPECT_EQ(dv->comp_mask, 0u);
  ibv_wr_start(rig.x);
  ibv_wr_send(rig.x);
  uroce_dv_wr_set_dc_addr(dv, ah, 1, 2);
  EXPECT_EQ(ibv_wr_complete(rig.x), EINVAL);
  destroy_ah(ah);
}

}  // namespace
}  // namespace uroce::provider
