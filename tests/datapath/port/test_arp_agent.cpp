#include "datapath/port/arp_agent.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

namespace uroce::port {
namespace {

using wire::Ipv4Addr;
using wire::MacAddr;
using Bytes = std::vector<std::uint8_t>;

// Bytes from hex text; spaces separate fields for readability. `pad` zero
// fills to the 60-byte Ethernet minimum.
Bytes hex(std::string_view s, bool pad = true) {
  Bytes out;
  int hi = -1;
  for (char c : s) {
    if (c == ' ') continue;
    const int v = c <= '9' ? c - '0' : c - 'a' + 10;
    if (hi < 0) {
      hi = v;
    } else {
      out.push_back(static_cast<std::uint8_t>(hi << 4 | v));
      hi = -1;
    }
  }
  if (pad && out.size() < 60) out.resize(60, 0);
  return out;
}

struct CaptureSink {
  std::vector<Bytes> frames;
  void emit(std::span<const std::uint8_t> f) { frames.emplace_back(f.begin(), f.end()); }
};
static_assert(FrameSink<CaptureSink>);

// Us: 02:00:00:00:00:01 / 10.0.0.1. Peer: 02:00:00:00:00:02 / 10.0.0.2.
const MacAddr kOurMac{{0x02, 0, 0, 0, 0, 0x01}};
const MacAddr kPeerMac{{0x02, 0, 0, 0, 0, 0x02}};
const Ipv4Addr kOurIp{0x0a000001};
const Ipv4Addr kPeerIp{0x0a000002};

ArpConfig config() {
  ArpConfig c;
  c.mac = kOurMac;
  c.ip = kOurIp;
  c.retransmit_time = 100 * kNsPerMs;
  c.retries = 2;
  c.failed_hold_time = 500 * kNsPerMs;
  c.neighbors.capacity = 4;
  c.neighbors.reachable_time = 10 * kNsPerSec;
  c.neighbors.stale_time = 10 * kNsPerSec;
  return c;
}

// Peer asks who has 10.0.0.1 (broadcast).
const Bytes kRequestForUs =
    hex("ffffffffffff 020000000002 0806"
        " 0001 0800 06 04 0001 020000000002 0a000002 000000000000 0a000001");
// Peer asks who has 10.0.0.9.
const Bytes kRequestForOther =
    hex("ffffffffffff 020000000002 0806"
        " 0001 0800 06 04 0001 020000000002 0a000002 000000000000 0a000009");
// Peer answers us: 10.0.0.2 is at 02:00:00:00:00:02.
const Bytes kReplyToUs =
    hex("020000000001 020000000002 0806"
        " 0001 0800 06 04 0002 020000000002 0a000002 020000000001 0a000001");
// What we must send.
const Bytes kOurReply =
    hex("020000000002 020000000001 0806"
        " 0001 0800 06 04 0002 020000000001 0a000001 020000000002 0a000002");
const Bytes kOurRequest =
    hex("ffffffffffff 020000000001 0806"
        " 0001 0800 06 04 0001 020000000001 0a000001 000000000000 0a000002");
const Bytes kOurProbe =
    hex("020000000002 020000000001 0806"
        " 0001 0800 06 04 0001 020000000001 0a000001 000000000000 0a000002");
const Bytes kOurAnnouncement =
    hex("ffffffffffff 020000000001 0806"
        " 0001 0800 06 04 0001 020000000001 0a000001 000000000000 0a000001");

ArpDrop feed(ArpAgent& a, const Bytes& f, TimeNs now, CaptureSink& s) {
  return a.on_frame(std::span<const std::uint8_t>(f.data(), f.size()), now, s);
}

TEST(ArpAgent_OnFrame, RequestForUsGivesUnicastReplyAndLearns) {
  ArpAgent a(config());
  CaptureSink s;
  EXPECT_EQ(feed(a, kRequestForUs, 7, s), ArpDrop::kNone);
  ASSERT_EQ(s.frames.size(), 1u);
  EXPECT_EQ(s.frames[0], kOurReply);
  const NeighborEntry* n = a.neighbors().peek(kPeerIp);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->mac, kPeerMac);
  EXPECT_EQ(n->state, NeighborState::kReachable);
  EXPECT_EQ(n->confirmed, 7u);
  EXPECT_EQ(a.counters().rx_requests, 1u);
  EXPECT_EQ(a.counters().tx_replies, 1u);
  EXPECT_EQ(a.counters().learned, 1u);
}

TEST(ArpAgent_OnFrame, UnpaddedRequestAccepted) {
  ArpAgent a(config());
  CaptureSink s;
  Bytes f = kRequestForUs;
  f.resize(kArpFrameLen);
  EXPECT_EQ(feed(a, f, 0, s), ArpDrop::kNone);
  ASSERT_EQ(s.frames.size(), 1u);
  EXPECT_EQ(s.frames[0], kOurReply);
}

TEST(ArpAgent_OnFrame, RequestForAnotherIpIgnored) {
  ArpAgent a(config());
  CaptureSink s;
  EXPECT_EQ(feed(a, kRequestForOther, 0, s), ArpDrop::kNotForUs);
  EXPECT_TRUE(s.frames.empty());
  EXPECT_EQ(a.neighbors().size(), 0u);
  EXPECT_EQ(a.counters().drop(ArpDrop::kNotForUs), 1u);
  EXPECT_EQ(a.counters().rx_requests, 0u);
}

TEST(ArpAgent_OnFrame, UnicastToAnotherMacIgnored) {
  ArpAgent a(config());
  CaptureSink s;
  Bytes f = kRequestForUs;
  f[5] = 0x99;  // Ethernet destination 02:00:00:00:00:99
  EXPECT_EQ(feed(a, f, 0, s), ArpDrop::kNotForUs);
  EXPECT_TRUE(s.frames.empty());
}

TEST(ArpAgent_OnFrame, ReplyLearned) {
  ArpAgent a(config());
  CaptureSink s;
  EXPECT_EQ(feed(a, kReplyToUs, 3, s), ArpDrop::kNone);
  EXPECT_TRUE(s.frames.empty());
  const NeighborEntry* n = a.neighbors().peek(kPeerIp);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->mac, kPeerMac);
  EXPECT_EQ(n->state, NeighborState::kReachable);
  EXPECT_EQ(a.counters().rx_replies, 1u);
  EXPECT_EQ(a.counters().learned, 1u);
  // The same reply again is a refresh.
  EXPECT_EQ(feed(a, kReplyToUs, 4, s), ArpDrop::kNone);
  EXPECT_EQ(a.counters().refreshed, 1u);
  EXPECT_EQ(a.neighbors().peek(kPeerIp)->confirmed, 4u);
}

TEST(ArpAgent_OnFrame, GratuitousRefreshesKnownOnly) {
  ArpAgent a(config());
  CaptureSink s;
  // 10.0.0.2 announces itself at a new MAC.
  const Bytes garp =
      hex("ffffffffffff 020000000003 0806"
          " 0001 0800 06 04 0001 020000000003 0a000002 000000000000 0a000002");
  EXPECT_EQ(feed(a, garp, 0, s), ArpDrop::kNotForUs);
  EXPECT_EQ(a.neighbors().size(), 0u);
  feed(a, kReplyToUs, 1, s);
  EXPECT_EQ(feed(a, garp, 2, s), ArpDrop::kNone);
  EXPECT_EQ(a.neighbors().peek(kPeerIp)->mac, (MacAddr{{0x02, 0, 0, 0, 0, 0x03}}));
  EXPECT_EQ(a.counters().rx_gratuitous, 1u);
  EXPECT_EQ(a.counters().refreshed, 1u);
  EXPECT_TRUE(s.frames.empty());
}

TEST(ArpAgent_OnFrame, GratuitousCompletesPendingRequest) {
  ArpAgent a(config());
  CaptureSink s;
  a.resolve(kPeerIp, 0, s);
  const Bytes garp =
      hex("ffffffffffff 020000000002 0806"
          " 0001 0800 06 04 0001 020000000002 0a000002 000000000000 0a000002");
  EXPECT_EQ(feed(a, garp, 1, s), ArpDrop::kNone);
  EXPECT_EQ(a.counters().learned, 1u);
  EXPECT_EQ(a.counters().refreshed, 0u);
  const Resolution r = a.resolve(kPeerIp, 2, s);
  EXPECT_EQ(r.status, ResolveStatus::kResolved);
  EXPECT_EQ(r.mac, kPeerMac);
  EXPECT_EQ(s.frames.size(), 1u);
}

TEST(ArpAgent_OnFrame, NotArpGivesNotArp) {
  ArpAgent a(config());
  CaptureSink s;
  Bytes f = kRequestForUs;
  f[12] = 0x08;
  f[13] = 0x00;  // IPv4
  EXPECT_EQ(feed(a, f, 0, s), ArpDrop::kNotArp);
  EXPECT_EQ(a.counters().drop(ArpDrop::kNotArp), 1u);
  EXPECT_EQ(a.counters().rx_frames, 1u);
}

TEST(ArpAgent_OnFrame, ShortFrameGivesTruncated) {
  ArpAgent a(config());
  CaptureSink s;
  Bytes f = kRequestForUs;
  f.resize(kArpFrameLen - 1);
  EXPECT_EQ(feed(a, f, 0, s), ArpDrop::kTruncated);
  f.resize(10);  // not even an Ethernet header
  EXPECT_EQ(feed(a, f, 0, s), ArpDrop::kTruncated);
  EXPECT_EQ(a.counters().drop(ArpDrop::kTruncated), 2u);
  EXPECT_TRUE(s.frames.empty());
  EXPECT_EQ(a.neighbors().size(), 0u);
}

TEST(ArpAgent_OnFrame, WrongHwTypeGivesBadHwType) {
  ArpAgent a(config());
  CaptureSink s;
  Bytes f = kRequestForUs;
  f[15] = 6;  // IEEE 802 networks
  EXPECT_EQ(feed(a, f, 0, s), ArpDrop::kBadHwType);
  EXPECT_EQ(a.counters().drop(ArpDrop::kBadHwType), 1u);
  EXPECT_TRUE(s.frames.empty());
}

TEST(ArpAgent_OnFrame, WrongProtoTypeGivesBadProtoType) {
  ArpAgent a(config());
  CaptureSink s;
  Bytes f = kRequestForUs;
  f[16] = 0x86;
  f[17] = 0xdd;
  EXPECT_EQ(feed(a, f, 0, s), ArpDrop::kBadProtoType);
  EXPECT_EQ(a.counters().drop(ArpDrop::kBadProtoType), 1u);
}

TEST(ArpAgent_OnFrame, WrongLengthsGiveBadAddrLen) {
  ArpAgent a(config());
  CaptureSink s;
  Bytes f = kRequestForUs;
  f[18] = 8;
  EXPECT_EQ(feed(a, f, 0, s), ArpDrop::kBadAddrLen);
  f = kRequestForUs;
  f[19] = 16;
  EXPECT_EQ(feed(a, f, 0, s), ArpDrop::kBadAddrLen);
  EXPECT_EQ(a.counters().drop(ArpDrop::kBadAddrLen), 2u);
}

TEST(ArpAgent_OnFrame, RarpOpGivesBadOp) {
  ArpAgent a(config());
  CaptureSink s;
  Bytes f = kRequestForUs;
  f[21] = 3;
  EXPECT_EQ(feed(a, f, 0, s), ArpDrop::kBadOp);
  EXPECT_EQ(a.counters().drop(ArpDrop::kBadOp), 1u);
}

TEST(ArpAgent_OnFrame, MulticastSenderGivesBadSender) {
  ArpAgent a(config());
  CaptureSink s;
  Bytes f = kRequestForUs;
  f[22] = 0x01;  // sender MAC 01:00:00:00:00:02
  EXPECT_EQ(feed(a, f, 0, s), ArpDrop::kBadSender);
  EXPECT_TRUE(s.frames.empty());
  EXPECT_EQ(a.neighbors().size(), 0u);
}

TEST(ArpAgent_OnFrame, OwnFrameLoopedBackIgnored) {
  ArpAgent a(config());
  CaptureSink s;
  EXPECT_EQ(feed(a, kOurRequest, 0, s), ArpDrop::kOwnFrame);
  EXPECT_EQ(feed(a, kOurAnnouncement, 0, s), ArpDrop::kOwnFrame);
  EXPECT_EQ(a.counters().drop(ArpDrop::kOwnFrame), 2u);
  EXPECT_TRUE(s.frames.empty());
}

TEST(ArpAgent_OnFrame, OtherMacClaimingOurIpGivesConflict) {
  ArpAgent a(config());
  CaptureSink s;
  const Bytes f =
      hex("ffffffffffff 020000000002 0806"
          " 0001 0800 06 04 0001 020000000002 0a000001 000000000000 0a000001");
  EXPECT_EQ(feed(a, f, 0, s), ArpDrop::kConflict);
  EXPECT_EQ(a.counters().drop(ArpDrop::kConflict), 1u);
  EXPECT_EQ(a.neighbors().size(), 0u);
}

TEST(ArpAgent_OnFrame, ProbeWithZeroSenderAnsweredNotLearned) {
  ArpAgent a(config());
  CaptureSink s;
  const Bytes probe =
      hex("ffffffffffff 020000000002 0806"
          " 0001 0800 06 04 0001 020000000002 00000000 000000000000 0a000001");
  EXPECT_EQ(feed(a, probe, 0, s), ArpDrop::kNone);
  ASSERT_EQ(s.frames.size(), 1u);
  EXPECT_EQ(s.frames[0], hex("020000000002 020000000001 0806 0001 0800 06 04 0002"
                             " 020000000001 0a000001 020000000002 00000000"));
  EXPECT_EQ(a.neighbors().size(), 0u);
}

TEST(ArpAgent_Resolve, MissSendsBroadcastRequest) {
  ArpAgent a(config());
  CaptureSink s;
  const Resolution r = a.resolve(kPeerIp, 0, s);
  EXPECT_EQ(r.status, ResolveStatus::kPending);
  ASSERT_EQ(s.frames.size(), 1u);
  EXPECT_EQ(s.frames[0], kOurRequest);
  EXPECT_EQ(a.neighbors().peek(kPeerIp)->state, NeighborState::kIncomplete);
  // Asking again while pending sends nothing more.
  EXPECT_EQ(a.resolve(kPeerIp, 1, s).status, ResolveStatus::kPending);
  EXPECT_EQ(s.frames.size(), 1u);
  EXPECT_EQ(a.counters().tx_requests, 1u);
  EXPECT_EQ(a.counters().resolve_pending, 2u);
}

TEST(ArpAgent_Resolve, ReplyResolvesAndStopsRetransmission) {
  ArpAgent a(config());
  CaptureSink s;
  a.resolve(kPeerIp, 0, s);
  feed(a, kReplyToUs, 50 * kNsPerMs, s);
  const Resolution r = a.resolve(kPeerIp, 60 * kNsPerMs, s);
  EXPECT_EQ(r.status, ResolveStatus::kResolved);
  EXPECT_EQ(r.mac, kPeerMac);
  a.on_timer(1 * kNsPerSec, s);
  EXPECT_EQ(s.frames.size(), 1u);
  EXPECT_EQ(a.counters().learned, 1u);
}

TEST(ArpAgent_Resolve, OurOwnIpResolvesToOurMac) {
  ArpAgent a(config());
  CaptureSink s;
  const Resolution r = a.resolve(kOurIp, 0, s);
  EXPECT_EQ(r.status, ResolveStatus::kResolved);
  EXPECT_EQ(r.mac, kOurMac);
  EXPECT_TRUE(s.frames.empty());
}

TEST(ArpAgent_OnTimer, RetriesThenFailed) {
  ArpAgent a(config());  // 100 ms retransmit, 2 retries, 500 ms hold-down
  CaptureSink s;
  a.resolve(kPeerIp, 0, s);
  a.on_timer(99 * kNsPerMs, s);
  EXPECT_EQ(s.frames.size(), 1u);
  a.on_timer(100 * kNsPerMs, s);
  ASSERT_EQ(s.frames.size(), 2u);
  EXPECT_EQ(s.frames[1], kOurRequest);
  a.on_timer(150 * kNsPerMs, s);
  EXPECT_EQ(s.frames.size(), 2u);
  a.on_timer(200 * kNsPerMs, s);
  ASSERT_EQ(s.frames.size(), 3u);
  EXPECT_EQ(s.frames[2], kOurRequest);
  EXPECT_EQ(a.resolve(kPeerIp, 250 * kNsPerMs, s).status, ResolveStatus::kPending);
  a.on_timer(300 * kNsPerMs, s);
  EXPECT_EQ(s.frames.size(), 3u);
  EXPECT_EQ(a.neighbors().peek(kPeerIp)->state, NeighborState::kFailed);
  EXPECT_EQ(a.counters().entries_failed, 1u);
  EXPECT_EQ(a.counters().tx_retransmits, 2u);
  // Failed persists for the hold-down, without sending.
  EXPECT_EQ(a.resolve(kPeerIp, 799 * kNsPerMs, s).status, ResolveStatus::kFailed);
  EXPECT_EQ(s.frames.size(), 3u);
  // Then the next resolve starts over.
  EXPECT_EQ(a.resolve(kPeerIp, 800 * kNsPerMs, s).status, ResolveStatus::kPending);
  ASSERT_EQ(s.frames.size(), 4u);
  EXPECT_EQ(s.frames[3], kOurRequest);
}

TEST(ArpAgent_OnTimer, AnswerDuringHoldDownResolves) {
  ArpAgent a(config());
  CaptureSink s;
  a.resolve(kPeerIp, 0, s);
  for (TimeNs t = 0; t <= 300 * kNsPerMs; t += 10 * kNsPerMs) a.on_timer(t, s);
  ASSERT_EQ(a.neighbors().peek(kPeerIp)->state, NeighborState::kFailed);
  feed(a, kReplyToUs, 400 * kNsPerMs, s);
  const Resolution r = a.resolve(kPeerIp, 400 * kNsPerMs, s);
  EXPECT_EQ(r.status, ResolveStatus::kResolved);
  EXPECT_EQ(r.mac, kPeerMac);
}

TEST(ArpAgent_Resolve, StaleEntryResolvesAndProbesUnicastOnce) {
  ArpAgent a(config());  // reachable 10 s
  CaptureSink s;
  feed(a, kReplyToUs, 0, s);
  Resolution r = a.resolve(kPeerIp, 10 * kNsPerSec, s);
  EXPECT_EQ(r.status, ResolveStatus::kResolved);
  EXPECT_EQ(r.mac, kPeerMac);
  ASSERT_EQ(s.frames.size(), 1u);
  EXPECT_EQ(s.frames[0], kOurProbe);
  r = a.resolve(kPeerIp, 10 * kNsPerSec + 1, s);
  EXPECT_EQ(r.status, ResolveStatus::kResolved);
  EXPECT_EQ(s.frames.size(), 1u);
  EXPECT_EQ(a.counters().tx_probes, 1u);
  // The answer makes it reachable again.
  feed(a, kReplyToUs, 10 * kNsPerSec + 2, s);
  EXPECT_EQ(a.neighbors().peek(kPeerIp)->state, NeighborState::kReachable);
}

TEST(ArpAgent_Resolve, UnansweredStaleEntryAgesOut) {
  ArpAgent a(config());  // reachable 10 s + stale 10 s
  CaptureSink s;
  feed(a, kReplyToUs, 0, s);
  a.on_timer(20 * kNsPerSec, s);
  EXPECT_EQ(a.neighbors().peek(kPeerIp), nullptr);
  EXPECT_EQ(a.resolve(kPeerIp, 20 * kNsPerSec, s).status, ResolveStatus::kPending);
  ASSERT_EQ(s.frames.size(), 1u);
  EXPECT_EQ(s.frames[0], kOurRequest);
}

TEST(ArpAgent_Resolve, TableFullOfRequestsGivesFailed) {
  ArpConfig c = config();
  c.neighbors.capacity = 1;
  ArpAgent a(c);
  CaptureSink s;
  EXPECT_EQ(a.resolve(kPeerIp, 0, s).status, ResolveStatus::kPending);
  EXPECT_EQ(a.resolve(Ipv4Addr{0x0a000003}, 0, s).status, ResolveStatus::kFailed);
  EXPECT_EQ(s.frames.size(), 1u);
  // A request for us is still answered; the sender cannot be learned.
  const Bytes other =
      hex("ffffffffffff 020000000003 0806"
          " 0001 0800 06 04 0001 020000000003 0a000003 000000000000 0a000001");
  EXPECT_EQ(feed(a, other, 0, s), ArpDrop::kNone);
  EXPECT_EQ(a.counters().drop(ArpDrop::kTableFull), 1u);
  ASSERT_EQ(s.frames.size(), 2u);
  EXPECT_EQ(s.frames[1][5], 0x03);  // the reply goes to the asker
  EXPECT_EQ(a.neighbors().peek(Ipv4Addr{0x0a000003}), nullptr);
}

TEST(ArpAgent_Announce, GratuitousRequestBytes) {
  ArpAgent a(config());
  CaptureSink s;
  a.announce(0, s);
  ASSERT_EQ(s.frames.size(), 1u);
  EXPECT_EQ(s.frames[0], kOurAnnouncement);
  EXPECT_EQ(a.counters().tx_announcements, 1u);
}

TEST(ArpAgent_SetIp, NoAddressAnswersNothing) {
  ArpAgent a(config());
  a.set_ip(Ipv4Addr{});
  CaptureSink s;
  EXPECT_EQ(feed(a, kRequestForUs, 0, s), ArpDrop::kNotForUs);
  EXPECT_EQ(a.resolve(kPeerIp, 0, s).status, ResolveStatus::kFailed);
  EXPECT_TRUE(s.frames.empty());
}

}  // namespace
}  // namespace uroce::port
