#include "datapath/transport/wr.h"

#include "datapath/transport/wr_queue.h"

#include <gtest/gtest.h>

namespace uroce::transport {
namespace {

// A send queue slot (wr_queue.h) that held a WR with every SGE and inline
// byte set: what assign_used must overwrite, and only that.
struct StaleSend {
  StaleSend() {
    SendWr w;
    w.num_sge = kMaxSge;
    for (auto& s : w.sge) s = Sge{0xdead, 1, 2};
    assign_used(q.push_slot(), w);
    q.pop();
    w.num_sge = 0;
    w.flags = send_flag::kInline;
    w.inline_len = kMaxInline;
    w.inline_data.fill(0xee);
    assign_used(q.push_slot(), w);
    q.pop();
  }
  QueuedSendWr& slot() { return *q.push_slot(); }
  WrQueue<QueuedSendWr> q{1, send_area_sges(kMaxSge, kMaxInline)};
};

TEST(AssignUsed_SendWr, CopiesFieldsAndUsedSgesOnly) {
  SendWr src;
  src.wr_id = 5;
  src.opcode = WrOpcode::kRdmaWrite;
  src.flags = send_flag::kSignaled;
  src.remote_addr = 0x1000;
  src.rkey = 77;
  src.ud.remote_qpn = 9;
  src.num_sge = 2;
  src.sge[0] = Sge{0x10, 100, 3};
  src.sge[1] = Sge{0x20, 200, 4};
  StaleSend stale;
  QueuedSendWr& dst = stale.slot();
  assign_used(&dst, src);
  EXPECT_EQ(dst.wr_id, 5u);
  EXPECT_EQ(dst.opcode, WrOpcode::kRdmaWrite);
  EXPECT_EQ(dst.flags, send_flag::kSignaled);
  EXPECT_EQ(dst.remote_addr, 0x1000u);
  EXPECT_EQ(dst.rkey, 77u);
  EXPECT_EQ(dst.ud.remote_qpn, 9u);
  EXPECT_EQ(dst.num_sge, 2u);
  EXPECT_EQ(dst.sge()[1].addr, 0x20u);
  EXPECT_EQ(dst.sge()[1].lkey, 4u);
  EXPECT_EQ(dst.sge()[2].addr, 0xeeeeeeeeeeeeeeeeu);  // past num_sge: left alone
  EXPECT_EQ(dst.inline_len, 0u);
  EXPECT_EQ(dst.length(), 300u);
}

TEST(AssignUsed_SendWr, InlineCopiesInlineBytesOnly) {
  SendWr src;
  src.flags = send_flag::kInline;
  src.num_sge = 0;
  src.inline_len = 3;
  src.inline_data[0] = 1;
  src.inline_data[1] = 2;
  src.inline_data[2] = 3;
  StaleSend stale;
  QueuedSendWr& dst = stale.slot();
  assign_used(&dst, src);
  EXPECT_EQ(dst.num_sge, 0u);
  EXPECT_EQ(dst.inline_len, 3u);
  EXPECT_EQ(dst.inline_data()[2], 3);
  EXPECT_EQ(dst.inline_data()[3], 0xee);
  EXPECT_EQ(dst.length(), 3u);
}

TEST(AssignUsed_RecvWr, CopiesUsedSgesOnly) {
  RecvWr src;
  src.wr_id = 11;
  src.num_sge = 1;
  src.sge[0] = Sge{0x30, 64, 5};
  WrQueue<QueuedRecvWr> q(1, 3);
  RecvWr stale;
  stale.num_sge = 3;
  for (auto& s : stale.sge) s = Sge{0xbeef, 1, 1};
  assign_used(q.push_slot(), stale);
  q.pop();
  QueuedRecvWr& dst = *q.push_slot();
  assign_used(&dst, src);
  EXPECT_EQ(dst.wr_id, 11u);
  EXPECT_EQ(dst.num_sge, 1u);
  EXPECT_EQ(dst.sge()[0].length, 64u);
  EXPECT_EQ(dst.sge()[1].addr, 0xbeefu);
  EXPECT_EQ(dst.length(), 64u);
}

}  // namespace
}  // namespace uroce::transport
