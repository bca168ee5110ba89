#include "verbs-provider/ah.h"

#include <gtest/gtest.h>

#include "tests/verbs-provider/fake_daemon.h"

namespace uroce::provider {
namespace {

using testing::FakeContext;
using testing::Reply;
using testing::Request;

TEST(CreateAh_Handles, AttrGoesToTheDaemonHandleBecomesAhNum) {
  FakeContext fc;
  ibv_pd* pd = fc.alloc_pd();
  ibv_ah_attr a{};
  a.is_global = 1;
  a.port_num = 1;
  a.grh.sgid_index = 1;
  a.grh.dgid.raw[10] = 0xff;
  a.grh.dgid.raw[11] = 0xff;
  a.grh.dgid.raw[15] = 2;
  a.grh.hop_limit = 64;
  ibv_ah* ah = create_ah(pd, &a);
  ASSERT_NE(ah, nullptr);
  EXPECT_EQ(to_uah(ah)->ah_num, ah->handle);
  EXPECT_NE(ah->handle, 0u);
  {
    std::lock_guard<std::mutex> g(fc.daemon.mu);
    const ctl::CreateAhReq& req = fc.daemon.ahs.at(ah->handle);
    EXPECT_EQ(req.pd_handle, pd->handle);
    EXPECT_EQ(req.attr.grh.dgid.raw[15], 2);
    EXPECT_EQ(req.attr.grh.sgid_index, 1);
  }
  EXPECT_EQ(destroy_ah(ah), 0);
  EXPECT_EQ(dealloc_pd(pd), 0);
  std::lock_guard<std::mutex> g(fc.daemon.mu);
  EXPECT_TRUE(fc.daemon.ahs.empty());
}

TEST(CreateAh_Errors, RefusalZeroHandleAndDeadDaemon) {
  FakeContext fc;
  ibv_pd* pd = fc.alloc_pd();
  ibv_ah_attr a{};
  fc.daemon.tweak = [](const Request& r, Reply& rep) {
    if (r.op == ctl::Op::kCreateAh) rep = Reply::error(EHOSTUNREACH);
  };
  errno = 0;
  EXPECT_EQ(create_ah(pd, &a), nullptr);
  EXPECT_EQ(errno, EHOSTUNREACH);
  fc.daemon.tweak = [](const Request& r, Reply& rep) {
    if (r.op == ctl::Op::kCreateAh) rep = Reply::of(ctl::CreateAhRep{});
  };
  EXPECT_EQ(create_ah(pd, &a), nullptr);
  EXPECT_EQ(errno, EPROTO);
  fc.daemon.tweak = nullptr;
  ibv_ah* ah = create_ah(pd, &a);
  ASSERT_NE(ah, nullptr);
  fc.st()->ctl.mark_dead();
  EXPECT_EQ(create_ah(pd, &a), nullptr);
  EXPECT_EQ(errno, EIO);
  EXPECT_EQ(destroy_ah(ah), 0);
  EXPECT_EQ(dealloc_pd(pd), 0);
}

}  // namespace
}  // namespace uroce::provider
