#include "datapath/engine/loopback_queue.h"

#include <gtest/gtest.h>

#include <vector>

namespace uroce::engine {
namespace {

std::vector<std::uint8_t> frame(std::size_t n, std::uint8_t seed) {
  std::vector<std::uint8_t> f(n);
  for (std::size_t i = 0; i < n; ++i) f[i] = static_cast<std::uint8_t>(seed + i);
  return f;
}

TEST(LoopbackQueue_Push, FifoOrderAndContents) {
  LoopbackQueue q(3, 100);
  const auto a = frame(60, 1), b = frame(100, 2);
  ASSERT_TRUE(q.push(a));
  ASSERT_TRUE(q.push(b));
  EXPECT_EQ(q.size(), 2u);
  ASSERT_EQ(q.front().size(), 60u);
  EXPECT_TRUE(std::equal(a.begin(), a.end(), q.front().begin()));
  q.pop();
  ASSERT_EQ(q.front().size(), 100u);
  EXPECT_TRUE(std::equal(b.begin(), b.end(), q.front().begin()));
  q.pop();
  EXPECT_TRUE(q.empty());
  q.pop();  // no-op when empty
  EXPECT_EQ(q.size(), 0u);
}

TEST(LoopbackQueue_Push, RefusesWhenFullOrTooLong) {
  LoopbackQueue q(2, 64);
  EXPECT_FALSE(q.push(frame(65, 0)));
  EXPECT_TRUE(q.push(frame(64, 0)));
  EXPECT_TRUE(q.push(frame(10, 0)));
  EXPECT_FALSE(q.push(frame(10, 0)));
  q.pop();
  EXPECT_TRUE(q.push(frame(20, 9)));  // wraps into the freed slot
  q.pop();
  ASSERT_EQ(q.front().size(), 20u);
  EXPECT_EQ(q.front()[0], 9);
}

}  // namespace
}  // namespace uroce::engine
