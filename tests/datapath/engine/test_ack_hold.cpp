#include "datapath/engine/ack_hold.h"

#include <gtest/gtest.h>

namespace uroce::engine {
namespace {

AckHold on(std::uint16_t frames = 4, TimeNs ns = 20'000) {
  AckHoldConfig c;
  c.enabled = true;
  c.max_frames = frames;
  c.max_ns = ns;
  return AckHold(c);
}

TEST(AckHold_Keep, OffNeverKeeps) {
  AckHold h;
  EXPECT_FALSE(h.enabled());
  EXPECT_FALSE(h.keep(1, true, 5, 5, 0));
  EXPECT_FALSE(h.holding());
}

// While the stream goes on, a burst of ACKs waits until it has max_frames.
TEST(AckHold_Keep, AcksWaitWhileTheStreamGoesOn) {
  AckHold h = on(4);
  EXPECT_TRUE(h.keep(1, true, 5, 1, 1'000));
  EXPECT_TRUE(h.holding());
  EXPECT_TRUE(h.keep(2, true, 3, 1, 2'000));
  EXPECT_TRUE(h.keep(3, true, 1, 1, 3'000));
  EXPECT_FALSE(h.keep(4, true, 6, 1, 4'000));
}

// Anything but ACKs, an iteration that received nothing, or nothing to
// send: the burst leaves (or there is none).
TEST(AckHold_Keep, LeavesWithOtherFramesOrAnIdleIteration) {
  AckHold h = on();
  EXPECT_FALSE(h.keep(1, false, 5, 1, 0));
  EXPECT_FALSE(h.keep(1, true, 0, 1, 0));
  EXPECT_FALSE(h.keep(0, true, 5, 1, 0));
  EXPECT_FALSE(h.holding());
  EXPECT_TRUE(h.keep(1, true, 5, 5, 0));
  EXPECT_FALSE(h.keep(2, false, 5, 1, 100));
  EXPECT_FALSE(h.keep(2, true, 0, 1, 200));
}

// A request after an iteration that received nothing (a ping-pong's) is
// acknowledged at once: only a stream, frames in two iterations running,
// holds.
TEST(AckHold_Keep, AFirstArrivalAfterAnIdleIterationLeavesAtOnce) {
  AckHold h = on();
  EXPECT_FALSE(h.keep(1, true, 1, 0, 0));
  EXPECT_FALSE(h.holding());
  EXPECT_TRUE(h.keep(1, true, 1, 1, 100));
}

// The oldest ACK waits less than max_ns, counted from the first hold; a
// flush starts the count again.
TEST(AckHold_Keep, TheOldestWaitsLessThanMaxNs) {
  AckHold h = on(16, 20'000);
  EXPECT_TRUE(h.keep(1, true, 1, 1, 100'000));
  EXPECT_TRUE(h.keep(2, true, 1, 1, 119'999));
  EXPECT_FALSE(h.keep(3, true, 1, 1, 120'000));
  h.flushed();
  EXPECT_FALSE(h.holding());
  EXPECT_TRUE(h.keep(1, true, 1, 1, 130'000));
  EXPECT_TRUE(h.keep(2, true, 1, 1, 149'999));
}

}  // namespace
}  // namespace uroce::engine
