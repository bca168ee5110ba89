#include "pfc/pause_gate.h"

#include <gtest/gtest.h>

#include <array>

#include "datapath/base/rng.h"

namespace uroce::pfc {
namespace {

using Frame = std::array<std::uint8_t, wire::kPfcFrameSize>;
const wire::MacAddr kPeer{{0x02, 0, 0, 0, 0, 0x09}};

// 10 Gb/s: one quantum is 51.2 ns, 1000 quanta exactly 51200 ns.
PauseGateConfig cfg10g() {
  PauseGateConfig c;
  c.pfc_enable = 0x0c;  // priorities 2 and 3
  c.link_bps = 10'000'000'000ull;
  return c;
}

Frame pause(std::uint8_t mask, std::uint16_t quanta) {
  Frame f{};
  EXPECT_EQ(wire::build_pfc_pause(f, kPeer, mask, quanta), wire::kPfcFrameSize);
  return f;
}

TEST(PauseGate_Check, BadConfigNamed) {
  EXPECT_EQ(PauseGate::check(cfg10g()), PauseGateConfigError::kOk);
  auto c = cfg10g();
  c.link_bps = 0;
  EXPECT_EQ(PauseGate::check(c), PauseGateConfigError::kZeroLinkSpeed);
  c = cfg10g();
  c.max_quanta = 0;
  EXPECT_EQ(PauseGate::check(c), PauseGateConfigError::kZeroMaxQuanta);
  EXPECT_EQ(pause_gate_config_error_name(PauseGateConfigError::kZeroMaxQuanta), "ZeroMaxQuanta");
}

TEST(PauseGate_OnFrame, PauseHoldsOnlyThatPriorityForExactQuanta) {
  PauseGate g(cfg10g());
  EXPECT_EQ(g.on_frame(pause(0x08, 1000), 1000), wire::PfcParseError::kOk);
  EXPECT_EQ(g.tx_verdict(3, 1000), TxVerdict::kWait);
  EXPECT_EQ(g.tx_verdict(3, 52199), TxVerdict::kWait);
  EXPECT_EQ(g.tx_verdict(3, 52200), TxVerdict::kSend);
  EXPECT_EQ(g.tx_verdict(2, 1000), TxVerdict::kSend);
  EXPECT_EQ(g.tx_verdict(0, 1000), TxVerdict::kSend);
  EXPECT_EQ(g.resume_at(3), 52200u);
  EXPECT_EQ(g.blocked_mask(1000), 0x08);
  EXPECT_EQ(g.blocked_mask(52200), 0x00);
  EXPECT_EQ(g.paused_ns(3, 100000), 51200u);
  EXPECT_EQ(g.counters().prio[3].pause_rx, 1u);
  EXPECT_EQ(g.counters().parse[0], 1u);
}

TEST(PauseGate_OnFrame, QuantaRoundUpAtOddSpeeds) {
  auto c = cfg10g();
  c.link_bps = 25'000'000'000ull;  // 1 quantum = 20.48 ns -> 21
  PauseGate g(c);
  g.on_frame(pause(0x04, 1), 0);
  EXPECT_EQ(g.resume_at(2), 21u);
}

TEST(PauseGate_OnFrame, ZeroQuantaResumesAtOnce) {
  PauseGate g(cfg10g());
  g.on_frame(pause(0x08, 1000), 0);
  Frame r{};
  wire::build_pfc_resume(r, kPeer, 0x08);
  g.on_frame(r, 100);
  EXPECT_EQ(g.tx_verdict(3, 100), TxVerdict::kSend);
  EXPECT_EQ(g.paused_ns(3, 1000), 100u);
  EXPECT_EQ(g.counters().prio[3].resume_rx, 1u);
}

TEST(PauseGate_OnFrame, LaterPauseReplacesDeadline) {
  PauseGate g(cfg10g());
  g.on_frame(pause(0x08, 1000), 0);
  g.on_frame(pause(0x08, 10), 100);  // shorter: ends at 100 + 512
  EXPECT_EQ(g.resume_at(3), 612u);
  EXPECT_EQ(g.tx_verdict(3, 612), TxVerdict::kSend);
}

TEST(PauseGate_OnFrame, PerPriorityQuantaInOneFrame) {
  PauseGate g(cfg10g());
  Frame f{};
  const std::uint16_t q[8] = {0, 0, 100, 1000, 0, 0, 0, 0};
  wire::build_pfc(f, kPeer, 0x0c, q);
  g.on_frame(f, 0);
  EXPECT_EQ(g.resume_at(2), 5120u);
  EXPECT_EQ(g.resume_at(3), 51200u);
}

TEST(PauseGate_OnFrame, RefreshKeepsOneContinuousInterval) {
  PauseGate g(cfg10g());
  g.on_frame(pause(0x08, 1000), 0);
  g.on_frame(pause(0x08, 1000), 25600);  // before the first one lapses
  EXPECT_EQ(g.pause_started(3), 0u);
  EXPECT_EQ(g.resume_at(3), 76800u);
  EXPECT_EQ(g.paused_ns(3, 100000), 76800u);
  g.on_frame(pause(0x08, 1000), 200000);  // after a gap: a new interval
  EXPECT_EQ(g.pause_started(3), 200000u);
  EXPECT_EQ(g.paused_ns(3, 250000), 76800u + 50000u);
  EXPECT_EQ(g.paused_ns(3, 999999), 76800u + 51200u);
}

TEST(PauseGate_BadInput, PauseForDisabledPriorityIgnoredAndCounted) {
  PauseGate g(cfg10g());
  EXPECT_EQ(g.on_frame(pause(0x22, 1000), 0), wire::PfcParseError::kOk);
  EXPECT_EQ(g.tx_verdict(1, 0), TxVerdict::kSend);
  EXPECT_EQ(g.tx_verdict(5, 0), TxVerdict::kSend);
  EXPECT_EQ(g.counters().prio[1].disabled_rx, 1u);
  EXPECT_EQ(g.counters().prio[5].disabled_rx, 1u);
  EXPECT_EQ(g.counters().prio[1].pause_rx, 0u);
}

TEST(PauseGate_BadInput, TimeWithClassBitClearIgnored) {
  PauseGate g(cfg10g());
  Frame f = pause(0x08, 1000);
  f[wire::EthHdr::kSize + 4 + 2 * 2 + 1] = 0x50;  // Time[2] set, e2 clear
  g.on_frame(f, 0);
  EXPECT_EQ(g.tx_verdict(2, 0), TxVerdict::kSend);
  EXPECT_EQ(g.tx_verdict(3, 0), TxVerdict::kWait);
  EXPECT_EQ(g.counters().prio[2].pause_rx, 0u);
}

TEST(PauseGate_BadInput, EmptyClassVectorCounted) {
  PauseGate g(cfg10g());
  EXPECT_EQ(g.on_frame(pause(0x00, 1000), 0), wire::PfcParseError::kOk);
  EXPECT_EQ(g.counters().empty_class_vector, 1u);
  EXPECT_EQ(g.blocked_mask(0), 0);
}

TEST(PauseGate_BadInput, AbsurdQuantaClampedToMax) {
  auto c = cfg10g();
  c.max_quanta = 100;
  PauseGate g(c);
  g.on_frame(pause(0x08, 0xffff), 0);
  EXPECT_EQ(g.resume_at(3), 5120u);
  EXPECT_EQ(g.counters().prio[3].quanta_clamped, 1u);
  EXPECT_EQ(g.counters().prio[3].pause_rx, 1u);
}

TEST(PauseGate_BadInput, TruncatedAtEveryLengthCountedAsTruncated) {
  PauseGate g(cfg10g());
  const Frame f = pause(0x08, 1000);
  // Lengths 14..33 reach the EtherType check and are truncated bodies;
  // shorter ones lack even the Ethernet header.
  for (std::size_t n = 0; n < wire::EthHdr::kSize + wire::PfcHdr::kSize; ++n) {
    EXPECT_EQ(g.on_frame(std::span(f.data(), n), 0), wire::PfcParseError::kTruncated) << n;
  }
  EXPECT_EQ(g.counters().parse[static_cast<std::size_t>(wire::PfcParseError::kTruncated)], 34u);
  EXPECT_EQ(g.counters().frames_rx, 34u);
  EXPECT_EQ(g.blocked_mask(0), 0);
}

TEST(PauseGate_BadInput, WrongOpcodeEtherTypeAndDestinationCounted) {
  PauseGate g(cfg10g());
  Frame f = pause(0x08, 1000);
  f[15] = 0x01;
  f[14] = 0x00;  // 802.3x PAUSE opcode
  EXPECT_EQ(g.on_frame(f, 0), wire::PfcParseError::kNotPfcOpcode);
  f = pause(0x08, 1000);
  f[12] = 0x08;
  f[13] = 0x00;  // IPv4
  EXPECT_EQ(g.on_frame(f, 0), wire::PfcParseError::kNotMacControl);
  f = pause(0x08, 1000);
  f[5] = 0x02;  // 01:80:C2:00:00:02 (slow protocols)
  EXPECT_EQ(g.on_frame(f, 0), wire::PfcParseError::kBadDstMac);
  const auto& c = g.counters();
  EXPECT_EQ(c.parse[static_cast<std::size_t>(wire::PfcParseError::kNotPfcOpcode)], 1u);
  EXPECT_EQ(c.parse[static_cast<std::size_t>(wire::PfcParseError::kNotMacControl)], 1u);
  EXPECT_EQ(c.parse[static_cast<std::size_t>(wire::PfcParseError::kBadDstMac)], 1u);
  EXPECT_EQ(c.parse[0], 0u);
  EXPECT_EQ(g.tx_verdict(3, 0), TxVerdict::kSend);
}

TEST(PauseGate_Override, DropForcesOpenAndCountsDrops) {
  PauseGate g(cfg10g());
  g.on_frame(pause(0x08, 1000), 0);
  g.set_override(3, GateOverride::kDropTraffic);
  EXPECT_EQ(g.tx_verdict(3, 10), TxVerdict::kDrop);
  EXPECT_EQ(g.tx_verdict(3, 11), TxVerdict::kDrop);
  EXPECT_EQ(g.counters().prio[3].storm_drops, 2u);
  EXPECT_EQ(g.blocked_mask(10), 0);
  EXPECT_TRUE(g.peer_paused(3, 10));  // still tracked
}

TEST(PauseGate_Override, IgnoreSendsAndCountsIgnoredPauses) {
  PauseGate g(cfg10g());
  g.set_override(3, GateOverride::kIgnorePauses);
  g.on_frame(pause(0x08, 1000), 0);
  EXPECT_EQ(g.tx_verdict(3, 10), TxVerdict::kSend);
  EXPECT_EQ(g.counters().prio[3].ignored_stormed, 1u);
  EXPECT_EQ(g.resume_at(3), 51200u);
  g.set_override(3, GateOverride::kNone);
  EXPECT_EQ(g.tx_verdict(3, 10), TxVerdict::kWait);
}

// Seeded random mutations of a valid frame, at random lengths: every frame
// lands in exactly one parse counter, and no gate is held longer than the
// largest pause a frame can ask for.
TEST(PauseGate_BadInput, RandomMutationsCountedAndBounded) {
  PauseGate g(cfg10g());
  SeededRng rng(6);
  std::uint64_t applied = 0;
  for (int i = 0; i < 20000; ++i) {
    Frame f = pause(static_cast<std::uint8_t>(rng.below(256)),
                    static_cast<std::uint16_t>(rng.below(65536)));
    const int flips = static_cast<int>(rng.below(4));
    for (int k = 0; k < flips; ++k) {
      f[rng.below(f.size())] ^= static_cast<std::uint8_t>(1u << rng.below(8));
    }
    const std::size_t len = static_cast<std::size_t>(rng.below(f.size() + 1));
    const TimeNs now = static_cast<TimeNs>(i) * 1000;
    if (g.on_frame(std::span(f.data(), len), now) == wire::PfcParseError::kOk) ++applied;
    for (std::uint8_t p = 0; p < 8; ++p) {
      EXPECT_LE(g.resume_at(p), now + wire::pfc_quanta_to_ns(0xffff, 10'000'000'000ull));
    }
  }
  std::uint64_t sum = 0;
  for (auto n : g.counters().parse) sum += n;
  EXPECT_EQ(sum, 20000u);
  EXPECT_EQ(g.counters().parse[0], applied);
  EXPECT_GT(applied, 0u);
  EXPECT_GT(g.counters().parse[static_cast<std::size_t>(wire::PfcParseError::kTruncated)], 0u);
}

TEST(PauseGate_TxVerdict, PriorityOutOfRangeNeverPaused) {
  PauseGate g(cfg10g());
  g.on_frame(pause(0xff, 1000), 0);
  EXPECT_EQ(g.tx_verdict(8, 0), TxVerdict::kSend);
}

}  // namespace
}  // namespace uroce::pfc
