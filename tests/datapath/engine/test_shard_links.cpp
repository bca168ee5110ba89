#include "datapath/engine/shard_links.h"

#include <gtest/gtest.h>

#include <rte_mbuf.h>

#include <set>

#include "tests/datapath/engine/engine_test_support.h"

namespace uroce::engine {
namespace {

TEST(ShardLinks_Open, OneRingPerOrderedPairOfShards) {
  ShardLinks l;
  ASSERT_EQ(l.open(test::unique_name("sl"), 3), 0);
  EXPECT_EQ(l.shards(), 3u);
  std::set<rte_ring*> rings;
  for (std::uint16_t i = 0; i < 3; ++i) {
    for (std::uint16_t j = 0; j < 3; ++j) {
      if (i == j) continue;
      ASSERT_NE(l.ring(i, j), nullptr);
      EXPECT_EQ(rte_ring_get_capacity(l.ring(i, j)), ShardLinks::kDefaultDepth);
      rings.insert(l.ring(i, j));
    }
  }
  EXPECT_EQ(rings.size(), 6u);
}

TEST(ShardLinks_Open, RefusesNoShardsAndADepthNotAPowerOfTwo) {
  ShardLinks l;
  std::string err;
  EXPECT_EQ(l.open("x", 0, 1024, &err), -EINVAL);
  EXPECT_EQ(err, "x: shards must be at least 1 and depth a power of two");
  err.clear();
  EXPECT_EQ(l.open("y", 2, 1000, &err), -EINVAL);
  EXPECT_EQ(err, "y: shards must be at least 1 and depth a power of two");
}

// What a ring still holds when the links close goes back to its pool.
TEST(ShardLinks_Close, FreesTheMbufsStillInTheRings) {
  rte_mempool* pool = test::make_pool(63, 256);
  ASSERT_NE(pool, nullptr);
  {
    ShardLinks l;
    ASSERT_EQ(l.open(test::unique_name("sl"), 2), 0);
    rte_mbuf* m = rte_pktmbuf_alloc(pool);
    ASSERT_NE(m, nullptr);
    ASSERT_EQ(rte_ring_sp_enqueue(l.ring(0, 1), m), 0);
    EXPECT_EQ(rte_mempool_in_use_count(pool), 1u);
  }
  EXPECT_EQ(rte_mempool_in_use_count(pool), 0u);
  rte_mempool_free(pool);
}

}  // namespace
}  // namespace uroce::engine
