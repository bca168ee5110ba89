#include "testbed/incast.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace uroce::testbed {
namespace {

IncastSpec spec(std::uint32_t hosts, std::uint32_t senders) {
  IncastSpec s;
  s.hosts = hosts;
  s.senders = senders;
  s.bytes = 65536;
  s.every_ns = 1000;
  s.start_ns = 500;
  s.seed = 7;
  return s;
}

TEST(IncastArrivals_Check, BadSpecsNamed) {
  EXPECT_EQ(IncastArrivals::check(spec(16, 8)), "");
  EXPECT_EQ(IncastArrivals::check(spec(16, 0)), "incast_senders: must be >= 1");
  EXPECT_EQ(IncastArrivals::check(spec(16, 16)),
            "incast_senders: 16 is not below the workload's 16 hosts");
  IncastSpec s = spec(16, 8);
  s.bytes = 0;
  EXPECT_EQ(IncastArrivals::check(s), "incast_bytes: 0 is not in 1 .. 2147483648");
  s.bytes = std::uint64_t{1} << 31;
  EXPECT_EQ(IncastArrivals::check(s),
            "incast_bytes: 8 senders x 2147483648 bytes is above 4 GiB a burst");
  s = spec(16, 8);
  s.every_ns = 0;
  EXPECT_EQ(IncastArrivals::check(s), "incast_every_us: must be > 0");
}

TEST(IncastArrivals_Next, EveryPeriodDistinctSendersNeverTheReceiver) {
  IncastArrivals a(spec(16, 8));
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(a.next_time(), 500 + 1000 * static_cast<TimeNs>(i));
    const IncastBurst& b = a.next();
    EXPECT_EQ(b.time_ns, 500 + 1000 * static_cast<TimeNs>(i));
    ASSERT_LT(b.dst, 16u);
    ASSERT_EQ(b.srcs.size(), 8u);
    const std::set<std::uint32_t> srcs(b.srcs.begin(), b.srcs.end());
    EXPECT_EQ(srcs.size(), 8u);
    EXPECT_EQ(srcs.count(b.dst), 0u);
    EXPECT_LT(*srcs.rbegin(), 16u);
  }
}

// Every host is a receiver and a sender about as often as uniform choice
// gives (8,000 bursts: 500 as receiver each, 3,500 as sender; 4 sigma).
TEST(IncastArrivals_Next, ReceiversAndSendersUniform) {
  IncastArrivals a(spec(16, 7));
  std::vector<int> as_dst(16), as_src(16);
  for (int i = 0; i < 8000; ++i) {
    const IncastBurst& b = a.next();
    ++as_dst[b.dst];
    for (const std::uint32_t s : b.srcs) ++as_src[s];
  }
  for (int h = 0; h < 16; ++h) {
    EXPECT_NEAR(as_dst[h], 500, 4 * 22) << "host " << h;
    EXPECT_NEAR(as_src[h], 3500, 4 * 45) << "host " << h;
  }
}

TEST(IncastArrivals_Next, SameSeedSameBursts) {
  IncastArrivals a(spec(8, 3));
  IncastArrivals b(spec(8, 3));
  IncastSpec other = spec(8, 3);
  other.seed = 8;
  IncastArrivals c(other);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const IncastBurst x = a.next();
    const IncastBurst y = b.next();
    const IncastBurst& z = c.next();
    EXPECT_EQ(x.dst, y.dst);
    EXPECT_EQ(x.srcs, y.srcs);
    differs = differs || x.dst != z.dst || x.srcs != z.srcs;
  }
  EXPECT_TRUE(differs);
}

}  // namespace
}  // namespace uroce::testbed
