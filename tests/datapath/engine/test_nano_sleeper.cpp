#include "datapath/engine/nano_sleeper.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace uroce::engine {
namespace {

TEST(WakeWord_Nap, WakeEndsANapAtOnce) {
  WakeWord bell;
  const auto t0 = std::chrono::steady_clock::now();
  std::thread napper([&] { bell.nap(60 * kNsPerSec); });
  // Wakes only once the thread naps (or is about to: a wake between its
  // read of the word and its futex wait changes the word it waits on).
  while (!bell.napping.load()) std::this_thread::yield();
  bell.wake();
  napper.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
  EXPECT_FALSE(bell.napping.load());
}

TEST(WakeWord_Nap, SaysWhetherItWasWoken) {
  WakeWord w;
  EXPECT_FALSE(w.nap(kNsPerUs));  // timed out: nobody woke it
  std::thread napper([&] { EXPECT_TRUE(w.nap(60 * kNsPerSec)); });
  while (!w.napping.load()) std::this_thread::yield();
  w.wake();
  napper.join();
}

}  // namespace
}  // namespace uroce::engine
