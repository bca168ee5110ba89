#include "datapath/wire/dc_aeth.h"

#include <gtest/gtest.h>

#include <set>
#include <string_view>

namespace uroce::wire {
namespace {

TEST(DcAethHdr_Make, BigEndianLayout) {
  const DcAethHdr h = DcAethHdr::make(0x0102, DcStatus::kKeyViolation, 0x05060708, 0x090a0b0c);
  const std::uint8_t want[DcAethHdr::kSize] = {0x01, 0x02, 0x04, 0x00, 0x05, 0x06,
                                               0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c};
  for (std::size_t i = 0; i < DcAethHdr::kSize; ++i) EXPECT_EQ(h.raw[i], want[i]) << i;
}

TEST(DcAethHdr_Read, RoundTrip) {
  const DcAethHdr h = DcAethHdr::make(0xfffe, DcStatus::kGone, 0xfffffffeu, 0x00abcdef);
  std::uint8_t buf[DcAethHdr::kSize];
  h.write(buf);
  const DcAethHdr r = DcAethHdr::read(buf);
  EXPECT_EQ(r.lane(), 0xfffe);
  EXPECT_EQ(r.status(), DcStatus::kGone);
  EXPECT_TRUE(r.status_valid());
  EXPECT_EQ(r.conn(), 0xfffffffeu);
  EXPECT_EQ(r.value(), 0x00abcdefu);
  EXPECT_EQ(r.raw[3], 0);
}

TEST(DcAethHdr_Status, WireValues) {
  EXPECT_EQ(static_cast<int>(DcStatus::kOk), 0);
  EXPECT_EQ(static_cast<int>(DcStatus::kGone), 1);
  EXPECT_EQ(static_cast<int>(DcStatus::kUnknown), 2);
  EXPECT_EQ(static_cast<int>(DcStatus::kBusy), 3);
  EXPECT_EQ(static_cast<int>(DcStatus::kKeyViolation), 4);
  EXPECT_EQ(static_cast<int>(DcStatus::kNoSr), 5);
  EXPECT_EQ(kNumDcStatuses, 6);
}

// A reserved status value is kept as received, flagged by status_valid().
TEST(DcAethHdr_Status, ReservedValueIsNotValid) {
  std::uint8_t buf[DcAethHdr::kSize] = {0, 1, 6, 0, 0, 0, 0, 9, 0, 0, 0, 0};
  const DcAethHdr r = DcAethHdr::read(buf);
  EXPECT_FALSE(r.status_valid());
  EXPECT_EQ(static_cast<int>(r.status()), 6);
  EXPECT_EQ(r.lane(), 1);
  EXPECT_EQ(r.conn(), 9u);
  buf[2] = 0xff;
  EXPECT_FALSE(DcAethHdr::read(buf).status_valid());
}

// SACK is bit 7 of byte 3; the other bits of that byte stay as they are.
TEST(DcAethHdr_Set, SackIsBitSevenOfByteThree) {
  DcAethHdr h = DcAethHdr::make(3, DcStatus::kOk, 7);
  h.raw[3] = 0x01;
  EXPECT_FALSE(h.sack());
  h.set_sack(true);
  EXPECT_EQ(h.raw[3], 0x81);
  EXPECT_TRUE(h.sack());
  h.set_sack(false);
  EXPECT_EQ(h.raw[3], 0x01);
  EXPECT_EQ(h.status(), DcStatus::kOk);
  EXPECT_EQ(h.lane(), 3);
}

TEST(DcStatusName, DistinctForEveryStatus) {
  std::set<std::string_view> names;
  for (std::uint8_t i = 0; i < kNumDcStatuses; ++i) {
    names.insert(dc_status_name(static_cast<DcStatus>(i)));
  }
  EXPECT_EQ(names.size(), kNumDcStatuses);
  EXPECT_EQ(names.count("RESERVED"), 0u);
  EXPECT_EQ(dc_status_name(DcStatus::kOk), "OK");
  EXPECT_EQ(dc_status_name(DcStatus::kGone), "GONE");
  EXPECT_EQ(dc_status_name(DcStatus::kUnknown), "UNKNOWN");
  EXPECT_EQ(dc_status_name(DcStatus::kBusy), "BUSY");
  EXPECT_EQ(dc_status_name(DcStatus::kKeyViolation), "KEY_VIOLATION");
  EXPECT_EQ(dc_status_name(DcStatus::kNoSr), "NO_SR");
  EXPECT_EQ(dc_status_name(static_cast<DcStatus>(6)), "RESERVED");
  static_assert(dc_status_name(DcStatus::kGone) == "GONE");
}

}  // namespace
}  // namespace uroce::wire
