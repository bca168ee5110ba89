#include "datapath/transport/dc_target.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <tuple>

namespace uroce::transport {
namespace {

DcIdentity ident(std::uint32_t host, std::uint32_t qpn, std::uint16_t lane = 0) {
  DcIdentity id;
  id.src[10] = 0xff;
  id.src[11] = 0xff;
  id.src[12] = 10;
  id.src[13] = static_cast<std::uint8_t>(host >> 16);
  id.src[14] = static_cast<std::uint8_t>(host >> 8);
  id.src[15] = static_cast<std::uint8_t>(host);
  id.dci_qpn = qpn;
  id.lane = lane;
  return id;
}

DcTargetLimits limits(std::uint32_t contexts, std::uint32_t records_log2 = 8) {
  DcTargetLimits l;
  l.contexts = contexts;
  l.records_log2 = records_log2;
  l.stale_ns = 1 * kNsPerSec;
  return l;
}

TEST(DcConnNewer, SerialArithmetic) {
  EXPECT_TRUE(dc_conn_newer(2, 1));
  EXPECT_FALSE(dc_conn_newer(1, 2));
  EXPECT_FALSE(dc_conn_newer(7, 7));
  EXPECT_TRUE(dc_conn_newer(1, 0xFFFFFFFF));
  EXPECT_FALSE(dc_conn_newer(0xFFFFFFFF, 1));
}

TEST(DcIdentityHash, EveryFieldCounts) {
  const std::uint64_t h = dc_identity_hash(ident(1, 100, 0));
  EXPECT_NE(h, dc_identity_hash(ident(2, 100, 0)));
  EXPECT_NE(h, dc_identity_hash(ident(1, 101, 0)));
  EXPECT_NE(h, dc_identity_hash(ident(1, 100, 1)));
  EXPECT_EQ(h, dc_identity_hash(ident(1, 100, 0)));
}

TEST(DcTargetTable_OnRequest, SynOpensAndTheConnectionRuns) {
  DcTargetTable t(limits(4));
  const DcLookup a = t.on_request(ident(1, 7), 100, true, 0, 10);
  ASSERT_EQ(a.verdict, DcVerdict::kOpened);
  EXPECT_FALSE(a.evicted);
  EXPECT_EQ(t.size(), 1u);
  t.settle(a.ctx, true, 5);
  const DcLookup b = t.on_request(ident(1, 7), 100, false, 0, 20);
  EXPECT_EQ(b.verdict, DcVerdict::kRun);
  EXPECT_EQ(b.ctx, a.ctx);
  const DcLookup c = t.on_request(ident(1, 7), 100, true, 0, 30);
  EXPECT_EQ(c.verdict, DcVerdict::kRun);
  EXPECT_EQ(t.counters().opened, 1u);
}

TEST(DcTargetTable_OnRequest, WithoutSynNoContextIsUnknown) {
  DcTargetTable t(limits(4));
  const DcLookup a = t.on_request(ident(1, 7), 100, false, 0, 10);
  EXPECT_EQ(a.verdict, DcVerdict::kUnknown);
  EXPECT_EQ(a.value, 0u);
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.counters().unknown, 1u);
}

TEST(DcTargetTable_OnRequest, OlderConnectionIsStale) {
  DcTargetTable t(limits(4));
  ASSERT_EQ(t.on_request(ident(1, 7), 100, true, 0, 10).verdict, DcVerdict::kOpened);
  EXPECT_EQ(t.on_request(ident(1, 7), 99, true, 0, 20).verdict, DcVerdict::kStale);
  EXPECT_EQ(t.counters().stale_conn, 1u);
}

TEST(DcTargetTable_OnRequest, NewerSynRestartsAndTheOldOneIsGone) {
  DcTargetTable t(limits(4));
  const DcLookup a = t.on_request(ident(1, 7), 100, true, 0, 10);
  t.settle(a.ctx, true, 42);
  const DcLookup b = t.on_request(ident(1, 7), 101, true, 0, 20);
  ASSERT_EQ(b.verdict, DcVerdict::kOpened);
  EXPECT_EQ(b.ctx, a.ctx);
  EXPECT_EQ(t.counters().restarted, 1u);
  // A late packet of connection 100 is older than the context's: dropped.
  EXPECT_EQ(t.on_request(ident(1, 7), 100, true, 0, 30).verdict, DcVerdict::kStale);
}

TEST(DcTargetTable_OnRequest, NewerWithoutSynIsUnknown) {
  DcTargetTable t(limits(4));
  ASSERT_EQ(t.on_request(ident(1, 7), 100, true, 0, 10).verdict, DcVerdict::kOpened);
  EXPECT_EQ(t.on_request(ident(1, 7), 101, false, 0, 20).verdict, DcVerdict::kUnknown);
}

TEST(DcTargetTable_OnRequest, FullOfUncleanContextsIsBusy) {
  DcTargetTable t(limits(2));
  const DcLookup a = t.on_request(ident(1, 7), 1, true, 0, 10);
  const DcLookup b = t.on_request(ident(2, 7), 1, true, 0, 10);
  // Quiescent, but the initiators have not acknowledged what ran: they may
  // not have its responses, so retiring them could lose one (an atomic's).
  t.settle(a.ctx, true, 1);
  t.settle(b.ctx, true, 1);
  EXPECT_EQ(t.on_request(ident(3, 7), 1, true, 0, 20).verdict, DcVerdict::kBusy);
  EXPECT_EQ(t.counters().busy, 1u);
}

TEST(DcTargetTable_OnRequest, AcknowledgedButNotQuiescentIsNotRetired) {
  DcTargetTable t(limits(1));
  const DcLookup a = t.on_request(ident(1, 7), 1, true, 0, 10);
  t.on_request(ident(1, 7), 1, false, 3, 11);
  t.settle(a.ctx, false, 3);
  EXPECT_EQ(t.on_request(ident(3, 7), 1, true, 0, 20).verdict, DcVerdict::kBusy);
}

TEST(DcTargetTable_OnRequest, PressureRetiresTheLeastRecentlyUsedQuiescent) {
  DcTargetTable t(limits(2));
  for (std::uint32_t host : {1u, 2u}) {
    const DcLookup o = t.on_request(ident(host, 7), 50, true, 0, host);
    t.on_request(ident(host, 7), 50, false, 200 + host, host + 10);
    t.settle(o.ctx, true, 200 + host);
  }
  const DcLookup c = t.on_request(ident(3, 7), 1, true, 0, 100);
  ASSERT_EQ(c.verdict, DcVerdict::kOpened);
  ASSERT_TRUE(c.evicted);
  EXPECT_EQ(c.old, ident(1, 7));
  EXPECT_EQ(c.old_conn, 50u);
  EXPECT_EQ(c.old_epsn, 201u);
  EXPECT_EQ(t.counters().retired_pressure, 1u);
  // Host 1's retransmission meets the record: GONE with what ran.
  const DcLookup g = t.on_request(ident(1, 7), 50, false, 0, 110);
  EXPECT_EQ(g.verdict, DcVerdict::kGone);
  EXPECT_EQ(g.value, 201u);
  // Also a SYN of that connection never opens a context again.
  EXPECT_EQ(t.on_request(ident(1, 7), 50, true, 0, 120).verdict, DcVerdict::kGone);
  EXPECT_EQ(t.size(), 2u);
}

// The newest acknowledgement counts: a reordered older packet does not
// take it back, and only a context whose initiator acknowledged its
// expected PSN is retired under pressure.
TEST(DcTargetTable_OnRequest, NewestAcknowledgementMakesAContextClean) {
  DcTargetTable t(limits(1));
  const DcLookup a = t.on_request(ident(1, 7), 5, true, 0, 1);
  t.on_request(ident(1, 7), 5, false, 9, 2);
  t.on_request(ident(1, 7), 5, false, 4, 3);  // older, arrived late
  t.settle(a.ctx, true, 10);
  EXPECT_EQ(t.on_request(ident(2, 7), 1, true, 0, 4).verdict, DcVerdict::kBusy);
  t.on_request(ident(1, 7), 5, false, 10, 5);
  t.settle(a.ctx, true, 10);
  const DcLookup b = t.on_request(ident(2, 7), 1, true, 0, 6);
  EXPECT_EQ(b.verdict, DcVerdict::kOpened);
  EXPECT_TRUE(b.evicted);
  EXPECT_EQ(b.old_epsn, 10u);
}

TEST(DcTargetTable_OnRequest, OverwrittenRecordLeavesTheFloor) {
  // One record slot: every identity shares it.
  DcTargetTable t(limits(1, 0));
  const DcLookup a = t.on_request(ident(1, 7), 50, true, 0, 1);
  t.on_request(ident(1, 7), 50, false, 9, 2);
  t.settle(a.ctx, true, 9);
  const DcLookup b = t.on_request(ident(2, 7), 60, true, 0, 3);
  ASSERT_TRUE(b.evicted);
  t.on_request(ident(2, 7), 60, false, 4, 4);
  t.settle(b.ctx, true, 4);
  const DcLookup c = t.on_request(ident(3, 7), 70, true, 0, 5);
  ASSERT_EQ(c.verdict, DcVerdict::kOpened);
  EXPECT_EQ(t.counters().record_overwrites, 1u);
  // Host 1's record is gone; its connection 50 is at or below the floor
  // (60): UNKNOWN, not a new context.
  const DcLookup u = t.on_request(ident(1, 7), 50, true, 0, 6);
  EXPECT_EQ(u.verdict, DcVerdict::kUnknown);
  EXPECT_EQ(u.value, 60u);
}

TEST(DcTargetTable_OnRequest, FreshConnectionBelowAnotherFloorRetriesAbove) {
  DcTargetTable t(limits(1, 0));
  const DcLookup a = t.on_request(ident(1, 7), 1000, true, 0, 1);
  t.on_request(ident(1, 7), 1000, false, 0, 2);
  t.settle(a.ctx, true, 3);
  ASSERT_EQ(t.on_disconnect(ident(1, 7), 1000, 3).verdict, DcVerdict::kGone);
  // Host 2's counter is behind: told the floor, it takes a number above it.
  const DcLookup u = t.on_request(ident(2, 7), 10, true, 0, 3);
  ASSERT_EQ(u.verdict, DcVerdict::kUnknown);
  EXPECT_EQ(u.value, 1000u);
  EXPECT_EQ(t.on_request(ident(2, 7), u.value + 1, true, 0, 4).verdict, DcVerdict::kOpened);
}

TEST(DcTargetTable_OnDisconnect, RetiresOnlyAQuiescentContextAtTheInitiatorsPsn) {
  DcTargetTable t(limits(2));
  const DcLookup a = t.on_request(ident(1, 7), 5, true, 0, 1);
  t.settle(a.ctx, false, 8);
  EXPECT_EQ(t.on_disconnect(ident(1, 7), 5, 8).verdict, DcVerdict::kIgnore);
  t.settle(a.ctx, true, 8);
  EXPECT_EQ(t.on_disconnect(ident(1, 7), 5, 9).verdict, DcVerdict::kIgnore);
  const DcLookup g = t.on_disconnect(ident(1, 7), 5, 8);
  EXPECT_EQ(g.verdict, DcVerdict::kGone);
  EXPECT_EQ(g.value, 8u);
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.counters().retired_disconnect, 1u);
  // Repeated: answered from the record.
  EXPECT_EQ(t.on_disconnect(ident(1, 7), 5, 8).verdict, DcVerdict::kGone);
  EXPECT_EQ(t.on_disconnect(ident(9, 7), 5, 8).verdict, DcVerdict::kUnknown);
  // The freed slot serves the next connection.
  EXPECT_EQ(t.on_request(ident(2, 7), 1, true, 0, 2).verdict, DcVerdict::kOpened);
  EXPECT_EQ(t.on_request(ident(3, 7), 1, true, 0, 2).verdict, DcVerdict::kOpened);
}

TEST(DcTargetTable_RetireStale, OldestFirstAfterTheStaleTime) {
  DcTargetTable t(limits(4));
  const DcLookup a = t.on_request(ident(1, 7), 1, true, 0, 100);
  const DcLookup b = t.on_request(ident(2, 7), 1, true, 0, 200);
  t.settle(a.ctx, false, 1);
  t.settle(b.ctx, false, 1);
  EXPECT_EQ(t.retire_stale(100 + kNsPerSec - 1), DcTargetTable::kNone);
  EXPECT_EQ(t.retire_stale(100 + kNsPerSec), a.ctx);
  EXPECT_EQ(t.retire_stale(100 + kNsPerSec), DcTargetTable::kNone);
  // A packet moves a context to the back.
  t.on_request(ident(2, 7), 1, false, 0, 150 + kNsPerSec);
  EXPECT_EQ(t.retire_stale(250 + kNsPerSec), DcTargetTable::kNone);
  EXPECT_EQ(t.retire_stale(150 + 2 * kNsPerSec), b.ctx);
  EXPECT_EQ(t.counters().retired_stale, 2u);
  EXPECT_EQ(t.on_request(ident(1, 7), 1, true, 0, 5 * kNsPerSec).verdict, DcVerdict::kGone);
}

// A failed connection (a class C NAK) frees its slot at once, whatever the
// initiator acknowledged; its record answers the connection's retries GONE
// at the NAK'd PSN and its floor keeps them from opening a context.
TEST(DcTargetTable_RetireFailed, SlotFreeRetriesGoneAtTheNakedPsn) {
  DcTargetTable t(limits(1));
  const DcLookup a = t.on_request(ident(1, 7), 5, true, 0, 10);
  ASSERT_EQ(a.verdict, DcVerdict::kOpened);
  t.settle(a.ctx, false, 3);
  EXPECT_EQ(t.on_request(ident(2, 7), 1, true, 0, 20).verdict, DcVerdict::kBusy);
  t.retire_failed(a.ctx, 3);
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.counters().retired_error, 1u);
  EXPECT_EQ(t.counters().retired_pressure, 0u);
  const DcLookup g = t.on_request(ident(1, 7), 5, true, 0, 30);
  EXPECT_EQ(g.verdict, DcVerdict::kGone);
  EXPECT_EQ(g.value, 3u);
  EXPECT_EQ(t.on_request(ident(2, 7), 1, true, 0, 40).verdict, DcVerdict::kOpened);
}

TEST(DcTargetTable_Clear, EveryContextGoesRecordsStay) {
  DcTargetTable t(limits(4));
  const DcLookup a = t.on_request(ident(1, 7), 3, true, 0, 1);
  t.settle(a.ctx, true, 4);
  t.on_request(ident(2, 7), 3, true, 0, 1);
  t.clear();
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.on_request(ident(1, 7), 3, true, 0, 2).verdict, DcVerdict::kGone);
  EXPECT_EQ(t.on_request(ident(1, 7), 4, true, 0, 2).verdict, DcVerdict::kOpened);
}

// The index against a model under random opens, disconnects and lookups,
// with a table small enough that probe runs wrap and merge.
TEST(DcTargetTable_Index, RandomAgainstAModel) {
  DcTargetTable t(limits(64, 12));
  std::map<std::tuple<std::uint32_t, std::uint32_t>, std::uint32_t> model;  // -> ctx
  std::mt19937 rng(7);
  std::uint32_t conn = 1;
  for (int i = 0; i < 20000; ++i) {
    const std::uint32_t host = rng() % 200;
    const std::uint32_t qpn = rng() % 3;
    const auto key = std::make_tuple(host, qpn);
    const auto it = model.find(key);
    if (it == model.end()) {
      if (model.size() == 64) continue;
      const DcLookup o = t.on_request(ident(host, qpn), ++conn, true, 0, i);
      ASSERT_EQ(o.verdict, DcVerdict::kOpened) << i;
      ASSERT_FALSE(o.evicted);
      t.settle(o.ctx, true, 0);
      model[key] = o.ctx;
    } else if (rng() % 2 == 0) {
      const DcLookup r = t.on_request(ident(host, qpn), t.conn(it->second), false, 0, i);
      ASSERT_EQ(r.verdict, DcVerdict::kRun) << i;
      ASSERT_EQ(r.ctx, it->second);
      t.settle(r.ctx, true, 0);
    } else {
      const DcLookup d = t.on_disconnect(ident(host, qpn), t.conn(it->second), 0);
      ASSERT_EQ(d.verdict, DcVerdict::kGone) << i;
      model.erase(it);
    }
    ASSERT_EQ(t.size(), model.size());
  }
}

TEST(DcTargetTable_MemoryBytes, BoundedByTheLimits) {
  DcTargetTable t(limits(4096, 16));
  // Contexts (< 128 B each), the index (2 slots of 4 B each) and 16 B records.
  EXPECT_LE(t.memory_bytes(), 4096u * 128 + 8192u * 4 + 65536u * 20 + 4096u * 4);
  for (std::uint32_t h = 0; h < 10000; ++h) t.on_request(ident(h, 1), 1, true, 0, h);
  EXPECT_EQ(t.size(), 4096u);
  EXPECT_LE(t.memory_bytes(), 4096u * 128 + 8192u * 4 + 65536u * 20 + 4096u * 4);
}

}  // namespace
}  // namespace uroce::transport
