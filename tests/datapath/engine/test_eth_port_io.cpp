#include "datapath/engine/eth_port_io.h"

#include <gtest/gtest.h>

#include <rte_mbuf.h>

#include <cstring>
#include <vector>

#include "tests/datapath/engine/engine_test_support.h"

namespace uroce::engine {
namespace {

using test::RingPair;

void commit_frame(MbufTxSink& s, std::size_t len, std::uint8_t tag) {
  std::span<std::uint8_t> f = s.tx_alloc(len);
  ASSERT_EQ(f.size(), len);
  std::memset(f.data(), tag, len);
  s.tx_commit(len);
}

TEST(EthPortIo_Flush, SendsWhatTheSinkHolds) {
  RingPair rp;
  EthPortIo a(rp.a);
  EXPECT_EQ(a.tx_room(), EthPortIo::kBurst);
  commit_frame(a.tx(), 100, 7);
  EXPECT_EQ(a.tx_room(), EthPortIo::kBurst - 1);
  EXPECT_EQ(a.flush(), 1u);
  rte_mbuf* m[2];
  ASSERT_EQ(rp.b.rx_burst(m, 2), 1u);
  EXPECT_EQ(m[0]->data_len, 100u);
  rte_pktmbuf_free(m[0]);
}

TEST(EthPortIo_RxBurst, HandsEachFrameAsASpanAndFreesTheMbufs) {
  RingPair rp;
  EthPortIo a(rp.a);
  EthPortIo b(rp.b);
  commit_frame(a.tx(), 60, 1);
  commit_frame(a.tx(), 1000, 2);
  commit_frame(a.tx(), 4170, 3);
  ASSERT_EQ(a.flush(), 3u);
  std::vector<std::pair<std::size_t, std::uint8_t>> got;
  EXPECT_EQ(b.rx_burst(
                [&](std::span<const std::uint8_t> f) { got.emplace_back(f.size(), f.back()); }),
            3u);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], (std::pair<std::size_t, std::uint8_t>{60, 1}));
  EXPECT_EQ(got[1], (std::pair<std::size_t, std::uint8_t>{1000, 2}));
  EXPECT_EQ(got[2], (std::pair<std::size_t, std::uint8_t>{4170, 3}));
  EXPECT_EQ(b.rx_counters().frames, 3u);
  EXPECT_EQ(b.rx_counters().bursts, 1u);
  // net_ring moves the sender's mbufs: they are back in a's pool.
  EXPECT_EQ(rte_mempool_in_use_count(rp.a.pool()), 0u);
  EXPECT_EQ(b.rx_burst([](std::span<const std::uint8_t>) {}), 0u);
  EXPECT_EQ(b.rx_counters().bursts, 1u);
}

// Handed on as an empty span, so that the Vnic counts it (rx_unreadable).
TEST(EthPortIo_RxBurst, ChainedFrameIsCountedAndHandedOnEmpty) {
  RingPair rp;
  EthPortIo b(rp.b);
  rte_mbuf* head = rte_pktmbuf_alloc(rp.a.pool());
  rte_mbuf* tail = rte_pktmbuf_alloc(rp.a.pool());
  ASSERT_NE(head, nullptr);
  ASSERT_NE(tail, nullptr);
  ASSERT_NE(rte_pktmbuf_append(head, 100), nullptr);
  ASSERT_NE(rte_pktmbuf_append(tail, 100), nullptr);
  ASSERT_EQ(rte_pktmbuf_chain(head, tail), 0);
  ASSERT_EQ(rp.a.tx_burst(&head, 1), 1u);
  int calls = 0;
  std::size_t bytes = 1;
  EXPECT_EQ(b.rx_burst([&](std::span<const std::uint8_t> f) {
    ++calls;
    bytes = f.size();
  }),
            1u);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(bytes, 0u);
  EXPECT_EQ(b.rx_counters().chained, 1u);
  EXPECT_EQ(rte_mempool_in_use_count(rp.a.pool()), 0u);
}

}  // namespace
}  // namespace uroce::engine
