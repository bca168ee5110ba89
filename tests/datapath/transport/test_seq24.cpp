#include "datapath/transport/seq24.h"

#include <gtest/gtest.h>

#include <type_traits>

namespace uroce::transport {
namespace {

TEST(Seq24_Construct, KeepsLow24Bits) {
  EXPECT_EQ(Psn(0x1234567).value(), 0x234567u);
  EXPECT_EQ(Psn(0xFFFFFFFF).value(), 0xFFFFFFu);
}

TEST(Seq24_Add, WrapsAt2To24) {
  EXPECT_EQ((Psn(0xFFFFFF) + 1).value(), 0u);
  EXPECT_EQ((Psn(0xFFFFFE) + 5).value(), 3u);
  Psn p(0xFFFFFF);
  ++p;
  EXPECT_EQ(p.value(), 0u);
  EXPECT_EQ((Psn(2) - 3).value(), 0xFFFFFFu);
}

TEST(Seq24_Before, OrdersAcrossWrap) {
  EXPECT_TRUE(Psn(0xFFFFF0).before(Psn(0x10)));
  EXPECT_FALSE(Psn(0x10).before(Psn(0xFFFFF0)));
  EXPECT_TRUE(Psn(0x10).after(Psn(0xFFFFF0)));
  EXPECT_FALSE(Psn(5).before(Psn(5)));
  EXPECT_FALSE(Psn(5).after(Psn(5)));
}

TEST(Seq24_Before, HalfSpaceIsNeitherBeforeNorAfter) {
  const Psn a(0), b(0x800000);
  EXPECT_FALSE(a.before(b));
  EXPECT_FALSE(b.before(a));
  EXPECT_TRUE(a.before(Psn(0x7FFFFF)));
  EXPECT_TRUE(Psn(0x800001).before(a));
}

TEST(Seq24_Diff, SignedAcrossWrap) {
  EXPECT_EQ(Psn::diff(Psn(0x10), Psn(0xFFFFF0)), 0x20);
  EXPECT_EQ(Psn::diff(Psn(0xFFFFF0), Psn(0x10)), -0x20);
  EXPECT_EQ(Psn::diff(Psn(7), Psn(7)), 0);
  EXPECT_EQ(Psn::diff(Psn(0x800000), Psn(0)), -0x800000);
}

TEST(Seq24_InWindow, HalfOpenAcrossWrap) {
  const Psn lo(0xFFFFFE);
  EXPECT_TRUE(Psn(0xFFFFFE).in_window(lo, 4));
  EXPECT_TRUE(Psn(1).in_window(lo, 4));
  EXPECT_FALSE(Psn(2).in_window(lo, 4));
  EXPECT_FALSE(Psn(0xFFFFFD).in_window(lo, 4));
  EXPECT_FALSE(Psn(0).in_window(lo, 0));
}

TEST(Seq24_Types, PsnAndMsnDoNotMix) {
  EXPECT_FALSE((std::is_convertible_v<Psn, Msn>));
  EXPECT_FALSE((std::is_convertible_v<std::uint32_t, Psn>));
}

}  // namespace
}  // namespace uroce::transport
