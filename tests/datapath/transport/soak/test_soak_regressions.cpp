// Deterministic reproductions of transport bugs the soak (test_soak.cpp)
// found, each reduced to the few packets that trigger it, so the fix stays
// covered whatever seeds the soak runs with.
#include <gtest/gtest.h>

#include <cstdint>

#include "tests/datapath/transport/rc_test_support.h"

namespace uroce::transport {
namespace {

using rctest::RcFixture;
using rctest::status;

struct SoakRegression : RcFixture {};

// Soak seed 16 at 10 %: a stale (reordered) RNR NAK paused the requester;
// while it waited, ACKs showed the NAKed PSN had been executed after all.
// When the RNR timer fired the requester resumed "at the NAKed PSN", which no
// longer belonged to any queued WQE, so it skipped to a fresh WQE at the next
// new PSN and left the unsent tail of a half-sent SEND behind: two packets
// with one PSN, a NAK invalid request and both QPs in ERR. It must resume at
// the oldest unacknowledged PSN instead.
TEST_F(SoakRegression, OnTimer_RnrResumeAfterAckedPastNakedPsnKeepsPsns) {
  cp.mtu = wire::PathMtu::k1024;  // sq_psn 100
  make_qp();
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kSend, 0, 16)), 0);    // PSN 100
  ASSERT_EQ(qp->post_send(send_wr(2, WrOpcode::kSend, 0, 3000)), 0);  // 101..103
  SendWr fa = send_wr(3, WrOpcode::kFetchAdd, 8192, 8);
  fa.compare_add = 1;
  ASSERT_EQ(qp->post_send(fa), 0);
  tx.limit = 3;
  ASSERT_EQ(pump(0), 3u);  // PSNs 100, 101, 102 out; 103 not yet
  tx.clear();
  deliver(ack(100, wire::aeth_rnr_nak_syndrome(1)), 1000);  // pause 10 us
  deliver(ack(102), 2000);                                  // 100..102 were executed after all
  ASSERT_EQ(scq.wc.size(), 1u);
  EXPECT_EQ(status(scq.wc[0]), WcStatus::kSuccess);
  qp->on_timer(1000 + rnr_timer_ns(1), io);
  tx.limit = SIZE_MAX;
  pump(1000 + rnr_timer_ns(1));
  ASSERT_GE(tx.size(), 1u);
  EXPECT_EQ(tx.at(0).bth.opcode(), wire::op::kRcSendLast);
  EXPECT_EQ(tx.at(0).bth.psn(), 103u);
  ASSERT_EQ(tx.size(), 2u);
  EXPECT_EQ(tx.at(1).bth.opcode(), wire::op::kRcFetchAdd);
  EXPECT_EQ(tx.at(1).bth.psn(), 104u);
}

}  // namespace
}  // namespace uroce::transport
