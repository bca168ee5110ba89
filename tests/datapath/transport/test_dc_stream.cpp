#include "datapath/transport/dc_stream.h"

#include <gtest/gtest.h>

namespace uroce::transport {
namespace {

const DcDest kA{false, wire::Ipv4Addr{0x0a000001}, {}, 0x100, 0xA};
const DcDest kB{false, wire::Ipv4Addr{0x0a000002}, {}, 0x200, 0xB};

TEST(DcConnClock, NewerThanTimeAndThanEveryOneBefore) {
  DcConnClock c;
  EXPECT_EQ(c.next(5 * kNsPerUs), 5u);
  EXPECT_EQ(c.next(5 * kNsPerUs), 6u);
  EXPECT_EQ(c.next(5 * kNsPerUs), 7u);
  EXPECT_EQ(c.next(100 * kNsPerUs), 100u);
  c.learn(50);
  EXPECT_EQ(c.next(100 * kNsPerUs), 101u);
  c.learn(1000);
  EXPECT_EQ(c.next(100 * kNsPerUs), 1001u);
}

TEST(DcConnClock, WrapsWithSerialArithmetic) {
  DcConnClock c;
  c.learn(0x7FFFFFF0);
  c.learn(0xBFFFFFFF);
  c.learn(0xFFFFFFFE);
  // Time 0 us is newer than 0xFFFFFFFE in serial arithmetic.
  EXPECT_EQ(c.next(0), 0u);
  EXPECT_EQ(c.next(0), 1u);
  c.learn(0xFFFFFFFF);
  EXPECT_EQ(c.last(), 1u);  // older than 1: not learnt
}

TEST(DcStream_Connect, FirstWrBindsAndCarriesSynUntilAResponse) {
  DcStream s;
  DcConnClock clk;
  DcStream::Switch sw;
  ASSERT_TRUE(s.connect(kA, Psn(10), true, clk, 7 * kNsPerUs, &sw));
  EXPECT_FALSE(sw.disconnect);
  EXPECT_TRUE(s.bound());
  EXPECT_EQ(s.conn(), 7u);
  EXPECT_EQ(s.start_psn(), Psn(10));
  EXPECT_TRUE(s.syn());
  s.on_response(6);
  EXPECT_TRUE(s.syn());
  s.on_response(7);
  EXPECT_FALSE(s.syn());
  // The same target again: no new connection.
  ASSERT_TRUE(s.connect(kA, Psn(20), false, clk, 8 * kNsPerUs, &sw));
  EXPECT_EQ(s.conn(), 7u);
  EXPECT_EQ(s.counters().connects, 1u);
}

TEST(DcStream_Connect, AnotherTargetWaitsForTheStreamToDrain) {
  DcStream s;
  DcConnClock clk;
  DcStream::Switch sw;
  ASSERT_TRUE(s.connect(kA, Psn(0), true, clk, 1000, &sw));
  s.on_response(s.conn());
  EXPECT_FALSE(s.connect(kB, Psn(5), false, clk, 2000, &sw));
  EXPECT_EQ(s.counters().wait_switch, 1u);
  const std::uint32_t old = s.conn();
  ASSERT_TRUE(s.connect(kB, Psn(5), true, clk, 3000, &sw));
  EXPECT_TRUE(sw.disconnect);
  EXPECT_EQ(sw.old_dest, kA);
  EXPECT_EQ(sw.old_conn, old);
  EXPECT_EQ(s.dest(), kB);
  EXPECT_TRUE(dc_conn_newer(s.conn(), old));
  EXPECT_EQ(s.start_psn(), Psn(5));
  EXPECT_TRUE(s.syn());
}

TEST(DcStream_OnAnswer, OtherConnectionsAreStale) {
  DcStream s;
  DcConnClock clk;
  DcStream::Switch sw;
  s.connect(kA, Psn(0), true, clk, 1000, &sw);
  const DcActionResult r = s.on_answer(DcAnswer::kGone, s.conn() + 1, 3, Psn(0), Psn(4), clk);
  EXPECT_EQ(r.action, DcAction::kIgnore);
  EXPECT_EQ(s.counters().stale_answers, 1u);
}

TEST(DcStream_OnAnswer, GoneTellsWhatRan) {
  DcStream s;
  DcConnClock clk;
  DcStream::Switch sw;
  s.connect(kA, Psn(0), true, clk, 1000, &sw);
  s.on_response(s.conn());
  DcActionResult r = s.on_answer(DcAnswer::kGone, s.conn(), 3, Psn(1), Psn(6), clk);
  EXPECT_EQ(r.action, DcAction::kAckedTo);
  EXPECT_EQ(r.psn, Psn(3));
  const std::uint32_t old = s.conn();
  s.restart(Psn(3), clk, 2000);
  EXPECT_TRUE(dc_conn_newer(s.conn(), old));
  EXPECT_EQ(s.start_psn(), Psn(3));
  EXPECT_TRUE(s.syn());
  // Below what is acknowledged already: from the unacknowledged PSN.
  r = s.on_answer(DcAnswer::kGone, s.conn(), 2, Psn(3), Psn(6), clk);
  EXPECT_EQ(r.psn, Psn(3));
  // Past what was sent: not believed.
  r = s.on_answer(DcAnswer::kGone, s.conn(), 9, Psn(3), Psn(6), clk);
  EXPECT_EQ(r.action, DcAction::kIgnore);
}

TEST(DcStream_OnAnswer, UnknownBeforeAnyResponseRestartsAboveTheFloor) {
  DcStream s;
  DcConnClock clk;
  DcStream::Switch sw;
  s.connect(kA, Psn(0), true, clk, 1000, &sw);
  const DcActionResult r = s.on_answer(DcAnswer::kUnknown, s.conn(), 5000, Psn(0), Psn(2), clk);
  EXPECT_EQ(r.action, DcAction::kRestart);
  EXPECT_EQ(r.psn, Psn(0));
  s.restart(r.psn, clk, 1000);
  EXPECT_EQ(s.conn(), 5001u);
  EXPECT_EQ(s.counters().unknown_restart, 1u);
}

TEST(DcStream_OnAnswer, UnknownAfterAResponseAborts) {
  DcStream s;
  DcConnClock clk;
  DcStream::Switch sw;
  s.connect(kA, Psn(0), true, clk, 1000, &sw);
  s.on_response(s.conn());
  const DcActionResult r = s.on_answer(DcAnswer::kUnknown, s.conn(), 5000, Psn(4), Psn(9), clk);
  EXPECT_EQ(r.action, DcAction::kAbort);
  EXPECT_EQ(r.psn, Psn(4));
  EXPECT_FALSE(s.bound());
  EXPECT_EQ(s.counters().unknown_abort, 1u);
}

TEST(DcStream_OnAnswer, BusyIsAnRnrWaitAndKeyViolationAnError) {
  DcStream s;
  DcConnClock clk;
  DcStream::Switch sw;
  s.connect(kA, Psn(0), true, clk, 1000, &sw);
  EXPECT_EQ(s.on_answer(DcAnswer::kBusy, s.conn(), 0, Psn(0), Psn(1), clk).action,
            DcAction::kRnrWait);
  EXPECT_TRUE(s.bound());
  EXPECT_EQ(s.on_answer(DcAnswer::kKeyViolation, s.conn(), 0, Psn(0), Psn(1), clk).action,
            DcAction::kKeyError);
  EXPECT_FALSE(s.bound());
}

}  // namespace
}  // namespace uroce::transport
