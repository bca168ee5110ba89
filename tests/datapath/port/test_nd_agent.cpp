#include "datapath/port/nd_agent.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "datapath/wire/checksum.h"
#include "datapath/wire/ipv6.h"
#include "datapath/wire/nd.h"
#include "datapath/wire/nd_lla_option.h"

namespace uroce::port {
namespace {

using wire::Ipv6Addr;
using wire::MacAddr;
using Bytes = std::vector<std::uint8_t>;

Bytes hex(std::string_view s) {
  Bytes out;
  for (std::size_t i = 0; i + 1 < s.size(); i += 2) {
    auto v = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
    out.push_back(static_cast<std::uint8_t>(v(s[i]) << 4 | v(s[i + 1])));
  }
  return out;
}

struct CaptureSink {
  std::vector<Bytes> frames;
  void emit(std::span<const std::uint8_t> f) { frames.emplace_back(f.begin(), f.end()); }
};

// Us: 02:00:00:00:00:01, fe80::ff:fe00:1. Peer: 02:00:00:00:00:02,
// fe80::ff:fe00:2 (the link-local addresses of those MACs).
const MacAddr kOurMac{{0x02, 0, 0, 0, 0, 0x01}};
const MacAddr kPeerMac{{0x02, 0, 0, 0, 0, 0x02}};
const Ipv6Addr kOurLl = Ipv6Addr::link_local(kOurMac);
const Ipv6Addr kPeerLl = Ipv6Addr::link_local(kPeerMac);
const Ipv6Addr kOurGlobal = *Ipv6Addr::parse("2001:db8::1");

// Frames built by scapy (an independent encoder, checksums included):
// the peer's solicitation for our link-local address (to its solicited-node
// address, with a source link-layer option) and our expected solicited
// advertisement; our solicitation for the peer and its advertisement.
constexpr std::string_view kPeerSolicit =
    "3333ff00000102000000000286dd6000000000203afffe80000000000000000000fffe000002ff02000000000000"
    "00000001ff00000187007c9700000000fe80000000000000000000fffe0000010101020000000002";
constexpr std::string_view kOurAdvert =
    "02000000000202000000000186dd6000000000203afffe80000000000000000000fffe000001fe80000000000000"
    "000000fffe00000288001b1c60000000fe80000000000000000000fffe0000010201020000000001";
constexpr std::string_view kOurSolicit =
    "3333ff00000202000000000186dd6000000000203afffe80000000000000000000fffe000001ff02000000000000"
    "00000001ff00000287007c9700000000fe80000000000000000000fffe0000020101020000000001";
constexpr std::string_view kPeerAdvert =
    "02000000000102000000000286dd6000000000203afffe80000000000000000000fffe000002fe80000000000000"
    "000000fffe00000188001b1a60000000fe80000000000000000000fffe0000020201020000000002";

NdConfig config() {
  NdConfig c;
  c.mac = kOurMac;
  c.link_local = kOurLl;
  c.global = kOurGlobal;
  c.retransmit_time = 100 * kNsPerMs;
  c.retries = 2;
  c.failed_hold_time = 500 * kNsPerMs;
  c.neighbors.capacity = 4;
  return c;
}

// Rewrites the ICMPv6 checksum after a test edited the frame.
void fix_checksum(Bytes& f) {
  const wire::Ipv6Hdr ip = wire::Ipv6Hdr::read(f.data() + 14);
  wire::store_be16(f.data() + 56, 0);
  wire::store_be16(f.data() + 56, wire::ipv6_checksum(ip.src(), ip.dst(), wire::kIpProtoIcmpv6,
                                                      std::span(f).subspan(54)));
}

TEST(NdAgent_OnFrame, SolicitationForUsGetsScapysAdvertisement) {
  NdAgent a(config());
  CaptureSink sink;
  EXPECT_EQ(a.on_frame(hex(kPeerSolicit), 0, sink), NdDrop::kNone);
  ASSERT_EQ(sink.frames.size(), 1u);
  EXPECT_EQ(sink.frames[0], hex(kOurAdvert));
  EXPECT_EQ(a.counters().rx_solicits, 1u);
  EXPECT_EQ(a.counters().tx_adverts, 1u);
  // The asker's source link-layer option taught us its MAC.
  const Neighbor6Entry* n = a.neighbors().peek(kPeerLl);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->mac, kPeerMac);
  EXPECT_EQ(n->state, NeighborState::kReachable);
}

TEST(NdAgent_OnFrame, SolicitationForGlobalAddressToItsSolicitedNode) {
  NdAgent a(config());
  CaptureSink sink;
  Bytes f(kNdFrameSize);
  build_nd_frame(std::span<std::uint8_t, kNdFrameSize>(f),
                 kOurGlobal.solicited_node().multicast_mac(), kPeerMac, kPeerLl,
                 kOurGlobal.solicited_node(), wire::kIcmpv6NeighborSolicit, 0, kOurGlobal,
                 wire::kNdOptSourceLla);
  EXPECT_EQ(a.on_frame(f, 0, sink), NdDrop::kNone);
  ASSERT_EQ(sink.frames.size(), 1u);
  const wire::NdHdr na = wire::NdHdr::read(sink.frames[0].data() + 54);
  EXPECT_EQ(na.type(), wire::kIcmpv6NeighborAdvert);
  EXPECT_EQ(na.target(), kOurGlobal);
  EXPECT_TRUE(na.solicited());
  EXPECT_EQ(wire::Ipv6Hdr::read(sink.frames[0].data() + 14).src(), kOurGlobal);
}

TEST(NdAgent_OnFrame, DuplicateAddressProbeIsDefendedToAllNodes) {
  NdAgent a(config());
  CaptureSink sink;
  Bytes f = hex(kPeerSolicit);
  std::fill(f.begin() + 22, f.begin() + 38, 0);  // source ::
  f.resize(78);                                  // DAD carries no source option
  wire::store_be16(f.data() + 18, 24);
  fix_checksum(f);
  EXPECT_EQ(a.on_frame(f, 0, sink), NdDrop::kNone);
  ASSERT_EQ(sink.frames.size(), 1u);
  const wire::Ipv6Hdr ip = wire::Ipv6Hdr::read(sink.frames[0].data() + 14);
  EXPECT_EQ(ip.dst(), *Ipv6Addr::parse("ff02::1"));
  EXPECT_FALSE(wire::NdHdr::read(sink.frames[0].data() + 54).solicited());
  EXPECT_EQ(a.counters().rx_dad, 1u);
  EXPECT_EQ(a.neighbors().size(), 0u);
}

TEST(NdAgent_OnFrame, InvalidMessagesAreDroppedWithTheirReason) {
  NdAgent a(config());
  CaptureSink sink;
  Bytes f = hex(kPeerSolicit);
  f[21] = 64;  // hop limit: a solicitation from off-link
  EXPECT_EQ(a.on_frame(f, 0, sink), NdDrop::kBadHopLimit);
  f = hex(kPeerSolicit);
  f[60] ^= 0x01;  // target address, checksum not fixed
  EXPECT_EQ(a.on_frame(f, 0, sink), NdDrop::kBadChecksum);
  f = hex(kPeerSolicit);
  f[55] = 1;
  fix_checksum(f);
  EXPECT_EQ(a.on_frame(f, 0, sink), NdDrop::kBadCode);
  f = hex(kPeerSolicit);
  f[79] = 0;  // option length 0
  fix_checksum(f);
  EXPECT_EQ(a.on_frame(f, 0, sink), NdDrop::kBadOption);
  f = hex(kPeerSolicit);
  f[69] ^= 0x40;  // target: not one of ours
  fix_checksum(f);
  EXPECT_EQ(a.on_frame(f, 0, sink), NdDrop::kNotForUs);
  f = hex(kPeerSolicit);
  f[54] = 128;  // echo request
  fix_checksum(f);
  EXPECT_EQ(a.on_frame(f, 0, sink), NdDrop::kNotNd);
  f = hex(kPeerSolicit);
  f.resize(70);
  EXPECT_EQ(a.on_frame(f, 0, sink), NdDrop::kTruncated);
  f = hex(kPeerSolicit);
  std::copy(kOurMac.b.begin(), kOurMac.b.end(), f.begin() + 6);
  EXPECT_EQ(a.on_frame(f, 0, sink), NdDrop::kOwnFrame);
  EXPECT_TRUE(sink.frames.empty());
  EXPECT_EQ(a.counters().drop(NdDrop::kBadHopLimit), 1u);
  EXPECT_EQ(a.counters().drop(NdDrop::kNotNd), 1u);
}

TEST(NdAgent_Resolve, SolicitsThenLearnsFromTheAdvertisement) {
  NdAgent a(config());
  CaptureSink sink;
  EXPECT_EQ(a.resolve(kPeerLl, 0, sink).status, ResolveStatus::kPending);
  ASSERT_EQ(sink.frames.size(), 1u);
  EXPECT_EQ(sink.frames[0], hex(kOurSolicit));
  EXPECT_EQ(a.resolve(kPeerLl, 1, sink).status, ResolveStatus::kPending);
  EXPECT_EQ(sink.frames.size(), 1u);  // one solicitation outstanding
  EXPECT_EQ(a.on_frame(hex(kPeerAdvert), 2, sink), NdDrop::kNone);
  const Resolution r = a.resolve(kPeerLl, 3, sink);
  EXPECT_EQ(r.status, ResolveStatus::kResolved);
  EXPECT_EQ(r.mac, kPeerMac);
  EXPECT_EQ(a.counters().learned, 1u);
}

TEST(NdAgent_Resolve, UnsolicitedAdvertisementForAStrangerIsIgnored) {
  NdAgent a(config());
  CaptureSink sink;
  EXPECT_EQ(a.on_frame(hex(kPeerAdvert), 0, sink), NdDrop::kNotForUs);
  EXPECT_EQ(a.neighbors().size(), 0u);
}

TEST(NdAgent_Resolve, AdvertisementOfOurAddressIsAConflict) {
  NdAgent a(config());
  CaptureSink sink;
  Bytes f = hex(kOurAdvert);
  std::copy(kPeerMac.b.begin(), kPeerMac.b.end(), f.begin() + 6);
  std::copy(kOurMac.b.begin(), kOurMac.b.end(), f.begin());
  EXPECT_EQ(a.on_frame(f, 0, sink), NdDrop::kConflict);
}

TEST(NdAgent_Resolve, RetransmitsThenFailsThenStartsOver) {
  NdAgent a(config());
  CaptureSink sink;
  EXPECT_EQ(a.resolve(kPeerLl, 0, sink).status, ResolveStatus::kPending);
  a.on_timer(100 * kNsPerMs, sink);
  a.on_timer(200 * kNsPerMs, sink);
  EXPECT_EQ(sink.frames.size(), 3u);  // first + 2 retries
  a.on_timer(300 * kNsPerMs, sink);
  EXPECT_EQ(sink.frames.size(), 3u);
  EXPECT_EQ(a.counters().entries_failed, 1u);
  EXPECT_EQ(a.resolve(kPeerLl, 400 * kNsPerMs, sink).status, ResolveStatus::kFailed);
  EXPECT_EQ(a.resolve(kPeerLl, 900 * kNsPerMs, sink).status, ResolveStatus::kPending);
  EXPECT_EQ(sink.frames.size(), 4u);
}

TEST(NdAgent_Resolve, OwnAddressesAndNonsenseAnswerAtOnce) {
  NdAgent a(config());
  CaptureSink sink;
  EXPECT_EQ(a.resolve(kOurLl, 0, sink).mac, kOurMac);
  EXPECT_EQ(a.resolve(kOurGlobal, 0, sink).status, ResolveStatus::kResolved);
  EXPECT_EQ(a.resolve(*Ipv6Addr::parse("ff02::1"), 0, sink).status, ResolveStatus::kFailed);
  EXPECT_EQ(a.resolve(*Ipv6Addr::parse("::ffff:10.0.0.1"), 0, sink).status, ResolveStatus::kFailed);
  EXPECT_TRUE(sink.frames.empty());
}

TEST(NdAgent_Resolve, GlobalPeerIsSolicitedFromOurGlobalAddress) {
  NdAgent a(config());
  CaptureSink sink;
  const Ipv6Addr peer = *Ipv6Addr::parse("2001:db8::2");
  EXPECT_EQ(a.resolve(peer, 0, sink).status, ResolveStatus::kPending);
  ASSERT_EQ(sink.frames.size(), 1u);
  const wire::Ipv6Hdr ip = wire::Ipv6Hdr::read(sink.frames[0].data() + 14);
  EXPECT_EQ(ip.src(), kOurGlobal);
  EXPECT_EQ(ip.dst(), peer.solicited_node());
  EXPECT_EQ(ip.hop_limit(), 255);
}

}  // namespace
}  // namespace uroce::port
