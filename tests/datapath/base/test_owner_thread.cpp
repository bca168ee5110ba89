#include "datapath/base/owner_thread.h"

#include <gtest/gtest.h>

#include <thread>

namespace uroce::base {
namespace {

#ifndef NDEBUG
TEST(OwnerThread, Here_NobodyAdopted_TheFirstCallerOwns) {
  OwnerThread o;
  EXPECT_TRUE(o.here());
  bool other = true;
  std::thread([&] { other = o.here(); }).join();
  EXPECT_FALSE(other);
  EXPECT_TRUE(o.here());
}

TEST(OwnerThread, Adopt_MovesTheOwnerToTheCaller) {
  OwnerThread o;
  o.adopt();
  bool other_before = true, other_after = false;
  std::thread([&] {
    other_before = o.here();
    o.adopt();
    other_after = o.here();
  }).join();
  EXPECT_FALSE(other_before);
  EXPECT_TRUE(other_after);
  EXPECT_FALSE(o.here());
  o.adopt();
  EXPECT_TRUE(o.here());
}

TEST(OwnerThread, Here_FirstCheckFromAnotherThread_ThatThreadOwns) {
  OwnerThread o;
  bool first = false;
  std::thread([&] { first = o.here(); }).join();
  EXPECT_TRUE(first);
  EXPECT_FALSE(o.here());
}
#else
TEST(OwnerThread, Here_WithoutAssertions_AlwaysTrue) {
  OwnerThread o;
  bool other = false;
  std::thread([&] { other = o.here(); }).join();
  EXPECT_TRUE(other);
  EXPECT_TRUE(o.here());
}
#endif

}  // namespace
}  // namespace uroce::base
