#include "sched/pacer.h"

#include <gtest/gtest.h>

#include <vector>

namespace uroce::sched {
namespace {

constexpr TimeNs kUs = 1000;
constexpr TimeNs kMs = 1000 * kUs;

struct Activations {
  std::vector<FlowId> got;
  void operator()(FlowId f) { got.push_back(f); }
};

// When the engine thread runs: `on` ns out of every `period` (the rest it
// waits for a CPU); period 0: always.
struct Cpu {
  TimeNs period = 0;
  TimeNs on = 0;
  bool running(TimeNs now) const { return period == 0 || now % period < on; }
};

// Drives one paced flow that always has output the way the engine does
// (tx.h): every `step` ns that the thread runs it sends up to burst_frames
// frames of `frame` bytes if its rate allows, parks when it ran ahead, and
// rejoins when the wheel releases it. Returns the bytes sent by `until`.
std::uint64_t drive(Pacer& p, FlowId f, std::uint32_t frame, TimeNs step, TimeNs until,
                    Cpu cpu = {}) {
  bool ready = true;
  std::uint64_t bytes = 0;
  for (TimeNs now = step; now <= until; now += step) {
    if (!cpu.running(now)) continue;
    p.advance(now, [&](FlowId g) {
      if (g == f) ready = true;
    });
    if (!ready) continue;
    if (!p.may_send(f, now)) {
      p.park(f, now);
      ready = false;
      continue;
    }
    const std::uint64_t sent = static_cast<std::uint64_t>(p.burst_frames(f)) * frame;
    bytes += sent;
    p.sent(f, sent, now, true);
    if (!p.may_send(f, now)) {
      p.park(f, now);
      ready = false;
    }
  }
  return bytes;
}

TEST(Pacer_Set, UnpacedUntilSetAndAfterClear) {
  Pacer p(8, PacerConfig{}, 0);
  EXPECT_FALSE(p.paced(3));
  Activations a;
  ASSERT_TRUE(p.set(3, PaceSpec{1'000'000'000, 0, 0}, 4096, 0, a));
  EXPECT_TRUE(p.paced(3));
  EXPECT_EQ(p.count(), 1u);
  ASSERT_TRUE(p.set(3, PaceSpec{}, 4096, 0, a));
  EXPECT_FALSE(p.paced(3));
  EXPECT_EQ(p.count(), 0u);
  EXPECT_TRUE(a.got.empty());  // it was not waiting: nothing to hand back
}

TEST(Pacer_Set, OutOfRangeFlowIsRefused) {
  Pacer p(4, PacerConfig{}, 0);
  EXPECT_FALSE(p.set(4, PaceSpec{1000, 0, 0}, 1500, 0, [](FlowId) {}));
}

TEST(Pacer_Set, BurstFramesIsBurstOverTypicalPacketAtLeastOne) {
  Pacer p(4, PacerConfig{}, 0);
  p.set(0, PaceSpec{1'000'000'000, 65536, 4096}, 1500, 0, [](FlowId) {});
  EXPECT_EQ(p.burst_frames(0), 16u);
  p.set(1, PaceSpec{1'000'000'000, 100, 4096}, 1500, 0, [](FlowId) {});
  EXPECT_EQ(p.burst_frames(1), 1u);
  p.set(2, PaceSpec{1'000'000'000, 0, 0}, 1500, 0, [](FlowId) {});  // defaults
  EXPECT_EQ(p.burst_frames(2), 1u);
  PaceStatus st;
  ASSERT_TRUE(p.status(2, &st));
  EXPECT_EQ(st.spec.typical_bytes, 1500u);
  EXPECT_EQ(st.spec.burst_bytes, 1500u);
}

TEST(Pacer_Clear, AWaitingFlowIsHandedBackAtOnce) {
  Pacer p(4, PacerConfig{}, 0);
  p.set(2, PaceSpec{8'000'000, 0, 1000}, 1000, 0, [](FlowId) {});  // 1 ms per 1000 B
  p.sent(2, 1000, 0);
  ASSERT_FALSE(p.may_send(2, 0));
  p.park(2, 0);
  EXPECT_EQ(p.waiting(), 1u);
  Activations a;
  p.set(2, PaceSpec{}, 1000, 0, a);
  EXPECT_EQ(a.got, std::vector<FlowId>{2});
  EXPECT_EQ(p.waiting(), 0u);
}

TEST(Pacer_Park, ReleasedWhenItsRateAllowsAndTimeIsCounted) {
  Pacer p(4, PacerConfig{}, 0);
  p.set(1, PaceSpec{8'000'000, 0, 1000}, 1000, 0, [](FlowId) {});  // 1000 B = 1 ms
  p.sent(1, 1000, 0);
  p.park(1, 0);
  Activations a;
  p.advance(999 * kUs, a);
  EXPECT_TRUE(a.got.empty());
  EXPECT_EQ(p.next_due(~TimeNs{0}), 1 * kMs);
  p.advance(1 * kMs, a);
  EXPECT_EQ(a.got, std::vector<FlowId>{1});
  PaceStatus st;
  ASSERT_TRUE(p.status(1, &st));
  EXPECT_EQ(st.parks, 1u);
  EXPECT_EQ(st.paced_ns, 1 * kMs);
  EXPECT_EQ(st.sent_bytes, 1000u);
  EXPECT_FALSE(st.waiting);
}

TEST(Pacer_Drive, AchievedRateWithinOnePercentFrom10MbpsTo100Gbps) {
  struct Case {
    std::uint64_t bps;
    std::uint32_t frame;
    std::uint32_t burst;
  };
  // Engine iterations every 200 ns, 1 us wheel slots: slower flows park for
  // many slots, faster ones send a burst of frames per turn.
  const Case cases[] = {{10'000'000, 1024, 0},         {100'000'000, 4096, 0},
                        {1'000'000'000, 4096, 0},      {10'000'000'000, 4096, 16384},
                        {40'000'000'000, 4096, 32768}, {100'000'000'000, 4096, 65536}};
  for (const Case& c : cases) {
    Pacer p(1, PacerConfig{}, 0);
    p.set(0, PaceSpec{c.bps, c.burst, c.frame}, c.frame, 0, [](FlowId) {});
    const TimeNs until = c.bps < 1'000'000'000 ? 200 * kMs : 10 * kMs;
    const std::uint64_t bytes = drive(p, 0, c.frame, 200, until);
    const double achieved = static_cast<double>(bytes) * 8e9 / static_cast<double>(until);
    EXPECT_NEAR(achieved / static_cast<double>(c.bps), 1.0, 0.01) << c.bps << " b/s";
  }
}

TEST(Pacer_Drive, RateKeptWhenTheEngineIsDescheduledForMilliseconds) {
  struct Case {
    std::uint64_t bps;
    std::uint32_t frame;
    std::uint32_t burst;
  };
  // The rates and bursts of verbs_rate_limit (4,170-byte frames of 4 KiB
  // WRITEs; 10 ms bursts, or one frame as ibv_modify_qp gives) and faster.
  const Case cases[] = {{10'000'000, 4170, 12'500},
                        {20'000'000, 4170, 0},
                        {100'000'000, 4170, 125'000},
                        {1'000'000'000, 4170, 0},
                        {10'000'000'000, 4170, 16'384}};
  // The thread runs 4 ms, then waits 6 ms for a CPU, again and again (two
  // busy loops beside it); and 3 ms out of 30 (a long wait: 27 ms).
  const Cpu cpus[] = {{10 * kMs, 4 * kMs}, {30 * kMs, 3 * kMs}};
  for (const Cpu& cpu : cpus) {
    for (const Case& c : cases) {
      Pacer p(1, PacerConfig{}, 0);
      p.set(0, PaceSpec{c.bps, c.burst, c.frame}, c.frame, 0, [](FlowId) {});
      // The window ends as a turn of the thread does (the time it was away
      // last is made up by then).
      const TimeNs periods = (c.bps < 1'000'000'000 ? 1200 * kMs : 90 * kMs) / cpu.period;
      const TimeNs until = periods * cpu.period + cpu.on - 200;
      const std::uint64_t bytes = drive(p, 0, c.frame, 200, until, cpu);
      const double achieved = static_cast<double>(bytes) * 8e9 / static_cast<double>(until);
      EXPECT_NEAR(achieved / static_cast<double>(c.bps), 1.0, 0.01)
          << c.bps << " b/s, on " << cpu.on << " ns of " << cpu.period;
    }
  }
}

TEST(Pacer_Sent, IdleFlowKeepsOnlyItsCredit) {
  // 1 Gb/s, one 1,000-byte frame per 8 us. Idle (no output) from 0 to
  // 50 ms, then back to back: credit_ns (2 ms, 250 frames) and the frame
  // due at 50 ms.
  Pacer p(1, PacerConfig{}, 0);
  p.set(0, PaceSpec{1'000'000'000, 1000, 1000}, 1000, 0, [](FlowId) {});
  p.sent(0, 1000, 0, false);
  int frames = 0;
  while (p.may_send(0, 50 * kMs)) {
    p.sent(0, 1000, 50 * kMs, true);
    ++frames;
  }
  EXPECT_EQ(frames, 251);
}

TEST(Pacer_Sent, BacklogHeldBackByAStallIsMadeUpToBacklogNs) {
  // The same flow with output all along, its engine away from 0 to 50 ms:
  // the 50 ms are owed (6,250 frames). After a 500 ms stall, backlog_ns
  // (100 ms: 12,500 frames) and the frame due at 550 ms.
  Pacer p(1, PacerConfig{}, 0);
  p.set(0, PaceSpec{1'000'000'000, 1000, 1000}, 1000, 0, [](FlowId) {});
  p.sent(0, 1000, 0, true);
  int frames = 0;
  while (p.may_send(0, 50 * kMs)) {
    p.sent(0, 1000, 50 * kMs, true);
    ++frames;
  }
  EXPECT_EQ(frames, 6250);
  frames = 0;
  while (p.may_send(0, 550 * kMs)) {
    p.sent(0, 1000, 550 * kMs, true);
    ++frames;
  }
  EXPECT_EQ(frames, 12'501);
}

TEST(Pacer_Park, AParkedFlowIsBacklogged) {
  // Idle after its last frame, then output again while it is ahead: it
  // parks, and a wake 5 ms late (the engine away) is owed in full.
  Pacer p(1, PacerConfig{}, 0);
  p.set(0, PaceSpec{1'000'000'000, 1000, 1000}, 1000, 0, [](FlowId) {});
  p.sent(0, 1000, 0, false);
  ASSERT_FALSE(p.may_send(0, 1 * kUs));
  p.park(0, 1 * kUs);
  std::vector<FlowId> got;
  p.advance(5 * kMs + 8 * kUs, [&](FlowId f) { got.push_back(f); });
  ASSERT_EQ(got, std::vector<FlowId>{0});
  int frames = 0;
  while (p.may_send(0, 5 * kMs + 8 * kUs)) {
    p.sent(0, 1000, 5 * kMs + 8 * kUs, true);
    ++frames;
  }
  EXPECT_EQ(frames, 626);  // 5 ms of its rate, and the frame due at 8 us
}

TEST(Pacer_Sent, CcLimitedBacklogIsNotMadeUp) {
  // Congestion control's rate: after a 5 ms stall with output all along,
  // its burst (one frame) and the frame due at 5 ms, then it waits.
  Pacer p(1, PacerConfig{}, 0);
  p.reserve(1);
  ASSERT_TRUE(p.set_cc(0, 1'000'000'000, 1000, 0, [](FlowId) {}));
  p.sent(0, 1000, 0, true);
  int frames = 0;
  while (p.may_send(0, 5 * kMs)) {
    p.sent(0, 1000, 5 * kMs, true);
    ++frames;
  }
  EXPECT_EQ(frames, 2);
}

TEST(Pacer_Status, UnpacedFlowHasNone) {
  Pacer p(2, PacerConfig{}, 0);
  PaceStatus st;
  EXPECT_FALSE(p.status(0, &st));
  EXPECT_FALSE(p.status(7, &st));
}

// ---- Congestion control's rate (set_cc) --------------------------------------

TEST(Pacer_SetCc, LowerOfVerbsAndCcRateApplies) {
  Pacer p(8, PacerConfig{}, 0);
  p.reserve(8);
  Activations a;
  ASSERT_TRUE(p.set(2, PaceSpec{1'000'000'000, 4096, 4096}, 4096, 0, a));
  ASSERT_TRUE(p.set_cc(2, 100'000'000, 4096, 0, a));
  // 1 ms at 100 Mb/s (the lower) is 12,500 bytes; at 1 Gb/s it would be ten
  // times that. One frame of 4,096 bytes per turn: 4 frames, the 4th ahead.
  const std::uint64_t bytes = drive(p, 2, 4096, kUs, kMs);
  EXPECT_GE(bytes, 12'288u);
  EXPECT_LE(bytes, 16'384u);
  // The verbs limit again the lower: a higher CC rate does not raise it.
  ASSERT_TRUE(p.set_cc(2, 10'000'000'000, 4096, kMs, a));
  PaceStatus st;
  ASSERT_TRUE(p.status(2, &st));
  EXPECT_EQ(st.spec.rate_bps, 1'000'000'000u);
  EXPECT_EQ(st.cc_bps, 10'000'000'000u);
}

TEST(Pacer_SetCc, ZeroLeavesTheVerbsLimitOrNothing) {
  Pacer p(8, PacerConfig{}, 0);
  p.reserve(8);
  Activations a;
  ASSERT_TRUE(p.set_cc(1, 5'000'000'000, 4096, 0, a));
  ASSERT_TRUE(p.set(3, PaceSpec{1'000'000'000, 0, 0}, 4096, 0, a));
  ASSERT_TRUE(p.set_cc(3, 5'000'000'000, 4096, 0, a));
  EXPECT_EQ(p.count(), 2u);
  ASSERT_TRUE(p.set_cc(1, 0, 4096, 0, a));
  EXPECT_FALSE(p.paced(1));
  ASSERT_TRUE(p.set_cc(3, 0, 4096, 0, a));
  EXPECT_TRUE(p.paced(3));
  PaceStatus st;
  ASSERT_TRUE(p.status(3, &st));
  EXPECT_EQ(st.cc_bps, 0u);
  EXPECT_EQ(st.spec.rate_bps, 1'000'000'000u);
  // Clearing the verbs limit of a flow CC still limits keeps it paced.
  ASSERT_TRUE(p.set_cc(3, 5'000'000'000, 4096, 0, a));
  ASSERT_TRUE(p.set(3, PaceSpec{}, 4096, 0, a));
  EXPECT_TRUE(p.paced(3));
}

TEST(Pacer_SetCc, RefusedWithoutReservedRoom) {
  Pacer p(8, PacerConfig{}, 0);
  p.reserve(1);
  Activations a;
  ASSERT_TRUE(p.set_cc(0, 1'000'000'000, 4096, 0, a));
  EXPECT_FALSE(p.set_cc(1, 1'000'000'000, 4096, 0, a));
  EXPECT_FALSE(p.paced(1));
  // A freed entry is reused.
  ASSERT_TRUE(p.set_cc(0, 0, 4096, 0, a));
  EXPECT_TRUE(p.set_cc(1, 1'000'000'000, 4096, 0, a));
}

TEST(Pacer_SetCc, RateChangeRescalesTheWaitOwed) {
  Pacer p(8, PacerConfig{}, 0);
  p.reserve(8);
  Activations a;
  ASSERT_TRUE(p.set_cc(4, 1'000'000'000, 4096, 0, a));
  // 12,500 bytes at 1 Gb/s: may send again at 100 us.
  p.sent(4, 12'500, 0);
  EXPECT_FALSE(p.may_send(4, 49 * kUs));
  // At 10 us, 90 us are owed; at twice the rate, 45: free at 55 us.
  ASSERT_TRUE(p.set_cc(4, 2'000'000'000, 4096, 10 * kUs, a));
  EXPECT_FALSE(p.may_send(4, 54 * kUs));
  EXPECT_TRUE(p.may_send(4, 55 * kUs));
}

TEST(Pacer_SetCc, CcLimitedFlowKeepsNoLongCredit) {
  // A verbs-limited flow idle for 1 ms may catch up on credit_ns (2 ms) of
  // its rate; one CC limits keeps one burst (a frame): after two frames at
  // once it waits.
  Pacer p(8, PacerConfig{}, 0);
  p.reserve(8);
  Activations a;
  ASSERT_TRUE(p.set_cc(1, 1'000'000'000, 4096, 0, a));
  ASSERT_TRUE(p.set(2, PaceSpec{1'000'000'000, 4096, 4096}, 4096, 0, a));
  p.sent(1, 8192, kMs);
  p.sent(2, 8192, kMs);
  EXPECT_FALSE(p.may_send(1, kMs));
  EXPECT_TRUE(p.may_send(2, kMs));
}

TEST(Pacer_Park, WakeByComesFirstWhenSooner) {
  Pacer p(8, PacerConfig{}, 0);
  Activations a;
  ASSERT_TRUE(p.set(5, PaceSpec{1'000'000, 0, 0}, 1000, 0, a));
  p.sent(5, 100'000, 0);  // 800 ms at 1 Mb/s
  p.park(5, 0, 20 * kUs);
  std::vector<FlowId> got;
  p.advance(19 * kUs, [&](FlowId f) { got.push_back(f); });
  EXPECT_TRUE(got.empty());
  p.advance(21 * kUs, [&](FlowId f) { got.push_back(f); });
  EXPECT_EQ(got, std::vector<FlowId>{5});
}

}  // namespace
}  // namespace uroce::sched
