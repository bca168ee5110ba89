#include "datapath/wire/pfc.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

namespace uroce::wire {
namespace {

const MacAddr kSrc{{0x02, 0, 0, 0, 0, 0x07}};

TEST(BuildPfcPause, ExactBytes) {
  std::array<std::uint8_t, 64> buf{};
  buf.fill(0xee);
  ASSERT_EQ(build_pfc_pause(buf, kSrc, 0x48, 0xffff), kPfcFrameSize);
  const std::uint8_t want[34] = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00,
                                 0x00, 0x00, 0x07, 0x88, 0x08, 0x01, 0x01, 0x00, 0x48,
                                 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff,   // prio 0..3
                                 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0x00, 0x00};  // prio 4..7
  for (std::size_t i = 0; i < sizeof want; ++i) EXPECT_EQ(buf[i], want[i]) << i;
  for (std::size_t i = sizeof want; i < kPfcFrameSize; ++i) EXPECT_EQ(buf[i], 0) << i;
  EXPECT_EQ(buf[kPfcFrameSize], 0xee);  // nothing written past the frame
}

TEST(BuildPfcResume, ZeroQuantaForEnabledClasses) {
  std::array<std::uint8_t, kPfcFrameSize> buf{};
  ASSERT_EQ(build_pfc_resume(buf, kSrc, 0x08), kPfcFrameSize);
  PfcFrame f;
  ASSERT_EQ(parse_pfc(buf, f), PfcParseError::kOk);
  EXPECT_TRUE(f.pfc.enabled(3));
  EXPECT_FALSE(f.pfc.enabled(2));
  EXPECT_EQ(f.pfc.pause_time(3), 0);
  EXPECT_EQ(f.eth.src(), kSrc);
}

TEST(BuildPfc, PerPriorityQuantaRoundTrip) {
  std::array<std::uint8_t, kPfcFrameSize> buf{};
  const std::uint16_t q[8] = {1, 2, 3, 4, 5, 6, 7, 0x8000};
  ASSERT_EQ(build_pfc(buf, kSrc, 0xff, q), kPfcFrameSize);
  PfcFrame f;
  ASSERT_EQ(parse_pfc(buf, f), PfcParseError::kOk);
  EXPECT_EQ(f.pfc.class_enable(), 0xff);
  for (std::size_t p = 0; p < 8; ++p) EXPECT_EQ(f.pfc.pause_time(p), q[p]);
  EXPECT_FALSE(f.pfc.enabled(8));
}

TEST(BuildPfc, BufferTooSmallWritesNothing) {
  std::array<std::uint8_t, kPfcFrameSize - 1> buf{};
  EXPECT_EQ(build_pfc_pause(buf, kSrc, 1, 1), 0u);
  for (auto b : buf) EXPECT_EQ(b, 0);
}

TEST(ParsePfc, TruncatedAtEveryLength) {
  std::array<std::uint8_t, kPfcFrameSize> buf{};
  build_pfc_pause(buf, kSrc, 1, 100);
  PfcFrame f;
  for (std::size_t n = 0; n < EthHdr::kSize + PfcHdr::kSize; ++n) {
    EXPECT_EQ(parse_pfc(std::span(buf.data(), n), f), PfcParseError::kTruncated) << n;
  }
  // Without the Ethernet padding it still parses.
  EXPECT_EQ(parse_pfc(std::span(buf.data(), EthHdr::kSize + PfcHdr::kSize), f), PfcParseError::kOk);
}

TEST(ParsePfc, WrongEtherType) {
  std::array<std::uint8_t, kPfcFrameSize> buf{};
  build_pfc_pause(buf, kSrc, 1, 100);
  buf[13] = 0x09;
  PfcFrame f;
  EXPECT_EQ(parse_pfc(buf, f), PfcParseError::kNotMacControl);
}

TEST(ParsePfc, ClassicPauseIsWrongOpcode) {
  std::array<std::uint8_t, kPfcFrameSize> buf{};
  build_pfc_pause(buf, kSrc, 1, 100);
  buf[15] = 0x01;
  buf[14] = 0x00;  // opcode 0x0001 = 802.3x PAUSE
  PfcFrame f;
  EXPECT_EQ(parse_pfc(buf, f), PfcParseError::kNotPfcOpcode);
}

TEST(ParsePfc, WrongDestination) {
  std::array<std::uint8_t, kPfcFrameSize> buf{};
  build_pfc_pause(buf, kSrc, 1, 100);
  buf[5] = 0x02;
  PfcFrame f;
  EXPECT_EQ(parse_pfc(buf, f), PfcParseError::kBadDstMac);
  EXPECT_EQ(pfc_parse_error_name(PfcParseError::kBadDstMac), "BadDstMac");
}

TEST(PfcQuantaToNs, FiveTwelveBitTimes) {
  EXPECT_EQ(pfc_quanta_to_ns(1, 100'000'000'000ull), 6u);  // 5.12 ns, rounded up
  EXPECT_EQ(pfc_quanta_to_ns(0xffff, 10'000'000'000ull), 3355392u);
  EXPECT_EQ(pfc_quanta_to_ns(0, 10'000'000'000ull), 0u);
  EXPECT_EQ(pfc_quanta_to_ns(10, 0), 0u);
}

}  // namespace
}  // namespace uroce::wire
