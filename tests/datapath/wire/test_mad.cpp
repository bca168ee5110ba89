#include "datapath/wire/mad.h"

#include <gtest/gtest.h>

namespace uroce::wire {
namespace {

TEST(MadHdr_MakeCm, LayoutOfACmSend) {
  const MadHdr h = MadHdr::make_cm(CmAttr::kRep, 0x0102030405060708ull);
  const std::uint8_t want[MadHdr::kSize] = {1, 7, 2, 3, 0, 0,    0, 0, 1, 2, 3, 4,
                                            5, 6, 7, 8, 0, 0x13, 0, 0, 0, 0, 0, 0};
  for (std::size_t i = 0; i < MadHdr::kSize; ++i) EXPECT_EQ(h.raw[i], want[i]) << i;
  const MadHdr r = MadHdr::read(h.raw);
  EXPECT_EQ(r.base_version(), 1);
  EXPECT_EQ(r.mgmt_class(), kMgmtClassCm);
  EXPECT_EQ(r.class_version(), 2);
  EXPECT_EQ(r.method(), kMadMethodSend);
  EXPECT_FALSE(r.response());
  EXPECT_EQ(r.tid(), 0x0102030405060708ull);
  EXPECT_EQ(r.attr_id(), 0x0013);
}

TEST(MadHdr_SetResponse, KeepsMethodAndFieldsRoundTrip) {
  MadHdr h = MadHdr::make_cm(CmAttr::kReq, 1);
  h.set_response(true);
  EXPECT_EQ(h.raw[3], 0x83);
  EXPECT_EQ(h.method(), kMadMethodSend);
  h.set_method(0x7f);
  EXPECT_TRUE(h.response());
  h.set_status(0xabcd);
  h.set_attr_mod(0xdeadbeef);
  EXPECT_EQ(h.status(), 0xabcd);
  EXPECT_EQ(h.attr_mod(), 0xdeadbeefu);
  EXPECT_EQ(h.raw[4], 0xab);
  EXPECT_EQ(h.raw[23], 0xef);
}

TEST(MadBits_SetBits, TouchesOnlyItsField) {
  std::uint8_t b = 0xff;
  set_bits(&b, 3, 5, 0);
  EXPECT_EQ(b, 0x07);
  set_bits(&b, 3, 5, 0x3f);  // wider than the field: masked
  EXPECT_EQ(b, 0xff);
  EXPECT_EQ(get_bits(0xa5, 4, 4), 0xa);
}

}  // namespace
}  // namespace uroce::wire
