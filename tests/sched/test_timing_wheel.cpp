#include "sched/timing_wheel.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace uroce::sched {
namespace {

constexpr TimeNs kUs = 1000;

struct Released {
  std::vector<std::pair<FlowId, TimeNs>> got;
  TimeNs now = 0;
  void operator()(FlowId f) { got.emplace_back(f, now); }
};

// Advances in 1 us steps up to `until`, recording when each flow came out.
void run(TimingWheel& w, Released& r, TimeNs from, TimeNs until) {
  for (TimeNs t = from; t <= until; t += kUs) {
    r.now = t;
    w.advance(t, r);
  }
}

TEST(TimingWheel_Advance, ReleasesEachFlowInItsSlotInTimeOrder) {
  TimingWheel w(8, kUs, 64, 0);
  w.insert(3, 10 * kUs);
  w.insert(1, 5 * kUs);
  w.insert(2, 5 * kUs + 500);  // same 1 us slot as flow 1, inserted after it
  EXPECT_EQ(w.size(), 3u);
  Released r;
  run(w, r, kUs, 20 * kUs);
  ASSERT_EQ(r.got.size(), 3u);
  EXPECT_EQ(r.got[0], (std::pair<FlowId, TimeNs>{1, 5 * kUs}));
  EXPECT_EQ(r.got[1], (std::pair<FlowId, TimeNs>{2, 5 * kUs}));
  EXPECT_EQ(r.got[2], (std::pair<FlowId, TimeNs>{3, 10 * kUs}));
  EXPECT_EQ(w.size(), 0u);
}

TEST(TimingWheel_Insert, PastTimeIsDueAtTheNextAdvance) {
  TimingWheel w(4, kUs, 16, 100 * kUs);
  w.insert(0, 3 * kUs);
  Released r;
  r.now = 101 * kUs;
  EXPECT_EQ(w.advance(101 * kUs, r), 1u);
}

TEST(TimingWheel_Insert, BeyondTheSpanWaitsInItsLastSlot) {
  TimingWheel w(4, kUs, 16, 0);  // spans 16 us
  w.insert(0, 1000 * kUs);
  Released r;
  run(w, r, kUs, 20 * kUs);
  ASSERT_EQ(r.got.size(), 1u);
  EXPECT_EQ(r.got[0].second, 15 * kUs);  // the furthest slot, early
}

TEST(TimingWheel_Insert, MovesAWaitingFlowAndRemoveForgetsIt) {
  TimingWheel w(4, kUs, 16, 0);
  w.insert(0, 3 * kUs);
  w.insert(1, 3 * kUs);
  w.insert(0, 8 * kUs);  // moved, not duplicated
  EXPECT_EQ(w.size(), 2u);
  w.remove(1);
  w.remove(1);
  EXPECT_FALSE(w.waiting(1));
  Released r;
  run(w, r, kUs, 10 * kUs);
  ASSERT_EQ(r.got.size(), 1u);
  EXPECT_EQ(r.got[0], (std::pair<FlowId, TimeNs>{0, 8 * kUs}));
}

TEST(TimingWheel_Advance, ReleaseMayInsertAgainForALaterSlot) {
  TimingWheel w(2, kUs, 16, 0);
  w.insert(0, 2 * kUs);
  std::vector<TimeNs> at;
  for (TimeNs t = kUs; t <= 10 * kUs; t += kUs) {
    w.advance(t, [&](FlowId f) {
      at.push_back(t);
      if (at.size() < 3) w.insert(f, t + 3 * kUs);
    });
  }
  EXPECT_EQ(at, (std::vector<TimeNs>{2 * kUs, 5 * kUs, 8 * kUs}));
}

TEST(RateLimit_Sent, SpacesPacketsAtTheRate) {
  RateLimit rl(1'000'000'000, 0);  // 1 Gb/s: 1000 B every 8 us
  EXPECT_TRUE(rl.may_send(0));
  rl.sent(1000, 0);
  EXPECT_EQ(rl.next_send(), 8 * kUs);
  EXPECT_FALSE(rl.may_send(7 * kUs));
  EXPECT_TRUE(rl.may_send(8 * kUs));
  rl.sent(1000, 8 * kUs);
  EXPECT_EQ(rl.next_send(), 16 * kUs);
}

TEST(RateLimit_Burst, SavesAtMostOneBurstOfCredit) {
  RateLimit rl(1'000'000'000, 4000);  // a burst is 32 us of credit
  // Idle for a long time, then back to back: 4000 B go at once, then the rate.
  TimeNs now = 1'000'000 * kUs;
  int sent = 0;
  while (rl.may_send(now)) {
    rl.sent(1000, now);
    ++sent;
  }
  EXPECT_EQ(sent, 5);  // credit of 4000 B, and the packet that overdraws it
  EXPECT_EQ(rl.next_send(), now + 8 * kUs);
}

TEST(RateLimit_Set, SlackKeepsCreditForALateWake) {
  RateLimit rl(100'000'000'000, 4096, kUs);  // a packet is 0.33 us, a slot 1 us
  rl.sent(4096, 0);
  // Woken late: the credit kept is one slot (1 us, 12,500 B at 100 Gb/s)
  // rather than one 4 KiB burst (0.33 us).
  TimeNs now = 2 * kUs;
  int sent = 0;
  while (rl.may_send(now)) {
    rl.sent(4096, now);
    ++sent;
  }
  EXPECT_EQ(sent, 4);  // three packets of credit and the one that overdraws it
}

TEST(RateLimit_Set, ZeroRateIsUnlimited) {
  RateLimit rl;
  EXPECT_FALSE(rl.limited());
  rl.sent(1'000'000, 0);
  EXPECT_TRUE(rl.may_send(0));
}

// A paced sender on the wheel (1 us slots, the slot as its slack) for one
// virtual second at rates from 10 Mb/s to 100 Gb/s: the bytes it sent are
// the rate's within 0.5 %.
TEST(RateLimit_Wheel, AchievesTheRequestedRate) {
  for (const std::uint64_t rate :
       {10'000'000ull, 1'000'000'000ull, 40'000'000'000ull, 100'000'000'000ull}) {
    TimingWheel w(1, kUs, 1024, 0);
    RateLimit rl(rate, 4096, kUs);
    std::uint64_t bytes = 0;
    const TimeNs end = 1'000'000 * kUs;
    w.insert(0, 0);
    for (TimeNs t = kUs; t <= end; t += kUs) {
      w.advance(t, [&](FlowId f) {
        while (rl.may_send(t)) {
          rl.sent(4096, t);
          bytes += 4096;
        }
        w.insert(f, rl.next_send());
      });
    }
    const double achieved = static_cast<double>(bytes) * 8 / 1.0;
    EXPECT_NEAR(achieved / static_cast<double>(rate), 1.0, 0.005) << rate;
  }
}

}  // namespace
}  // namespace uroce::sched
