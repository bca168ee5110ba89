#include "datapath/transport/rc_sr_tx.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>

namespace uroce::transport {
namespace {

constexpr TimeNs us(TimeNs n) { return n * kNsPerUs; }

// A scoreboard and the counters it adds to.
struct Board {
  RcSrCounters ctr;
  SrTx t;
  Board() { t.bind(&ctr); }
  Board(const Board&) = delete;
  Board& operator=(const Board&) = delete;
};

// PSNs from `start`, one every microsecond from t = 0 (a fake clock: the
// scoreboard reads time only from its arguments).
void send_n(Board& b, Psn start, std::uint32_t n) {
  b.t.reset(start);
  for (std::uint32_t i = 0; i < n; ++i) b.t.on_sent(start + i, us(i));
}

wire::SrSackEthHdr sack_of(std::initializer_list<std::size_t> bits, bool dup = false) {
  wire::SrSackEthHdr h =
      wire::SrSackEthHdr::make(dup ? wire::SrSackEthHdr::kFlagDup : 0, 0, kSrWindow);
  for (std::size_t b : bits) h.set_bit(b);
  return h;
}

TEST(SrTx_OnAck, InOrderDeliveryLosesNothing) {
  Board b;
  send_n(b, Psn(100), 10);
  SrTx& t = b.t;
  EXPECT_EQ(t.in_flight(), 10u);
  for (std::uint32_t i = 1; i <= 10; ++i) t.on_ack(Psn(100 + i), nullptr, us(i - 1 + 20));
  EXPECT_EQ(t.in_flight(), 0u);
  EXPECT_EQ(t.min_rtt(), us(20));
  EXPECT_EQ(t.srtt(), us(20));
  Psn p;
  EXPECT_FALSE(t.next_lost(&p));
  EXPECT_EQ(b.ctr.sr_tx_lost, 0u);
  EXPECT_EQ(t.deadline(), 0u);  // nothing outstanding: no probe
}

// The first gap is not a loss: PSN 100 is late, not lost, as long as it
// arrives within RTT + reo_wnd of its sending; the reorder timer says when
// it would be.
TEST(SrTx_Detect, ReorderWithinTheWindowIsNoLoss) {
  Board b;
  send_n(b, Psn(100), 10);
  SrTx& t = b.t;
  const wire::SrSackEthHdr h = sack_of({1, 2, 3, 4});  // 101..104 held, 100 missing
  t.on_ack(Psn(100), &h, us(24));
  // Newest delivered: 104, sent at 4 us, RTT 20 us; reo_wnd = 20 / 4.
  EXPECT_EQ(t.min_rtt(), us(20));
  EXPECT_EQ(t.reo_wnd(), us(5));
  EXPECT_TRUE(t.held(Psn(101)));
  EXPECT_FALSE(t.lost(Psn(100)));
  EXPECT_EQ(t.deadline(), us(25));  // 0 + 20 + 5
  t.on_ack(Psn(105), nullptr, us(24) + 500);
  Psn p;
  EXPECT_FALSE(t.next_lost(&p));
  EXPECT_EQ(b.ctr.sr_tx_lost, 0u);
}

// Not there by its deadline: lost, sent again, and the loss is repaired.
TEST(SrTx_Detect, LostAfterRttPlusReorderWindow) {
  Board b;
  send_n(b, Psn(100), 10);
  SrTx& t = b.t;
  const wire::SrSackEthHdr h = sack_of({1, 2, 3, 4});
  t.on_ack(Psn(100), &h, us(24));
  t.on_timer(us(25));
  Psn p;
  ASSERT_TRUE(t.next_lost(&p));
  EXPECT_EQ(p, Psn(100));
  EXPECT_FALSE(t.lost(Psn(105)));  // sent after the newest delivered
  EXPECT_EQ(b.ctr.sr_tx_lost, 1u);
  t.on_sent(Psn(100), us(26));
  EXPECT_FALSE(t.next_lost(&p));
  t.on_ack(Psn(110), nullptr, us(46));
  EXPECT_EQ(t.in_flight(), 0u);
}

// A SACK with DUP (a retransmission that was not needed) doubles the
// reordering window, up to srtt.
TEST(SrTx_Detect, DupWidensTheReorderWindow) {
  Board b;
  send_n(b, Psn(0), 4);
  SrTx& t = b.t;
  const wire::SrSackEthHdr a = sack_of({1});
  t.on_ack(Psn(0), &a, us(41));  // RTT 40 us: reo_wnd 10 us
  EXPECT_EQ(t.reo_wnd(), us(10));
  const wire::SrSackEthHdr d = sack_of({1}, true);
  t.on_ack(Psn(0), &d, us(42));
  EXPECT_EQ(t.reo_wnd(), us(20));
  t.on_ack(Psn(0), &d, us(43));
  t.on_ack(Psn(0), &d, us(44));
  EXPECT_EQ(t.reo_wnd(), t.srtt());  // capped
  EXPECT_EQ(b.ctr.sr_tx_spurious, 3u);
}

// A connection's scoreboard with RTT estimates and a reordering
// multiplier above 1 (a DUP SACK).
SrTx& with_estimates(Board& b) {
  send_n(b, Psn(0), 4);
  SrTx& t = b.t;
  const wire::SrSackEthHdr d = sack_of({1}, true);
  t.on_ack(Psn(0), &d, us(1000));
  EXPECT_NE(t.srtt(), 0u);
  EXPECT_GT(t.reo_wnd(), t.min_rtt() / 4);
  return t;
}

// The state comes from the device's pool: a connection that starts on it
// must not keep the last one's RTT or reordering estimates (a slow peer's
// srtt of 1 s held a new connection's first probe back by 2 s; found by the
// hostile_sr suite).
TEST(SrTx_Reset, ForgetsThePreviousConnectionsEstimates) {
  Board b;
  SrTx& t = with_estimates(b);
  t.reset(Psn(500));
  EXPECT_EQ(t.srtt(), 0u);
  EXPECT_EQ(t.min_rtt(), 0u);
  EXPECT_EQ(t.pto(), SrTx::kMinPto);
  t.on_sent(Psn(500), us(2000));
  t.on_ack(Psn(501), nullptr, us(2040));  // the new connection's RTT, 40 us
  EXPECT_EQ(t.min_rtt(), us(40));
  EXPECT_EQ(t.reo_wnd(), us(10));  // a quarter of it: the multiplier back at 1
}

// A new DC connection to the host of the last one (RcRequester::dc_sr_begin)
// keeps the RTT estimates, and only them: nothing outstanding, the
// reordering multiplier back at 1.
TEST(SrTx_Restart, KeepsTheRttEstimatesOnly) {
  Board b;
  SrTx& t = with_estimates(b);
  const TimeNs srtt = t.srtt();
  const TimeNs min_rtt = t.min_rtt();
  t.restart(Psn(500));
  EXPECT_EQ(t.srtt(), srtt);
  EXPECT_EQ(t.min_rtt(), min_rtt);
  EXPECT_EQ(t.pto(), std::max<TimeNs>(2 * srtt, SrTx::kMinPto));
  EXPECT_EQ(t.reo_wnd(), std::min<TimeNs>(min_rtt / 4, srtt));
  EXPECT_EQ(t.in_flight(), 0u);
  t.on_sent(Psn(500), us(2000));
  EXPECT_EQ(t.in_flight(), 1u);
}

// With a min_rtt far below srtt (a flow whose round trips grew behind
// queues), DUPs widen the window until srtt bounds it: past the 4 min_rtt
// a cap of 16 allowed, which under PFC pauses left sprayed flows resending
// what was only late.
TEST(SrTx_Detect, DupsWidenTheWindowUpToSrtt) {
  Board b;
  SrTx& t = b.t;
  t.reset(Psn(0));
  t.on_sent(Psn(0), 0);
  t.on_ack(Psn(1), nullptr, us(4));  // min_rtt 4 us: reo_wnd 1 us
  t.on_sent(Psn(1), us(10));
  t.on_ack(Psn(2), nullptr, us(1010));  // srtt 4 + (1000 - 4) / 8 = 128.5 us
  EXPECT_EQ(t.min_rtt(), us(4));
  EXPECT_EQ(t.reo_wnd(), us(1));
  const TimeNs srtt = t.srtt();
  t.on_sent(Psn(2), us(1020));
  const wire::SrSackEthHdr d = sack_of({}, true);
  for (int i = 0; i < 10; ++i) t.on_ack(Psn(2), &d, us(1030));
  EXPECT_EQ(t.reo_wnd(), srtt);  // 1 us x 2^7 = 128 us, then the srtt bound
  EXPECT_GT(t.reo_wnd(), 4 * t.min_rtt());
}

// Nothing comes back: after PTO the newest outstanding PSN goes again as a
// probe; its SACK reveals the earlier holes, which the loss signal then
// marks, without waiting for the retransmission timeout.
TEST(SrTx_Probe, TailLossProbeThenRepair) {
  Board b;
  send_n(b, Psn(0), 5);
  SrTx& t = b.t;
  EXPECT_EQ(t.deadline(), us(4) + SrTx::kMinPto);
  t.on_timer(us(4) + SrTx::kMinPto);
  EXPECT_EQ(b.ctr.sr_tx_probes, 1u);
  Psn p;
  ASSERT_TRUE(t.next_lost(&p));
  EXPECT_EQ(p, Psn(4));
  t.on_sent(Psn(4), us(110));
  EXPECT_EQ(t.deadline(), us(110) + 2 * SrTx::kMinPto);  // the next probe backs off
  const wire::SrSackEthHdr h = sack_of({4});
  t.on_ack(Psn(0), &h, us(130));
  for (std::uint32_t i = 0; i < 4; ++i) EXPECT_TRUE(t.lost(Psn(i))) << i;
  ASSERT_TRUE(t.next_lost(&p));
  EXPECT_EQ(p, Psn(0));
}

// Probes whose packets or answers are lost too: each waits twice the one
// before, kMaxProbes of them, then only the retransmission timeout is left;
// progress starts a new round at PTO.
TEST(SrTx_Probe, ProbesBackOffUpToKMaxProbes) {
  Board b;
  send_n(b, Psn(0), 5);
  SrTx& t = b.t;
  TimeNs now = us(4);
  for (std::uint32_t k = 0; k < SrTx::kMaxProbes; ++k) {
    EXPECT_EQ(t.deadline(), now + (SrTx::kMinPto << k)) << k;
    now = t.deadline();
    t.on_timer(now);
    EXPECT_EQ(t.probes(), k + 1);
    Psn p;
    ASSERT_TRUE(t.next_lost(&p));
    EXPECT_EQ(p, Psn(4));
    t.on_sent(p, now);
  }
  EXPECT_EQ(b.ctr.sr_tx_probes, SrTx::kMaxProbes);
  EXPECT_EQ(t.deadline(), 0u);  // no probe past kMaxProbes
  t.on_timer(now + 100 * SrTx::kMinPto);
  EXPECT_EQ(b.ctr.sr_tx_probes, SrTx::kMaxProbes);
  t.on_ack(Psn(1), nullptr, now + us(1));
  EXPECT_EQ(t.probes(), 0u);
  EXPECT_EQ(t.deadline(), now + us(1) + t.pto());
}

// An atomic's PSN is delivered by its ACK, recovered by RC's rules: never
// deemed lost here.
TEST(SrTx_Detect, ExemptPsnsNeverLost) {
  Board b;
  SrTx& t = b.t;
  t.reset(Psn(0));
  for (std::uint32_t i = 0; i < 3; ++i) t.on_sent(Psn(i), 0, SrTx::Kind::kAtomic);
  t.on_sent(Psn(3), us(1));
  const wire::SrSackEthHdr h = sack_of({3});
  t.on_ack(Psn(0), &h, us(21));
  t.on_timer(us(500));
  Psn p;
  EXPECT_FALSE(t.next_lost(&p));
}

// A stale acknowledgement moves nothing; one past what was sent stops at it;
// the window wraps at 24 bits.
TEST(SrTx_OnAck, StaleAndGhostAcksAcrossTheWrap) {
  Board b;
  send_n(b, Psn(0xfffffe), 4);
  SrTx& t = b.t;  // 0xfffffe .. 0x000001
  t.on_ack(Psn(0xfffffd), nullptr, us(10));
  EXPECT_EQ(t.in_flight(), 4u);
  t.on_ack(Psn(0), nullptr, us(20));
  EXPECT_EQ(t.base(), Psn(0));
  EXPECT_EQ(t.in_flight(), 2u);
  t.on_ack(Psn(9), nullptr, us(30));
  EXPECT_EQ(t.base(), Psn(2));
  EXPECT_EQ(t.in_flight(), 0u);
}

// A PSN sent again after its acknowledgement (a go-back-N of RC's rules)
// changes nothing; one past the window starts the tracking again there.
TEST(SrTx_OnSent, AcknowledgedIgnoredBeyondWindowRestarts) {
  Board b;
  send_n(b, Psn(10), 3);
  b.t.on_ack(Psn(12), nullptr, us(20));
  b.t.on_sent(Psn(11), us(21));
  EXPECT_EQ(b.t.base(), Psn(12));
  EXPECT_EQ(b.t.in_flight(), 1u);
  b.t.on_sent(Psn(12 + kSrWindow), us(22));
  EXPECT_EQ(b.t.base(), Psn(12 + kSrWindow));
  EXPECT_EQ(b.t.in_flight(), 1u);
}

// The retransmission timeout deems lost exactly what is outstanding, not
// held and not exempt.
TEST(SrTx_OnRto, MarksOnlyWhatIsNotHeld) {
  Board b;
  SrTx& t = b.t;
  t.reset(Psn(0));
  t.on_sent(Psn(0), 0, SrTx::Kind::kAtomic);
  for (std::uint32_t i = 1; i < 6; ++i) t.on_sent(Psn(i), us(i));
  const wire::SrSackEthHdr h = sack_of({2, 3});
  t.on_ack(Psn(0), &h, us(10));
  t.on_rto();
  EXPECT_FALSE(t.lost(Psn(0)));  // exempt
  EXPECT_TRUE(t.lost(Psn(1)));
  EXPECT_FALSE(t.lost(Psn(2)));
  EXPECT_FALSE(t.lost(Psn(3)));
  EXPECT_TRUE(t.lost(Psn(4)));
  EXPECT_TRUE(t.lost(Psn(5)));
  t.forget(Psn(4));
  EXPECT_FALSE(t.lost(Psn(4)));
}

// READ response PSNs (docs/lossy.md "READ responses"): a response
// delivers its PSN and feeds the loss signal; a gap is lost once a later
// response arrived and RTT + reo_wnd passed, as for request PSNs.
TEST(SrTx_OnResponse, LaterResponseMakesTheGapLost) {
  Board b;
  SrTx& t = b.t;
  t.reset(Psn(0));
  for (std::uint32_t i = 0; i < 4; ++i) t.on_sent(Psn(i), 0, SrTx::Kind::kReadResponse);
  EXPECT_TRUE(t.on_response(Psn(0), us(20)));
  EXPECT_TRUE(t.on_response(Psn(2), us(20)));
  EXPECT_TRUE(t.on_response(Psn(3), us(20)));
  EXPECT_FALSE(t.on_response(Psn(3), us(21)));  // placed already
  EXPECT_FALSE(t.on_response(Psn(9), us(21)));  // never asked for
  EXPECT_TRUE(t.held(Psn(2)));
  EXPECT_FALSE(t.lost(Psn(1)));
  EXPECT_EQ(t.deadline(), us(25));  // sent at 0 + RTT 20 + reo_wnd 5
  t.on_timer(us(25));
  EXPECT_TRUE(t.lost(Psn(1)));
  EXPECT_EQ(b.ctr.sr_tx_lost, 1u);
  Psn p;
  ASSERT_TRUE(t.next_lost(&p));
  EXPECT_EQ(p, Psn(1));
}

// A SACK's cumulative PSN and bitmap pass a READ's response PSNs once the
// READ ran at the responder: they never deliver them. base stops at the
// first response not placed; the request PSNs after it count as delivered.
TEST(SrTx_OnAck, ReadResponsePsnsOnlyDeliveredByResponses) {
  Board b;
  SrTx& t = b.t;
  t.reset(Psn(0));
  for (std::uint32_t i = 0; i < 3; ++i) t.on_sent(Psn(i), 0, SrTx::Kind::kReadResponse);
  t.on_sent(Psn(3), 0);
  t.on_sent(Psn(4), 0);
  t.on_response(Psn(0), us(10));
  const wire::SrSackEthHdr h = sack_of({1});  // PSN 5 + 1 "held"
  t.on_ack(Psn(5), &h, us(10));
  EXPECT_EQ(t.base(), Psn(1));
  EXPECT_FALSE(t.held(Psn(1)));
  EXPECT_FALSE(t.held(Psn(2)));
  EXPECT_TRUE(t.held(Psn(3)));
  EXPECT_TRUE(t.held(Psn(4)));
  t.on_ack_beyond(Psn(5), us(11));
  EXPECT_FALSE(t.held(Psn(2)));
  t.on_response(Psn(1), us(12));
  t.on_response(Psn(2), us(12));
  t.on_ack(Psn(5), nullptr, us(12));
  EXPECT_EQ(t.base(), Psn(5));
  EXPECT_EQ(t.in_flight(), 0u);
}

// A response that comes twice after it was asked for again: the re-request
// was not needed, once; reo_wnd doubles as for a SACK with DUP.
TEST(SrTx_OnDupResponse, AfterReRequestWidensReorderWindow) {
  Board b;
  SrTx& t = b.t;
  t.reset(Psn(0));
  for (std::uint32_t i = 0; i < 2; ++i) t.on_sent(Psn(i), 0, SrTx::Kind::kReadResponse);
  t.on_response(Psn(1), us(20));
  t.on_dup_response(Psn(1));  // a duplicate, never asked for again
  EXPECT_EQ(b.ctr.sr_tx_spurious, 0u);
  const TimeNs w = t.reo_wnd();
  t.on_sent(Psn(0), us(30), SrTx::Kind::kReadResponse);
  t.on_response(Psn(0), us(31));
  t.on_dup_response(Psn(0));
  t.on_dup_response(Psn(0));
  EXPECT_EQ(b.ctr.sr_tx_spurious, 1u);
  EXPECT_EQ(t.reo_wnd(), 2 * w);
}

// Nothing comes back for two READs: the first READ's request may have been
// lost, and the responder drops the later one (READs run in order), so the
// probe asks again for the oldest READ's responses, every PSN its request
// asked for, not the newest PSN.
TEST(SrTx_OnTimer, ProbeOfReadsAsksForTheOldestRequest) {
  Board b;
  SrTx& t = b.t;
  t.reset(Psn(0));
  for (std::uint32_t i = 0; i < 4; ++i) t.on_sent(Psn(i), 0, SrTx::Kind::kReadResponse);
  for (std::uint32_t i = 4; i < 8; ++i) t.on_sent(Psn(i), us(1), SrTx::Kind::kReadResponse);
  EXPECT_EQ(t.deadline(), us(1) + SrTx::kMinPto);
  t.on_timer(us(1) + SrTx::kMinPto);
  EXPECT_EQ(b.ctr.sr_tx_probes, 1u);
  for (std::uint32_t i = 0; i < 8; ++i) EXPECT_EQ(t.lost(Psn(i)), i < 4) << i;
  EXPECT_EQ(t.deadline(), 0u);  // the next probe is armed when the re-request leaves
}

}  // namespace
}  // namespace uroce::transport
