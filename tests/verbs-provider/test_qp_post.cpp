#include <gtest/gtest.h>

#include <vector>

#include "datapath/shm/wqe_copy.h"
#include "tests/verbs-provider/fake_daemon.h"
#include "verbs-provider/qp.h"

namespace uroce::provider {
namespace {

using testing::FakeContext;
using transport::QpType;
using transport::WrOpcode;

struct Rig {
  explicit Rig(ibv_qp_type type = IBV_QPT_RC, std::uint32_t max_wr = 8) {
    pd = fc.alloc_pd();
    cq = fc.create_cq(64);
    qp = fc.create_qp(pd, cq, type, nullptr, 0, max_wr);
    if (qp == nullptr) std::abort();
    qp->state = IBV_QPS_RTS;  // as libibverbs records a successful modify
    sq = testing::engine_end<shm::SqConsumer>(fc.sq_of(qp));
    rq = testing::engine_end<shm::RqConsumer>(fc.rq_of(qp));
  }
  ~Rig() {
    destroy_qp(qp);
    destroy_cq(cq);
    dealloc_pd(pd);
  }

  // The engine's view of the next send WQE.
  shm::WqeError take(transport::SendWr* wr, std::uint32_t* ah, QpType t = QpType::kRc) {
    const auto e = shm::copy_send_wqe(sq.element(), shm::SqLimits{t, 2, 64}, wr, ah);
    sq.release();
    return e;
  }

  FakeContext fc;
  ibv_pd* pd;
  ibv_cq* cq;
  ibv_qp* qp;
  shm::SqConsumer sq;
  shm::RqConsumer rq;
};

TEST(PostSend_Wqes, ChainOfThreeReachesTheEngineInOrder) {
  Rig rig;
  ibv_sge sges[2] = {{0x1000, 100, 7}, {0x2000, 28, 8}};
  ibv_send_wr w[3]{};
  w[0].wr_id = 1;
  w[0].opcode = IBV_WR_SEND;
  w[0].send_flags = IBV_SEND_SIGNALED;
  w[0].sg_list = sges;
  w[0].num_sge = 2;
  w[0].next = &w[1];
  w[1].wr_id = 2;
  w[1].opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
  w[1].imm_data = htobe32(0x1234);
  w[1].wr.rdma.remote_addr = 0xABC000;
  w[1].wr.rdma.rkey = 0x55;
  w[1].sg_list = sges;
  w[1].num_sge = 1;
  w[1].next = &w[2];
  w[2].wr_id = 3;
  w[2].opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
  w[2].wr.atomic.remote_addr = 0x8000;
  w[2].wr.atomic.rkey = 0x66;
  w[2].wr.atomic.compare_add = 5;
  w[2].wr.atomic.swap = 6;
  ibv_sge eight{0x3000, 8, 9};
  w[2].sg_list = &eight;
  w[2].num_sge = 1;
  ibv_send_wr* bad = &w[0];
  ASSERT_EQ(post_send(rig.qp, w, &bad), 0);
  EXPECT_EQ(bad, nullptr);
  ASSERT_EQ(rig.sq.ready(), 3u);
  transport::SendWr wr;
  std::uint32_t ah;
  ASSERT_EQ(rig.take(&wr, &ah), shm::WqeError::kOk);
  EXPECT_EQ(wr.wr_id, 1u);
  EXPECT_EQ(wr.opcode, WrOpcode::kSend);
  EXPECT_EQ(wr.flags, static_cast<std::uint32_t>(IBV_SEND_SIGNALED));
  EXPECT_EQ(wr.num_sge, 2u);
  EXPECT_EQ(wr.sge[1].lkey, 8u);
  EXPECT_EQ(wr.length(), 128u);
  ASSERT_EQ(rig.take(&wr, &ah), shm::WqeError::kOk);
  EXPECT_EQ(wr.opcode, WrOpcode::kRdmaWriteImm);
  EXPECT_EQ(wr.imm_or_inv, htobe32(0x1234));
  EXPECT_EQ(wr.remote_addr, 0xABC000u);
  EXPECT_EQ(wr.rkey, 0x55u);
  ASSERT_EQ(rig.take(&wr, &ah), shm::WqeError::kOk);
  EXPECT_EQ(wr.opcode, WrOpcode::kCmpSwap);
  EXPECT_EQ(wr.compare_add, 5u);
  EXPECT_EQ(wr.swap, 6u);
  EXPECT_EQ(wr.rkey, 0x66u);
}

TEST(PostSend_Inline, PayloadIsCopiedAndTheBufferNotNeededAfter) {
  Rig rig;
  char a[] = "uroce ";
  char b[] = "inline";
  ibv_sge sges[2] = {{reinterpret_cast<std::uintptr_t>(a), 6, 0},
                     {reinterpret_cast<std::uintptr_t>(b), 6, 0}};
  ibv_send_wr w{};
  w.opcode = IBV_WR_SEND;
  w.send_flags = IBV_SEND_INLINE;
  w.sg_list = sges;
  w.num_sge = 2;
  ibv_send_wr* bad = nullptr;
  ASSERT_EQ(post_send(rig.qp, &w, &bad), 0);
  std::memset(a, 0, sizeof(a));
  transport::SendWr wr;
  std::uint32_t ah;
  ASSERT_EQ(rig.take(&wr, &ah), shm::WqeError::kOk);
  ASSERT_EQ(wr.inline_len, 12u);
  EXPECT_EQ(std::memcmp(wr.inline_data.data(), "uroce inline", 12), 0);
}

TEST(PostSend_Inline, FlagIsDroppedOnReadAndAtomics) {
  Rig rig;
  ibv_sge sge{0x1000, 8, 1};
  ibv_send_wr w{};
  w.opcode = IBV_WR_RDMA_READ;
  w.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
  w.sg_list = &sge;
  w.num_sge = 1;
  ibv_send_wr* bad = nullptr;
  ASSERT_EQ(post_send(rig.qp, &w, &bad), 0);
  transport::SendWr wr;
  std::uint32_t ah;
  ASSERT_EQ(rig.take(&wr, &ah), shm::WqeError::kOk);
  EXPECT_EQ(wr.flags, static_cast<std::uint32_t>(IBV_SEND_SIGNALED));
  EXPECT_EQ(wr.num_sge, 1u);
}

TEST(PostSend_Full, EnomemAtTheFirstWrThatDoesNotFit) {
  Rig rig(IBV_QPT_RC, 4);  // 8 slots: 7 WQEs fit
  std::vector<ibv_send_wr> w(10);
  for (std::size_t i = 0; i < w.size(); ++i) {
    w[i].wr_id = i;
    w[i].opcode = IBV_WR_SEND;
    w[i].next = i + 1 < w.size() ? &w[i + 1] : nullptr;
  }
  ibv_send_wr* bad = nullptr;
  EXPECT_EQ(post_send(rig.qp, w.data(), &bad), ENOMEM);
  EXPECT_EQ(bad, &w[7]);
  EXPECT_EQ(rig.sq.ready(), 7u);  // the ones before it are posted
  transport::SendWr wr;
  std::uint32_t ah;
  ASSERT_EQ(rig.take(&wr, &ah), shm::WqeError::kOk);
  EXPECT_EQ(wr.wr_id, 0u);
  // One slot freed by the engine: exactly one more fits.
  EXPECT_EQ(post_send(rig.qp, &w[7], &bad), ENOMEM);
  EXPECT_EQ(bad, &w[8]);
}

TEST(PostSend_Validation, EachBadWrGivesEinvalAndPostsNothing) {
  Rig rig;
  Rig ud(IBV_QPT_UD);
  ibv_sge sge{0x1000, 4, 1};
  ibv_sge sges[3] = {sge, sge, sge};
  std::vector<char> big(65, 'x');
  ibv_sge big_sge{reinterpret_cast<std::uintptr_t>(big.data()), 65, 0};
  struct Case {
    const char* what;
    Rig* rig;
    ibv_send_wr wr;
  };
  std::vector<Case> cases;
  auto add = [&](const char* what, Rig* r, auto set) {
    Case c{what, r, {}};
    c.wr.opcode = IBV_WR_SEND;
    set(c.wr);
    cases.push_back(c);
  };
  add("bind mw without a window", &rig, [](ibv_send_wr& w) { w.opcode = IBV_WR_BIND_MW; });
  add("tso", &rig, [](ibv_send_wr& w) { w.opcode = IBV_WR_TSO; });
  add("unknown opcode", &rig, [](ibv_send_wr& w) { w.opcode = static_cast<ibv_wr_opcode>(77); });
  add("write on ud", &ud, [](ibv_send_wr& w) { w.opcode = IBV_WR_RDMA_WRITE; });
  add("unknown flag", &rig, [](ibv_send_wr& w) { w.send_flags = IBV_SEND_IP_CSUM; });
  add("too many sges", &rig, [&](ibv_send_wr& w) {
    w.sg_list = sges;
    w.num_sge = 3;
  });
  add("negative num_sge", &rig, [](ibv_send_wr& w) { w.num_sge = -1; });
  add("inline too long", &rig, [&](ibv_send_wr& w) {
    w.send_flags = IBV_SEND_INLINE;
    w.sg_list = &big_sge;
    w.num_sge = 1;
  });
  add("atomic short", &rig, [&](ibv_send_wr& w) {
    w.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
    w.sg_list = &sge;
    w.num_sge = 1;
  });
  add("atomic misaligned", &rig, [](ibv_send_wr& w) {
    static ibv_sge eight{0x1000, 8, 1};
    w.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
    w.wr.atomic.remote_addr = 0x1004;
    w.sg_list = &eight;
    w.num_sge = 1;
  });
  add("ud without ah", &ud, [](ibv_send_wr&) {});
  for (Case& c : cases) {
    ibv_send_wr* bad = nullptr;
    EXPECT_EQ(post_send(c.rig->qp, &c.wr, &bad), EINVAL) << c.what;
    EXPECT_EQ(bad, &c.wr) << c.what;
  }
  EXPECT_EQ(rig.sq.ready(), 0u);
  EXPECT_EQ(ud.sq.ready(), 0u);
}

TEST(PostSend_State, BeforeRtsGivesEinvalDeadGivesEio) {
  Rig rig;
  ibv_send_wr w{};
  w.opcode = IBV_WR_SEND;
  ibv_send_wr* bad = nullptr;
  EXPECT_EQ(post_send(rig.qp, &w, nullptr), EINVAL);
  for (ibv_qp_state s : {IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR}) {
    rig.qp->state = s;
    EXPECT_EQ(post_send(rig.qp, &w, &bad), EINVAL);
    EXPECT_EQ(bad, &w);
  }
  rig.qp->state = IBV_QPS_ERR;  // flushed by the engine, but accepted
  EXPECT_EQ(post_send(rig.qp, &w, &bad), 0);
  rig.fc.st()->ctl.mark_dead();
  errno = 0;
  EXPECT_EQ(post_send(rig.qp, &w, &bad), EIO);
  EXPECT_EQ(errno, EIO);
  EXPECT_EQ(bad, &w);
}

TEST(PostSend_Ud, CarriesTheAhNumberQpnAndQkey) {
  Rig rig(IBV_QPT_UD);
  ibv_ah* ah = rig.fc.create_ah(rig.pd);
  ASSERT_NE(ah, nullptr);
  ibv_sge sge{0x1000, 40, 3};
  ibv_send_wr w{};
  w.opcode = IBV_WR_SEND_WITH_IMM;
  w.imm_data = 7;
  w.sg_list = &sge;
  w.num_sge = 1;
  w.wr.ud.ah = ah;
  w.wr.ud.remote_qpn = 0x1234;
  w.wr.ud.remote_qkey = 0x11111111;
  ibv_send_wr* bad = nullptr;
  ASSERT_EQ(post_send(rig.qp, &w, &bad), 0);
  transport::SendWr wr;
  std::uint32_t ah_num = 0;
  ASSERT_EQ(rig.take(&wr, &ah_num, QpType::kUd), shm::WqeError::kOk);
  EXPECT_EQ(ah_num, ah->handle);
  EXPECT_EQ(wr.ud.remote_qpn, 0x1234u);
  EXPECT_EQ(wr.ud.remote_qkey, 0x11111111u);
  EXPECT_EQ(destroy_ah(ah), 0);
}

TEST(PostRecv_Wqes, WrIdAndSgesReachTheEngine) {
  Rig rig;
  rig.qp->state = IBV_QPS_INIT;  // receives may be posted from INIT on
  ibv_sge sges[2] = {{0x1000, 10, 1}, {0x2000, 20, 2}};
  ibv_recv_wr w[2]{};
  w[0].wr_id = 10;
  w[0].sg_list = sges;
  w[0].num_sge = 2;
  w[0].next = &w[1];
  w[1].wr_id = 11;
  ibv_recv_wr* bad = &w[0];
  ASSERT_EQ(post_recv(rig.qp, w, &bad), 0);
  EXPECT_EQ(bad, nullptr);
  ASSERT_EQ(rig.rq.ready(), 2u);
  transport::RecvWr r;
  ASSERT_EQ(shm::copy_recv_wqe(rig.rq.element(), 2, &r), shm::WqeError::kOk);
  EXPECT_EQ(r.wr_id, 10u);
  EXPECT_EQ(r.length(), 30u);
  rig.rq.release();
  ASSERT_EQ(shm::copy_recv_wqe(rig.rq.element(), 2, &r), shm::WqeError::kOk);
  EXPECT_EQ(r.wr_id, 11u);
  EXPECT_EQ(r.num_sge, 0u);
}

TEST(PostRecv_Errors, ResetTooManySgesFullAndDead) {
  Rig rig(IBV_QPT_RC, 2);  // 4 slots: 3 fit
  ibv_sge sges[3] = {};
  ibv_recv_wr w{};
  ibv_recv_wr* bad = nullptr;
  rig.qp->state = IBV_QPS_RESET;
  EXPECT_EQ(post_recv(rig.qp, &w, &bad), EINVAL);
  EXPECT_EQ(bad, &w);
  rig.qp->state = IBV_QPS_RTR;
  w.sg_list = sges;
  w.num_sge = 3;
  EXPECT_EQ(post_recv(rig.qp, &w, &bad), EINVAL);
  w.num_sge = 1;
  for (int i = 0; i < 3; ++i) ASSERT_EQ(post_recv(rig.qp, &w, &bad), 0);
  EXPECT_EQ(post_recv(rig.qp, &w, &bad), ENOMEM);
  EXPECT_EQ(bad, &w);
  rig.fc.st()->ctl.mark_dead();
  errno = 0;
  EXPECT_EQ(post_recv(rig.qp, &w, &bad), EIO);
  EXPECT_EQ(errno, EIO);
}

TEST(PostRecv_Errors, QpWithAnSrqRefusesReceives) {
  FakeContext fc;
  ibv_pd* pd = fc.alloc_pd();
  ibv_cq* cq = fc.create_cq(8);
  ibv_srq* srq = fc.create_srq(pd, 8, 1);
  ibv_qp* qp = fc.create_qp(pd, cq, IBV_QPT_RC, srq);
  qp->state = IBV_QPS_RTR;
  ibv_recv_wr w{};
  ibv_recv_wr* bad = nullptr;
  EXPECT_EQ(post_recv(qp, &w, &bad), EINVAL);
  EXPECT_EQ(destroy_qp(qp), 0);
  EXPECT_EQ(destroy_srq(srq), 0);
  EXPECT_EQ(destroy_cq(cq), 0);
  EXPECT_EQ(dealloc_pd(pd), 0);
}

// A DCI's WRs need a target ibv_send_wr cannot name (ibv_wr_* and
// uroce_dv_wr_set_dc_addr carry it); a DCT has no send queue; neither has a
// receive queue of its own.
TEST(PostSendRecv_Dc, ClassicPostsAreEinval) {
  FakeContext fc;
  ibv_pd* pd = fc.alloc_pd();
  ibv_cq* cq = fc.create_cq(8);
  ibv_srq* srq = fc.create_srq(pd, 8, 1);
  ibv_qp* dci = fc.create_dci(pd, cq);
  ibv_qp* dct = fc.create_dct(pd, cq, srq, 1);
  ASSERT_NE(dci, nullptr);
  ASSERT_NE(dct, nullptr);
  dci->state = IBV_QPS_RTS;
  dct->state = IBV_QPS_RTR;
  auto sq = testing::engine_end<shm::SqConsumer>(fc.sq_of(dci));
  ibv_sge sge{0x1000, 8, 1};
  ibv_send_wr s{};
  s.opcode = IBV_WR_SEND;
  s.sg_list = &sge;
  s.num_sge = 1;
  ibv_send_wr* bad_s = nullptr;
  EXPECT_EQ(post_send(dci, &s, &bad_s), EINVAL);
  EXPECT_EQ(bad_s, &s);
  EXPECT_EQ(sq.ready(), 0u);
  bad_s = nullptr;
  EXPECT_EQ(post_send(dct, &s, &bad_s), EINVAL);
  EXPECT_EQ(bad_s, &s);
  ibv_recv_wr r{};
  r.sg_list = &sge;
  r.num_sge = 1;
  ibv_recv_wr* bad_r = nullptr;
  EXPECT_EQ(post_recv(dct, &r, &bad_r), EINVAL);
  EXPECT_EQ(bad_r, &r);
  bad_r = nullptr;
  EXPECT_EQ(post_recv(dci, &r, &bad_r), EINVAL);
  EXPECT_EQ(bad_r, &r);
  EXPECT_EQ(destroy_qp(dci), 0);
  EXPECT_EQ(destroy_qp(dct), 0);
  EXPECT_EQ(destroy_srq(srq), 0);
  EXPECT_EQ(destroy_cq(cq), 0);
  EXPECT_EQ(dealloc_pd(pd), 0);
}

TEST(PostSend_Doorbell, RingsTheSqDoorbellOnlyWhenSomethingWasPublished) {
  Rig rig;
  rig.fc.daemon.rung();  // whatever setup rang
  const std::uint32_t sq_db = (2 * rig.qp->handle) % testing::MiniDaemon::kBells;
  ibv_sge sge{0x1000, 8, 7};
  ibv_send_wr w{};
  w.opcode = IBV_WR_SEND;
  w.sg_list = &sge;
  w.num_sge = 1;
  ibv_send_wr* bad = nullptr;
  ASSERT_EQ(post_send(rig.qp, &w, &bad), 0);
  EXPECT_EQ(rig.fc.daemon.rung(), std::vector<std::uint32_t>{sq_db});
  w.num_sge = 99;  // refused: nothing published, no doorbell
  EXPECT_EQ(post_send(rig.qp, &w, &bad), EINVAL);
  EXPECT_TRUE(rig.fc.daemon.rung().empty());
}

TEST(PostRecv_Doorbell, RingsTheRqDoorbell) {
  Rig rig;
  rig.fc.daemon.rung();
  const std::uint32_t rq_db = (2 * rig.qp->handle + 1) % testing::MiniDaemon::kBells;
  ibv_sge sge{0x1000, 8, 7};
  ibv_recv_wr w{};
  w.sg_list = &sge;
  w.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  ASSERT_EQ(post_recv(rig.qp, &w, &bad), 0);
  EXPECT_EQ(rig.fc.daemon.rung(), std::vector<std::uint32_t>{rq_db});
}

}  // namespace
}  // namespace uroce::provider
