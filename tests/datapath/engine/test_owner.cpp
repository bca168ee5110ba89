#include "datapath/engine/owner.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace uroce::engine {
namespace {

TEST(EngineOwner_TryTake, OneOwnerAtATime) {
  EngineOwner o;
  EXPECT_FALSE(o.held());
  EXPECT_TRUE(o.try_take());
  EXPECT_TRUE(o.held());
  EXPECT_FALSE(o.try_take());
  o.release();
  EXPECT_FALSE(o.held());
  EXPECT_TRUE(o.try_take());
  o.release();
}

TEST(EngineOwner_TryTake, ThreadsNeverOwnTogether) {
  // Two threads take and give back; a plain counter touched only by the
  // owner (as the engine's state is) loses no increment.
  EngineOwner o;
  std::uint64_t counter = 0;
  std::atomic<int> inside{0};
  std::atomic<bool> overlap{false};
  auto worker = [&] {
    int done = 0;
    while (done < 100'000) {
      if (!o.try_take()) continue;
      if (inside.fetch_add(1) != 0) overlap = true;
      ++counter;
      inside.fetch_sub(1);
      o.release();
      ++done;
    }
  };
  std::thread a(worker), b(worker);
  a.join();
  b.join();
  EXPECT_FALSE(overlap.load());
  EXPECT_EQ(counter, 200'000u);
}

}  // namespace
}  // namespace uroce::engine
