#include "pfc/events.h"

#include <gtest/gtest.h>

#include <array>
#include <string>

namespace uroce::pfc {
namespace {

TEST(FormatPfcEvent, StormLine) {
  PfcEvent e;
  e.type = PfcEventType::kStormDetected;
  e.at = 200'000'000;
  e.prio = 3;
  e.since = 5;
  std::array<char, 128> buf{};
  const std::size_t n = format_pfc_event(e, buf);
  EXPECT_EQ(std::string(buf.data(), n), "pfc-storm-detected t=200000000ns prio=3 since=5ns");
}

TEST(FormatPfcEvent, LoopLine) {
  PfcEvent e;
  e.type = PfcEventType::kLoopReplay;
  e.at = 7;
  e.src_ip = 0x0a000102;
  e.qpn = 0x11;
  e.psn = 42;
  e.ttl = 58;
  e.ref_ttl = 60;
  e.suppressed = 9;
  std::array<char, 160> buf{};
  const std::size_t n = format_pfc_event(e, buf);
  EXPECT_EQ(std::string(buf.data(), n),
            "loop-replay-lower-ttl t=7ns src=10.0.1.2 qpn=0x000011 psn=42 ttl=58 ref_ttl=60 "
            "suppressed=9");
}

TEST(FormatPfcEvent, TruncatesToBufferAndTerminates) {
  PfcEvent e;
  e.type = PfcEventType::kStormRestored;
  std::array<char, 8> buf{};
  buf.fill('x');
  EXPECT_EQ(format_pfc_event(e, buf), 7u);
  EXPECT_EQ(std::string(buf.data()), "pfc-sto");
  EXPECT_EQ(format_pfc_event(e, std::span<char>()), 0u);
}

TEST(PfcEventName, EveryType) {
  EXPECT_EQ(pfc_event_name(PfcEventType::kStormRestored), "pfc-storm-restored");
  EXPECT_EQ(pfc_event_name(PfcEventType::kOwnPacket), "loop-own-packet");
  EXPECT_EQ(pfc_event_name(PfcEventType::kTtlOutlier), "ttl-outlier");
}

}  // namespace
}  // namespace uroce::pfc
