// Per-user and per-client accounting (quotas.h) and the defaults of
// [limits] (resource_limits.h).
#include "apps/uroced/quotas.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace uroce::daemon {
namespace {

constexpr uid_t kAlice = 1000, kBob = 1001;

Limits small() {
  Limits l;
  l.user_connections = 2;
  l.user_qps = 4;
  l.user_cqs = 4;
  l.user_mrs = 4;
  l.user_reg_bytes = 1000;
  l.user_map_bytes = 2000;
  l.client_qps = 3;
  return resolve_limits(l, DeviceMaxima{1024, 1024, 4096});
}

TEST(ResolveLimits_Defaults, ThreeQuartersOfTheDeviceAndTheUsersValuePerClient) {
  const Limits r = resolve_limits(Limits{}, DeviceMaxima{1024, 512, 4096});
  EXPECT_EQ(r.user_qps, 768u);
  EXPECT_EQ(r.user_cqs, 384u);
  EXPECT_EQ(r.user_mrs, 3072u);
  EXPECT_EQ(r.user_connections, 192u);  // of connections = 256
  EXPECT_EQ(r.user_reg_bytes, kDefaultUserBytes);
  EXPECT_EQ(r.user_map_bytes, kDefaultUserBytes);
  EXPECT_EQ(r.client_qps, 768u);
  EXPECT_EQ(r.client_map_bytes, kDefaultUserBytes);
}

TEST(ResolveLimits_Explicit, KeptAsGiven) {
  Limits l;
  l.user_qps = 10;
  l.client_cqs = 2;
  const Limits r = resolve_limits(l, DeviceMaxima{1024, 1024, 4096});
  EXPECT_EQ(r.user_qps, 10u);
  EXPECT_EQ(r.client_qps, 10u);
  EXPECT_EQ(r.client_cqs, 2u);
}

TEST(QuotasCharge_UserLimit, EnomemForTheUserOnlyOthersGoOn) {
  Quotas q(small());
  Usage a1, a2, b;
  EXPECT_EQ(q.charge(kAlice, Usage{.qps = 3}, &a1), 0);
  EXPECT_EQ(q.charge(kAlice, Usage{.qps = 1}, &a2), 0);
  // Alice's two clients hold 4 together: a fifth QP is refused to either.
  EXPECT_EQ(q.charge(kAlice, Usage{.qps = 1}, &a2), ENOMEM);
  EXPECT_EQ(a2.qps, 1u);
  EXPECT_EQ(q.charge(kBob, Usage{.qps = 3}, &b), 0);
  q.release(kAlice, Usage{.qps = 1}, &a1);
  EXPECT_EQ(q.charge(kAlice, Usage{.qps = 1}, &a2), 0);
  EXPECT_EQ(q.users().at(kAlice).qps, 4u);
}

TEST(QuotasCharge_ClientLimit, EnomemBeforeTheUsersLimit) {
  Quotas q(small());
  Usage a;
  EXPECT_EQ(q.charge(kAlice, Usage{.qps = 3}, &a), 0);
  EXPECT_EQ(q.charge(kAlice, Usage{.qps = 1}, &a), ENOMEM);  // client_qps 3
}

TEST(QuotasCharge_Bytes, RegisteredAndMappedSeparately) {
  Quotas q(small());
  Usage a;
  EXPECT_EQ(q.charge(kAlice, Usage{.mrs = 1, .reg_bytes = 600, .map_bytes = 600}, &a), 0);
  EXPECT_EQ(q.charge(kAlice, Usage{.mrs = 1, .reg_bytes = 600, .map_bytes = 600}, &a), ENOMEM);
  EXPECT_EQ(q.charge(kAlice, Usage{.mrs = 1, .reg_bytes = 1, .map_bytes = 1401}, &a), ENOMEM);
  EXPECT_EQ(q.charge(kAlice, Usage{.mrs = 1, .reg_bytes = 1, .map_bytes = 1400}, &a), 0);
  // Near 2^64: no overflow lets a huge charge through.
  EXPECT_EQ(q.charge(kAlice, Usage{.map_bytes = ~std::uint64_t{0}}, &a), ENOMEM);
  EXPECT_EQ(a.map_bytes, 2000u);
}

TEST(QuotasCharge_Connections, EagainPerUser) {
  Quotas q(small());
  Usage c1, c2, c3;
  EXPECT_EQ(q.charge(kAlice, Usage{.connections = 1}, &c1), 0);
  EXPECT_EQ(q.charge(kAlice, Usage{.connections = 1}, &c2), 0);
  EXPECT_EQ(q.charge(kAlice, Usage{.connections = 1}, &c3), EAGAIN);
}

TEST(QuotasCharge_Root, CountedNeverRefused) {
  Quotas q(small());
  Usage r;
  EXPECT_EQ(q.charge(0, Usage{.qps = 100, .map_bytes = 1u << 30}, &r), 0);
  EXPECT_EQ(q.users().at(0).qps, 100u);
}

TEST(QuotasRelease_All, UserDisappearsFromTheList) {
  Quotas q(small());
  Usage a;
  ASSERT_EQ(q.charge(kAlice, Usage{.connections = 1, .cqs = 2}, &a), 0);
  q.release(kAlice, Usage(a), &a);
  EXPECT_TRUE(q.users().empty());
  EXPECT_EQ(a, Usage{});
  // A refused first charge leaves no empty entry behind either.
  EXPECT_EQ(q.charge(kBob, Usage{.cqs = 5}, &a), ENOMEM);
  EXPECT_TRUE(q.users().empty());
}

TEST(Charge_Raii, ReleasedUnlessCommitted) {
  Quotas q(small());
  Usage a;
  {
    Charge c(&q, kAlice, Usage{.cqs = 1}, &a);
    EXPECT_EQ(c.error(), 0);
    EXPECT_EQ(a.cqs, 1u);
  }
  EXPECT_EQ(a.cqs, 0u);
  {
    Charge c(&q, kAlice, Usage{.cqs = 1}, &a);
    c.commit();
  }
  EXPECT_EQ(a.cqs, 1u);
  Charge refused(&q, kAlice, Usage{.cqs = 9}, &a);
  EXPECT_EQ(refused.error(), ENOMEM);
}

}  // namespace
}  // namespace uroce::daemon
