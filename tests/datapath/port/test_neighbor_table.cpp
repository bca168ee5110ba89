#include "datapath/port/neighbor_table.h"

#include <gtest/gtest.h>

#include <map>

#include "datapath/base/rng.h"

namespace uroce::port {
namespace {

using wire::Ipv4Addr;
using wire::MacAddr;

Ipv4Addr ip(std::uint32_t last) { return Ipv4Addr{0x0a000000u | last}; }
MacAddr mac(std::uint8_t last) { return MacAddr{{0x02, 0, 0, 0, 0, last}}; }

NeighborConfig cfg(std::uint32_t capacity) {
  NeighborConfig c;
  c.capacity = capacity;
  c.reachable_time = 10 * kNsPerSec;
  c.stale_time = 20 * kNsPerSec;
  return c;
}

TEST(NeighborTable_Lookup, MissGivesNull) {
  NeighborTable t(cfg(4));
  EXPECT_EQ(t.lookup(ip(1), 0), nullptr);
  EXPECT_EQ(t.peek(ip(1)), nullptr);
  EXPECT_EQ(t.size(), 0u);
}

TEST(NeighborTable_Confirm, CreatesReachableEntry) {
  NeighborTable t(cfg(4));
  ASSERT_NE(t.confirm(ip(1), mac(1), 5, /*create=*/true), nullptr);
  const NeighborEntry* n = t.lookup(ip(1), 6);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->ip, ip(1));
  EXPECT_EQ(n->mac, mac(1));
  EXPECT_EQ(n->state, NeighborState::kReachable);
  EXPECT_EQ(n->confirmed, 5u);
  EXPECT_EQ(t.size(), 1u);
}

TEST(NeighborTable_Confirm, WithoutCreateIgnoresUnknown) {
  NeighborTable t(cfg(4));
  EXPECT_EQ(t.confirm(ip(1), mac(1), 0, /*create=*/false), nullptr);
  EXPECT_EQ(t.size(), 0u);
}

TEST(NeighborTable_Confirm, CompletesIncompleteEntry) {
  NeighborTable t(cfg(4));
  NeighborEntry* n = t.create_incomplete(ip(1), 0);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->state, NeighborState::kIncomplete);
  n->retries = 2;
  ASSERT_EQ(t.confirm(ip(1), mac(7), 100, false), n);
  EXPECT_EQ(n->state, NeighborState::kReachable);
  EXPECT_EQ(n->mac, mac(7));
  EXPECT_EQ(n->retries, 0);
  EXPECT_EQ(t.size(), 1u);
}

TEST(NeighborTable_Insert, FullEvictsLeastRecentlyUsed) {
  NeighborTable t(cfg(3));
  t.confirm(ip(1), mac(1), 0, true);
  t.confirm(ip(2), mac(2), 1, true);
  t.confirm(ip(3), mac(3), 2, true);
  ASSERT_NE(t.lookup(ip(1), 3), nullptr);  // 2 is now the LRU entry
  ASSERT_NE(t.confirm(ip(4), mac(4), 4, true), nullptr);
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(t.peek(ip(2)), nullptr);
  EXPECT_NE(t.peek(ip(1)), nullptr);
  EXPECT_NE(t.peek(ip(3)), nullptr);
  EXPECT_NE(t.peek(ip(4)), nullptr);
  EXPECT_EQ(t.stats().evictions, 1u);
}

TEST(NeighborTable_Insert, FullNeverEvictsIncomplete) {
  NeighborTable t(cfg(2));
  ASSERT_NE(t.create_incomplete(ip(1), 0), nullptr);  // LRU, but incomplete
  t.confirm(ip(2), mac(2), 1, true);
  ASSERT_NE(t.create_incomplete(ip(3), 2), nullptr);
  EXPECT_NE(t.peek(ip(1)), nullptr);
  EXPECT_EQ(t.peek(ip(2)), nullptr);
  EXPECT_EQ(t.stats().evictions, 1u);
}

TEST(NeighborTable_Insert, FullOfIncompleteGivesNull) {
  NeighborTable t(cfg(2));
  ASSERT_NE(t.create_incomplete(ip(1), 0), nullptr);
  ASSERT_NE(t.create_incomplete(ip(2), 0), nullptr);
  EXPECT_EQ(t.create_incomplete(ip(3), 0), nullptr);
  EXPECT_EQ(t.confirm(ip(3), mac(3), 0, true), nullptr);
  EXPECT_EQ(t.stats().insert_full, 2u);
  EXPECT_EQ(t.size(), 2u);
}

TEST(NeighborTable_Lookup, AgesReachableToStaleThenRemoves) {
  NeighborTable t(cfg(4));  // reachable 10 s, stale 20 s more
  t.confirm(ip(1), mac(1), 1 * kNsPerSec, true);
  ASSERT_NE(t.lookup(ip(1), 11 * kNsPerSec - 1), nullptr);
  EXPECT_EQ(t.peek(ip(1))->state, NeighborState::kReachable);
  ASSERT_NE(t.lookup(ip(1), 11 * kNsPerSec), nullptr);
  EXPECT_EQ(t.peek(ip(1))->state, NeighborState::kStale);
  EXPECT_EQ(t.peek(ip(1))->mac, mac(1));
  ASSERT_NE(t.lookup(ip(1), 31 * kNsPerSec - 1), nullptr);
  EXPECT_EQ(t.lookup(ip(1), 31 * kNsPerSec), nullptr);
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.stats().expired, 1u);
}

TEST(NeighborTable_Age, SweepsExpiredAndFailedEntries) {
  NeighborTable t(cfg(8));
  t.confirm(ip(1), mac(1), 0, true);               // expires at 30 s
  t.confirm(ip(2), mac(2), 15 * kNsPerSec, true);  // stale at 25 s
  NeighborEntry* f = t.create_incomplete(ip(3), 0);
  f->state = NeighborState::kFailed;
  f->timer = 5 * kNsPerSec;                           // hold-down ends at 5 s
  ASSERT_NE(t.create_incomplete(ip(4), 0), nullptr);  // never aged
  EXPECT_EQ(t.age(4 * kNsPerSec), 0u);
  EXPECT_EQ(t.age(5 * kNsPerSec), 1u);
  EXPECT_EQ(t.peek(ip(3)), nullptr);
  EXPECT_EQ(t.age(30 * kNsPerSec), 1u);
  EXPECT_EQ(t.peek(ip(1)), nullptr);
  ASSERT_NE(t.peek(ip(2)), nullptr);
  EXPECT_EQ(t.peek(ip(2))->state, NeighborState::kStale);
  EXPECT_NE(t.peek(ip(4)), nullptr);
  EXPECT_EQ(t.size(), 2u);
}

TEST(NeighborTable_Erase, RemovesAndFreesSlot) {
  NeighborTable t(cfg(1));
  t.create_incomplete(ip(1), 0);
  EXPECT_TRUE(t.erase(ip(1)));
  EXPECT_FALSE(t.erase(ip(1)));
  EXPECT_NE(t.create_incomplete(ip(2), 0), nullptr);
  EXPECT_EQ(t.stats().insert_full, 0u);
}

TEST(NeighborTable_ForEach, VisitsMostRecentFirst) {
  NeighborTable t(cfg(4));
  t.confirm(ip(1), mac(1), 0, true);
  t.confirm(ip(2), mac(2), 0, true);
  t.confirm(ip(3), mac(3), 0, true);
  t.lookup(ip(1), 0);
  std::vector<std::uint32_t> order;
  t.for_each([&](NeighborEntry& n) { order.push_back(n.ip.v & 0xff); });
  EXPECT_EQ(order, (std::vector<std::uint32_t>{1, 3, 2}));
}

// Random inserts and erases against std::map: exercises probe runs that wrap
// around the slot array and backward-shift deletion.
TEST(NeighborTable_Erase, RandomOperationsMatchReferenceMap) {
  NeighborTable t(cfg(64));
  std::map<std::uint32_t, std::uint8_t> ref;
  SeededRng rng(7);
  for (int step = 0; step < 20000; ++step) {
    const auto key = static_cast<std::uint32_t>(rng.below(96));
    if (rng.chance(0.5)) {
      if (ref.size() < 64 || ref.count(key) != 0) {
        const auto m = static_cast<std::uint8_t>(rng.below(256));
        ASSERT_NE(t.confirm(ip(key), mac(m), 0, true), nullptr);
        ref[key] = m;
      }
    } else {
      ASSERT_EQ(t.erase(ip(key)), ref.erase(key) == 1) << "step " << step;
    }
    ASSERT_EQ(t.size(), ref.size());
  }
  for (std::uint32_t k = 0; k < 96; ++k) {
    const NeighborEntry* n = t.peek(ip(k));
    const auto it = ref.find(k);
    ASSERT_EQ(n != nullptr, it != ref.end()) << k;
    if (n != nullptr) {
      EXPECT_EQ(n->mac, mac(it->second));
    }
  }
}

// The IPv6 instance: the same table keyed by 16-byte addresses; link-local
// neighbours differ only in their interface identifiers, global ones may
// share them across prefixes.
TEST(Neighbor6Table_Lookup, KeysAreWholeAddresses) {
  NeighborConfig c;
  c.capacity = 64;
  Neighbor6Table t(c);
  for (std::uint8_t i = 1; i <= 32; ++i) {
    const wire::MacAddr m{{0x02, 0, 0, 0, 0, i}};
    ASSERT_NE(t.confirm(wire::Ipv6Addr::link_local(m), m, 0, true), nullptr);
    wire::Ipv6Addr g = wire::Ipv6Addr::link_local(m);
    g.b[0] = 0x20;
    g.b[1] = 0x01;
    ASSERT_NE(t.confirm(g, mac(i), 0, true), nullptr);
  }
  EXPECT_EQ(t.size(), 64u);
  const wire::MacAddr m7{{0x02, 0, 0, 0, 0, 7}};
  const Neighbor6Entry* n = t.lookup(wire::Ipv6Addr::link_local(m7), 1);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->mac, m7);
  wire::Ipv6Addr other = wire::Ipv6Addr::link_local(m7);
  other.b[0] = 0x20;
  other.b[1] = 0x02;  // same interface identifier, another prefix
  EXPECT_EQ(t.peek(other), nullptr);
  EXPECT_TRUE(t.erase(wire::Ipv6Addr::link_local(m7)));
  EXPECT_EQ(t.peek(wire::Ipv6Addr::link_local(m7)), nullptr);
  EXPECT_EQ(t.size(), 63u);
}

}  // namespace
}  // namespace uroce::port
