#include "datapath/transport/rc_send_queue.h"

#include <gtest/gtest.h>

namespace uroce::transport {
namespace {

SendWr wr_of(WrOpcode op, std::uint32_t len) {
  SendWr w;
  w.opcode = op;
  w.num_sge = 1;
  w.sge[0].length = len;
  return w;
}

TEST(WqePackets, CeilOfLengthOverMtuAtLeastOne) {
  EXPECT_EQ(wqe_packets(wr_of(WrOpcode::kSend, 0), 1024), 1u);
  EXPECT_EQ(wqe_packets(wr_of(WrOpcode::kSend, 1024), 1024), 1u);
  EXPECT_EQ(wqe_packets(wr_of(WrOpcode::kSend, 1025), 1024), 2u);
  EXPECT_EQ(wqe_packets(wr_of(WrOpcode::kRdmaRead, 10000), 256), 40u);
  EXPECT_EQ(wqe_packets(wr_of(WrOpcode::kFetchAdd, 8), 256), 1u);
}

TEST(WcOpcodeFor, MapsEveryRcOpcode) {
  EXPECT_EQ(wc_opcode_for(WrOpcode::kSendImm), WcOpcode::kSend);
  EXPECT_EQ(wc_opcode_for(WrOpcode::kSendInv), WcOpcode::kSend);
  EXPECT_EQ(wc_opcode_for(WrOpcode::kRdmaWriteImm), WcOpcode::kRdmaWrite);
  EXPECT_EQ(wc_opcode_for(WrOpcode::kRdmaRead), WcOpcode::kRdmaRead);
  EXPECT_EQ(wc_opcode_for(WrOpcode::kCmpSwap), WcOpcode::kCompSwap);
  EXPECT_EQ(wc_opcode_for(WrOpcode::kFetchAdd), WcOpcode::kFetchAdd);
}

// Three started WQEs at PSNs [0xFFFFFE, 0xFFFFFF], [0, 2], [3].
struct SqFixture : ::testing::Test {
  RcSendQueue sq{8, 1};
  void SetUp() override {
    sq.reset(Psn(0xFFFFFE));
    const std::uint32_t n[] = {2, 3, 1};
    Psn p(0xFFFFFE);
    for (std::uint32_t k : n) {
      SendWqe* w = sq.q.push_slot();
      ASSERT_NE(w, nullptr);
      w->started = true;
      w->first_psn = p;
      w->npkts = k;
      p += k;
      ++sq.sent_idx;
    }
    sq.req_idx = sq.sent_idx;
    sq.psn_high = p;
  }
};

TEST_F(SqFixture, Find_AcrossWrap) {
  EXPECT_EQ(sq.find(Psn(0xFFFFFF)), &sq.q.at(0));
  EXPECT_EQ(sq.find(Psn(0)), &sq.q.at(1));
  EXPECT_EQ(sq.find(Psn(3)), &sq.q.at(2));
  EXPECT_EQ(sq.find(Psn(4)), nullptr);
}

TEST_F(SqFixture, Rewind_PointsAtWqeAndPacket) {
  sq.rewind(Psn(1));
  EXPECT_EQ(sq.req_idx, 1u);
  EXPECT_EQ(sq.req_pkt, 1u);
  sq.rewind(Psn(4));  // psn_high: the next fresh WQE
  EXPECT_EQ(sq.req_idx, 3u);
  EXPECT_EQ(sq.req_pkt, 0u);
}

TEST_F(SqFixture, SkipAcknowledged_MovesPastAckedPackets) {
  sq.rewind(Psn(0xFFFFFE));
  sq.q.pop();  // the first WQE completed
  sq.comp_psn = Psn(1);
  sq.skip_acknowledged();
  EXPECT_EQ(sq.req_idx, 1u);
  EXPECT_EQ(sq.req_pkt, 1u);
}

TEST_F(SqFixture, Reset_EmptiesAndRestarts) {
  sq.reset(Psn(7));
  EXPECT_TRUE(sq.q.empty());
  EXPECT_EQ(sq.req_idx, sq.q.head());
  EXPECT_EQ(sq.comp_psn, Psn(7));
  EXPECT_FALSE(sq.outstanding());
}

}  // namespace
}  // namespace uroce::transport
