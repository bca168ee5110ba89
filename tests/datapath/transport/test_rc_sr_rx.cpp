#include "datapath/transport/rc_sr_rx.h"

#include <gtest/gtest.h>

namespace uroce::transport {
namespace {

TEST(SrRx_Hold, HeldReleasedAndCounted) {
  SrRx w;
  w.reset(Psn(100));
  EXPECT_FALSE(w.any());
  w.hold(Psn(101), 0x06);
  w.hold(Psn(355), 0x08);  // the window's last PSN: 100 + 255
  EXPECT_TRUE(w.any());
  EXPECT_EQ(w.held_count(), 2u);
  EXPECT_TRUE(w.held(Psn(101)));
  EXPECT_TRUE(w.held(Psn(355)));
  EXPECT_FALSE(w.held(Psn(102)));
  EXPECT_EQ(w.opcode(Psn(101)), 0x06);
  EXPECT_EQ(w.opcode(Psn(355)), 0x08);
  w.release(Psn(101));
  w.release(Psn(101));  // twice: counted once
  EXPECT_EQ(w.held_count(), 1u);
  EXPECT_FALSE(w.held(Psn(101)));
}

// sync drops what lies before the new start, so a slot is reused only for
// a PSN inside the new window.
TEST(SrRx_Sync, DropsWhatIsBeforeTheNewStart) {
  SrRx w;
  w.reset(Psn(0));
  w.hold(Psn(3), 1);
  w.hold(Psn(5), 1);
  w.hold(Psn(200), 1);
  w.sync(Psn(5));
  EXPECT_EQ(w.base(), Psn(5));
  EXPECT_FALSE(w.held(Psn(3)));
  EXPECT_TRUE(w.held(Psn(5)));
  EXPECT_EQ(w.held_count(), 2u);
  // Slot of 3 is 3 + 256's: free now.
  w.hold(Psn(259), 2);
  EXPECT_EQ(w.opcode(Psn(259)), 2);
  // A jump past the whole window (a long READ) empties it.
  w.sync(Psn(5000));
  EXPECT_FALSE(w.any());
  EXPECT_EQ(w.base(), Psn(5000));
}

// Bit i of the SACK names PSN ack + 1 + i: held ones, and those before the
// expected PSN (a duplicate's ACK may name an older PSN); window and
// trigger as set.
TEST(SrRx_Sack, BitmapNamesHeldPsnsAcrossTheWrap) {
  SrRx w;
  w.reset(Psn(0xfffffe));
  w.hold(Psn(0xffffff), 1);
  w.hold(Psn(0x000002), 1);
  w.hold(Psn(0x0000fd), 1);  // 255 after 0xfffffe
  w.set_trigger(Psn(2), false);
  wire::SrSackEthHdr h = w.sack(Psn(0xfffffd), Psn(0xfffffe));
  EXPECT_FALSE(h.bit(0));
  EXPECT_TRUE(h.bit(1));
  EXPECT_FALSE(h.bit(2));
  EXPECT_TRUE(h.bit(4));
  EXPECT_TRUE(h.bit(255));
  EXPECT_EQ(h.trigger_psn(), 2u);
  EXPECT_FALSE(h.dup());
  EXPECT_EQ(h.window(), kSrWindow);
  // Named from an older PSN: what lies before ePSN is held too.
  w.set_trigger(Psn(0xfffffa), true);
  h = w.sack(Psn(0xfffffb), Psn(0xfffffe));
  EXPECT_TRUE(h.bit(0));   // 0xfffffc
  EXPECT_TRUE(h.bit(1));   // 0xfffffd
  EXPECT_FALSE(h.bit(2));  // 0xfffffe: ePSN, missing
  EXPECT_TRUE(h.bit(3));
  EXPECT_TRUE(h.dup());
}

// A CE mark is named by its signed offset from the acknowledged PSN, across
// the wrap, until ce_sent(); reset() forgets it.
TEST(SrRx_Sack, CeNamedByItsOffsetUntilSent) {
  SrRx w;
  w.reset(Psn(0xfffffe));
  EXPECT_FALSE(w.sack(Psn(0xfffffd), Psn(0xfffffe)).ece());
  w.set_ce(Psn(0x000003));
  EXPECT_TRUE(w.ce());
  wire::SrSackEthHdr h = w.sack(Psn(0xfffffd), Psn(0xfffffe));
  EXPECT_TRUE(h.ece());
  EXPECT_EQ(h.ce_offset(), 6);
  h = w.sack(Psn(0x000005), Psn(0x000006));
  EXPECT_EQ(h.ce_offset(), -2);
  w.ce_sent();
  EXPECT_FALSE(w.ce());
  EXPECT_FALSE(w.sack(Psn(0x000005), Psn(0x000006)).ece());
  w.set_ce(Psn(7));
  w.reset(Psn(7));
  EXPECT_FALSE(w.ce());
}

TEST(SrRx_Recv, SlotsByRsn) {
  SrRx w;
  w.reset(Psn(0));
  w.recv(5).byte_len = 7;
  EXPECT_EQ(w.recv(5 + kSrRecvHeld).byte_len, 7u);  // the same slot
  w.recv(5).flags = SrRecvDone::kFilled;
  w.reset(Psn(0));
  EXPECT_EQ(w.recv(5).flags, 0);
}

}  // namespace
}  // namespace uroce::transport
