#include "datapath/shm/ring.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>

#include "datapath/base/rng.h"
#include "tests/datapath/shm/shm_test_support.h"

namespace uroce::shm {
namespace {

using testing::GuardedBuffer;

rxe_queue_buf* header(GuardedBuffer& b) { return reinterpret_cast<rxe_queue_buf*>(b.data()); }

ib_uverbs_wc cqe(std::uint64_t id) {
  ib_uverbs_wc wc{};
  wc.wr_id = id;
  wc.byte_len = static_cast<std::uint32_t>(id * 2654435761u);
  wc.qp_num = static_cast<std::uint32_t>(~id);
  return wc;
}

// A CQ ring of 2^log2_slots slots over a guarded buffer, both ends attached.
struct CqPair {
  explicit CqPair(std::uint32_t log2_slots) : geo{6, log2_slots}, buf(geo.bytes()) {
    EXPECT_EQ(ring_init(buf.data(), buf.size(), geo), RingError::kOk);
    EXPECT_EQ(prod.attach(buf.data(), buf.size(), geo), RingError::kOk);
    EXPECT_EQ(cons.attach(buf.data(), buf.size(), geo), RingError::kOk);
  }
  RingGeometry geo;
  GuardedBuffer buf;
  CqProducer prod;
  CqConsumer cons;
};

TEST(Ring_MakeGeometry, RoundsElementAndSlotsUpToPowersOfTwo) {
  RingGeometry g;
  ASSERT_EQ(make_geometry(sq_elem_bytes(32, 256), 100, &g), RingError::kOk);
  EXPECT_EQ(g.elem_size(), 1024u);  // 208 + 32 * 16 = 720
  EXPECT_EQ(g.slots(), 128u);
  EXPECT_EQ(g.capacity(), 127u);
  EXPECT_EQ(g.index_mask(), 127u);
  EXPECT_EQ(g.bytes(), 384u + 128u * 1024u);
  // depth + 1 slots are needed: a power-of-two depth doubles the ring.
  ASSERT_EQ(make_geometry(cq_elem_bytes(), 127, &g), RingError::kOk);
  EXPECT_EQ(g.slots(), 128u);
  EXPECT_EQ(g.elem_size(), 64u);
  ASSERT_EQ(make_geometry(cq_elem_bytes(), 128, &g), RingError::kOk);
  EXPECT_EQ(g.slots(), 256u);
  ASSERT_EQ(make_geometry(1, 1, &g), RingError::kOk);
  EXPECT_EQ(g.elem_size(), 16u);
  EXPECT_EQ(g.slots(), 2u);
}

TEST(Ring_MakeGeometry, OutOfRangeGivesBadGeometry) {
  RingGeometry g;
  EXPECT_EQ(make_geometry(64, 0, &g), RingError::kBadGeometry);
  EXPECT_EQ(make_geometry((1u << 16) + 1, 4, &g), RingError::kBadGeometry);
  EXPECT_EQ(make_geometry(64, 1u << 20, &g), RingError::kBadGeometry);
  EXPECT_EQ(make_geometry(64, (1u << 20) - 1, &g), RingError::kOk);
}

TEST(Ring_ElemBytes, MatchesRxeSizing) {
  EXPECT_EQ(sq_elem_bytes(4, 0), 208u + 64u);
  EXPECT_EQ(sq_elem_bytes(1, 220), 208u + 220u);
  EXPECT_EQ(rq_elem_bytes(3), 40u + 48u);
  EXPECT_EQ(cq_elem_bytes(), 48u);
}

TEST(Ring_Init, WritesRxeHeader) {
  const RingGeometry g{7, 4};
  GuardedBuffer b(g.bytes());
  std::memset(b.data(), 0xEE, g.bytes());
  ASSERT_EQ(ring_init(b.data(), b.size(), g), RingError::kOk);
  EXPECT_EQ(header(b)->log2_elem_size, 7u);
  EXPECT_EQ(header(b)->index_mask, 15u);
  EXPECT_EQ(header(b)->producer_index, 0u);
  EXPECT_EQ(header(b)->consumer_index, 0u);
  EXPECT_TRUE(b.guards_intact());
}

TEST(Ring_Init, RejectsBadMemory) {
  const RingGeometry g{6, 3};
  GuardedBuffer b(g.bytes());
  EXPECT_EQ(ring_init(b.data(), g.bytes() - 1, g), RingError::kTooSmall);
  EXPECT_EQ(ring_init(b.data() + 8, g.bytes() - 8, g), RingError::kMisaligned);
  EXPECT_EQ(ring_init(b.data(), b.size(), RingGeometry{3, 3}), RingError::kBadGeometry);
  EXPECT_EQ(ring_init(b.data(), b.size(), RingGeometry{6, 0}), RingError::kBadGeometry);
  EXPECT_EQ(ring_init(b.data(), b.size(), RingGeometry{17, 1}), RingError::kBadGeometry);
  EXPECT_EQ(ring_init(nullptr, g.bytes(), g), RingError::kTooSmall);
  RingConsumer<CqElement> c;
  EXPECT_EQ(c.attach(nullptr, g.bytes(), g), RingError::kTooSmall);
}

TEST(Ring_ReadGeometry, RoundTripsInit) {
  const RingGeometry g{10, 5};
  GuardedBuffer b(g.bytes());
  ASSERT_EQ(ring_init(b.data(), b.size(), g), RingError::kOk);
  RingGeometry got;
  ASSERT_EQ(read_geometry(b.data(), b.size(), &got), RingError::kOk);
  EXPECT_EQ(got, g);
}

TEST(Ring_ReadGeometry, RejectsCorruptHeader) {
  const RingGeometry g{6, 3};
  GuardedBuffer b(g.bytes());
  ASSERT_EQ(ring_init(b.data(), b.size(), g), RingError::kOk);
  RingGeometry got;
  header(b)->index_mask = 6;  // not 2^n - 1
  EXPECT_EQ(read_geometry(b.data(), b.size(), &got), RingError::kBadGeometry);
  header(b)->index_mask = UINT32_MAX;
  EXPECT_EQ(read_geometry(b.data(), b.size(), &got), RingError::kBadGeometry);
  header(b)->index_mask = 15;  // twice the slots the memory holds
  EXPECT_EQ(read_geometry(b.data(), b.size(), &got), RingError::kTooSmall);
  header(b)->index_mask = 7;
  header(b)->log2_elem_size = 40;
  EXPECT_EQ(read_geometry(b.data(), b.size(), &got), RingError::kBadGeometry);
  EXPECT_EQ(read_geometry(b.data(), 100, &got), RingError::kTooSmall);
}

TEST(Ring_Attach, ElementTooSmallForWqe) {
  const RingGeometry g{7, 3};  // 128-byte slots; a send WQE needs 208
  GuardedBuffer b(g.bytes());
  ASSERT_EQ(ring_init(b.data(), b.size(), g), RingError::kOk);
  SqProducer sq;
  EXPECT_EQ(sq.attach(b.data(), b.size(), g), RingError::kElemTooSmall);
  EXPECT_FALSE(sq.attached());
  RqConsumer rq;
  EXPECT_EQ(rq.attach(b.data(), b.size(), g), RingError::kOk);
  SqConsumer sqc;
  EXPECT_EQ(sqc.attach(b.data(), b.size() - 1, RingGeometry{8, 3}), RingError::kTooSmall);
}

TEST(Ring_EmptyFull, HoldsSlotsMinusOne) {
  CqPair r(3);  // 8 slots
  EXPECT_TRUE(r.cons.empty());
  EXPECT_EQ(r.prod.free_slots(), 7u);
  for (std::uint64_t i = 0; i < 7; ++i) ASSERT_TRUE(r.prod.try_push(cqe(i)));
  EXPECT_TRUE(r.prod.full());
  EXPECT_FALSE(r.prod.try_push(cqe(99)));
  // rxe's full rule on the raw header words.
  const std::uint32_t p = header(r.buf)->producer_index;
  const std::uint32_t c = header(r.buf)->consumer_index;
  EXPECT_EQ(p, 7u);
  EXPECT_EQ(c, 0u);
  EXPECT_EQ((p + 1 - c) & 7u, 0u);
  EXPECT_EQ(r.cons.ready(), 7u);
  ib_uverbs_wc wc{};
  ASSERT_TRUE(r.cons.try_pop(&wc));
  EXPECT_EQ(wc.wr_id, 0u);
  EXPECT_FALSE(r.prod.full());
  EXPECT_EQ(r.prod.free_slots(), 1u);
}

TEST(Ring_Wrap, IndicesStayMaskedAndOrderHolds) {
  CqPair r(2);  // 4 slots, capacity 3
  std::uint64_t next_in = 0;
  std::uint64_t next_out = 0;
  for (int round = 0; round < 50; ++round) {
    const std::uint32_t n = 1 + round % 3;
    for (std::uint32_t i = 0; i < n; ++i) ASSERT_TRUE(r.prod.try_push(cqe(next_in++)));
    EXPECT_LE(header(r.buf)->producer_index, 3u);
    for (std::uint32_t i = 0; i < n; ++i) {
      ib_uverbs_wc wc{};
      ASSERT_TRUE(r.cons.try_pop(&wc));
      EXPECT_EQ(wc.wr_id, next_out);
      EXPECT_EQ(wc.byte_len, cqe(next_out).byte_len);
      ++next_out;
    }
    EXPECT_LE(header(r.buf)->consumer_index, 3u);
    EXPECT_TRUE(r.cons.empty());
  }
  EXPECT_EQ(next_out, next_in);
  EXPECT_TRUE(r.buf.guards_intact());
}

TEST(Ring_Batch, PublishAndReleaseSeveral) {
  CqPair r(3);
  const std::uint32_t free = r.prod.free_slots();
  ASSERT_EQ(free, 7u);
  for (std::uint32_t k = 0; k < 5; ++k) r.prod.slot(k)->wr_id = 100 + k;
  EXPECT_EQ(r.cons.ready(), 0u);  // nothing visible before publish
  r.prod.publish(5);
  ASSERT_EQ(r.cons.ready(), 5u);
  for (std::uint32_t k = 0; k < 5; ++k) EXPECT_EQ(r.cons.slot(k)->wr_id, 100u + k);
  r.cons.release(5);
  EXPECT_EQ(header(r.buf)->consumer_index, 5u);
  EXPECT_EQ(r.prod.free_slots(), 7u);
}

TEST(Ring_Untrusted, CorruptProducerIndexIsMasked) {
  CqPair r(3);
  const std::byte* data = r.buf.data() + kQueueHeaderBytes;
  for (std::uint32_t bad : {8u, 9u, 0xFFFFFFFFu, 0x80000003u, 12345u}) {
    header(r.buf)->producer_index = bad;
    const std::uint32_t ready = r.cons.ready();
    EXPECT_LE(ready, 7u) << bad;
    EXPECT_EQ(ready, ((bad & 7u) - r.cons.own_index()) & 7u) << bad;
    for (std::uint32_t k = 0; k < 64; ++k) {
      const auto e = r.cons.element(k);
      EXPECT_TRUE(r.buf.contains(e.data(), e.size()));
      EXPECT_GE(e.data(), data);
    }
  }
}

TEST(Ring_Untrusted, CorruptConsumerIndexIsMasked) {
  CqPair r(3);
  for (std::uint32_t bad : {8u, 0xFFFFFFFFu, 0x7FFFFFF9u, 77777u}) {
    header(r.buf)->consumer_index = bad;
    EXPECT_LE(r.prod.free_slots(), 7u) << bad;
    for (std::uint32_t k = 0; k < 64; ++k) {
      EXPECT_TRUE(r.buf.contains(r.prod.slot_bytes(k), r.prod.elem_size()));
    }
  }
}

TEST(Ring_Untrusted, OwnIndexIsNeverReadBack) {
  CqPair r(3);
  ASSERT_TRUE(r.prod.try_push(cqe(1)));
  ASSERT_TRUE(r.prod.try_push(cqe(2)));
  // The peer scribbles over the word the producer owns; the producer keeps
  // its private index and the next publish overwrites the garbage.
  header(r.buf)->producer_index = 0xDEADBEEF;
  EXPECT_EQ(r.prod.own_index(), 2u);
  ASSERT_TRUE(r.prod.try_push(cqe(3)));
  EXPECT_EQ(header(r.buf)->producer_index, 3u);
  ib_uverbs_wc wc{};
  ASSERT_TRUE(r.cons.try_pop(&wc));
  EXPECT_EQ(wc.wr_id, 1u);
  header(r.buf)->consumer_index = 6;
  r.cons.release();
  EXPECT_EQ(header(r.buf)->consumer_index, 2u);
}

TEST(Ring_Untrusted, RandomCorruptionNeverEscapesTheBuffer) {
  const RingGeometry g{6, 4};
  GuardedBuffer b(g.bytes());
  ASSERT_EQ(ring_init(b.data(), b.size(), g), RingError::kOk);
  CqProducer prod;
  CqConsumer cons;
  ASSERT_EQ(prod.attach(b.data(), b.size(), g), RingError::kOk);
  ASSERT_EQ(cons.attach(b.data(), b.size(), g), RingError::kOk);
  SeededRng rng(42);
  std::uint64_t sum = 0;
  for (int i = 0; i < 20000; ++i) {
    const std::uint32_t r = static_cast<std::uint32_t>(rng.next_u64());
    if ((r & 3) == 0) header(b)->producer_index = static_cast<std::uint32_t>(rng.next_u64());
    if ((r & 12) == 0) header(b)->consumer_index = static_cast<std::uint32_t>(rng.next_u64());
    const std::uint32_t free = prod.free_slots();
    for (std::uint32_t k = 0; k < free; ++k) {
      const ib_uverbs_wc wc = cqe(i);
      std::memcpy(prod.slot_bytes(k), &wc, sizeof wc);
    }
    prod.publish(free);
    const std::uint32_t ready = cons.ready();
    for (std::uint32_t k = 0; k < ready; ++k) sum += cons.slot(k)->wr_id;
    cons.release(ready);
  }
  EXPECT_TRUE(b.guards_intact());
  EXPECT_GT(sum, 0u);
}

TEST(Ring_Stress, TwoThreadsMillionElementsInOrder) {
  CqPair r(6);  // 64 slots
  constexpr std::uint64_t kCount = 1'000'000;
  std::thread producer([&] {
    for (std::uint64_t i = 0; i < kCount;) {
      const std::uint32_t free = r.prod.free_slots();
      if (free == 0) {
        std::this_thread::yield();
        continue;
      }
      const std::uint32_t n = static_cast<std::uint32_t>(std::min<std::uint64_t>(free, kCount - i));
      // Field by field rather than memcpy: GCC inlines a fixed-size memcpy
      // without TSan instrumentation, which would hide a missing barrier.
      for (std::uint32_t k = 0; k < n; ++k) {
        const ib_uverbs_wc want = cqe(i + k);
        ib_uverbs_wc* wc = r.prod.slot(k);
        wc->wr_id = want.wr_id;
        wc->byte_len = want.byte_len;
        wc->qp_num = want.qp_num;
      }
      r.prod.publish(n);
      i += n;
    }
  });
  std::uint64_t bad = 0;
  for (std::uint64_t i = 0; i < kCount;) {
    const std::uint32_t ready = r.cons.ready();
    if (ready == 0) {
      std::this_thread::yield();
      continue;
    }
    for (std::uint32_t k = 0; k < ready; ++k) {
      const ib_uverbs_wc* wc = r.cons.slot(k);
      const ib_uverbs_wc want = cqe(i + k);
      if (wc->wr_id != want.wr_id || wc->byte_len != want.byte_len || wc->qp_num != want.qp_num) {
        ++bad;
      }
    }
    r.cons.release(ready);
    i += ready;
  }
  producer.join();
  EXPECT_EQ(bad, 0u);
  EXPECT_TRUE(r.cons.empty());
  EXPECT_TRUE(r.buf.guards_intact());
}

}  // namespace
}  // namespace uroce::shm
