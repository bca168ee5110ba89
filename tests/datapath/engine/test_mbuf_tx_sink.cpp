#include "datapath/engine/mbuf_tx_sink.h"

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
using test::make_pool;
using test::RingPair;

// Commits one frame of `len` bytes whose bytes are all `tag`.
void commit_frame(MbufTxSink& s, std::size_t len, std::uint8_t tag) {
  std::span<std::uint8_t> f = s.tx_alloc(len);
  ASSERT_EQ(f.size(), len);
  std::memset(f.data(), tag, len);
  s.tx_commit(len);
}

// Receives everything waiting on `p`; returns the first byte of each frame
// and checks each frame is `len` bytes of that byte.
std::vector<std::uint8_t> drain(port::EthPort& p, std::size_t len) {
  std::vector<std::uint8_t> tags;
  rte_mbuf* m[32];
  for (std::uint16_t n; (n = p.rx_burst(m, 32)) != 0;) {
    for (std::uint16_t i = 0; i < n; ++i) {
      EXPECT_EQ(m[i]->data_len, len);
      EXPECT_EQ(m[i]->pkt_len, len);
      const auto* d = rte_pktmbuf_mtod(m[i], const std::uint8_t*);
      tags.push_back(d[0]);
      EXPECT_EQ(d[len - 1], d[0]);
    }
    rte_pktmbuf_free_bulk(m, n);
  }
  return tags;
}

TEST(MbufTxSink_TxAlloc, ReturnsRequestedBytesOfTheMbufDataArea) {
  rte_mempool* pool = make_pool(63, 2048);
  ASSERT_NE(pool, nullptr);
  {
    MbufTxSink s(pool);
    EXPECT_EQ(s.data_room(), 2048u);
    std::span<std::uint8_t> f = s.tx_alloc(100);
    ASSERT_EQ(f.size(), 100u);
    EXPECT_FALSE(s.staging());  // no streaming: every frame in place
    EXPECT_EQ(rte_mempool_in_use_count(pool), 1u);
    std::span<std::uint8_t> full = s.tx_alloc(2048);
    EXPECT_EQ(full.data(), f.data());  // same staged mbuf, reused
    EXPECT_EQ(full.size(), 2048u);
  }
  EXPECT_EQ(rte_mempool_in_use_count(pool), 0u);
  rte_mempool_free(pool);
}

// Streaming: a small frame is built in the stage, a large one in place; the
// mbuf is the same staged one.
TEST(MbufTxSink_TxAlloc, StreamingBuildsSmallFramesInTheStage) {
  rte_mempool* pool = make_pool(63, 2048);
  ASSERT_NE(pool, nullptr);
  {
    MbufTxSink s(pool, true);
    std::span<std::uint8_t> full = s.tx_alloc(2048);
    EXPECT_EQ(full.size(), 2048u);
    EXPECT_FALSE(s.staging());
    std::span<std::uint8_t> big = s.tx_alloc(MbufTxSink::kStageBytes + 1);
    EXPECT_EQ(big.data(), full.data());
    EXPECT_FALSE(s.staging());
    std::span<std::uint8_t> small = s.tx_alloc(100);
    ASSERT_EQ(small.size(), 100u);
    EXPECT_TRUE(s.staging());
    EXPECT_NE(small.data(), full.data());
    EXPECT_EQ(rte_mempool_in_use_count(pool), 1u);
  }
  EXPECT_EQ(rte_mempool_in_use_count(pool), 0u);
  rte_mempool_free(pool);
}

TEST(MbufTxSink_TxAlloc, OversizeFrameGivesEmptySpanAndCounts) {
  rte_mempool* pool = make_pool(63, 2048);
  ASSERT_NE(pool, nullptr);
  {
    MbufTxSink s(pool);
    EXPECT_TRUE(s.tx_alloc(2049).empty());
    EXPECT_EQ(s.counters().oversize, 1u);
    EXPECT_EQ(rte_mempool_in_use_count(pool), 0u);
  }
  rte_mempool_free(pool);
}

TEST(MbufTxSink_TxAlloc, EmptyPoolGivesEmptySpanAndCounts) {
  rte_mempool* pool = make_pool(4, 256);
  ASSERT_NE(pool, nullptr);
  {
    MbufTxSink s(pool);
    for (std::uint8_t i = 0; i < 4; ++i) commit_frame(s, 60, i);
    EXPECT_TRUE(s.tx_alloc(60).empty());
    EXPECT_EQ(s.counters().no_mbuf, 1u);
    EXPECT_EQ(s.pending(), 4u);
  }
  EXPECT_EQ(rte_mempool_in_use_count(pool), 0u);
  rte_mempool_free(pool);
}

TEST(MbufTxSink_TxAlloc, FullBurstGivesEmptySpanAndCounts) {
  rte_mempool* pool = make_pool(127, 256);
  ASSERT_NE(pool, nullptr);
  {
    MbufTxSink s(pool);
    for (std::uint8_t i = 0; i < MbufTxSink::kBurst; ++i) commit_frame(s, 60, i);
    EXPECT_TRUE(s.full());
    EXPECT_EQ(s.room_left(), 0u);
    EXPECT_TRUE(s.tx_alloc(60).empty());
    EXPECT_EQ(s.counters().burst_full, 1u);
    EXPECT_EQ(s.counters().no_mbuf, 0u);
    EXPECT_EQ(rte_mempool_in_use_count(pool), MbufTxSink::kBurst);
  }
  rte_mempool_free(pool);
}

TEST(MbufTxSink_TxAlloc, AbandonedFrameIsReusedByTheNextAlloc) {
  rte_mempool* pool = make_pool(63, 256);
  ASSERT_NE(pool, nullptr);
  {
    MbufTxSink s(pool);
    std::span<std::uint8_t> a = s.tx_alloc(60);
    std::span<std::uint8_t> b = s.tx_alloc(80);
    EXPECT_EQ(a.data(), b.data());
    EXPECT_EQ(rte_mempool_in_use_count(pool), 1u);
    EXPECT_EQ(s.pending(), 0u);
    s.tx_commit(80);
    EXPECT_EQ(s.pending(), 1u);
    EXPECT_EQ(s.counters().committed, 1u);
  }
  rte_mempool_free(pool);
}

// A frame whose whole lines would not fit the data room is built in place.
TEST(MbufTxSink_TxAlloc, SmallFrameInPlaceWhenItsLinesExceedTheRoom) {
  rte_mempool* pool = make_pool(63, 100);
  ASSERT_NE(pool, nullptr);
  {
    MbufTxSink s(pool, true);
    ASSERT_EQ(s.tx_alloc(100).size(), 100u);
    EXPECT_FALSE(s.staging());
    ASSERT_EQ(s.tx_alloc(64).size(), 64u);
    EXPECT_TRUE(s.staging());
  }
  rte_mempool_free(pool);
}

// Frames built in the stage (around the line sizes and up to kStageBytes)
// and in place arrive byte for byte, in order, with their lengths; the
// burst's first staged frame is copied, the others streamed.
TEST(MbufTxSink_TxCommit, StagedFramesArriveWholeInTheirMbufs) {
  RingPair rp;
  MbufTxSink s(rp.a.pool(), true);
  const std::vector<std::size_t> sizes = {1,
                                          15,
                                          16,
                                          63,
                                          64,
                                          65,
                                          128,
                                          398,
                                          MbufTxSink::kStageBytes - 1,
                                          MbufTxSink::kStageBytes,
                                          MbufTxSink::kStageBytes + 1};
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    std::span<std::uint8_t> f = s.tx_alloc(sizes[k]);
    ASSERT_EQ(f.size(), sizes[k]);
    EXPECT_EQ(s.staging(), sizes[k] <= MbufTxSink::kStageBytes) << sizes[k];
    for (std::size_t i = 0; i < f.size(); ++i) f[i] = static_cast<std::uint8_t>(k * 31 + i);
    s.tx_commit(sizes[k]);
  }
  EXPECT_EQ(s.counters().streamed, sizes.size() - 2);  // all but the first and the largest
  EXPECT_EQ(s.flush(rp.a), sizes.size());
  rte_mbuf* m[16];
  ASSERT_EQ(rp.b.rx_burst(m, 16), sizes.size());
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    ASSERT_EQ(m[k]->data_len, sizes[k]);
    EXPECT_EQ(m[k]->pkt_len, sizes[k]);
    const auto* d = rte_pktmbuf_mtod(m[k], const std::uint8_t*);
    std::size_t bad = 0;
    for (std::size_t i = 0; i < sizes[k]; ++i) {
      bad += d[i] != static_cast<std::uint8_t>(k * 31 + i) ? 1 : 0;
    }
    EXPECT_EQ(bad, 0u) << "frame of " << sizes[k] << " bytes";
  }
  rte_pktmbuf_free_bulk(m, static_cast<unsigned>(sizes.size()));
}

TEST(MbufTxSink_TxCommit, WithoutAllocCountsBadCommitAndQueuesNothing) {
  rte_mempool* pool = make_pool(63, 256);
  ASSERT_NE(pool, nullptr);
  {
    MbufTxSink s(pool);
    s.tx_commit(60);
    EXPECT_EQ(s.counters().bad_commit, 1u);
    EXPECT_EQ(s.pending(), 0u);
  }
  rte_mempool_free(pool);
}

TEST(MbufTxSink_Flush, SendsPendingFramesWithTheirLengths) {
  RingPair rp;
  MbufTxSink s(rp.a.pool());
  commit_frame(s, 60, 1);
  commit_frame(s, 4170, 2);
  EXPECT_EQ(s.flush(rp.a), 2u);
  EXPECT_EQ(s.pending(), 0u);
  EXPECT_EQ(s.counters().sent, 2u);
  EXPECT_EQ(s.counters().bursts, 1u);
  rte_mbuf* m[4];
  ASSERT_EQ(rp.b.rx_burst(m, 4), 2u);
  EXPECT_EQ(m[0]->data_len, 60u);
  EXPECT_EQ(m[1]->data_len, 4170u);
  EXPECT_EQ(m[1]->pkt_len, 4170u);
  EXPECT_EQ(rte_pktmbuf_mtod(m[1], const std::uint8_t*)[4169], 2u);
  rte_pktmbuf_free_bulk(m, 2);
}

TEST(MbufTxSink_Flush, NothingPendingCallsNoBurst) {
  RingPair rp;
  MbufTxSink s(rp.a.pool());
  EXPECT_EQ(s.flush(rp.a), 0u);
  EXPECT_EQ(s.counters().bursts, 0u);
}

TEST(MbufTxSink_Flush, RefusedFramesStayPendingInOrderAndGoNext) {
  RingPair rp(16);  // the ring holds 15 frames
  MbufTxSink s(rp.a.pool());
  for (std::uint8_t i = 0; i < MbufTxSink::kBurst; ++i) commit_frame(s, 64, i);
  EXPECT_EQ(s.flush(rp.a), 15u);
  EXPECT_EQ(s.pending(), 17u);
  EXPECT_EQ(s.counters().refused, 17u);
  std::vector<std::uint8_t> got = drain(rp.b, 64);
  EXPECT_EQ(s.flush(rp.a), 15u);
  std::vector<std::uint8_t> more = drain(rp.b, 64);
  got.insert(got.end(), more.begin(), more.end());
  EXPECT_EQ(s.flush(rp.a), 2u);
  more = drain(rp.b, 64);
  got.insert(got.end(), more.begin(), more.end());
  ASSERT_EQ(got.size(), MbufTxSink::kBurst);
  for (std::uint8_t i = 0; i < MbufTxSink::kBurst; ++i) EXPECT_EQ(got[i], i);
  EXPECT_EQ(s.counters().sent, MbufTxSink::kBurst);
  EXPECT_EQ(s.counters().refused, 17u + 2u);
}

// An RC frame of `opcode` to QP `qpn` with PSN `psn`, as the builder makes it.
std::vector<std::uint8_t> rc_frame(std::uint8_t opcode, std::uint32_t qpn, std::uint32_t psn) {
  wire::PacketSpec spec = wire::testing::sample_spec(opcode, std::span(wire::testing::kPayload, 5));
  spec.dest_qp = qpn;
  spec.psn = psn;
  return wire::testing::build(spec);
}

// The PSNs of the pending frames, in order.
std::vector<std::uint32_t> pending_psns(const MbufTxSink& s) {
  std::vector<std::uint32_t> psns;
  for (std::uint16_t i = 0; i < s.pending(); ++i) {
    wire::ParsedPacket p;
    EXPECT_EQ(wire::parse_roce(s.pending_frame(i), p), wire::ParseError::kOk);
    psns.push_back(p.bth.psn());
  }
  return psns;
}

// A newer ACK of a QP replaces its pending one, across ACKs of other QPs;
// a NAK, a response of that QP after the older ACK, or coalescing off keep
// both.
TEST(MbufTxSink_TxCommit, CoalescedAckReplacesThePendingAckOfItsQp) {
  RingPair rp;
  MbufTxSink s(rp.a.pool());
  s.set_coalesce_acks(true);
  commit_bytes(s, rc_frame(wire::op::kRcAck, 7, 10));
  commit_bytes(s, rc_frame(wire::op::kRcAck, 8, 50));
  commit_bytes(s, rc_frame(wire::op::kRcAck, 7, 12));
  EXPECT_EQ(pending_psns(s), (std::vector<std::uint32_t>{12, 50}));
  EXPECT_EQ(s.counters().acks_coalesced, 1u);
  EXPECT_EQ(s.counters().committed, 3u);

  commit_bytes(s, rc_frame(wire::op::kRcReadResponseOnly, 7, 13));
  commit_bytes(s, rc_frame(wire::op::kRcAck, 7, 14));
  EXPECT_EQ(pending_psns(s), (std::vector<std::uint32_t>{12, 50, 13, 14}));
  wire::PacketSpec nak = wire::testing::sample_spec(wire::op::kRcAck);
  nak.dest_qp = 7;
  nak.psn = 15;
  nak.aeth = wire::AethHdr::make(wire::aeth_nak_syndrome(wire::NakCode::kPsnSeqError), 0);
  commit_bytes(s, wire::testing::build(nak));
  commit_bytes(s, rc_frame(wire::op::kRcAck, 7, 16));
  EXPECT_EQ(pending_psns(s), (std::vector<std::uint32_t>{12, 50, 13, 14, 15, 16}));
  EXPECT_EQ(s.counters().acks_coalesced, 1u);
  EXPECT_EQ(s.flush(rp.a), 6u);
  rte_mbuf* m[8];
  ASSERT_EQ(rp.b.rx_burst(m, 8), 6u);
  rte_pktmbuf_free_bulk(m, 6);

  s.set_coalesce_acks(false);
  commit_bytes(s, rc_frame(wire::op::kRcAck, 7, 20));
  commit_bytes(s, rc_frame(wire::op::kRcAck, 7, 21));
  EXPECT_EQ(pending_psns(s), (std::vector<std::uint32_t>{20, 21}));
  s.discard();
}

// A QP is its destination address and QPN: the same QPN at another peer,
// IPv4 and IPv6 alike, is another QP; an atomic ACK of the QP between two
// ACKs keeps both. Over IPv6 an ACK replaces its QP's as over IPv4.
TEST(MbufTxSink_TxCommit, CoalescedAckMatchesAddressAndQpn) {
  RingPair rp;
  MbufTxSink s(rp.a.pool());
  s.set_coalesce_acks(true);
  for (const bool v6 : {false, true}) {
    const auto ack = [v6](std::uint32_t psn, std::uint32_t ip_dst, std::uint8_t opcode) {
      wire::PacketSpec spec = wire::testing::sample_spec(opcode);
      spec.dest_qp = 7;
      spec.psn = psn;
      spec.ip_dst = wire::Ipv4Addr{ip_dst};
      wire::Ipv6Route route = wire::testing::kSampleRoute;
      route.dst.b[15] = static_cast<std::uint8_t>(ip_dst);
      if (v6) spec.ip6 = &route;
      return wire::testing::build(spec);
    };
    commit_bytes(s, ack(10, 0x0a000002, wire::op::kRcAck));
    commit_bytes(s, ack(20, 0x0a000003, wire::op::kRcAck));  // another peer, QPN 7 too
    EXPECT_EQ(pending_psns(s), (std::vector<std::uint32_t>{10, 20})) << "v6 " << v6;
    commit_bytes(s, ack(11, 0x0a000002, wire::op::kRcAck));
    EXPECT_EQ(pending_psns(s), (std::vector<std::uint32_t>{11, 20})) << "v6 " << v6;
    commit_bytes(s, ack(21, 0x0a000003, wire::op::kRcAtomicAck));
    commit_bytes(s, ack(22, 0x0a000003, wire::op::kRcAck));
    EXPECT_EQ(pending_psns(s), (std::vector<std::uint32_t>{11, 20, 21, 22})) << "v6 " << v6;
    s.discard();
  }
  EXPECT_EQ(s.counters().acks_coalesced, 2u);
}

TEST(MbufTxSink_Discard, FreesPendingAndStagedMbufs) {
  rte_mempool* pool = make_pool(63, 256);
  ASSERT_NE(pool, nullptr);
  {
    MbufTxSink s(pool);
    commit_frame(s, 60, 1);
    commit_frame(s, 60, 2);
    ASSERT_FALSE(s.tx_alloc(60).empty());
    EXPECT_EQ(rte_mempool_in_use_count(pool), 3u);
    s.discard();
    EXPECT_EQ(rte_mempool_in_use_count(pool), 0u);
    EXPECT_EQ(s.counters().discarded, 2u);
    EXPECT_EQ(s.pending(), 0u);
  }
  rte_mempool_free(pool);
}

}  // namespace
}  // namespace uroce::engine
