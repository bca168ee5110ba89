#include "datapath/wire/feth.h"

#include <gtest/gtest.h>

namespace uroce::wire {
namespace {

TEST(FethHdr, FieldsAtTheirBits) {
  const FethHdr h = FethHdr::make(kFethSelWholeMr, kFethPltGlobalVisibility | kFethPltPersistence);
  // SEL in bits 5..4, PLT in bits 3..0 of the big-endian word.
  EXPECT_EQ(h.raw[0], 0x00);
  EXPECT_EQ(h.raw[1], 0x00);
  EXPECT_EQ(h.raw[2], 0x00);
  EXPECT_EQ(h.raw[3], 0x13);
  EXPECT_EQ(h.sel(), kFethSelWholeMr);
  EXPECT_EQ(h.plt(), 3);
}

TEST(FethHdr, ReadKeepsReservedBitsAndSettersMaskWidth) {
  const std::uint8_t bytes[4] = {0xff, 0xff, 0xff, 0xc5};
  FethHdr h = FethHdr::read(bytes);
  EXPECT_EQ(h.sel(), 0);
  EXPECT_EQ(h.plt(), 5);
  h.set_sel(0x7);   // 2 bits wide
  h.set_plt(0x1f);  // 4 bits wide
  EXPECT_EQ(h.sel(), 3);
  EXPECT_EQ(h.plt(), 0xf);
  std::uint8_t out[4] = {};
  h.write(out);
  EXPECT_EQ(out[0], 0xff);
  EXPECT_EQ(out[3], 0xff);
}

}  // namespace
}  // namespace uroce::wire
