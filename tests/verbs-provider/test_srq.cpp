#include "verbs-provider/srq.h"

#include <gtest/gtest.h>

#include "datapath/shm/wqe_copy.h"
#include "tests/verbs-provider/fake_daemon.h"

namespace uroce::provider {
namespace {

using testing::FakeContext;
using testing::Reply;
using testing::Request;

TEST(CreateSrq_Attr, GrantedAttrWrittenBackAndSrqNum) {
  FakeContext fc;
  ibv_pd* pd = fc.alloc_pd();
  ibv_pd* srq_pd = pd;
  ctl::CreateSrqReq sent{};
  fc.daemon.tweak = [&](const Request& r, Reply&) {
    if (r.op == ctl::Op::kCreateSrq) sent = r.as<ctl::CreateSrqReq>();
  };
  ibv_srq_init_attr a{};
  a.attr.max_wr = 10;
  a.attr.max_sge = 2;
  a.attr.srq_limit = 4;
  ibv_srq* srq = create_srq(pd, &a);
  ASSERT_NE(srq, nullptr);
  EXPECT_EQ(a.attr.max_wr, 15u);
  EXPECT_EQ(sent.pd_handle, pd->handle);
  EXPECT_EQ(sent.attr.srq_limit, 4u);
  EXPECT_EQ(sent.user_handle, reinterpret_cast<std::uintptr_t>(srq));
  std::uint32_t num = 0;
  EXPECT_EQ(get_srq_num(srq, &num), 0);
  EXPECT_EQ(num, 0x77u);
  srq->context = fc.ctx();
  pthread_mutex_init(&srq->mutex, nullptr);
  pthread_cond_init(&srq->cond, nullptr);
  EXPECT_EQ(destroy_srq(srq), 0);
  EXPECT_EQ(dealloc_pd(srq_pd), 0);
}

TEST(PostSrqRecv_Wqes, ReachTheEngineAndFullGivesEnomem) {
  FakeContext fc;
  ibv_pd* pd = fc.alloc_pd();
  ibv_pd* srq_pd = pd;
  ibv_srq* srq = fc.create_srq(pd, 3, 2);  // 4 slots: 3 fit
  ASSERT_NE(srq, nullptr);
  shm::RqConsumer engine;
  {
    std::lock_guard<std::mutex> g(fc.daemon.mu);
    engine = testing::engine_end<shm::RqConsumer>(*fc.daemon.srqs.at(srq->handle));
  }
  ibv_sge sge{0x1000, 64, 5};
  ibv_recv_wr w[4]{};
  for (int i = 0; i < 4; ++i) {
    w[i].wr_id = 100 + static_cast<std::uint64_t>(i);
    w[i].sg_list = &sge;
    w[i].num_sge = 1;
    w[i].next = i < 3 ? &w[i + 1] : nullptr;
  }
  ibv_recv_wr* bad = nullptr;
  EXPECT_EQ(post_srq_recv(srq, w, &bad), ENOMEM);
  EXPECT_EQ(bad, &w[3]);
  ASSERT_EQ(engine.ready(), 3u);
  transport::RecvWr r;
  ASSERT_EQ(shm::copy_recv_wqe(engine.element(), 2, &r), shm::WqeError::kOk);
  EXPECT_EQ(r.wr_id, 100u);
  EXPECT_EQ(r.sge[0].lkey, 5u);
  engine.release();
  EXPECT_EQ(post_srq_recv(srq, &w[3], &bad), 0);

  ibv_sge three[3] = {};
  ibv_recv_wr too_many{};
  too_many.sg_list = three;
  too_many.num_sge = 3;
  EXPECT_EQ(post_srq_recv(srq, &too_many, &bad), EINVAL);
  EXPECT_EQ(bad, &too_many);
  EXPECT_EQ(post_srq_recv(srq, &w[3], nullptr), EINVAL);
  fc.st()->ctl.mark_dead();
  errno = 0;
  EXPECT_EQ(post_srq_recv(srq, &w[3], &bad), EIO);
  EXPECT_EQ(errno, EIO);
  EXPECT_EQ(destroy_srq(srq), 0);
  EXPECT_EQ(dealloc_pd(srq_pd), 0);
}

TEST(ModifySrq_Masks, LimitGoesToTheDaemonResizeIsRefused) {
  FakeContext fc;
  ibv_pd* srq_pd = fc.alloc_pd();
  ibv_srq* srq = fc.create_srq(srq_pd, 8, 1);
  ctl::ModifySrqReq sent{};
  fc.daemon.tweak = [&](const Request& r, Reply&) {
    if (r.op == ctl::Op::kModifySrq) sent = r.as<ctl::ModifySrqReq>();
  };
  ibv_srq_attr attr{};
  attr.srq_limit = 5;
  EXPECT_EQ(modify_srq(srq, &attr, IBV_SRQ_LIMIT), 0);
  EXPECT_EQ(sent.attr_mask, static_cast<std::uint32_t>(IBV_SRQ_LIMIT));
  EXPECT_EQ(sent.attr.srq_limit, 5u);
  attr.max_wr = 100;
  EXPECT_EQ(modify_srq(srq, &attr, IBV_SRQ_MAX_WR), EOPNOTSUPP);
  ibv_srq_attr got{};
  EXPECT_EQ(query_srq(srq, &got), 0);
  EXPECT_EQ(got.max_wr, 7u);
  EXPECT_EQ(got.srq_limit, 3u);
  EXPECT_EQ(destroy_srq(srq), 0);
  EXPECT_EQ(dealloc_pd(srq_pd), 0);
}

TEST(CreateSrq_Errors, RefusalAndDeadDaemon) {
  FakeContext fc;
  ibv_pd* pd = fc.alloc_pd();
  ibv_pd* srq_pd = pd;
  fc.daemon.refuse = {ctl::Op::kCreateSrq};
  ibv_srq_init_attr a{};
  a.attr.max_wr = 4;
  a.attr.max_sge = 1;
  errno = 0;
  EXPECT_EQ(create_srq(pd, &a), nullptr);
  EXPECT_EQ(errno, EINVAL);
  fc.daemon.refuse.clear();
  fc.st()->ctl.mark_dead();
  EXPECT_EQ(create_srq(pd, &a), nullptr);
  EXPECT_EQ(errno, EIO);
  EXPECT_EQ(dealloc_pd(srq_pd), 0);
}

}  // namespace
}  // namespace uroce::provider
