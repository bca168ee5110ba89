#include "pfc/ingress_accounting.h"

#include <gtest/gtest.h>

#include "tests/pfc/fake_sinks.h"

namespace uroce::pfc {
namespace {

using testing::FakeTx;

const wire::MacAddr kMac{{0x02, 0, 0, 0, 0, 0x42}};

// 10 Gb/s and 1000 quanta: a pause of exactly 51200 ns, refreshed every
// 25600 ns (50 %).
IngressConfig static_cfg() {
  IngressConfig c;
  c.src_mac = kMac;
  c.pfc_enable = 0x08;
  c.mode = ThresholdMode::kStatic;
  c.buffer_bytes = 100000;
  c.headroom_bytes = 10000;
  c.xoff_bytes = 30000;
  c.xon_bytes = 20000;
  c.xoff_quanta = 1000;
  c.link_bps = 10'000'000'000ull;
  return c;
}

IngressConfig dynamic_cfg() {
  IngressConfig c = static_cfg();
  c.mode = ThresholdMode::kDynamic;
  c.pfc_enable = 0x09;  // priorities 0 and 3: shared = 100000 - 2 x 10000
  c.alpha_num = 1;
  c.alpha_den = 1;
  c.xon_offset_bytes = 4000;
  return c;
}

// Asserts frame i of `tx` is a PFC frame from kMac with exactly `mask`
// enabled and quanta `q` on each of those priorities.
void expect_frame(const FakeTx& tx, std::size_t i, std::uint8_t mask, const std::uint16_t (&q)[8]) {
  ASSERT_LT(i, tx.frames.size());
  EXPECT_EQ(tx.frames[i].size(), wire::kPfcFrameSize);
  wire::PfcFrame f;
  ASSERT_EQ(wire::parse_pfc(tx.frames[i], f), wire::PfcParseError::kOk);
  EXPECT_EQ(f.eth.src(), kMac);
  EXPECT_EQ(f.pfc.class_enable(), mask);
  for (std::size_t p = 0; p < 8; ++p) EXPECT_EQ(f.pfc.pause_time(p), q[p]) << "prio " << p;
}

TEST(IngressAccounting_Config, DerivedTimes) {
  IngressAccounting a(static_cfg());
  EXPECT_EQ(a.pause_ns(), 51200u);
  EXPECT_EQ(a.refresh_ns(), 25600u);
  EXPECT_EQ(a.shared_bytes(), 90000u);
  EXPECT_EQ(a.next_deadline(), kNoDeadline);
}

TEST(IngressAccounting_Check, EachBadFieldNamed) {
  EXPECT_EQ(IngressAccounting::check(static_cfg()), IngressConfigError::kOk);
  EXPECT_EQ(IngressAccounting::check(dynamic_cfg()), IngressConfigError::kOk);
  auto c = static_cfg();
  c.link_bps = 0;
  EXPECT_EQ(IngressAccounting::check(c), IngressConfigError::kZeroLinkSpeed);
  c = static_cfg();
  c.xoff_quanta = 0;
  EXPECT_EQ(IngressAccounting::check(c), IngressConfigError::kZeroQuanta);
  c = static_cfg();
  c.refresh_percent = 100;
  EXPECT_EQ(IngressAccounting::check(c), IngressConfigError::kBadRefreshPercent);
  c.refresh_percent = 0;
  EXPECT_EQ(IngressAccounting::check(c), IngressConfigError::kBadRefreshPercent);
  c = static_cfg();
  c.xoff_quanta = 1;
  c.link_bps = 400'000'000'000ull;  // 1.28 ns pause, rounded up to 2 ns
  c.refresh_percent = 1;            // 1 % of 2 ns rounds to 0
  EXPECT_EQ(IngressAccounting::check(c), IngressConfigError::kPauseTooShort);
  c = static_cfg();
  c.buffer_bytes = 0;
  EXPECT_EQ(IngressAccounting::check(c), IngressConfigError::kBadBufferSize);
  c.buffer_bytes = (std::uint64_t{1} << 40) + 1;
  EXPECT_EQ(IngressAccounting::check(c), IngressConfigError::kBadBufferSize);
  c = dynamic_cfg();
  c.headroom_bytes = 50000;  // 2 x 50000 leaves no shared space
  EXPECT_EQ(IngressAccounting::check(c), IngressConfigError::kHeadroomExceedsBuffer);
  c.headroom_bytes = ~std::uint64_t{0};
  EXPECT_EQ(IngressAccounting::check(c), IngressConfigError::kHeadroomExceedsBuffer);
  c = static_cfg();
  c.xon_bytes = c.xoff_bytes;
  EXPECT_EQ(IngressAccounting::check(c), IngressConfigError::kBadStaticThresholds);
  c = static_cfg();
  c.xoff_bytes = 90001;
  EXPECT_EQ(IngressAccounting::check(c), IngressConfigError::kBadStaticThresholds);
  c = dynamic_cfg();
  c.alpha_den = 0;
  EXPECT_EQ(IngressAccounting::check(c), IngressConfigError::kBadAlpha);
  c.alpha_den = 1;
  c.alpha_num = (1u << 16) + 1;
  EXPECT_EQ(IngressAccounting::check(c), IngressConfigError::kBadAlpha);
  EXPECT_EQ(ingress_config_error_name(IngressConfigError::kBadAlpha), "BadAlpha");
}

TEST(IngressAccounting_Static, XoffRefreshXonExactFrames) {
  IngressAccounting a(static_cfg());
  FakeTx tx;
  const std::uint16_t pause[8] = {0, 0, 0, 1000, 0, 0, 0, 0};
  const std::uint16_t resume[8] = {};

  EXPECT_EQ(a.on_rx(3, 30000, 0, tx), RxAdmit::kAccepted);
  EXPECT_TRUE(tx.frames.empty());  // at XOFF, not above it
  EXPECT_EQ(a.on_rx(3, 1, 10, tx), RxAdmit::kAccepted);
  ASSERT_EQ(tx.frames.size(), 1u);
  expect_frame(tx, 0, 0x08, pause);
  EXPECT_TRUE(a.asserted(3));
  EXPECT_EQ(a.next_deadline(), 10u + 25600u);

  a.poll(10 + 25599, tx);
  EXPECT_EQ(tx.frames.size(), 1u);
  a.poll(10 + 25600, tx);
  ASSERT_EQ(tx.frames.size(), 2u);
  expect_frame(tx, 1, 0x08, pause);
  EXPECT_EQ(a.next_deadline(), 10u + 2 * 25600u);

  a.on_processed(3, 10000, 30000, tx);  // 20001 left: above XON
  EXPECT_EQ(tx.frames.size(), 2u);
  a.on_processed(3, 1, 30001, tx);  // 20000: at XON
  ASSERT_EQ(tx.frames.size(), 3u);
  expect_frame(tx, 2, 0x08, resume);
  EXPECT_FALSE(a.asserted(3));
  EXPECT_EQ(a.next_deadline(), kNoDeadline);
  EXPECT_EQ(a.asserted_ns(3, 99999), 30001u - 10u);

  const auto& c = a.counters();
  EXPECT_EQ(c.frames_sent, 3u);
  EXPECT_EQ(c.prio[3].xoff_sent, 1u);
  EXPECT_EQ(c.prio[3].refresh_sent, 1u);
  EXPECT_EQ(c.prio[3].xon_sent, 1u);
  EXPECT_EQ(c.prio[3].refresh_late, 0u);
  EXPECT_EQ(c.prio[3].peak_bytes, 30001u);
  EXPECT_EQ(c.prio[3].rx_packets, 2u);
  EXPECT_EQ(c.prio[3].processed_bytes, 10001u);
  EXPECT_EQ(a.occupied(3), 20000u);
}

TEST(IngressAccounting_Static, LateRefreshCounted) {
  IngressAccounting a(static_cfg());
  FakeTx tx;
  a.on_rx(3, 30001, 0, tx);
  a.poll(51201, tx);  // the pause lapsed at 51200
  ASSERT_EQ(tx.frames.size(), 2u);
  EXPECT_EQ(a.counters().prio[3].refresh_late, 1u);
}

TEST(IngressAccounting_Static, LossyPriorityNeverPaused) {
  IngressAccounting a(static_cfg());
  FakeTx tx;
  EXPECT_EQ(a.on_rx(1, 60000, 0, tx), RxAdmit::kAccepted);
  EXPECT_TRUE(tx.frames.empty());
  EXPECT_FALSE(a.asserted(1));
}

TEST(IngressAccounting_Static, RefreshAndNewXoffShareOneFrame) {
  auto cfg = static_cfg();
  cfg.pfc_enable = 0x09;
  cfg.buffer_bytes = 110000;  // shared 90000 again
  IngressAccounting a(cfg);
  FakeTx tx;
  a.on_rx(3, 30001, 0, tx);
  ASSERT_EQ(tx.frames.size(), 1u);
  a.on_rx(0, 30001, 25600, tx);  // priority 0 crosses when 3 is due
  ASSERT_EQ(tx.frames.size(), 2u);
  const std::uint16_t both[8] = {1000, 0, 0, 1000, 0, 0, 0, 0};
  expect_frame(tx, 1, 0x09, both);
  EXPECT_EQ(a.counters().prio[0].xoff_sent, 1u);
  EXPECT_EQ(a.counters().prio[3].refresh_sent, 1u);
}

TEST(IngressAccounting_Dynamic, ThresholdIsAlphaTimesFreeShared) {
  IngressAccounting a(dynamic_cfg());
  FakeTx tx;
  EXPECT_EQ(a.shared_bytes(), 80000u);
  EXPECT_EQ(a.xoff_threshold(), 80000u);
  a.on_rx(3, 40000, 0, tx);  // T = 1 x (80000 - 40000) = 40000: q == T
  EXPECT_EQ(a.xoff_threshold(), 40000u);
  EXPECT_EQ(a.xon_threshold(), 36000u);
  EXPECT_TRUE(tx.frames.empty());
  a.on_rx(3, 1, 5, tx);  // q 40001 > T 39999
  ASSERT_EQ(tx.frames.size(), 1u);
  const std::uint16_t pause[8] = {0, 0, 0, 1000, 0, 0, 0, 0};
  expect_frame(tx, 0, 0x08, pause);

  a.on_rx(0, 10000, 10, tx);  // T 29999: priority 0 at 10000 stays below
  EXPECT_EQ(tx.frames.size(), 1u);
  // XON for 3 when q + 4000 <= 70000 - q, i.e. q <= 33000.
  a.on_processed(3, 7000, 20, tx);  // q 33001
  EXPECT_EQ(tx.frames.size(), 1u);
  a.on_processed(3, 1, 30, tx);  // q 33000, T 37000, XON 33000
  ASSERT_EQ(tx.frames.size(), 2u);
  const std::uint16_t resume[8] = {};
  expect_frame(tx, 1, 0x08, resume);
}

TEST(IngressAccounting_Dynamic, ArrivalOnOnePriorityPausesAnother) {
  IngressAccounting a(dynamic_cfg());
  FakeTx tx;
  a.on_rx(3, 30000, 0, tx);
  a.on_rx(0, 20000, 1, tx);  // O 50000, T 30000: q3 == T
  EXPECT_TRUE(tx.frames.empty());
  a.on_rx(0, 1, 2, tx);  // T 29999 < q3; q0 20001 still below
  ASSERT_EQ(tx.frames.size(), 1u);
  const std::uint16_t pause3[8] = {0, 0, 0, 1000, 0, 0, 0, 0};
  expect_frame(tx, 0, 0x08, pause3);
  EXPECT_FALSE(a.asserted(0));
}

TEST(IngressAccounting_Dynamic, FractionalAlphaRoundsDown) {
  auto cfg = dynamic_cfg();
  cfg.alpha_num = 1;
  cfg.alpha_den = 16;
  IngressAccounting a(cfg);
  FakeTx tx;
  a.on_rx(1, 3, 0, tx);                                // lossy bytes still count in O
  EXPECT_EQ(a.xoff_threshold(), (80000u - 3u) / 16u);  // 4999
  a.on_rx(3, 4700, 0, tx);                             // T = 75297 / 16 = 4706
  EXPECT_TRUE(tx.frames.empty());
  a.on_rx(3, 4, 0, tx);  // q 4704 > T 75293 / 16 = 4705? no
  EXPECT_TRUE(tx.frames.empty());
  a.on_rx(3, 2, 0, tx);  // q 4706 > T 75291 / 16 = 4705
  EXPECT_EQ(tx.frames.size(), 1u);
}

TEST(IngressAccounting_Admit, DropsByReason) {
  IngressAccounting a(static_cfg());
  FakeTx tx;
  EXPECT_EQ(a.on_rx(8, 100, 0, tx), RxAdmit::kDropBadPriority);
  EXPECT_EQ(a.on_rx(1, 90000, 0, tx), RxAdmit::kAccepted);  // fills shared
  EXPECT_EQ(a.on_rx(1, 1, 0, tx), RxAdmit::kDropLossyFull);
  EXPECT_EQ(a.on_rx(3, 10000, 0, tx), RxAdmit::kAccepted);  // headroom
  EXPECT_EQ(a.on_rx(3, 1, 0, tx), RxAdmit::kDropHeadroomFull);
  const auto& c = a.counters();
  EXPECT_EQ(c.bad_priority, 1u);
  EXPECT_EQ(c.prio[1].drops_lossy_full, 1u);
  EXPECT_EQ(c.prio[3].drops_headroom_full, 1u);
  EXPECT_EQ(a.total_occupied(), 100000u);
}

TEST(IngressAccounting_Release, UnderflowClampedAndCounted) {
  IngressAccounting a(static_cfg());
  FakeTx tx;
  a.on_rx(3, 100, 0, tx);
  a.on_processed(3, 150, 1, tx);
  a.on_processed(9, 1, 1, tx);
  EXPECT_EQ(a.occupied(3), 0u);
  EXPECT_EQ(a.total_occupied(), 0u);
  EXPECT_EQ(a.counters().release_underflow, 1u);
  EXPECT_EQ(a.counters().bad_priority, 1u);
}

TEST(IngressAccounting_Tx, NoBufferRetriedOnPoll) {
  IngressAccounting a(static_cfg());
  FakeTx tx;
  tx.full = true;
  a.on_rx(3, 30001, 0, tx);
  EXPECT_TRUE(tx.frames.empty());
  EXPECT_FALSE(a.asserted(3));
  EXPECT_EQ(a.counters().tx_no_buffer, 1u);
  EXPECT_EQ(a.next_deadline(), 0u);
  tx.full = false;
  a.poll(7, tx);
  ASSERT_EQ(tx.frames.size(), 1u);
  const std::uint16_t pause[8] = {0, 0, 0, 1000, 0, 0, 0, 0};
  expect_frame(tx, 0, 0x08, pause);
  EXPECT_TRUE(a.asserted(3));
  EXPECT_EQ(a.next_deadline(), 7u + 25600u);
}

}  // namespace
}  // namespace uroce::pfc
