// The Vnic's timer phase (datapath/engine/vnic/timers.h): RC timers on the
// TimerHeap fire when due, move when their deadline moved later, and cost
// no scan while none is due.
#include <gtest/gtest.h>

#include "tests/datapath/engine/vnic_test_support.h"

namespace uroce::engine::test {
namespace {

struct Timers : TwoHosts, RcQpPair {
  void SetUp() override { open(a, b); }
};

TEST_F(Timers, TimerPhase_UnansweredRequestIsRetransmittedAfterTimeout) {
  // B's QP leaves RTS-ready states for RESET: A's first WRITE is dropped
  // there, unanswered, so only A's retransmit timer can complete it.
  namespace qa = transport::qp_attr;
  transport::QpAttrValues r;
  r.qp_state = QpState::kReset;
  ASSERT_EQ(b.modify(10, qa::kState, r), 0);
  aqp->post_send(write_wqe(1, b.va(0), b.key), {a.sge(0, 64)});
  run(6);
  const TimeNs due = a.vnic.deadline(aqp->qpn);
  ASSERT_NE(due, 0u);
  EXPECT_EQ(a.vnic.counters().timer_fires, 0u);
  EXPECT_TRUE(ascq->poll().empty());
  // B comes back (same PSNs as before), and A's timer fires once it is due.
  b.connect(10, QpType::kRc, aqp->qpn, kMacA, kIpA, 500, 100);
  clock.advance_to(due);
  run(10);
  EXPECT_EQ(a.vnic.counters().timer_fires, 1u);
  std::vector<QpStatus> st;
  a.vnic.qp_status(&st);
  ASSERT_EQ(st.size(), 1u);
  EXPECT_EQ(st[0].rc.tx_retransmits, 1u);
  const auto s = ascq->poll();
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].status, 0u);
}

TEST_F(Timers, TimerPhase_NoScanBeforeTheEarliestDeadline) {
  // Connected QPs with nothing outstanding arm no timer: no scan at all.
  run(20);
  EXPECT_EQ(a.vnic.counters().timer_scans, 0u);
  EXPECT_EQ(a.vnic.next_deadline(), TimerHeap::kNever);
  // One answered WRITE arms a timer; while it is not due, nothing scans.
  aqp->post_send(write_wqe(2, b.va(0), b.key), {a.sge(0, 64)});
  run(10);
  ASSERT_EQ(ascq->poll().size(), 1u);
  const TimeNs due = a.vnic.next_deadline();
  ASSERT_NE(due, TimerHeap::kNever);
  ASSERT_GT(due, clock.now());
  run(10);
  EXPECT_EQ(a.vnic.counters().timer_scans, 0u);
}

TEST_F(Timers, TimerPhase_LaterDeadlineMovesTheTimerInsteadOfFiring) {
  // Two WRITEs answered one after the other: the QP's deadline moves later
  // with the second; the heap key of the first comes due and is moved, not
  // fired.
  aqp->post_send(write_wqe(3, b.va(0), b.key), {a.sge(0, 64)});
  run(10);
  const TimeNs first = a.vnic.next_deadline();
  clock.advance_by(1000000);
  aqp->post_send(write_wqe(4, b.va(0), b.key), {a.sge(0, 64)});
  run(10);
  ASSERT_EQ(ascq->poll().size(), 2u);
  ASSERT_GT(a.vnic.deadline(aqp->qpn), first);
  clock.advance_to(first);
  run(2);
  EXPECT_EQ(a.vnic.counters().timer_scans, 1u);
  EXPECT_EQ(a.vnic.counters().timer_fires, 0u);
  EXPECT_EQ(a.vnic.next_deadline(), a.vnic.deadline(aqp->qpn));
}

}  // namespace
}  // namespace uroce::engine::test
