#include "datapath/port/rss.h"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <random>
#include <set>
#include <string_view>
#include <vector>

#include "datapath/wire/udp.h"

namespace uroce::port {
namespace {

using wire::Ipv4Addr;
using wire::Ipv6Addr;

Ipv4Addr v4(std::string_view s) { return *Ipv4Addr::parse(s); }
Ipv6Addr v6(std::string_view s) { return *Ipv6Addr::parse(s); }

std::uint32_t random32(std::mt19937& rng) { return static_cast<std::uint32_t>(rng()); }
Ipv4Addr random_v4(std::mt19937& rng) { return Ipv4Addr{random32(rng)}; }
Ipv6Addr random_v6(std::mt19937& rng) {
  Ipv6Addr a;
  for (auto& b : a.b) b = static_cast<std::uint8_t>(rng());
  return a;
}

// One row of a published table: addresses as text, the expected hash.
struct Vector {
  const char* src;
  std::uint16_t sport;
  const char* dst;
  std::uint16_t dport;
  std::uint32_t hash;
};

// Microsoft's "Verifying the RSS Hash Calculation" tables, IPv4 with TCP
// ports. The tables list the destination first, but the hashed input is
// source address, destination address, source port, destination port: the
// packet from 66.9.149.187:2794 to 161.142.100.80:1766 hashes to 0x51ccc178.
TEST(RssHashV4_PublishedVectors, SourceAddressAndPortFirst) {
  const Vector vectors[] = {
      {"66.9.149.187", 2794, "161.142.100.80", 1766, 0x51ccc178},
      {"199.92.111.2", 14230, "65.69.140.83", 4739, 0xc626b0ea},
      {"24.19.198.95", 12898, "12.22.207.184", 38024, 0x5c2b394a},
      {"38.27.205.30", 48228, "209.142.163.6", 2217, 0xafc7327f},
      {"153.39.163.191", 44251, "202.188.127.2", 1303, 0x10e828a2},
  };
  for (const Vector& t : vectors) {
    EXPECT_EQ(rss_hash_v4(v4(t.src), v4(t.dst), t.sport, t.dport), t.hash) << t.src;
  }
}

TEST(RssHashV4_PublishedVectors, ReversedDirectionHashesDifferently) {
  // Toeplitz is not symmetric: the reply direction of the first vector does
  // not give the published value, so the argument order above is the one.
  EXPECT_NE(rss_hash_v4(v4("161.142.100.80"), v4("66.9.149.187"), 1766, 2794), 0x51ccc178u);
}

TEST(RssHashV6_PublishedVectors, SourceAddressAndPortFirst) {
  const Vector vectors[] = {
      {"3ffe:2501:200:1fff::7", 2794, "3ffe:2501:200:3::1", 1766, 0x40207d3d},
      {"3ffe:501:8::260:97ff:fe40:efab", 14230, "ff02::1", 4739, 0xdde51bbf},
      {"3ffe:1900:4545:3:200:f8ff:fe21:67cf", 44251, "fe80::200:f8ff:fe21:67cf", 38024, 0x02d1feef},
  };
  for (const Vector& t : vectors) {
    EXPECT_EQ(rss_hash_v6(v6(t.src), v6(t.dst), t.sport, t.dport), t.hash) << t.src;
  }
}

// The steering search relies on this: the source port's contribution does
// not depend on the addresses or the destination port.
TEST(RssHash_SourcePortTerm, IndependentOfTheRestOfTheTuple) {
  std::mt19937 rng(7);
  for (int n = 0; n < 200; ++n) {
    const Ipv4Addr s4 = random_v4(rng), d4 = random_v4(rng);
    const Ipv6Addr s6 = random_v6(rng), d6 = random_v6(rng);
    const auto port = static_cast<std::uint16_t>(rng());
    const auto dport = static_cast<std::uint16_t>(rng());
    EXPECT_EQ(rss_hash_v4(s4, d4, port, dport) ^ rss_hash_v4(s4, d4, 0, dport),
              rss_hash_v4({}, {}, port, 0));
    EXPECT_EQ(rss_hash_v6(s6, d6, port, dport) ^ rss_hash_v6(s6, d6, 0, dport),
              rss_hash_v6({}, {}, port, 0));
  }
}

// Checks one steered port: in range, the receiver's low hash bits equal the
// destination QPN's, and every RETA layout the scheme allows sends it to
// the shard that owns the destination QP.
void expect_lands_on_owner(std::uint16_t port, std::uint32_t hash, std::uint32_t dest_qpn) {
  EXPECT_GE(port, 0xC000);
  EXPECT_EQ(hash & 127, dest_qpn & 127) << "port " << port << " dqpn " << dest_qpn;
  for (std::uint32_t reta_size : {128u, 256u, 512u}) {
    for (std::uint16_t n = 1; n <= 8; ++n) {
      EXPECT_EQ(reta_queue(hash & (reta_size - 1), n), shard_of_qpn(dest_qpn, n))
          << "reta " << reta_size << " queues " << n;
    }
  }
}

TEST(SteeredSrcPortV4_RandomTuples, LandsOnTheOwnerShard) {
  std::mt19937 rng(1);
  for (int n = 0; n < 2000; ++n) {
    const Ipv4Addr src = random_v4(rng), dst = random_v4(rng);
    const std::uint32_t local_qpn = random32(rng) & 0xFFFFFF, dest_qpn = random32(rng) & 0xFFFFFF;
    const std::uint16_t port = steered_src_port_v4(src, dst, local_qpn, dest_qpn);
    expect_lands_on_owner(port, rss_hash_v4(src, dst, port, wire::kRoceV2Port), dest_qpn);
  }
}

TEST(SteeredSrcPortV6_RandomTuples, LandsOnTheOwnerShard) {
  std::mt19937 rng(2);
  for (int n = 0; n < 2000; ++n) {
    const Ipv6Addr src = random_v6(rng), dst = random_v6(rng);
    const std::uint32_t local_qpn = random32(rng) & 0xFFFFFF, dest_qpn = random32(rng) & 0xFFFFFF;
    const std::uint16_t port = steered_src_port_v6(src, dst, local_qpn, dest_qpn);
    expect_lands_on_owner(port, rss_hash_v6(src, dst, port, wire::kRoceV2Port), dest_qpn);
  }
}

// Every path of a steered connection lands on the owner's shard too, and
// the 16 paths a connection may spray over are 16 distinct ports.
TEST(PathSrcPortV4_RandomTuples, SameShardDistinctPorts) {
  std::mt19937 rng(3);
  for (int n = 0; n < 500; ++n) {
    const Ipv4Addr src = random_v4(rng), dst = random_v4(rng);
    const std::uint32_t local_qpn = random32(rng) & 0xFFFFFF, dest_qpn = random32(rng) & 0xFFFFFF;
    const std::uint16_t base = steered_src_port_v4(src, dst, local_qpn, dest_qpn);
    std::set<std::uint16_t> seen;
    for (std::uint32_t path = 0; path < 16; ++path) {
      const std::uint16_t port = path_src_port(base, path, false);
      if (path == 0) {
        EXPECT_EQ(port, base);
      }
      expect_lands_on_owner(port, rss_hash_v4(src, dst, port, wire::kRoceV2Port), dest_qpn);
      seen.insert(port);
    }
    EXPECT_EQ(seen.size(), 16u);
  }
}

TEST(PathSrcPortV6_RandomTuples, SameShardDistinctPorts) {
  std::mt19937 rng(4);
  for (int n = 0; n < 500; ++n) {
    const Ipv6Addr src = random_v6(rng), dst = random_v6(rng);
    const std::uint32_t local_qpn = random32(rng) & 0xFFFFFF, dest_qpn = random32(rng) & 0xFFFFFF;
    const std::uint16_t base = steered_src_port_v6(src, dst, local_qpn, dest_qpn);
    std::set<std::uint16_t> seen;
    for (std::uint32_t path = 0; path < 16; ++path) {
      const std::uint16_t port = path_src_port(base, path, true);
      expect_lands_on_owner(port, rss_hash_v6(src, dst, port, wire::kRoceV2Port), dest_qpn);
      seen.insert(port);
    }
    EXPECT_EQ(seen.size(), 16u);
  }
}

// An unsteered base (rxe's port) keeps its receiver's low hash bits on every
// path, whatever they are.
TEST(PathSrcPort_UnsteeredBase, SameLowHashBits) {
  const Ipv4Addr a = v4("10.0.0.1"), b = v4("10.0.0.2");
  const std::uint16_t base = 0xC000 | 0x1234;
  const std::uint32_t want = rss_hash_v4(a, b, base, wire::kRoceV2Port) & 127;
  for (std::uint32_t path = 1; path < 16; ++path) {
    const std::uint16_t port = path_src_port(base, path, false);
    EXPECT_NE(port, base);
    EXPECT_GE(port, 0xC000);
    EXPECT_EQ(rss_hash_v4(a, b, port, wire::kRoceV2Port) & 127, want) << path;
  }
}

TEST(SteeredSrcPort_SameInputs, SamePort) {
  const Ipv4Addr a = v4("10.0.0.1"), b = v4("10.0.0.2");
  EXPECT_EQ(steered_src_port_v4(a, b, 17, 99), steered_src_port_v4(a, b, 17, 99));
  const Ipv6Addr c = v6("fd00::1"), d = v6("fd00::2");
  EXPECT_EQ(steered_src_port_v6(c, d, 17, 99), steered_src_port_v6(c, d, 17, 99));
}

// With kRssKey the 14 free port bits span the 7 target bits for both tuple
// layouts: each target is reached by exactly 128 of the 16384 ports, which
// is what lets the search walk 128 candidates and always match.
TEST(SteeredSrcPort_FreeBits, EveryTargetHas128Ports) {
  const Ipv4Addr s4 = v4("10.1.2.3"), d4 = v4("10.4.5.6");
  const Ipv6Addr s6 = v6("fd00::3"), d6 = v6("fd00::6");
  std::array<int, 128> count4{}, count6{};
  for (std::uint32_t p = 0xC000; p <= 0xFFFF; ++p) {
    const auto port = static_cast<std::uint16_t>(p);
    ++count4[rss_hash_v4(s4, d4, port, wire::kRoceV2Port) & 127];
    ++count6[rss_hash_v6(s6, d6, port, wire::kRoceV2Port) & 127];
  }
  for (std::uint32_t t = 0; t < 128; ++t) {
    EXPECT_EQ(count4[t], 128) << "IPv4 target " << t;
    EXPECT_EQ(count6[t], 128) << "IPv6 target " << t;
  }
}

// The distinct ports that QPs `qpns` at a to QP 0x2a at b use.
template <typename Addr, typename Steer>
std::size_t distinct_ports(const Addr& a, const Addr& b, const std::vector<std::uint32_t>& qpns,
                           Steer steer) {
  std::set<std::uint16_t> ports;
  for (std::uint32_t q : qpns) ports.insert(steer(a, b, q, 0x2a));
  return ports.size();
}

// 128 ports match a given (src, dst, dest QPN); local QPNs whose 7-bit fold
// differs take different ones, so QPs allocated in a row, or every 8th QPN
// (one shard of 8), never share a port, and random QPNs rarely do.
TEST(SteeredSrcPort_ManyLocalQps, SpreadOverPorts) {
  std::vector<std::uint32_t> consecutive, strided, random;
  std::mt19937 rng(4);
  for (std::uint32_t q = 0; q < 128; ++q) consecutive.push_back(0x300 + q);
  for (std::uint32_t q = 0; q < 64; ++q) strided.push_back(0x100 + 8 * q);
  for (std::uint32_t q = 0; q < 64; ++q) random.push_back(random32(rng) & 0xFFFFFF);
  const Ipv4Addr a4 = v4("192.168.1.10"), b4 = v4("192.168.1.20");
  const Ipv6Addr a6 = v6("fd00:1::10"), b6 = v6("fd00:1::20");
  EXPECT_EQ(distinct_ports(a4, b4, consecutive, steered_src_port_v4), 128u);
  EXPECT_EQ(distinct_ports(a6, b6, consecutive, steered_src_port_v6), 128u);
  EXPECT_EQ(distinct_ports(a4, b4, strided, steered_src_port_v4), 64u);
  EXPECT_EQ(distinct_ports(a6, b6, strided, steered_src_port_v6), 64u);
  EXPECT_GE(distinct_ports(a4, b4, random, steered_src_port_v4), 40u);
  EXPECT_GE(distinct_ports(a6, b6, random, steered_src_port_v6), 40u);
}

TEST(ShardOfQpn_Edges, OnlyTheLowSevenBitsCount) {
  static_assert(shard_of_qpn(12345, 1) == 0);
  EXPECT_EQ(shard_of_qpn(0, 4), 0);
  EXPECT_EQ(shard_of_qpn(127, 4), 3);
  EXPECT_EQ(shard_of_qpn(128, 4), 0);  // bit 7 and up are ignored
  EXPECT_EQ(shard_of_qpn(0xFFFFFF, 8), 127 % 8);
  EXPECT_EQ(shard_of_qpn(0xFFFFFFFF, 3), 127 % 3);
  EXPECT_EQ(shard_of_qpn(77, 128), 77);
  EXPECT_EQ(shard_of_qpn(200, 200), 200 & 127);  // shards past 127 own nothing
}

TEST(ShardOfQpn_Edges, ThreeShardsSplitTheBucketsUnevenly) {
  int count[3] = {};
  for (std::uint32_t q = 0; q < 128; ++q) ++count[shard_of_qpn(q, 3)];
  EXPECT_EQ(count[0], 43);
  EXPECT_EQ(count[1], 43);
  EXPECT_EQ(count[2], 42);
}

TEST(RetaQueue_Edges, LargerTablesRepeatTheFirst128Entries) {
  static_assert(reta_queue(5, 1) == 0);
  for (std::uint16_t n : {1, 2, 3, 5, 8, 128}) {
    for (std::uint32_t i = 0; i < 128; ++i) {
      EXPECT_EQ(reta_queue(i, n), i % n);
      EXPECT_EQ(reta_queue(i + 128, n), reta_queue(i, n));
      EXPECT_EQ(reta_queue(i + 384, n), reta_queue(i, n));
      EXPECT_EQ(reta_queue(i, n), shard_of_qpn(i, n));
    }
  }
  EXPECT_EQ(reta_queue(511, 4), 3);
}

}  // namespace
}  // namespace uroce::port
