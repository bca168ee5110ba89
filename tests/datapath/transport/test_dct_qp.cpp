#include "datapath/transport/dct_qp.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>

#include "tests/datapath/transport/dc_sim.h"

namespace uroce::transport::dctest {
namespace {

port::SimLinkConfig lossy_link(double loss, double dup, double reorder, std::uint64_t seed,
                               TimeNs hold_ns = 10 * kNsPerUs) {
  port::SimDirectionConfig d;
  d.propagation_ns = 1000;
  d.bandwidth_bps = 10'000'000'000;
  d.loss = loss;
  d.duplicate = dup;
  d.reorder = reorder;
  d.reorder_hold_ns = hold_ns;
  return port::SimLinkConfig::symmetric(d, seed);
}

DcTargetLimits small_pool(std::uint32_t contexts) {
  DcTargetLimits l;
  l.contexts = contexts;
  l.records_log2 = 10;
  l.stale_ns = 10 * kNsPerSec;
  return l;
}

TEST(DctQp_Modify, RtrOnlyAndContextsGoWhenItLeavesRtr) {
  DcSim s(clean_link());
  DciQp& dci = s.add_dci(0x10);
  DctQp& dct = s.add_dct(0x20);
  EXPECT_EQ(dct.post_send(SendWr{}), EINVAL);
  EXPECT_EQ(dct.post_recv(RecvWr{}), EINVAL);
  ASSERT_EQ(dci.post_send(s.wr(1, WrOpcode::kRdmaWrite, 0x20, 0, 64)), 0);
  ASSERT_TRUE(s.run([&] { return s.scq_a.wc.size() == 1; }, kNsPerMs));
  EXPECT_EQ(dct.contexts(), 1u);
  QpAttrValues a;
  a.qp_state = QpState::kErr;
  ASSERT_EQ(dct.modify(qp_attr::kState, a), 0);
  EXPECT_EQ(dct.contexts(), 0u);
  EXPECT_EQ(s.pool->table().size(), 0u);
  // In ERR a request is dropped and counted.
  ASSERT_EQ(dci.post_send(s.wr(2, WrOpcode::kRdmaWrite, 0x20, 0, 64)), 0);
  s.run([] { return false; }, s.clock.now() + 100 * kNsPerUs);
  EXPECT_GE(dct.counters().drop_state, 1u);
}

// More initiator streams than contexts: the ones that find the pool full
// are told BUSY (an RNR wait), the others finish and disconnect when idle,
// and every WR completes.
TEST(DctQp_Pressure, BusyUntilContextsFreeThenEveryWrCompletes) {
  DcSim s(clean_link(), 1 << 20, small_pool(2));
  DciQp& dci = s.add_dci(0x10, 3);
  s.add_dct(0x20);
  std::uint64_t id = 1;
  for (std::uint16_t st = 0; st < 8; ++st) {
    for (int k = 0; k < 3; ++k) {
      ASSERT_EQ(dci.post_send(s.wr(id++, WrOpcode::kRdmaWrite, 0x20, 0, 512, st * 512, st)), 0);
    }
  }
  ASSERT_TRUE(s.run([&] { return s.scq_a.wc.size() == 24; }, 2 * kNsPerSec));
  for (const Cqe& c : s.scq_a.wc) EXPECT_EQ(status(c), WcStatus::kSuccess) << c.wr_id;
  EXPECT_GT(s.pool->table().counters().busy, 0u);
  EXPECT_LE(s.pool->table().size(), 2u);
  EXPECT_EQ(dci.rc_counters().rnr_retry_exceeded, 0u);
}

// Five DCIs' streams (20 identities) against a pool of a few contexts over
// a link that loses, duplicates and reorders: every WR completes exactly
// once, in stream order, with its bytes, and a fetch-and-add is never run
// twice (the final value is the sum of the adds). 400 WRs per seed, a mix
// of WRITE and READ (1..8,000 bytes) and fetch-and-add over three DCTs,
// four streams per DCI.
struct SoakParams {
  double loss, dup, reorder;
  std::uint32_t contexts;
  // How long a reordered frame is held: 2 ms lets old connections' packets
  // arrive after their contexts were retired.
  TimeNs hold_ns = 10 * kNsPerUs;
};
class DctQp_Soak : public ::testing::TestWithParam<SoakParams> {};

TEST_P(DctQp_Soak, NothingRunsTwice) {
  const SoakParams p = GetParam();
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    DcSim s(lossy_link(p.loss, p.dup, p.reorder, seed, p.hold_ns), 1 << 22, small_pool(p.contexts));
    std::vector<DciQp*> dcis;
    for (std::uint32_t q = 0; q < 5; ++q) dcis.push_back(&s.add_dci(0x10 + q, 2));
    for (std::uint32_t d = 0; d < 3; ++d) s.add_dct(0x20 + d);
    std::mt19937 rng(static_cast<std::uint32_t>(seed));
    std::uint64_t id = 1;
    std::uint64_t adds = 0;
    std::map<std::uint64_t, std::pair<std::uint32_t, std::uint16_t>> stream_of;  // id -> (dci, st)
    struct Check {
      std::uint64_t a_off, b_off;
      std::uint32_t len;
    };
    std::vector<Check> checks;
    for (int i = 0; i < 400; ++i) {
      const std::uint32_t q = rng() % 5;
      const auto st = static_cast<std::uint16_t>(rng() % 4);
      const std::uint32_t dct = 0x20 + rng() % 3;
      const std::uint32_t kind = rng() % 4;
      // Each WR has its own bytes on both hosts (no overlap).
      const std::uint64_t slot = static_cast<std::uint64_t>(i) * 8192;
      const std::uint32_t len = 1 + rng() % 8000;
      SendWr w;
      if (kind == 0) {
        w = s.wr(id, WrOpcode::kFetchAdd, dct, 0x380000 + i * 8, 8, 0x3F0000);
        w.compare_add = 1 + rng() % 100;
        adds += w.compare_add;
      } else if (kind == 1) {
        for (std::uint32_t k = 0; k < len; ++k)
          s.mem_b[slot + k] = static_cast<std::uint8_t>(rng());
        w = s.wr(id, WrOpcode::kRdmaRead, dct, slot, len, slot);
        checks.push_back({slot, slot, len});
      } else {
        for (std::uint32_t k = 0; k < len; ++k)
          s.mem_a[slot + k] = static_cast<std::uint8_t>(rng());
        w = s.wr(id, WrOpcode::kRdmaWrite, dct, slot, len, slot);
        checks.push_back({slot, slot, len});
      }
      w.ud.dc_stream = st;
      ASSERT_EQ(dcis[q]->post_send(w), 0);
      stream_of[id] = {q, st};
      ++id;
    }
    const std::size_t total = id - 1;
    std::size_t done = 0;
    ASSERT_TRUE(s.run(
        [&] {
          done = s.scq_a.wc.size();
          return done == total;
        },
        20 * kNsPerSec))
        << "seed " << seed << ": " << done << " of " << total;
    std::map<std::uint64_t, int> seen;
    std::map<std::pair<std::uint32_t, std::uint16_t>, std::uint64_t> last;
    for (const Cqe& c : s.scq_a.wc) {
      EXPECT_EQ(status(c), WcStatus::kSuccess) << "seed " << seed << " wr " << c.wr_id;
      EXPECT_EQ(++seen[c.wr_id], 1) << c.wr_id;
      const auto key = stream_of[c.wr_id];
      EXPECT_GT(c.wr_id, last[key]) << "order, wr " << c.wr_id;
      last[key] = c.wr_id;
    }
    for (const Check& c : checks) {
      EXPECT_EQ(std::memcmp(s.mem_a.data() + c.a_off, s.mem_b.data() + c.b_off, c.len), 0)
          << "seed " << seed << " at " << c.a_off;
    }
    std::uint64_t v = 0;
    std::memcpy(&v, s.mem_b.data() + 0x3F0000, 8);
    EXPECT_EQ(v, adds) << "seed " << seed;
    EXPECT_EQ(s.parse_errors, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Impairments, DctQp_Soak,
                         ::testing::Values(SoakParams{0, 0, 0, 4}, SoakParams{0.01, 0.01, 0.01, 4},
                                           SoakParams{0.02, 0.02, 0.05, 4},
                                           SoakParams{0.1, 0.05, 0.1, 2},
                                           SoakParams{0.01, 0.05, 0.2, 4, 2 * kNsPerMs}));

}  // namespace
}  // namespace uroce::transport::dctest
