#include "pfc/storm_watchdog.h"

#include <gtest/gtest.h>

#include <array>

#include "tests/pfc/fake_sinks.h"

namespace uroce::pfc {
namespace {

using testing::EventLog;
using Frame = std::array<std::uint8_t, wire::kPfcFrameSize>;
const wire::MacAddr kPeer{{0x02, 0, 0, 0, 0, 0x09}};

// 10 Gb/s: 0xffff quanta = 65535 x 51.2 ns = 3355392 ns exactly.
constexpr TimeNs kMaxPause = 3'355'392;

PauseGate make_gate() {
  PauseGateConfig c;
  c.pfc_enable = 0x08;
  c.link_bps = 10'000'000'000ull;
  return PauseGate(c);
}

void pause(PauseGate& g, TimeNs now, std::uint16_t quanta = 0xffff) {
  Frame f{};
  wire::build_pfc_pause(f, kPeer, 0x08, quanta);
  ASSERT_EQ(g.on_frame(f, now), wire::PfcParseError::kOk);
}

// A peer that refreshes its pause every ms from `from` to `to` inclusive.
void storm(PauseGate& g, StormWatchdog& w, EventLog& log, TimeNs from, TimeNs to) {
  for (TimeNs t = from; t <= to; t += kNsPerMs) {
    pause(g, t);
    w.poll(t, g, log);
  }
}

TEST(StormWatchdog_Check, DefaultsAreSonics) {
  StormWatchdogConfig c;
  EXPECT_EQ(c.detection_ns, 200 * kNsPerMs);
  EXPECT_EQ(c.restoration_ns, 200 * kNsPerMs);
  EXPECT_EQ(c.action, StormAction::kDrop);
  EXPECT_EQ(StormWatchdog::check(c), StormWatchdogConfigError::kOk);
  c.detection_ns = 0;
  EXPECT_EQ(StormWatchdog::check(c), StormWatchdogConfigError::kZeroDetection);
  c.detection_ns = 1;
  c.restoration_ns = 0;
  EXPECT_EQ(StormWatchdog::check(c), StormWatchdogConfigError::kZeroRestoration);
  EXPECT_EQ(storm_watchdog_config_error_name(StormWatchdogConfigError::kZeroRestoration),
            "ZeroRestoration");
}

TEST(StormWatchdog_Poll, DetectsAtDetectionTimeThenDropsAndRestores) {
  PauseGate g = make_gate();
  StormWatchdog w{StormWatchdogConfig{}};
  EventLog log;
  storm(g, w, log, 0, 199 * kNsPerMs);
  w.poll(200 * kNsPerMs - 1, g, log);
  EXPECT_FALSE(w.stormed(3));
  EXPECT_EQ(w.next_deadline(g, 200 * kNsPerMs - 1), 200 * kNsPerMs);
  EXPECT_EQ(g.tx_verdict(3, 200 * kNsPerMs - 1), TxVerdict::kWait);
  w.poll(200 * kNsPerMs, g, log);
  ASSERT_TRUE(w.stormed(3));
  ASSERT_EQ(log.events.size(), 1u);
  EXPECT_EQ(log.events[0].type, PfcEventType::kStormDetected);
  EXPECT_EQ(log.events[0].at, 200 * kNsPerMs);
  EXPECT_EQ(log.events[0].since, 0u);
  EXPECT_EQ(log.events[0].prio, 3);
  EXPECT_EQ(g.tx_verdict(3, 200 * kNsPerMs), TxVerdict::kDrop);
  EXPECT_EQ(g.tx_verdict(2, 200 * kNsPerMs), TxVerdict::kSend);

  // The peer keeps pausing until 300 ms; its last pause ends 3355392 ns later.
  storm(g, w, log, 201 * kNsPerMs, 300 * kNsPerMs);
  const TimeNs last_end = 300 * kNsPerMs + kMaxPause;
  EXPECT_EQ(w.next_deadline(g, 301 * kNsPerMs), last_end + 200 * kNsPerMs);
  w.poll(last_end + 200 * kNsPerMs - 1, g, log);
  EXPECT_TRUE(w.stormed(3));
  w.poll(last_end + 200 * kNsPerMs, g, log);
  EXPECT_FALSE(w.stormed(3));
  ASSERT_EQ(log.events.size(), 2u);
  EXPECT_EQ(log.events[1].type, PfcEventType::kStormRestored);
  EXPECT_EQ(log.events[1].since, 200 * kNsPerMs);
  EXPECT_EQ(g.override_of(3), GateOverride::kNone);
  EXPECT_EQ(w.stormed_ns(3, 999 * kNsPerMs), last_end + 200 * kNsPerMs - 200 * kNsPerMs);
  EXPECT_EQ(w.counters()[3].storms_detected, 1u);
  EXPECT_EQ(w.counters()[3].storms_restored, 1u);
  EXPECT_EQ(g.counters().prio[3].storm_drops, 1u);

  // Restored: pauses are obeyed again.
  pause(g, 600 * kNsPerMs);
  EXPECT_EQ(g.tx_verdict(3, 600 * kNsPerMs), TxVerdict::kWait);
}

TEST(StormWatchdog_Poll, IgnoreActionSendsThroughPauses) {
  PauseGate g = make_gate();
  StormWatchdogConfig c;
  c.action = StormAction::kIgnore;
  c.detection_ns = 10 * kNsPerMs;
  c.restoration_ns = 5 * kNsPerMs;
  StormWatchdog w(c);
  EventLog log;
  storm(g, w, log, 0, 20 * kNsPerMs);
  ASSERT_TRUE(w.stormed(3));
  EXPECT_EQ(g.override_of(3), GateOverride::kIgnorePauses);
  EXPECT_EQ(g.tx_verdict(3, 20 * kNsPerMs), TxVerdict::kSend);
  EXPECT_EQ(g.counters().prio[3].ignored_stormed, 10u);  // pauses at 11..20 ms
  EXPECT_EQ(g.counters().prio[3].storm_drops, 0u);
}

TEST(StormWatchdog_Poll, ResumeFrameStartsRestorationClock) {
  PauseGate g = make_gate();
  StormWatchdog w{StormWatchdogConfig{}};
  EventLog log;
  storm(g, w, log, 0, 250 * kNsPerMs);
  ASSERT_TRUE(w.stormed(3));
  pause(g, 250 * kNsPerMs + 1, 0);  // resume
  w.poll(450 * kNsPerMs, g, log);
  EXPECT_TRUE(w.stormed(3));
  w.poll(450 * kNsPerMs + 1, g, log);
  EXPECT_FALSE(w.stormed(3));
}

TEST(StormWatchdog_Poll, PauseDuringRestorationRestartsIt) {
  PauseGate g = make_gate();
  StormWatchdog w{StormWatchdogConfig{}};
  EventLog log;
  storm(g, w, log, 0, 200 * kNsPerMs);
  ASSERT_TRUE(w.stormed(3));
  pause(g, 350 * kNsPerMs, 1);  // one short pause ends at 350 ms + 52 ns
  w.poll(550 * kNsPerMs, g, log);
  EXPECT_TRUE(w.stormed(3));
  w.poll(550 * kNsPerMs + 52, g, log);
  EXPECT_FALSE(w.stormed(3));
}

TEST(StormWatchdog_Poll, GappedPausesAreNotAStorm) {
  PauseGate g = make_gate();
  StormWatchdog w{StormWatchdogConfig{}};
  EventLog log;
  // 1000 quanta (51.2 us) every 100 us for 300 ms: paused half the time,
  // never continuously.
  for (TimeNs t = 0; t <= 300 * kNsPerMs; t += 100 * kNsPerUs) {
    pause(g, t, 1000);
    w.poll(t + 51199, g, log);
    w.poll(t + 51200, g, log);
  }
  EXPECT_FALSE(w.stormed(3));
  EXPECT_TRUE(log.events.empty());
}

TEST(StormWatchdog_Poll, DisabledPriorityNotWatched) {
  PauseGate g = make_gate();
  StormWatchdogConfig c;
  c.enable = 0xf7;
  StormWatchdog w(c);
  EventLog log;
  storm(g, w, log, 0, 300 * kNsPerMs);
  EXPECT_FALSE(w.stormed(3));
  EXPECT_EQ(w.next_deadline(g, 300 * kNsPerMs), kNoDeadline);
}

}  // namespace
}  // namespace uroce::pfc
