#include "datapath/engine/eth_port_io.h"

#include <gtest/gtest.h>

#include <rte_mbuf.h>

#include <cstring>
#include <vector>

#include "tests/datapath/engine/engine_test_support.h"
#include "tests/datapath/wire/parser_test_frames.h"
#include "tests/datapath/wire/sample_packets.h"

namespace uroce::engine {
namespace {

using test::commit_bytes;
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

// The frames waiting on b's side of the pair, freed.
unsigned drain(RingPair& rp) {
  rte_mbuf* m[EthPortIo::kBurst];
  const unsigned n = rp.b.rx_burst(m, EthPortIo::kBurst);
  for (unsigned i = 0; i < n; ++i) rte_pktmbuf_free(m[i]);
  return n;
}

// With the ACK hold (ack_hold.h), an iteration that received frames after
// one that did too keeps a burst of nothing but ACKs; the burst leaves at
// max_frames, with a frame that is not an ACK, or after an iteration that
// received nothing.
TEST(EthPortIo_FlushEnd, KeepsOnlyAcksWhileFramesArrive) {
  RingPair rp;
  EthPortIo a(rp.a);
  EthPortIo peer(rp.b);
  AckHoldConfig c;
  c.enabled = true;
  c.max_frames = 3;
  a.set_ack_hold(c);
  // ACKs of different QPs: a newer ACK of the same QP would replace the
  // pending one (MbufTxSink's coalescing).
  std::uint32_t qpn = 100;
  const auto next_ack = [&qpn] {
    wire::PacketSpec spec = wire::testing::sample_spec(wire::op::kRcAck);
    spec.dest_qp = qpn++;
    return wire::testing::build(spec);
  };
  const auto send = wire::testing::build(
      wire::testing::sample_spec(wire::op::kRcSendOnly, std::span(wire::testing::kPayload, 5)));
  const auto receive_one = [&](TimeNs now) {
    a.begin(now);
    commit_bytes(peer.tx(), send);
    ASSERT_EQ(peer.flush(), 1u);
    ASSERT_EQ(a.rx_burst([](std::span<const std::uint8_t>, wire::FrameTail) {}), 1u);
  };

  // The first frame after an idle iteration is acknowledged at once.
  receive_one(500);
  commit_bytes(a.tx(), next_ack());
  EXPECT_EQ(a.flush_end(), 1u);
  EXPECT_EQ(drain(rp), 1u);
  receive_one(1'000);
  commit_bytes(a.tx(), next_ack());
  EXPECT_EQ(a.flush_end(), 0u);
  receive_one(2'000);
  commit_bytes(a.tx(), next_ack());
  EXPECT_EQ(a.flush_end(), 0u);
  EXPECT_EQ(a.tx().counters().ack_holds, 2u);
  receive_one(3'000);
  commit_bytes(a.tx(), next_ack());
  EXPECT_EQ(a.flush_end(), 3u);  // max_frames
  EXPECT_EQ(drain(rp), 3u);

  receive_one(4'000);
  commit_bytes(a.tx(), next_ack());
  EXPECT_EQ(a.flush_end(), 0u);
  receive_one(5'000);
  commit_bytes(a.tx(), send);
  EXPECT_EQ(a.flush_end(), 2u);  // the SEND takes the ACK along
  EXPECT_EQ(drain(rp), 2u);

  receive_one(6'000);
  commit_bytes(a.tx(), next_ack());
  EXPECT_EQ(a.flush_end(), 0u);
  a.begin(7'000);  // nothing received
  EXPECT_EQ(a.flush_end(), 1u);
  EXPECT_EQ(drain(rp), 1u);
  receive_one(8'000);  // after an idle iteration
  commit_bytes(a.tx(), next_ack());
  EXPECT_EQ(a.flush_end(), 1u);
  EXPECT_EQ(drain(rp), 1u);
  EXPECT_EQ(a.tx().counters().ack_holds, 4u);
}

TEST(EthPortIo_FlushEnd, WithoutTheHoldFlushesEveryBurst) {
  RingPair rp;
  EthPortIo a(rp.a);
  const auto ack = wire::testing::build(wire::testing::sample_spec(wire::op::kRcAck));
  a.begin(1'000);
  commit_bytes(a.tx(), ack);
  EXPECT_EQ(a.flush_end(), 1u);
  EXPECT_EQ(drain(rp), 1u);
  EXPECT_EQ(a.tx().counters().ack_holds, 0u);
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
  EXPECT_EQ(b.rx_burst([&](std::span<const std::uint8_t> f, wire::FrameTail tail) {
    EXPECT_TRUE(tail.empty());
    got.emplace_back(f.size(), f.back());
  }),
            3u);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], (std::pair<std::size_t, std::uint8_t>{60, 1}));
  EXPECT_EQ(got[1], (std::pair<std::size_t, std::uint8_t>{1000, 2}));
  EXPECT_EQ(got[2], (std::pair<std::size_t, std::uint8_t>{4170, 3}));
  EXPECT_EQ(b.rx_counters().frames, 3u);
  EXPECT_EQ(b.rx_counters().bursts, 1u);
  // net_ring moves the sender's mbufs: they are back in a's pool.
  EXPECT_EQ(rte_mempool_in_use_count(rp.a.pool()), 0u);
  EXPECT_EQ(b.rx_burst([](std::span<const std::uint8_t>, wire::FrameTail) {}), 0u);
  EXPECT_EQ(b.rx_counters().bursts, 1u);
}

// A chain of `segs` mbufs of 100 bytes each, byte k of segment i = i + 1.
rte_mbuf* chain_of(rte_mempool* pool, int segs) {
  rte_mbuf* head = nullptr;
  for (int i = 0; i < segs; ++i) {
    rte_mbuf* m = rte_pktmbuf_alloc(pool);
    if (m == nullptr) return nullptr;
    auto* d = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(m, 100));
    std::memset(d, i + 1, 100);
    if (head == nullptr) {
      head = m;
    } else if (rte_pktmbuf_chain(head, m) != 0) {
      return nullptr;
    }
  }
  return head;
}

// The first segment as the span, the later ones as the tail, in order.
TEST(EthPortIo_RxBurst, ChainedFrameIsHandedOnAsHeadAndTail) {
  RingPair rp;
  EthPortIo b(rp.b);
  rte_mbuf* m = chain_of(rp.a.pool(), 3);
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(rp.a.tx_burst(&m, 1), 1u);
  int calls = 0;
  EXPECT_EQ(b.rx_burst([&](std::span<const std::uint8_t> f, wire::FrameTail tail) {
    ++calls;
    EXPECT_EQ(f.size(), 100u);
    EXPECT_EQ(f[0], 1);
    ASSERT_EQ(tail.size(), 2u);
    EXPECT_EQ(tail[0].size(), 100u);
    EXPECT_EQ(tail[0][99], 2);
    EXPECT_EQ(tail[1][0], 3);
  }),
            1u);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(b.rx_counters().chained, 1u);
  EXPECT_EQ(b.rx_counters().too_many_segments, 0u);
  EXPECT_EQ(rte_mempool_in_use_count(rp.a.pool()), 0u);
}

// Longer than the engine reads: an empty span, so that the Vnic counts it
// (rx_unreadable), and every segment freed.
TEST(EthPortIo_RxBurst, ChainOfTooManySegmentsIsHandedOnEmpty) {
  RingPair rp;
  EthPortIo b(rp.b);
  rte_mbuf* m = chain_of(rp.a.pool(), EthPortIo::kMaxSegments + 1);
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(rp.a.tx_burst(&m, 1), 1u);
  int calls = 0;
  std::size_t bytes = 1;
  EXPECT_EQ(b.rx_burst([&](std::span<const std::uint8_t> f, wire::FrameTail tail) {
    ++calls;
    bytes = f.size() + tail.size();
  }),
            1u);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(bytes, 0u);
  EXPECT_EQ(b.rx_counters().chained, 0u);
  EXPECT_EQ(b.rx_counters().too_many_segments, 1u);
  EXPECT_EQ(rte_mempool_in_use_count(rp.a.pool()), 0u);
}

// ---- several lcores (shard_links.h) ----------------------------------------

// A frame sent on queue 0 arrives on B's queue 0 only; queue 1 sends to
// queue 1.
TEST(EthPortIo_Queues, EachQueueReachesThePeersSameQueue) {
  RingPair rp(1024, 9000, 2);
  EthPortIo a0(rp.a, 0), a1(rp.a, 1), b0(rp.b, 0), b1(rp.b, 1);
  commit_frame(a1.tx(), 80, 9);
  ASSERT_EQ(a1.flush(), 1u);
  EXPECT_EQ(b0.rx_burst([](std::span<const std::uint8_t>, wire::FrameTail) {}), 0u);
  std::size_t len = 0;
  EXPECT_EQ(b1.rx_burst([&](std::span<const std::uint8_t> f, wire::FrameTail) { len = f.size(); }),
            1u);
  EXPECT_EQ(len, 80u);
  commit_frame(a0.tx(), 70, 8);
  ASSERT_EQ(a0.flush(), 1u);
  EXPECT_EQ(b1.rx_burst([](std::span<const std::uint8_t>, wire::FrameTail) {}), 0u);
  EXPECT_EQ(b0.rx_burst([&](std::span<const std::uint8_t> f, wire::FrameTail) { len = f.size(); }),
            1u);
  EXPECT_EQ(len, 70u);
}

// The mbuf itself moves: lcore 1 sees the frame at the same address with
// the same bytes, and it is freed once, after lcore 1 handed it on.
TEST(EthPortIo_HandOff, MovesTheMbufToTheOwnersLcore) {
  RingPair rp(1024, 9000, 2);
  ShardLinks links;
  ASSERT_EQ(links.open(test::unique_name("lnk"), 2), 0);
  EthPortIo a0(rp.a, 0, &links), b0(rp.b, 0, &links), b1(rp.b, 1, &links);
  commit_frame(a0.tx(), 300, 5);
  commit_frame(a0.tx(), 200, 6);
  ASSERT_EQ(a0.flush(), 2u);
  const std::uint8_t* moved = nullptr;
  EXPECT_EQ(b0.rx_burst([&](std::span<const std::uint8_t> f, wire::FrameTail tail) {
    if (f.back() == 5) {
      moved = f.data();
      EXPECT_TRUE(b0.hand_off(1, f, tail));
    }
  }),
            2u);
  EXPECT_EQ(b0.rx_counters().handed_off, 1u);
  EXPECT_EQ(rte_mempool_in_use_count(rp.a.pool()), 1u);  // the one in the ring
  int seen = 0;
  EXPECT_EQ(b1.rx_burst([&](std::span<const std::uint8_t> f, wire::FrameTail) {
    ++seen;
    EXPECT_EQ(f.data(), moved);
    EXPECT_EQ(f.size(), 300u);
    EXPECT_EQ(f.front(), 5);
  }),
            1u);
  EXPECT_EQ(seen, 1);
  EXPECT_EQ(b1.rx_counters().handed_in, 1u);
  EXPECT_EQ(b1.rx_counters().frames, 0u);  // none from the port
  EXPECT_EQ(rte_mempool_in_use_count(rp.a.pool()), 0u);
}

// A frame that is not the current mbuf's (a looped-back or PFC-staged copy)
// is copied into a new mbuf from the port's pool.
TEST(EthPortIo_HandOff, CopiesAFrameThatIsNotTheCurrentMbuf) {
  RingPair rp(1024, 9000, 2);
  ShardLinks links;
  ASSERT_EQ(links.open(test::unique_name("lnk"), 2), 0);
  EthPortIo b0(rp.b, 0, &links), b1(rp.b, 1, &links);
  const std::vector<std::uint8_t> head(64, 0x11), seg(100, 0x22);
  const std::span<const std::uint8_t> tail[1] = {seg};
  EXPECT_TRUE(b0.hand_off(1, head, wire::FrameTail(tail, 1)));
  EXPECT_EQ(rte_mempool_in_use_count(rp.b.pool()), 1u);
  std::vector<std::uint8_t> got;
  EXPECT_EQ(b1.rx_burst([&](std::span<const std::uint8_t> f, wire::FrameTail t) {
    EXPECT_TRUE(t.empty());
    got.assign(f.begin(), f.end());
  }),
            1u);
  ASSERT_EQ(got.size(), 164u);
  EXPECT_EQ(got[63], 0x11);
  EXPECT_EQ(got[64], 0x22);
  EXPECT_EQ(rte_mempool_in_use_count(rp.b.pool()), 0u);
}

// A full ring refuses: the frame stays with the caller (freed with its
// burst) and the refusal is counted.
TEST(EthPortIo_HandOff, FullRingRefusesAndCounts) {
  RingPair rp(1024, 9000, 2);
  ShardLinks links;
  ASSERT_EQ(links.open(test::unique_name("lnk"), 2, 2), 0);
  EthPortIo a0(rp.a, 0, &links), b0(rp.b, 0, &links), b1(rp.b, 1, &links);
  for (std::uint8_t t = 1; t <= 3; ++t) commit_frame(a0.tx(), 100, t);
  ASSERT_EQ(a0.flush(), 3u);
  std::vector<bool> ok;
  b0.rx_burst([&](std::span<const std::uint8_t> f, wire::FrameTail tail) {
    ok.push_back(b0.hand_off(1, f, tail));
  });
  EXPECT_EQ(ok, (std::vector<bool>{true, true, false}));
  EXPECT_EQ(b0.rx_counters().handed_off, 2u);
  EXPECT_EQ(b0.rx_counters().handoff_full, 1u);
  EXPECT_EQ(rte_mempool_in_use_count(rp.a.pool()), 2u);
  EXPECT_EQ(b1.rx_burst([](std::span<const std::uint8_t>, wire::FrameTail) {}), 2u);
  EXPECT_EQ(rte_mempool_in_use_count(rp.a.pool()), 0u);
}

}  // namespace
}  // namespace uroce::engine
