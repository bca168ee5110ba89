#include "datapath/wire/aeth.h"

#include <gtest/gtest.h>

namespace uroce::wire {
namespace {

TEST(AethSyndrome_Encode, MatchesIbtaTable) {
  EXPECT_EQ(aeth_ack_syndrome(), 0x1f);  // what rxe sends
  EXPECT_EQ(aeth_ack_syndrome(0), 0x00);
  EXPECT_EQ(aeth_rnr_nak_syndrome(0), 0x20);
  EXPECT_EQ(aeth_rnr_nak_syndrome(14), 0x2e);
  EXPECT_EQ(aeth_nak_syndrome(NakCode::kPsnSeqError), 0x60);
  EXPECT_EQ(aeth_nak_syndrome(NakCode::kInvalidRequest), 0x61);
  EXPECT_EQ(aeth_nak_syndrome(NakCode::kRemoteAccessError), 0x62);
  EXPECT_EQ(aeth_nak_syndrome(NakCode::kRemoteOpError), 0x63);
  EXPECT_EQ(aeth_nak_syndrome(NakCode::kInvalidRdRequest), 0x64);
  EXPECT_EQ(aeth_rnr_nak_syndrome(0xff), 0x3f);  // value clipped to 5 bits
}

TEST(AethHdr_Decode, TypeAndValue) {
  const AethHdr ack = AethHdr::make(0x1f, 7);
  EXPECT_TRUE(ack.is_ack());
  EXPECT_FALSE(ack.is_nak());
  EXPECT_EQ(ack.credit_count(), kAethCreditInvalid);
  const AethHdr rnr = AethHdr::make(aeth_rnr_nak_syndrome(9), 7);
  EXPECT_TRUE(rnr.is_rnr_nak());
  EXPECT_EQ(rnr.rnr_timer(), 9);
  const AethHdr nak = AethHdr::make(0x62, 7);
  EXPECT_TRUE(nak.is_nak());
  EXPECT_EQ(nak.nak_code(), NakCode::kRemoteAccessError);
  EXPECT_EQ(AethHdr::make(0x40, 0).type(), AethType::kReserved);
}

TEST(AethHdr_Layout, MsnIs24BitBigEndian) {
  const AethHdr h = AethHdr::make(0x61, 0xff123456);
  EXPECT_EQ(h.raw[0], 0x61);
  EXPECT_EQ(h.raw[1], 0x12);
  EXPECT_EQ(h.raw[2], 0x34);
  EXPECT_EQ(h.raw[3], 0x56);
  EXPECT_EQ(AethHdr::read(h.raw).msn(), 0x123456u);
}

}  // namespace
}  // namespace uroce::wire
