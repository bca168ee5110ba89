#include "datapath/engine/backoff.h"

#include <gtest/gtest.h>

namespace uroce::engine {
namespace {

TEST(Backoff_After, SpinsThenDoublesToMax) {
  Backoff b(BackoffConfig{2, 100, 500});
  EXPECT_EQ(b.after(false), 0u);
  EXPECT_EQ(b.after(false), 0u);
  EXPECT_EQ(b.after(false), 100u);
  EXPECT_EQ(b.after(false), 200u);
  EXPECT_EQ(b.after(false), 400u);
  EXPECT_EQ(b.after(false), 500u);
  EXPECT_EQ(b.after(false), 500u);
}

TEST(Backoff_After, WorkResets) {
  Backoff b(BackoffConfig{1, 100, 1000});
  EXPECT_EQ(b.after(false), 0u);
  EXPECT_EQ(b.after(false), 100u);
  EXPECT_EQ(b.after(false), 200u);
  EXPECT_EQ(b.after(true), 0u);
  EXPECT_EQ(b.idle_run(), 0u);
  EXPECT_EQ(b.after(false), 0u);
  EXPECT_EQ(b.after(false), 100u);
}

TEST(Backoff_Config, DegenerateValuesClamped) {
  Backoff b(BackoffConfig{0, 0, 0});
  EXPECT_EQ(b.config().min_sleep_ns, 1u);
  EXPECT_EQ(b.config().max_sleep_ns, 1u);
  EXPECT_EQ(b.after(false), 1u);
  EXPECT_EQ(b.after(false), 1u);
}

}  // namespace
}  // namespace uroce::engine
