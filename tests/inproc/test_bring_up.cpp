#include "inproc/bring_up.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <vector>

namespace uroce::inproc {
namespace {

namespace qa = transport::qp_attr;
using transport::QpState;
using transport::QpType;

TEST(ConnectedBringUp_Rc, InitRtrRtsWithRcAttributes) {
  ConnectAttrs c;
  c.av.dmac = wire::MacAddr{{2, 0, 0, 0, 0, 9}};
  c.av.dip = wire::Ipv4Addr{0x0a000009};
  c.mtu = wire::PathMtu::k4096;
  c.dest_qpn = 0x123;
  c.sq_psn = 100;
  c.rq_psn = 500;
  c.timeout = 16;
  c.max_rd_atomic = 1;
  c.max_dest_rd_atomic = 2;
  const BringUp b = connected_bring_up(c);
  ASSERT_EQ(b.count, 3u);
  EXPECT_EQ(b.steps[0].mask, qa::kState | qa::kPkeyIndex | qa::kPort | qa::kAccessFlags);
  EXPECT_EQ(b.steps[0].values.qp_state, QpState::kInit);
  EXPECT_EQ(b.steps[0].values.qp_access_flags, transport::access::kRemoteAny);
  EXPECT_EQ(b.steps[1].mask, qa::kState | qa::kAv | qa::kPathMtu | qa::kDestQpn | qa::kRqPsn |
                                 qa::kMaxDestRdAtomic | qa::kMinRnrTimer);
  EXPECT_EQ(b.steps[1].values.qp_state, QpState::kRtr);
  EXPECT_EQ(b.steps[1].values.av.dip, c.av.dip);
  EXPECT_EQ(b.steps[1].values.path_mtu, wire::PathMtu::k4096);
  EXPECT_EQ(b.steps[1].values.dest_qp_num, 0x123u);
  EXPECT_EQ(b.steps[1].values.rq_psn, 500u);
  EXPECT_EQ(b.steps[1].values.max_dest_rd_atomic, 2);
  EXPECT_EQ(b.steps[2].mask, qa::kState | qa::kSqPsn | qa::kTimeout | qa::kRetryCnt |
                                 qa::kRnrRetry | qa::kMaxQpRdAtomic);
  EXPECT_EQ(b.steps[2].values.qp_state, QpState::kRts);
  EXPECT_EQ(b.steps[2].values.sq_psn, 100u);
  EXPECT_EQ(b.steps[2].values.timeout, 16);
  EXPECT_EQ(b.steps[2].values.max_rd_atomic, 1);
}

TEST(ConnectedBringUp_Uc, NoRcOnlyAttributes) {
  ConnectAttrs c;
  c.type = QpType::kUc;
  c.access = transport::access::kRemoteWrite;
  const BringUp b = connected_bring_up(c);
  ASSERT_EQ(b.count, 3u);
  EXPECT_EQ(b.steps[0].values.qp_access_flags, transport::access::kRemoteWrite);
  EXPECT_EQ(b.steps[1].mask, qa::kState | qa::kAv | qa::kPathMtu | qa::kDestQpn | qa::kRqPsn);
  EXPECT_EQ(b.steps[2].mask, qa::kState | qa::kSqPsn);
}

TEST(UdBringUp_Qkey, InitCarriesQkey) {
  const BringUp b = ud_bring_up({.qkey = 0x11111111, .sq_psn = 7});
  ASSERT_EQ(b.count, 3u);
  EXPECT_EQ(b.steps[0].mask, qa::kState | qa::kPkeyIndex | qa::kPort | qa::kQkey);
  EXPECT_EQ(b.steps[0].values.qkey, 0x11111111u);
  EXPECT_EQ(b.steps[1].mask, qa::kState);
  EXPECT_EQ(b.steps[1].values.qp_state, QpState::kRtr);
  EXPECT_EQ(b.steps[2].mask, qa::kState | qa::kSqPsn);
  EXPECT_EQ(b.steps[2].values.sq_psn, 7u);
}

TEST(DciBringUp_Steps, NoDestination) {
  DciAttrs d;
  d.mtu = wire::PathMtu::k2048;
  const BringUp b = dci_bring_up(d);
  ASSERT_EQ(b.count, 3u);
  EXPECT_EQ(b.steps[0].mask, qa::kState | qa::kPkeyIndex | qa::kPort);
  EXPECT_EQ(b.steps[1].mask, qa::kState | qa::kPathMtu);
  EXPECT_EQ(b.steps[1].values.path_mtu, wire::PathMtu::k2048);
  EXPECT_EQ(b.steps[2].mask, qa::kState | qa::kSqPsn | qa::kTimeout | qa::kRetryCnt |
                                 qa::kRnrRetry | qa::kMaxQpRdAtomic);
}

TEST(DctBringUp_Steps, ServesInRtr) {
  const BringUp b = dct_bring_up({.mtu = wire::PathMtu::k4096, .dscp = 26, .min_rnr_timer = 3});
  ASSERT_EQ(b.count, 2u);
  EXPECT_EQ(b.steps[0].mask, qa::kState | qa::kPkeyIndex | qa::kPort | qa::kAccessFlags);
  EXPECT_EQ(b.steps[1].mask, qa::kState | qa::kMinRnrTimer | qa::kAv | qa::kPathMtu);
  EXPECT_EQ(b.steps[1].values.qp_state, QpState::kRtr);
  EXPECT_EQ(b.steps[1].values.av.dscp, 26);
  EXPECT_EQ(b.steps[1].values.min_rnr_timer, 3);
}

// Records the calls; refuses the call numbered `fail_at` (from 0) with EINVAL.
struct FakeVnic {
  std::vector<std::pair<engine::ObjId, QpState>> calls;
  std::size_t fail_at = ~std::size_t{0};
  int modify_qp(engine::ObjId id, const engine::QpModify& m) {
    calls.emplace_back(id, m.values.qp_state);
    return calls.size() - 1 == fail_at ? EINVAL : 0;
  }
};

TEST(BringUp_Apply, EveryStepInOrder) {
  FakeVnic v;
  EXPECT_EQ(bring_up(v, 42, connected_bring_up({})), 0);
  ASSERT_EQ(v.calls.size(), 3u);
  EXPECT_EQ(v.calls[0], std::make_pair(engine::ObjId{42}, QpState::kInit));
  EXPECT_EQ(v.calls[1].second, QpState::kRtr);
  EXPECT_EQ(v.calls[2].second, QpState::kRts);
}

TEST(BringUp_Apply, StopsAtTheFirstError) {
  FakeVnic v;
  v.fail_at = 1;
  EXPECT_EQ(bring_up(v, 42, connected_bring_up({})), EINVAL);
  EXPECT_EQ(v.calls.size(), 2u);
}

}  // namespace
}  // namespace uroce::inproc
