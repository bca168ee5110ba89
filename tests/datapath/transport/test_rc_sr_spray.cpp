// Spraying a selective-repeat connection's packets over several UDP source
// ports (rc_sr_spray.h; docs/lossy.md "Spraying"): the round robin, the
// avoidance of a path charged with a loss (K packets, never all paths), and
// the requester's use of it: SEND/WRITE packets rotate over the ports, READs
// keep the connection's own, a SACK hole charges the lost packet's path, a
// tail-loss probe charges nothing, and one path behaves as before; the
// responder's acknowledgements rotate over the ports.
#include "datapath/transport/rc_sr_spray.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "datapath/port/rss.h"
#include "datapath/transport/rc_requester.h"
#include "tests/datapath/transport/rc_sim_pair.h"
#include "tests/datapath/transport/rc_sr_test_support.h"
#include "tests/datapath/transport/rc_test_support.h"

namespace uroce::transport {
namespace {

using namespace rctest;
namespace o = wire::op;

constexpr TimeNs us(TimeNs n) { return n * kNsPerUs; }
constexpr std::array<std::uint16_t, 4> kPorts = {0xC101, 0xC202, 0xC303, 0xC404};

// Sends `n` packets from PSN `from`, returning their paths.
std::vector<std::uint32_t> spray(SrSpray& s, std::uint32_t from, std::uint32_t n) {
  std::vector<std::uint32_t> v;
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t p = s.pick();
    s.sent(Psn(from + i), p);
    v.push_back(p);
  }
  return v;
}

TEST(SrSpray_Configure, FewerThanTwoPortsIsOff) {
  SrSpray s;
  EXPECT_FALSE(s.on());
  const std::uint16_t one[] = {0xC000};
  s.configure(one);
  EXPECT_FALSE(s.on());
  s.configure(kPorts);
  EXPECT_TRUE(s.on());
  EXPECT_EQ(s.paths(), 4u);
  EXPECT_EQ(s.port(2), 0xC303);
  s.reset();
  EXPECT_FALSE(s.on());
}

TEST(SrSpray_Pick, RoundRobinRemembersEachPsnsPath) {
  SrSpray s;
  RcSrCounters c;
  s.bind(&c);
  s.configure(kPorts);
  EXPECT_EQ(spray(s, 0xfffffe, 9), (std::vector<std::uint32_t>{0, 1, 2, 3, 0, 1, 2, 3, 0}));
  // Across the PSN wrap too.
  EXPECT_EQ(s.path_of(Psn(0xfffffe)), 0u);
  EXPECT_EQ(s.path_of(Psn(0xffffff)), 1u);
  EXPECT_EQ(s.path_of(Psn(0)), 2u);
  EXPECT_EQ(s.path_of(Psn(6)), 0u);
  EXPECT_EQ(c.sr_spray_tx, 9u);
}

// A loss on path 1 skips it for kAvoidPackets packets, then it is used
// again; a second loss on it while avoided restarts the count without a
// new avoidance event.
TEST(SrSpray_Charge, PathAvoidedForKPacketsThenUsedAgain) {
  SrSpray s;
  RcSrCounters c;
  s.bind(&c);
  s.configure(kPorts);
  spray(s, 100, 4);  // 100..103 on paths 0..3
  s.charge(Psn(101));
  EXPECT_TRUE(s.avoided(1));
  EXPECT_EQ(c.sr_spray_losses, 1u);
  EXPECT_EQ(c.sr_spray_avoided, 1u);
  const std::vector<std::uint32_t> during = spray(s, 104, SrSpray::kAvoidPackets);
  for (std::uint32_t p : during) EXPECT_NE(p, 1u);
  // The count ran out: path 1 comes back in the rotation.
  const std::vector<std::uint32_t> after = spray(s, 104 + SrSpray::kAvoidPackets, 4);
  EXPECT_EQ(std::count(after.begin(), after.end(), 1u), 1);
  EXPECT_FALSE(s.avoided(1));
  // Charged again, and again while avoided: one avoidance, two losses.
  const Psn q(104 + SrSpray::kAvoidPackets + 4);
  spray(s, q.value(), 4);
  Psn on1 = q;
  while (s.path_of(on1) != 1) ++on1;
  s.charge(on1);
  spray(s, q.value() + 4, 10);
  s.charge(on1);
  EXPECT_EQ(c.sr_spray_losses, 3u);
  EXPECT_EQ(c.sr_spray_avoided, 2u);
  // Restarted: still avoided kAvoidPackets - 1 packets after the second.
  for (std::uint32_t p : spray(s, q.value() + 14, SrSpray::kAvoidPackets - 1)) EXPECT_NE(p, 1u);
}

// A path that loses again soon after it is used again (a dead path) is
// avoided twice as long each time, up to kMaxAvoidLevel; one that stays
// clean for kAvoidPackets before its next loss starts again at 64.
TEST(SrSpray_Charge, LosingAgainSoonDoublesTheAvoidance) {
  SrSpray s;
  s.configure(kPorts);
  std::uint32_t psn = 0;
  auto lose_path1_now = [&] {
    Psn p(psn);
    for (std::uint32_t i = 0; i < 4; ++i) spray(s, psn++, 1);
    while (s.path_of(p) != 1) ++p;
    s.charge(p);
  };
  auto packets_until_path1 = [&] {
    std::uint32_t n = 0;
    while (spray(s, psn++, 1)[0] != 1) ++n;
    return n;
  };
  lose_path1_now();
  EXPECT_EQ(s.level(1), 0u);
  for (std::uint32_t level = 1; level <= SrSpray::kMaxAvoidLevel + 1; ++level) {
    EXPECT_GE(packets_until_path1(), SrSpray::kAvoidPackets << s.level(1));
    s.charge(Psn(psn - 1));  // its first packet back is lost at once
    EXPECT_EQ(s.level(1), std::min(level, SrSpray::kMaxAvoidLevel));
  }
  packets_until_path1();
  spray(s, psn, 4 * SrSpray::kAvoidPackets);  // clean for a while
  psn += 4 * SrSpray::kAvoidPackets;
  lose_path1_now();
  EXPECT_EQ(s.level(1), 0u);
}

// Losses on every path: never all avoided. A loss on the last usable path
// ends the other avoidances and sets that path aside alone.
TEST(SrSpray_Charge, NeverEveryPath) {
  SrSpray s;
  RcSrCounters c;
  s.bind(&c);
  s.configure(kPorts);
  spray(s, 0, 4);
  for (std::uint32_t p = 0; p < 3; ++p) s.charge(Psn(p));
  EXPECT_EQ(s.avoided_now(), 3u);
  for (std::uint32_t p : spray(s, 4, 4)) EXPECT_EQ(p, 3u);
  s.charge(Psn(3));
  EXPECT_EQ(s.avoided_now(), 1u);
  EXPECT_TRUE(s.avoided(3));
  EXPECT_EQ(c.sr_spray_losses, 4u);
  EXPECT_EQ(c.sr_spray_avoided, 4u);
  for (std::uint32_t p : spray(s, 8, 6)) EXPECT_NE(p, 3u);
}

// A CE mark skips its path for kCeAvoidPackets, then the path is back in
// the rotation at level 0: a mark is no loss.
TEST(SrSpray_Congested, PathSkippedForKCePackets) {
  SrSpray s;
  RcSrCounters c;
  s.bind(&c);
  s.configure(kPorts);
  spray(s, 100, 4);
  s.congested(Psn(102));
  EXPECT_TRUE(s.avoided(2));
  EXPECT_EQ(c.sr_spray_ce, 1u);
  EXPECT_EQ(c.sr_spray_ce_avoided, 1u);
  EXPECT_EQ(c.sr_spray_avoided + c.sr_spray_losses, 0u);
  for (std::uint32_t p : spray(s, 104, SrSpray::kCeAvoidPackets)) EXPECT_NE(p, 2u);
  const std::vector<std::uint32_t> after = spray(s, 104 + SrSpray::kCeAvoidPackets, 4);
  EXPECT_EQ(std::count(after.begin(), after.end(), 2u), 1);
  EXPECT_FALSE(s.avoided(2));
  EXPECT_EQ(s.level(2), 0u);
}

// A tail-loss probe (silent()) ends the avoidances for a mark, not those
// for a loss: only live paths mark.
TEST(SrSpray_Silent, EndsTheMarksAvoidancesOnly) {
  SrSpray s;
  s.configure(kPorts);
  spray(s, 0, 4);
  s.congested(Psn(0));
  s.charge(Psn(1));
  s.congested(Psn(2));
  EXPECT_EQ(s.avoided_now(), 3u);
  s.silent();
  EXPECT_FALSE(s.avoided(0));
  EXPECT_TRUE(s.avoided(1));
  EXPECT_FALSE(s.avoided(2));
  // A path marked, then charged with a loss: avoided for the loss.
  spray(s, 4, 4);
  const std::uint32_t p6 = s.path_of(Psn(6));
  s.congested(Psn(6));
  s.charge(Psn(6));
  s.silent();
  EXPECT_TRUE(s.avoided(p6));
}

TEST(SrSpray_Congested, NeverTheLastUsablePathNorLonger) {
  SrSpray s;
  RcSrCounters c;
  s.bind(&c);
  s.configure(kPorts);
  spray(s, 0, 4);
  s.charge(Psn(0));
  s.charge(Psn(1));
  s.congested(Psn(2));
  EXPECT_EQ(s.avoided_now(), 3u);
  // The one path left marks too: congestion past the split, kept.
  s.congested(Psn(3));
  EXPECT_FALSE(s.avoided(3));
  EXPECT_EQ(c.sr_spray_ce, 2u);
  EXPECT_EQ(c.sr_spray_ce_avoided, 1u);
  // Marked again while avoided: the avoidance is not stretched.
  spray(s, 4, SrSpray::kCeAvoidPackets - 1);
  s.congested(Psn(2));
  EXPECT_EQ(c.sr_spray_ce_avoided, 1u);
  const std::vector<std::uint32_t> next = spray(s, 100, 2);
  EXPECT_NE(std::find(next.begin(), next.end(), 2u), next.end());
}

// The requester with selective repeat attached and started, its peer
// answering with SACKs, its paths set as the engine sets them.
struct SrSprayRequester : RcFixture {
  RcSr sr;
  void make_sr_qp(std::span<const std::uint16_t> ports) {
    make_qp();
    qp->set_sr(&sr);
    sr.spray.configure(ports);
    qp->sr_tx_start();
  }
  PktPtr sack(std::uint32_t cum, std::initializer_list<std::uint32_t> held) const {
    wire::PacketSpec s = peer_spec(o::kSrSack, cum - 1);
    s.aeth = wire::AethHdr::make(wire::aeth_ack_syndrome(), 0);
    wire::SrSackEthHdr h = wire::SrSackEthHdr::make(0, 0, kSrWindow);
    for (std::uint32_t p : held) h.set_bit(p - cum);
    s.sack_eth = h;
    return build(s);
  }
  std::vector<std::uint16_t> ports() const {
    std::vector<std::uint16_t> v;
    for (const PktPtr& f : tx.frames) v.push_back(f->p.udp.src_port());
    return v;
  }
  std::vector<std::uint32_t> psns() const {
    std::vector<std::uint32_t> v;
    for (const PktPtr& f : tx.frames) v.push_back(f->p.bth.psn());
    return v;
  }
};

// spray_paths = 4: the 8 packets of a WRITE rotate over the 4 ports; a READ
// request keeps the connection's own port.
TEST_F(SrSprayRequester, Send_RotatesOverThePorts) {
  make_sr_qp(kPorts);
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaWrite, 0, 8 * 1024)), 0);
  ASSERT_EQ(qp->post_send(send_wr(2, WrOpcode::kRdmaRead, 65536, 100)), 0);
  pump();
  ASSERT_EQ(tx.size(), 9u);
  const std::vector<std::uint16_t> p = ports();
  EXPECT_EQ(std::vector<std::uint16_t>(p.begin(), p.begin() + 8),
            (std::vector<std::uint16_t>{0xC101, 0xC202, 0xC303, 0xC404, 0xC101, 0xC202, 0xC303,
                                        0xC404}));
  EXPECT_EQ(tx.at(8).bth.opcode(), o::kSrReadRequest);
  EXPECT_EQ(tx.at(8).udp.src_port(), qp->udp_src());
  EXPECT_EQ(sr.ctr.sr_spray_tx, 8u);
}

// PSN 101 (path 1) is lost: the SACK hole charges path 1, which the resend
// and the next kAvoidPackets packets avoid; then it is used again.
TEST_F(SrSprayRequester, SackHole_ChargesItsPathThenAvoidsIt) {
  make_sr_qp(kPorts);
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaWrite, 0, 4 * 1024)), 0);
  pump(0);
  EXPECT_EQ(ports(), (std::vector<std::uint16_t>{0xC101, 0xC202, 0xC303, 0xC404}));
  tx.clear();
  deliver(sack(101, {102, 103}), us(20));
  qp->on_timer(us(25), io);  // RTT 20 + reo_wnd 5: 101 is lost
  EXPECT_EQ(sr.ctr.sr_tx_lost, 1u);
  EXPECT_EQ(sr.ctr.sr_spray_losses, 1u);
  EXPECT_EQ(sr.ctr.sr_spray_avoided, 1u);
  EXPECT_TRUE(sr.spray.avoided(1));
  // The resend, then 72 new packets.
  for (std::uint64_t id = 2; id < 2 + 9; ++id) {
    ASSERT_EQ(qp->post_send(send_wr(id, WrOpcode::kRdmaWrite, 0, 8 * 1024)), 0);
  }
  pump(us(25));
  ASSERT_EQ(tx.size(), 73u);
  EXPECT_EQ(psns().front(), 101u);
  EXPECT_EQ(tx.at(0).udp.src_port(), 0xC101);
  const std::vector<std::uint16_t> p = ports();
  EXPECT_EQ(std::count(p.begin(), p.begin() + SrSpray::kAvoidPackets, 0xC202), 0);
  // The count ran out: path 1 is back in the rotation, once in 4.
  EXPECT_EQ(std::count(p.begin() + SrSpray::kAvoidPackets, p.begin() + SrSpray::kAvoidPackets + 4,
                       0xC202),
            1);
  EXPECT_FALSE(sr.spray.avoided(1));
  EXPECT_EQ(sr.ctr.sr_spray_losses, 1u);
  EXPECT_EQ(sr.ctr.sr_spray_tx, 4u + 73u);
}

// A tail-loss probe resends the newest packet: no loss is charged for it.
TEST_F(SrSprayRequester, Probe_ChargesNothing) {
  make_sr_qp(kPorts);
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaWrite, 0, 4 * 1024)), 0);
  pump(0);
  qp->on_timer(SrTx::kMinPto, io);
  tx.clear();
  pump(SrTx::kMinPto);
  EXPECT_EQ(psns(), (std::vector<std::uint32_t>{103}));
  EXPECT_EQ(sr.ctr.sr_tx_probes, 1u);
  EXPECT_EQ(sr.ctr.sr_spray_losses, 0u);
  EXPECT_EQ(sr.spray.avoided_now(), 0u);
  deliver(ack(103), SrTx::kMinPto + us(20));
  EXPECT_EQ(sr.ctr.sr_spray_losses, 0u);
}

// The retransmission timeout charges each outstanding packet's path once,
// the probed packet's on the path its last probe took; never every path.
TEST_F(SrSprayRequester, Timeout_ChargesEachLostPacketNeverEveryPath) {
  make_sr_qp(kPorts);
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaWrite, 0, 4 * 1024)), 0);
  pump(0);
  run_to_timeout(0);
  ASSERT_EQ(qp->counters().timeouts, 1u);
  // 100..103 left on paths 0..3; the probes of 103 (PTO 100 us, doubling:
  // five by 3.1 ms, before the 4.19 ms timeout) took paths 0, 1, 2, 3, 0.
  ASSERT_EQ(sr.ctr.sr_tx_probes, 5u);
  EXPECT_EQ(sr.ctr.sr_spray_losses, 4u);
  // Paths 0 (twice), 1 and 2 charged: avoided; path 3 left usable.
  EXPECT_EQ(sr.spray.avoided_now(), 3u);
  EXPECT_FALSE(sr.spray.avoided(3));
}

// Losses on every path: the last one, on the one path left, ends the other
// avoidances and sets that path aside alone.
TEST_F(SrSprayRequester, Charge_OnTheLastPathSetsItAsideAlone) {
  make_sr_qp(kPorts);
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaWrite, 0, 4 * 1024)), 0);
  pump(0);
  for (std::uint32_t p = 100; p < 103; ++p) sr.spray.charge(Psn{p});
  EXPECT_EQ(sr.spray.avoided_now(), 3u);
  sr.spray.charge(Psn{103});
  EXPECT_EQ(sr.spray.avoided_now(), 1u);
  EXPECT_TRUE(sr.spray.avoided(sr.spray.path_of(Psn{103})));
  EXPECT_EQ(sr.ctr.sr_spray_losses, 4u);
}

// A spraying connection's requests are ECT(0); a SACK with ECE naming PSN
// 102 (path 2) skips that path for kCeAvoidPackets packets; an offset
// naming a PSN never sent charges nothing.
TEST_F(SrSprayRequester, Ece_SkipsTheMarkedPacketsPath) {
  make_sr_qp(kPorts);
  sr.spray.set_ecn(true);
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaWrite, 0, 4 * 1024)), 0);
  pump(0);
  for (const PktPtr& f : tx.frames) EXPECT_EQ(f->p.ecn(), wire::kEcnEct0);
  tx.clear();
  wire::PacketSpec s = peer_spec(o::kSrSack, 103);
  s.aeth = wire::AethHdr::make(wire::aeth_ack_syndrome(), 1);
  wire::SrSackEthHdr h = wire::SrSackEthHdr::make(0, 103, kSrWindow);
  h.set_ce(-1);
  s.sack_eth = h;
  deliver(build(s), us(20));
  EXPECT_EQ(sr.ctr.sr_spray_ce, 1u);
  EXPECT_TRUE(sr.spray.avoided(2));
  for (std::uint64_t id = 2; id < 2 + 8; ++id) {
    ASSERT_EQ(qp->post_send(send_wr(id, WrOpcode::kRdmaWrite, 0, 4 * 1024)), 0);
  }
  pump(us(20));
  ASSERT_EQ(tx.size(), 32u);
  for (std::uint16_t p : ports()) EXPECT_NE(p, 0xC303);
  // BTH PSN 135 (all acknowledged) naming 235: never sent, nothing charged.
  s = peer_spec(o::kSrSack, 135);
  s.aeth = wire::AethHdr::make(wire::aeth_ack_syndrome(), 9);
  h = wire::SrSackEthHdr::make(0, 135, kSrWindow);
  h.set_ce(100);
  s.sack_eth = h;
  deliver(build(s), us(40));
  EXPECT_EQ(sr.ctr.sr_spray_ce, 1u);
}

// Without ECN steering (spray_ecn off, the default) requests are not
// ECN-capable and an echoed mark changes nothing.
TEST_F(SrSprayRequester, Ece_IgnoredWithoutEcnSteering) {
  make_sr_qp(kPorts);
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaWrite, 0, 4 * 1024)), 0);
  pump(0);
  for (const PktPtr& f : tx.frames) EXPECT_EQ(f->p.ecn(), wire::kEcnNotEct);
  wire::PacketSpec s = peer_spec(o::kSrSack, 103);
  s.aeth = wire::AethHdr::make(wire::aeth_ack_syndrome(), 1);
  wire::SrSackEthHdr h = wire::SrSackEthHdr::make(0, 103, kSrWindow);
  h.set_ce(-1);
  s.sack_eth = h;
  deliver(build(s), us(20));
  EXPECT_EQ(sr.ctr.sr_spray_ce, 0u);
  EXPECT_EQ(sr.spray.avoided_now(), 0u);
}

// One path (spray_paths = 1): every packet from the connection's own port,
// nothing counted, the same frames as without the spray state touched.
TEST_F(SrSprayRequester, OnePath_AsBefore) {
  const std::uint16_t one[] = {0xC777};
  make_sr_qp(one);
  ASSERT_EQ(qp->post_send(send_wr(1, WrOpcode::kRdmaWrite, 0, 4 * 1024)), 0);
  pump(0);
  ASSERT_EQ(tx.size(), 4u);
  for (std::uint16_t p : ports()) EXPECT_EQ(p, qp->udp_src());
  deliver(sack(101, {102, 103}), us(20));
  qp->on_timer(us(25), io);
  EXPECT_EQ(sr.ctr.sr_tx_lost, 1u);
  EXPECT_EQ(sr.ctr.sr_spray_tx + sr.ctr.sr_spray_losses + sr.ctr.sr_spray_avoided, 0u);
}

// The responder of a spraying connection: each answer (ACK, and SACK while
// something is held) leaves from the next of the paths in turn, all of
// them, whatever the requests came from; without spraying, its own port.
struct SrSprayResponder : SrResponderFixture {
  std::vector<std::uint16_t> answer_ports(bool spraying) {
    make_sr_qp();
    if (spraying) {
      sr.spray.configure(kPorts);
      sr.spray.bind(&sr.ctr);
    }
    // Five one-packet WRITEs asking for an ACK each; the third arrives
    // after the fourth, so the fourth's answer is a SACK.
    const Msg w0 = sr_write(500, 0, 0, 0, 64);
    const Msg w1 = sr_write(501, 0, 64, 64, 64);
    const Msg w2 = sr_write(502, 0, 128, 128, 64);
    const Msg w3 = sr_write(503, 0, 192, 192, 64);
    const Msg w4 = sr_write(504, 0, 256, 256, 64);
    for (const Msg* m : {&w0, &w1, &w3, &w2, &w4}) deliver(m->at(0));
    std::vector<std::uint16_t> v;
    for (const auto& f : tx.frames) v.push_back(f->p.udp.src_port());
    return v;
  }
};

TEST_F(SrSprayResponder, Answers_RotateOverEveryPath) {
  const std::vector<std::uint16_t> p = answer_ports(true);
  ASSERT_EQ(p.size(), 5u);
  EXPECT_EQ(p, (std::vector<std::uint16_t>{0xC101, 0xC202, 0xC303, 0xC404, 0xC101}));
  EXPECT_EQ(tx.at(2).bth.opcode(), o::kSrSack);
  EXPECT_EQ(sr.ctr.sr_spray_acks, 5u);
}

TEST_F(SrSprayResponder, Answers_OnePathKeepTheOwnPort) {
  const std::vector<std::uint16_t> p = answer_ports(false);
  ASSERT_EQ(p.size(), 5u);
  for (const std::uint16_t port : p) EXPECT_EQ(port, qp->udp_src());
  EXPECT_EQ(sr.ctr.sr_spray_acks, 0u);
}

// A CE-marked request of a spraying peer makes an acknowledgement due at
// once, a SACK with ECE naming it (here the packet just acknowledged:
// offset 0); the next answer carries no ECE. Without spraying a mark is
// counted and nothing more is sent.
TEST_F(SrSprayResponder, Ce_AnsweredBySackWithEce) {
  make_sr_qp();
  sr.spray.configure(kPorts);
  sr.spray.bind(&sr.ctr);
  auto marked = [&](std::uint32_t psn, std::size_t off) {
    wire::PacketSpec s = peer_spec(o::kSrWriteOnly, psn);
    s.reth = wire::RethHdr::make(kRemoteVa + off, rkey, 64);
    s.sr_eth = wire::SrEthHdr::make(0, 0);
    s.payload = std::span<const std::uint8_t>(src.data() + off, 64);
    s.ecn = wire::kEcnCe;
    return build(s);
  };
  deliver(marked(500, 0));
  ASSERT_EQ(tx.size(), 1u);
  EXPECT_EQ(tx.at(0).bth.opcode(), o::kSrSack);
  EXPECT_EQ(tx.at(0).bth.psn(), 500u);
  EXPECT_TRUE(tx.at(0).sack_eth.ece());
  EXPECT_EQ(tx.at(0).sack_eth.ce_offset(), 0);
  EXPECT_EQ(sr.ctr.sr_rx_ce, 1u);
  deliver(sr_write(501, 0, 64, 64, 64).at(0));
  ASSERT_EQ(tx.size(), 2u);
  EXPECT_EQ(tx.at(1).bth.opcode(), o::kRcAck);
}

// A duplicate's answer (here a held PSN arriving again) goes on
// kDupAnswerPaths paths in a row; a first answer on one.
TEST_F(SrSprayResponder, DupAnswer_OnSeveralPaths) {
  make_sr_qp();
  sr.spray.configure(kPorts);
  sr.spray.bind(&sr.ctr);
  const Msg w0 = sr_write(500, 0, 0, 0, 64);
  const Msg w2 = sr_write(502, 0, 128, 128, 64);
  deliver(w2.at(0));  // held beyond the hole at 501: one SACK
  ASSERT_EQ(tx.size(), 1u);
  deliver(w2.at(0));  // again: DUP, on three paths
  ASSERT_EQ(tx.size(), 1u + SrSpray::kDupAnswerPaths);
  for (std::size_t i = 1; i < tx.size(); ++i) {
    EXPECT_EQ(tx.at(i).bth.opcode(), o::kSrSack);
    EXPECT_TRUE(tx.at(i).sack_eth.dup());
    EXPECT_EQ(tx.at(i).udp.src_port(), kPorts[i % kPorts.size()]);
  }
  EXPECT_EQ(sr.ctr.sr_spray_ack_copies, SrSpray::kDupAnswerPaths - 1);
  EXPECT_EQ(sr.ctr.tx_sacks, 2u);
  deliver(w0.at(0));
  EXPECT_EQ(tx.size(), 2u + SrSpray::kDupAnswerPaths);
}

TEST_F(SrSprayResponder, Ce_WithoutSprayingNoAnswer) {
  make_sr_qp();
  wire::PacketSpec s = peer_spec(o::kSrWriteOnly, 500);
  s.reth = wire::RethHdr::make(kRemoteVa, rkey, 64);
  s.sr_eth = wire::SrEthHdr::make(0, 0);
  s.payload = std::span<const std::uint8_t>(src.data(), 64);
  s.ecn = wire::kEcnCe;
  deliver(build(s));
  EXPECT_EQ(tx.size(), 0u);
  EXPECT_EQ(sr.ctr.sr_rx_ce, 0u);
}

// A multipath fabric with one bad path ------------------------------------

struct SprayRun {
  bool done = false;
  TimeNs took = 0;
  std::uint64_t sent = 0;     // A's request packets
  std::uint64_t on_bad = 0;   // of them on the lossy path
  std::uint64_t lost = 0;     // lost there
  std::uint64_t resends = 0;  // sent again alone
  std::uint64_t avoided = 0;  // avoidance events
};

// A writes 4 MiB (path MTU 1024: 4096 packets, as 1 MiB WRITEs) into B over
// a clean 25 Gb/s link; the frames A sends from `bad` (its own port, or
// path 2 of 4) are lost with probability `rate`, as if that port's ECMP
// path were lossy. `paths`: A's spray_paths.
SprayRun run_spray(std::uint32_t paths, bool bad_is_own, double rate, std::uint64_t seed) {
  constexpr std::size_t kMiB = 1 << 20;
  port::SimDirectionConfig d;
  d.bandwidth_bps = 25'000'000'000ull;
  d.propagation_ns = 2'000;
  d.queue_frames = 2048;
  ConnectParams cp;
  cp.mtu = wire::PathMtu::k1024;
  cp.timeout = 8;
  cp.retry_cnt = 7;
  RcSr sra, srb;
  SimPair pair(port::SimLinkConfig::symmetric(d, seed), 5 * kMiB, cp);
  SimSide& a = pair.a();
  SimSide& b = pair.b();
  a.qp->set_sr(&sra);
  b.qp->set_sr(&srb);
  std::array<std::uint16_t, SrSpray::kMaxPaths> ports{};
  for (std::uint32_t i = 0; i < paths; ++i)
    ports[i] = port::path_src_port(a.qp->udp_src(), i, false);
  sra.spray.configure({ports.data(), paths});
  a.qp->sr_tx_start();
  b.qp->sr_tx_start();
  a.tx.lossy_port = bad_is_own ? a.qp->udp_src() : ports[2];
  a.tx.lossy_rate = rate;
  a.tx.rng.seed(seed);
  for (std::size_t i = 0; i < 4 * kMiB; ++i) a.mem[i] = static_cast<std::uint8_t>(i * 131 + 7);
  for (std::uint64_t m = 0; m < 4; ++m) {
    SendWr w;
    w.wr_id = m;
    w.opcode = WrOpcode::kRdmaWrite;
    w.flags = send_flag::kSignaled;
    w.num_sge = 1;
    w.sge[0] = {SimSide::kVa + m * kMiB, static_cast<std::uint32_t>(kMiB), a.key};
    w.remote_addr = SimSide::kVa + m * kMiB;
    w.rkey = b.key;
    EXPECT_EQ(a.qp->post_send(w), 0);
  }
  SprayRun r;
  r.done = pair.run([&] { return a.scq.wc.size() == 4; }, 10 * kNsPerSec);
  r.took = pair.clock().now();
  r.sent = a.qp->counters().tx_requests;
  r.on_bad = a.tx.lossy_sent;
  r.lost = a.tx.lossy_lost;
  r.resends = sra.ctr.sr_tx_resends;
  r.avoided = sra.ctr.sr_spray_avoided;
  for (const Cqe& c : a.scq.wc) EXPECT_EQ(status(c), WcStatus::kSuccess);
  EXPECT_EQ(std::memcmp(a.mem.data(), b.mem.data(), 4 * kMiB), 0);
  return r;
}

// One connection whose only port hashes onto a path losing 5 % of its
// frames, against the same connection sprayed over 4 paths of which that
// one is lossy: the avoidance moves traffic off it, so it carries well
// under its 1/4 share and loses a fraction of what the pinned connection
// loses. Virtual time: exact and repeatable; the figures are printed.
TEST(SrSprayCompare, LossyPathAvoided) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const SprayRun one = run_spray(1, true, 0.05, seed);
    const SprayRun four = run_spray(4, false, 0.05, seed);
    const SprayRun clean = run_spray(4, false, 0, seed);
    ASSERT_TRUE(one.done) << seed;
    ASSERT_TRUE(four.done) << seed;
    ASSERT_TRUE(clean.done) << seed;
    EXPECT_EQ(clean.resends + clean.lost, 0u) << seed;
    std::printf(
        "seed %llu, 4 MiB, one path of loss 5 %%: one port on it: %llu of %llu packets lost, %llu "
        "resent, %.1f us; 4 paths: %llu of %llu packets on it (%.3f), %llu lost, %llu resent, "
        "%llu avoidances, %.1f us; without loss %.1f us\n",
        static_cast<unsigned long long>(seed), static_cast<unsigned long long>(one.lost),
        static_cast<unsigned long long>(one.sent), static_cast<unsigned long long>(one.resends),
        static_cast<double>(one.took) / kNsPerUs, static_cast<unsigned long long>(four.on_bad),
        static_cast<unsigned long long>(four.sent),
        static_cast<double>(four.on_bad) / static_cast<double>(four.sent),
        static_cast<unsigned long long>(four.lost), static_cast<unsigned long long>(four.resends),
        static_cast<unsigned long long>(four.avoided), static_cast<double>(four.took) / kNsPerUs,
        static_cast<double>(clean.took) / kNsPerUs);
    EXPECT_GT(one.lost, 100u) << seed;
    // Under 22 % of the packets where round robin alone gives it 25 %.
    EXPECT_LT(four.on_bad * 100, four.sent * 22) << seed;
    EXPECT_LT(four.lost * 4, one.lost) << seed;
    EXPECT_GT(four.avoided, 0u) << seed;
  }
}

}  // namespace
}  // namespace uroce::transport
