// ClientSession's reclaim of a client's objects (session_reclaim.cpp).
#include "tests/apps/uroced/session_test_support.h"

namespace uroce::daemon {
namespace {

TEST_F(ClientSessionTest, Disconnect_ReclaimsEverything) {
  {
    RawClient c(d_.socket_path());
    ASSERT_EQ(c.hello("uroce0").status, 0);
    const std::uint32_t pd = c.alloc_pd();
    ctl::CreateCqReq cr{};
    cr.cqe = 16;
    const std::uint32_t cq = c.call(Op::kCreateCq, cr).as<ctl::CreateCqRep>().cq_handle;
    ctl::CreateQpReq q{};
    q.pd_handle = pd;
    q.send_cq_handle = cq;
    q.recv_cq_handle = cq;
    q.qp_type = IBV_QPT_UD;
    q.cap = {4, 4, 1, 1, 0};
    ASSERT_EQ(c.call(Op::kCreateQp, q).status, 0);
    Reply s = b_.call(Op::kStatus, ctl::StatusReq{ctl::kStatusClients, 0});
    const auto j = nlohmann::json::parse(s.text());
    EXPECT_EQ(j["devices"][0]["objects"]["qps"], 1);
    EXPECT_EQ(j["devices"][0]["objects"]["cqs"], 1);
  }
  // The connection is gone: its QP, CQ and PD go with it.
  for (int i = 0; i < 200; ++i) {
    Reply s = b_.call(Op::kStatus, ctl::StatusReq{ctl::kStatusClients, 0});
    const auto j = nlohmann::json::parse(s.text());
    if (j["clients"].size() == 2u && j["devices"][0]["objects"]["qps"] == 0 &&
        j["devices"][0]["objects"]["cqs"] == 0) {
      SUCCEED();
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ADD_FAILURE() << "the closed client's objects were not reclaimed";
}

}  // namespace
}  // namespace uroce::daemon
