#include "datapath/wire/homa_cutoffs.h"

#include <gtest/gtest.h>

namespace uroce::wire {
namespace {

HomaCutoffsHdr three_levels() {
  HomaCutoffsHdr h;
  h.set_generation(9);
  h.set_levels(3);
  h.set_top_priority(7);
  h.set_max_length(0, 256);
  h.set_max_length(1, 4096);
  h.set_max_length(2, HomaCutoffsHdr::kAnyLength);
  return h;
}

TEST(HomaCutoffsHdr_Set, BigEndianLayout) {
  const HomaCutoffsHdr h = three_levels();
  EXPECT_EQ(h.raw[3], 9);
  EXPECT_EQ(h.raw[4], 3);
  EXPECT_EQ(h.raw[5], 7);
  EXPECT_EQ(h.raw[8 + 2], 0x01);   // 256 = 0x00000100
  EXPECT_EQ(h.raw[12 + 2], 0x10);  // 4096 = 0x00001000
  EXPECT_EQ(h.raw[16], 0xff);
  for (std::size_t i = 20; i < HomaCutoffsHdr::kSize; ++i) EXPECT_EQ(h.raw[i], 0) << i;
}

TEST(HomaCutoffsHdr_Read, RoundTrip) {
  std::uint8_t buf[HomaCutoffsHdr::kSize];
  three_levels().write(buf);
  const HomaCutoffsHdr r = HomaCutoffsHdr::read(buf);
  EXPECT_EQ(r.generation(), 9u);
  EXPECT_EQ(r.levels(), 3);
  EXPECT_EQ(r.max_length(1), 4096u);
  EXPECT_TRUE(r.valid());
}

TEST(HomaCutoffsHdr_Valid, RejectsWhatTheReceiverCannotUse) {
  HomaCutoffsHdr h = three_levels();
  h.set_levels(0);
  EXPECT_FALSE(h.valid());  // no level
  h = three_levels();
  h.set_levels(9);
  EXPECT_FALSE(h.valid());  // more than 8
  h = three_levels();
  h.set_max_length(1, 256);
  EXPECT_FALSE(h.valid());  // not increasing
  h = three_levels();
  h.set_max_length(2, 100000);
  EXPECT_FALSE(h.valid());  // the last level must take any length
  h = three_levels();
  h.set_max_length(5, 1);
  EXPECT_FALSE(h.valid());  // an unused level not zero
  h = three_levels();
  h.set_top_priority(1);
  EXPECT_FALSE(h.valid());  // three levels need priorities top..top-2 >= 0
  h = three_levels();
  h.set_top_priority(8);
  EXPECT_FALSE(h.valid());
}

}  // namespace
}  // namespace uroce::wire
