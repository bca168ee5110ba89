#include "sched/grant_scheduler.h"

#include <gtest/gtest.h>

#include <vector>

namespace uroce::sched::homa {
namespace {

// Small numbers to compute by hand: 10 KB ahead per message, 10 KB
// unscheduled, grants of at least 1 KB, 8 levels of which 4 unscheduled.
GrantConfig small_config() {
  GrantConfig c;
  c.rtt_bytes = 10'000;
  c.unsched_bytes = 10'000;
  c.grant_increment = 1'000;
  c.overcommit = 2;
  c.max_incoming = 1'000'000;
  c.fifo_permille = 0;
  c.priorities = 8;
  c.unsched_priorities = 4;
  c.resend_ns = 1'000'000;
  c.max_messages = 16;
  return c;
}

std::vector<Grant> poll(GrantScheduler& g, TimeNs now) {
  std::vector<Grant> out;
  g.poll(now, &out);
  return out;
}

TEST(GrantScheduler, OnData_MessageWithinUnscheduledBytes_NeedsNoGrant) {
  GrantScheduler g(small_config());
  EXPECT_EQ(g.on_data(1, 7, 10'000, 1'000, 0), DataResult::kCompleted);
  EXPECT_EQ(g.tracked(), 0u);
  EXPECT_TRUE(poll(g, 0).empty());
}

TEST(GrantScheduler, Poll_KeepsRttBytesAheadOfWhatArrived) {
  GrantScheduler g(small_config());
  ASSERT_EQ(g.on_data(1, 7, 100'000, 4'000, 0), DataResult::kTracked);
  auto out = poll(g, 0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].key, 1u);
  EXPECT_EQ(out[0].peer, 7u);
  EXPECT_EQ(out[0].offset, 14'000u);   // received 4,000 + rtt 10,000
  EXPECT_EQ(g.outstanding(), 4'000u);  // beyond the 10,000 unscheduled
  // 500 more bytes: the grant would advance by 500 < grant_increment.
  g.on_data(1, 7, 100'000, 500, 1);
  EXPECT_TRUE(poll(g, 1).empty());
  g.on_data(1, 7, 100'000, 500, 2);
  out = poll(g, 2);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].offset, 15'000u);
}

TEST(GrantScheduler, Poll_LastGrantFinishesTheMessageEvenIfSmall) {
  GrantScheduler g(small_config());
  g.on_data(1, 7, 20'500, 10'000, 0);
  auto out = poll(g, 0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].offset, 20'000u);
  // 100 more bytes: the grant could advance by 100 only: not yet.
  g.on_data(1, 7, 20'500, 100, 1);
  EXPECT_TRUE(poll(g, 1).empty());
  // 400 more: it could reach the end, 500 more, less than an increment.
  g.on_data(1, 7, 20'500, 400, 2);
  out = poll(g, 2);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].offset, 20'500u);
}

TEST(GrantScheduler, Poll_SrptGrantsTheShortestRemainingWithinOvercommit) {
  GrantScheduler g(small_config());  // overcommit 2
  g.on_data(1, 1, 500'000, 1'000, 0);
  g.on_data(2, 2, 50'000, 1'000, 1);
  g.on_data(3, 3, 200'000, 1'000, 2);
  const auto out = poll(g, 3);
  ASSERT_EQ(out.size(), 2u);
  // The two shortest, shortest first, at the higher of the two lowest levels.
  EXPECT_EQ(out[0].key, 2u);
  EXPECT_EQ(out[0].priority, 1u);
  EXPECT_EQ(out[1].key, 3u);
  EXPECT_EQ(out[1].priority, 0u);
}

TEST(GrantScheduler, Poll_OneMessagePerPeerBeforeASecond) {
  GrantScheduler g(small_config());   // overcommit 2
  g.on_data(1, 5, 30'000, 1'000, 0);  // peer 5's two messages are the shortest
  g.on_data(2, 5, 40'000, 1'000, 1);
  g.on_data(3, 6, 90'000, 1'000, 2);
  auto out = poll(g, 3);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].key, 1u);
  EXPECT_EQ(out[1].key, 3u);  // not peer 5's second message
  // With peer 6's message done, peer 5's second gets the free slot.
  g.drop(3);
  g.on_data(1, 5, 30'000, 1'000, 4);
  out = poll(g, 4);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].key, 1u);
  EXPECT_EQ(out[1].key, 2u);
}

TEST(GrantScheduler, Poll_PriorityLevelsByRankCappedAtTheTopScheduledLevel) {
  GrantConfig c = small_config();
  c.overcommit = 6;
  c.unsched_priorities = 6;  // 2 scheduled levels
  GrantScheduler g(c);
  EXPECT_EQ(g.scheduled_levels(), 2u);
  for (std::uint64_t k = 1; k <= 3; ++k)
    g.on_data(k, static_cast<std::uint32_t>(k), 20'000 * (k + 1), 1'000, k);
  const auto out = poll(g, 10);
  ASSERT_EQ(out.size(), 3u);
  // k = 3 granted: ranks 0, 1, 2 want levels 2, 1, 0; level 2 is capped at 1.
  EXPECT_EQ(out[0].priority, 1u);
  EXPECT_EQ(out[1].priority, 1u);
  EXPECT_EQ(out[2].priority, 0u);
}

TEST(GrantScheduler, Poll_MaxIncomingBoundsWhatIsGrantedAndNotReceived) {
  GrantConfig c = small_config();
  c.max_incoming = 15'000;
  c.overcommit = 4;
  GrantScheduler g(c);
  g.on_data(1, 1, 100'000, 10'000, 0);  // wants 20,000: 10,000 owed
  g.on_data(2, 2, 200'000, 10'000, 1);  // wants 10,000 more: only 5,000 left
  const auto out = poll(g, 2);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].offset, 20'000u);
  EXPECT_EQ(out[1].offset, 15'000u);
  EXPECT_EQ(g.outstanding(), 15'000u);
  EXPECT_GT(g.counters().incoming_capped, 0u);
  // Data arriving frees budget.
  g.on_data(1, 1, 100'000, 10'000, 3);
  const auto more = poll(g, 3);
  ASSERT_FALSE(more.empty());
  EXPECT_LE(g.outstanding(), 15'000u);
}

TEST(GrantScheduler, Poll_FifoFractionReachesTheOldestLongMessage) {
  GrantConfig c = small_config();
  c.overcommit = 1;
  c.fifo_permille = 500;  // every rtt_bytes of SRPT grants, one to the oldest
  GrantScheduler g(c);
  g.on_data(1, 1, 10'000'000, 1'000, 0);  // the oldest, the longest
  g.on_data(2, 2, 1'000'000, 1'000, 1);
  std::uint64_t fifo_to_1 = 0;
  for (TimeNs t = 2; t < 40; ++t) {
    g.on_data(2, 2, 1'000'000, 10'000, t);
    for (const Grant& gr : poll(g, t)) {
      if (gr.key == 1) {
        EXPECT_TRUE(gr.fifo);
        EXPECT_EQ(gr.priority, 0u);
        ++fifo_to_1;
      } else {
        EXPECT_FALSE(gr.fifo);
      }
    }
  }
  EXPECT_GT(fifo_to_1, 10u);
  EXPECT_EQ(g.counters().fifo_grants, fifo_to_1);
}

TEST(GrantScheduler, Poll_WithoutFifoTheLongestStarves) {
  GrantConfig c = small_config();
  c.overcommit = 1;
  GrantScheduler g(c);
  g.on_data(1, 1, 10'000'000, 1'000, 0);
  g.on_data(2, 2, 1'000'000, 1'000, 1);
  for (TimeNs t = 2; t < 40; ++t) {
    g.on_data(2, 2, 1'000'000, 10'000, t);
    for (const Grant& gr : poll(g, t)) EXPECT_EQ(gr.key, 2u);
  }
}

TEST(GrantScheduler, Poll_LostGrantResentAfterSilence) {
  GrantScheduler g(small_config());  // resend after 1 ms
  g.on_data(1, 7, 100'000, 4'000, 0);
  ASSERT_EQ(poll(g, 0).size(), 1u);  // 14,000, "lost"
  EXPECT_EQ(g.next_timer(), 1'000'000u);
  EXPECT_TRUE(poll(g, 999'999).empty());
  auto out = poll(g, 1'000'000);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].resend);
  EXPECT_EQ(out[0].offset, 14'000u);
  // Resent at most once per resend_ns.
  EXPECT_TRUE(poll(g, 1'500'000).empty());
  EXPECT_EQ(poll(g, 2'000'000).size(), 1u);
  EXPECT_EQ(g.counters().resends, 2u);
}

TEST(GrantScheduler, NextTimer_NothingOwedNoTimer) {
  GrantScheduler g(small_config());
  EXPECT_EQ(g.next_timer(), UINT64_MAX);
  g.on_data(1, 7, 100'000, 1'000, 0);  // tracked, nothing granted beyond unscheduled
  EXPECT_EQ(g.next_timer(), UINT64_MAX);
}

TEST(GrantScheduler, OnData_CompletedMessageLeavesTheTable) {
  GrantScheduler g(small_config());
  g.on_data(1, 7, 30'000, 10'000, 0);
  poll(g, 0);
  EXPECT_EQ(g.on_data(1, 7, 30'000, 20'000, 1), DataResult::kCompleted);
  EXPECT_EQ(g.tracked(), 0u);
  EXPECT_EQ(g.outstanding(), 0u);
  EXPECT_EQ(g.counters().completed, 1u);
}

TEST(GrantScheduler, OnData_PastTheLengthOrOtherLength_Dropped) {
  GrantScheduler g(small_config());
  g.on_data(1, 7, 30'000, 10'000, 0);
  EXPECT_EQ(g.on_data(1, 7, 30'000, 20'001, 1), DataResult::kBadLength);
  EXPECT_EQ(g.tracked(), 0u);
  g.on_data(2, 7, 30'000, 10'000, 2);
  EXPECT_EQ(g.on_data(2, 7, 40'000, 1, 3), DataResult::kBadLength);
  EXPECT_EQ(g.counters().bad_length, 2u);
}

TEST(GrantScheduler, OnData_TableFull_CountedNotTracked) {
  GrantConfig c = small_config();
  c.max_messages = 2;
  GrantScheduler g(c);
  EXPECT_EQ(g.on_data(1, 1, 50'000, 1, 0), DataResult::kTracked);
  EXPECT_EQ(g.on_data(2, 1, 50'000, 1, 0), DataResult::kTracked);
  EXPECT_EQ(g.on_data(3, 1, 50'000, 1, 0), DataResult::kTableFull);
  EXPECT_EQ(g.counters().table_full, 1u);
  g.drop(1);
  EXPECT_EQ(g.on_data(3, 1, 50'000, 1, 0), DataResult::kTracked);
}

// Insertions and deletions in any order keep every key findable (the
// table's backward-shift deletion), checked against a plain model.
TEST(GrantScheduler, Table_ManyKeysInsertDropInterleaved) {
  GrantConfig c = small_config();
  c.max_messages = 64;
  GrantScheduler g(c);
  std::vector<bool> live(1000, false);
  std::uint32_t n = 0;
  for (std::uint64_t step = 0; step < 5000; ++step) {
    const std::uint64_t key = (step * 7919) % 1000;
    if (live[key]) {
      g.drop(key);
      live[key] = false;
      --n;
    } else if (n < 64) {
      ASSERT_EQ(g.on_data(key, 1, 50'000, 1, step), DataResult::kTracked) << key;
      live[key] = true;
      ++n;
    }
    ASSERT_EQ(g.tracked(), n);
  }
  // Every tracked key is found: it refuses another length.
  for (std::uint64_t key = 0; key < 1000; ++key) {
    if (live[key]) {
      EXPECT_EQ(g.on_data(key, 1, 60'000, 1, 0), DataResult::kBadLength) << key;
    }
  }
}

}  // namespace
}  // namespace uroce::sched::homa
