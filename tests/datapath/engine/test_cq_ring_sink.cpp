#include "datapath/engine/cq_ring_sink.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "tests/datapath/engine/vnic_test_support.h"

namespace uroce::engine::test {
namespace {

transport::Cqe cqe(std::uint64_t wr_id) {
  transport::Cqe c{};
  c.wr_id = wr_id;
  c.qp_num = 0x42;
  c.byte_len = 100;
  return c;
}

TEST(CqRingSink_Attach, BadRingIsEinval) {
  ProvCq cq(1, 3);
  CqRingSink s;
  RingMem m = cq.ring.mem();
  m.bytes -= 1;
  EXPECT_EQ(s.attach(m, cq.notify(), -1, 0), EINVAL);
  EXPECT_FALSE(s.attached());
  shm::RingGeometry tiny{};
  ASSERT_EQ(shm::make_geometry(16, 3, &tiny), shm::RingError::kOk);
  EXPECT_EQ(s.attach(RingMem{cq.ring.region.data(), tiny.bytes(), tiny}, nullptr, -1, 0),
            EINVAL);  // 16-byte elements cannot hold an ib_uverbs_wc
}

TEST(CqRingSink_Push, WritesUntilFullThenRefuses) {
  ProvCq cq(1, 3);
  CqSinkCounters totals;
  CqRingSink s(&totals);
  ASSERT_EQ(s.attach(cq.ring.mem(), cq.notify(), -1, 0), 0);
  EXPECT_EQ(s.capacity(), 3u);
  for (std::uint64_t i = 0; i < 3; ++i) EXPECT_TRUE(s.push(cqe(i)));
  EXPECT_FALSE(s.push(cqe(9)));
  EXPECT_EQ(s.unpolled(), 3u);
  EXPECT_EQ(s.counters().cqes, 3u);
  EXPECT_EQ(s.counters().overflow, 1u);
  EXPECT_EQ(totals.cqes, 3u);
  EXPECT_EQ(totals.overflow, 1u);
  const auto got = cq.poll();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[2].wr_id, 2u);
  EXPECT_EQ(got[2].qp_num, 0x42u);
  EXPECT_EQ(s.unpolled(), 0u);
  EXPECT_TRUE(s.push(cqe(10)));
}

TEST(CqRingSink_Push, CountsCompletionsOfPeerDataApart) {
  ProvCq cq(1, 8);
  CqRingSink s;
  ASSERT_EQ(s.attach(cq.ring.mem(), cq.notify(), -1, 0), 0);
  const ib_uverbs_wc_opcode peer[] = {IB_UVERBS_WC_RDMA_READ, IB_UVERBS_WC_COMP_SWAP,
                                      IB_UVERBS_WC_FETCH_ADD};
  const ib_uverbs_wc_opcode local[] = {IB_UVERBS_WC_SEND, IB_UVERBS_WC_RDMA_WRITE,
                                       IB_UVERBS_WC_LOCAL_INV};
  for (auto op : peer) {
    transport::Cqe c = cqe(1);
    c.opcode = op;
    ASSERT_TRUE(s.push(c));
  }
  for (std::uint32_t op : {128u, 129u}) {  // IBV_WC_RECV, IBV_WC_RECV_RDMA_WITH_IMM
    transport::Cqe c = cqe(2);
    c.opcode = op;
    ASSERT_TRUE(s.push(c));
  }
  for (auto op : local) {
    transport::Cqe c = cqe(3);
    c.opcode = op;
    ASSERT_TRUE(s.push(c));
  }
  EXPECT_EQ(s.counters().cqes, 8u);
  EXPECT_EQ(s.counters().cqes_peer_data, 5u);
}

TEST(CqRingSink_Attach, ChannelWithoutBatchIsEinval) {
  ProvCq cq(1, 3);
  Pipe chan;
  CqRingSink s;
  EXPECT_EQ(s.attach(cq.ring.mem(), cq.notify(), chan.wr, 0), EINVAL);
  EXPECT_FALSE(s.attached());
}

TEST(CqRingSink_Notify, OneRecordPerArming) {
  ProvCq cq(1, 15);
  Pipe chan;
  CompEventCounters ec;
  CompEventBatch batch(&ec);  // never opened: each record is written at once
  CqRingSink s(nullptr, &batch);
  ASSERT_EQ(s.attach(cq.ring.mem(), cq.notify(), chan.wr, 0xFEED), 0);
  EXPECT_TRUE(s.push(cqe(1)));
  EXPECT_TRUE(chan.drain().empty());
  cq.arm(ctl::kCqArmedNext);
  EXPECT_TRUE(s.push(cqe(2)));
  EXPECT_TRUE(s.push(cqe(3)));
  auto rec = chan.drain();
  ASSERT_EQ(rec.size(), 8u);
  std::uint64_t h = 0;
  std::memcpy(&h, rec.data(), 8);
  EXPECT_EQ(h, 0xFEEDu);
  EXPECT_EQ(s.counters().comp_events, 1u);
  EXPECT_EQ(ec.records, 1u);
  EXPECT_EQ(ec.writes, 1u);
  EXPECT_EQ(std::atomic_ref<std::uint32_t>(cq.notify()->armed).load(), ctl::kCqDisarmed);
}

TEST(CqRingSink_Notify, SolicitedArmingSkipsPlainFiresOnSolicitedOnce) {
  ProvCq cq(1, 15);
  Pipe chan;
  CompEventCounters ec;
  CompEventBatch batch(&ec);
  CqSinkCounters totals;
  CqRingSink s(&totals, &batch);
  ASSERT_EQ(s.attach(cq.ring.mem(), cq.notify(), chan.wr, 0xBEEF), 0);
  cq.arm(ctl::kCqArmedSolicited);
  EXPECT_TRUE(s.push(cqe(1)));
  EXPECT_TRUE(s.push(cqe(2)));
  EXPECT_TRUE(chan.drain().empty());
  EXPECT_EQ(std::atomic_ref<std::uint32_t>(cq.notify()->armed).load(), ctl::kCqArmedSolicited);
  EXPECT_EQ(s.counters().unsolicited, 2u);
  EXPECT_EQ(totals.unsolicited, 2u);
  transport::Cqe sol = cqe(3);
  transport::set_solicited(sol, true);
  EXPECT_TRUE(s.push(sol));
  EXPECT_EQ(chan.drain().size(), 8u);
  EXPECT_EQ(std::atomic_ref<std::uint32_t>(cq.notify()->armed).load(), ctl::kCqDisarmed);
  // One-shot: a second solicited completion without re-arming fires nothing.
  EXPECT_TRUE(s.push(sol));
  EXPECT_TRUE(chan.drain().empty());
  EXPECT_EQ(s.counters().comp_events, 1u);
  // The marker never reaches the ring.
  const auto got = cq.poll();
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[2].wr_id, 3u);
  EXPECT_EQ(got[2].reserved, 0u);
  EXPECT_EQ(got[3].reserved, 0u);
}

TEST(CqRingSink_Notify, SolicitedArmingFiresOnError) {
  ProvCq cq(1, 15);
  Pipe chan;
  CompEventCounters ec;
  CompEventBatch batch(&ec);
  CqRingSink s(nullptr, &batch);
  ASSERT_EQ(s.attach(cq.ring.mem(), cq.notify(), chan.wr, 0xBEEF), 0);
  cq.arm(ctl::kCqArmedSolicited);
  transport::Cqe bad = cqe(1);
  bad.status = static_cast<std::uint32_t>(transport::WcStatus::kWrFlushErr);
  EXPECT_TRUE(s.push(bad));
  EXPECT_EQ(chan.drain().size(), 8u);
  EXPECT_EQ(s.counters().comp_events, 1u);
  EXPECT_EQ(s.counters().unsolicited, 0u);
}

TEST(CqRingSink_Notify, NextArmingFiresOnPlain) {
  ProvCq cq(1, 15);
  Pipe chan;
  CompEventCounters ec;
  CompEventBatch batch(&ec);
  CqRingSink s(nullptr, &batch);
  ASSERT_EQ(s.attach(cq.ring.mem(), cq.notify(), chan.wr, 1), 0);
  // Any non-zero word other than kCqArmedSolicited arms for the next one.
  cq.arm(7);
  EXPECT_TRUE(s.push(cqe(1)));
  EXPECT_EQ(chan.drain().size(), 8u);
}

TEST(CqRingSink_Notify, NoChannelNoWriteAndFailedWriteCounted) {
  ProvCq cq(1, 15);
  CqRingSink quiet;
  ASSERT_EQ(quiet.attach(cq.ring.mem(), cq.notify(), -1, 1), 0);
  cq.arm();
  EXPECT_TRUE(quiet.push(cqe(1)));
  // Without a channel the arming stays for whoever has one.
  EXPECT_EQ(std::atomic_ref<std::uint32_t>(cq.notify()->armed).load(), ctl::kCqArmedNext);

  ProvCq cq2(2, 15);
  CompEventCounters ec;
  CompEventBatch batch(&ec);
  CqRingSink s(nullptr, &batch);
  ASSERT_EQ(s.attach(cq2.ring.mem(), cq2.notify(), 1 << 20, 1), 0);  // a bad fd
  cq2.arm();
  EXPECT_TRUE(s.push(cqe(1)));
  EXPECT_EQ(s.counters().comp_events, 1u);
  EXPECT_EQ(ec.errors, 1u);
  EXPECT_EQ(ec.records, 0u);
}

TEST(CqRingSink_Resize, MovesUnpolledAndCarriesArming) {
  ProvCq old_cq(1, 7);
  CqRingSink s;
  ASSERT_EQ(s.attach(old_cq.ring.mem(), old_cq.notify(), -1, 0), 0);
  // Wrap the old ring first so the unpolled run crosses its end.
  for (std::uint64_t i = 0; i < 6; ++i) ASSERT_TRUE(s.push(cqe(i)));
  EXPECT_EQ(old_cq.poll().size(), 6u);
  for (std::uint64_t i = 10; i < 15; ++i) ASSERT_TRUE(s.push(cqe(i)));
  ib_uverbs_wc w{};
  ASSERT_TRUE(old_cq.cons.try_pop(&w));  // 10 polled; 11..14 unpolled
  old_cq.arm(ctl::kCqArmedSolicited);

  ProvCq small(1, 3);
  EXPECT_EQ(s.resize(small.ring.mem(), small.notify()), EINVAL);
  RingMem bad = small.ring.mem();
  bad.mem = nullptr;
  EXPECT_EQ(s.resize(bad, small.notify()), EINVAL);
  ASSERT_EQ(s.unpolled(), 4u);

  ProvCq big(1, 31);
  ASSERT_EQ(s.resize(big.ring.mem(), big.notify()), 0);
  EXPECT_EQ(std::atomic_ref<std::uint32_t>(big.notify()->armed).load(), ctl::kCqArmedSolicited);
  EXPECT_EQ(std::atomic_ref<std::uint32_t>(old_cq.notify()->armed).load(), ctl::kCqDisarmed);
  EXPECT_TRUE(s.push(cqe(20)));
  const auto got = big.poll();
  ASSERT_EQ(got.size(), 5u);
  const std::uint64_t want[] = {11, 12, 13, 14, 20};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(got[i].wr_id, want[i]);
  EXPECT_EQ(s.capacity(), 31u);
  // The old ring still shows the 4 it held (the provider drops it), but
  // nothing new went there.
  EXPECT_EQ(old_cq.poll().size(), 4u);
}

}  // namespace
}  // namespace uroce::engine::test
