#include "datapath/base/rng.h"

#include <gtest/gtest.h>

namespace uroce {
namespace {

TEST(SeededRng_NextU64, SameSeedSameSequence) {
  SeededRng a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    const auto x = a.next_u64();
    EXPECT_EQ(x, b.next_u64());
    differs |= (x != c.next_u64());
  }
  EXPECT_TRUE(differs);
}

TEST(SeededRng_NextU64, MatchesStandardMt19937_64) {
  // The 10000th output of a default-seeded mt19937_64 is fixed by the C++
  // standard ([rand.predef]); seeding with 5489 reproduces it.
  SeededRng r(5489u);
  std::uint64_t v = 0;
  for (int i = 0; i < 10000; ++i) v = r.next_u64();
  EXPECT_EQ(v, 9981545732273789042ull);
}

TEST(SeededRng_Chance, ExtremesAreExact) {
  SeededRng r(1);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_FALSE(r.chance(0.0));
    EXPECT_TRUE(r.chance(1.0));
  }
}

TEST(SeededRng_Chance, FractionWithinBounds) {
  SeededRng r(7);
  int hits = 0;
  constexpr int kN = 100000;
  for (int i = 0; i < kN; ++i) hits += r.chance(0.1) ? 1 : 0;
  // 0.1 +- 5 sigma (sigma = sqrt(n p (1-p)) ~ 95).
  EXPECT_NEAR(hits, 10000, 475);
}

TEST(SeededRng_Below, StaysInRange) {
  SeededRng r(3);
  for (int i = 0; i < 10000; ++i) EXPECT_LT(r.below(7), 7u);
}

}  // namespace
}  // namespace uroce
