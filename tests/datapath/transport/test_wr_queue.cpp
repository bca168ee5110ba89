#include "datapath/transport/wr_queue.h"

#include <gtest/gtest.h>

#include <utility>

namespace uroce::transport {
namespace {

TEST(WrQueue_Bind, EachSlotOwnsItsAreaSizedByTheCaps) {
  WrQueue<QueuedRecvWr> q(3, 2);  // 4 slots (power of two), 2 SGEs each
  EXPECT_EQ(q.sges_per_slot(), 2u);
  for (std::uint32_t k = 0; k < q.slot_count(); ++k) {
    EXPECT_EQ(q.slot(k).area_sges(), 2u);
    if (k > 0) {
      EXPECT_EQ(q.slot(k).sge(), q.slot(k - 1).sge() + 2);
    }
  }
  RecvWr w;
  w.num_sge = 2;
  w.sge[1] = Sge{0x40, 8, 1};
  assign_used(q.push_slot(), w);
  WrQueue<QueuedRecvWr> moved = std::move(q);  // bindings survive a move
  EXPECT_EQ(moved.front().sge()[1].addr, 0x40u);
  EXPECT_EQ(moved.front().length(), 8u);
}

TEST(WrQueue_Bind, SendSlotsHoldInlineBytesOrSges) {
  EXPECT_EQ(send_area_sges(1, 0), 1u);
  EXPECT_EQ(send_area_sges(1, 17), 2u);  // 17 inline bytes need two entries
  EXPECT_EQ(send_area_sges(4, 64), 4u);
  EXPECT_EQ(send_area_sges(0, 0), 0u);
  WrQueue<QueuedSendWr> q(1, send_area_sges(1, 20));
  SendWr w;
  w.flags = send_flag::kInline;
  w.inline_len = 20;
  for (std::uint32_t i = 0; i < 20; ++i) w.inline_data[i] = static_cast<std::uint8_t>(i);
  assign_used(q.push_slot(), w);
  EXPECT_EQ(q.front().area_bytes(), 32u);
  EXPECT_EQ(q.front().inline_data()[19], 19);
  EXPECT_EQ(q.front().length(), 20u);
}

}  // namespace
}  // namespace uroce::transport
