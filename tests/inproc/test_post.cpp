#include "inproc/post.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "datapath/transport/wr.h"

namespace uroce::inproc {
namespace {

struct Free {
  void operator()(void* p) const { std::free(p); }
};

// A ring of `depth` (capacity) elements on aligned heap memory, with
// both sides attached, and a doorbell page of 4 doorbells.
template <class Producer, class Consumer>
struct Ring {
  std::unique_ptr<std::byte, Free> mem;
  shm::RingGeometry geo{};
  Producer prod;
  Consumer cons;
  Ring(std::size_t elem, std::uint32_t depth) {
    EXPECT_EQ(shm::make_geometry(elem, depth, &geo), shm::RingError::kOk);
    mem.reset(static_cast<std::byte*>(std::aligned_alloc(shm::kRingAlign, geo.bytes())));
    EXPECT_EQ(shm::ring_init(mem.get(), geo.bytes(), geo), shm::RingError::kOk);
    EXPECT_EQ(prod.attach(mem.get(), geo.bytes(), geo), shm::RingError::kOk);
    EXPECT_EQ(cons.attach(mem.get(), geo.bytes(), geo), shm::RingError::kOk);
  }
};

struct Bells {
  std::unique_ptr<std::byte, Free> mem;
  shm::DoorbellGeometry geo{};
  shm::DoorbellRinger ringer;
  shm::DoorbellCollector collector;
  Bells() {
    EXPECT_EQ(shm::make_doorbell_geometry(4, &geo), shm::DoorbellError::kOk);
    const std::size_t bytes = (geo.bytes() + 63) / 64 * 64;
    mem.reset(static_cast<std::byte*>(std::aligned_alloc(shm::kDoorbellAlign, bytes)));
    std::memset(mem.get(), 0, bytes);
    EXPECT_EQ(ringer.attach(mem.get(), bytes, geo), shm::DoorbellError::kOk);
    EXPECT_EQ(collector.attach(mem.get(), bytes, geo), shm::DoorbellError::kOk);
  }
  std::vector<std::uint32_t> rung() {
    std::vector<std::uint32_t> out;
    collector.collect([&](std::uint32_t i) { out.push_back(i); });
    return out;
  }
};

using Sq = Ring<shm::SqProducer, shm::SqConsumer>;
using Rq = Ring<shm::RqProducer, shm::RqConsumer>;

shm::SendWqeFields write_wr(std::uint64_t wr_id) {
  shm::SendWqeFields f;
  f.wr_id = wr_id;
  f.opcode = IB_UVERBS_WR_RDMA_WRITE;
  f.send_flags = transport::send_flag::kSignaled;
  f.remote_addr = 0x1000;
  f.rkey = 5;
  return f;
}

TEST(PostSend_Publish, PublishesAndRingsItsDoorbell) {
  Sq sq(shm::sq_elem_bytes(1, 0), 3);
  Bells b;
  const shm::WqeSge sge{0x2000, 64, 9};
  ASSERT_EQ(post_send(sq.prod, &b.ringer, 2, write_wr(77), {&sge, 1}, 1), 0);
  EXPECT_EQ(b.rung(), std::vector<std::uint32_t>{2});
  rxe_send_wqe wqe{};
  ASSERT_TRUE(sq.cons.try_pop(&wqe));
  EXPECT_EQ(wqe.wr.wr_id, 77u);
  EXPECT_EQ(wqe.wr.wr.rdma.rkey, 5u);
}

TEST(PostSend_Full, EagainAndNothingPublished) {
  Sq sq(shm::sq_elem_bytes(1, 0), 1);
  Bells b;
  ASSERT_EQ(post_send(sq.prod, &b.ringer, 0, write_wr(1), {}, 1), 0);
  b.rung();
  EXPECT_EQ(post_send(sq.prod, &b.ringer, 0, write_wr(2), {}, 1), EAGAIN);
  EXPECT_TRUE(b.rung().empty());
}

TEST(PostSend_Refused, EinvalForTooManySges) {
  Sq sq(shm::sq_elem_bytes(1, 0), 3);
  const shm::WqeSge sges[2] = {{0x2000, 8, 9}, {0x3000, 8, 9}};
  EXPECT_EQ(post_send(sq.prod, nullptr, 0, write_wr(1), sges, 1), EINVAL);
  EXPECT_EQ(sq.prod.free_slots(), sq.geo.capacity());
}

TEST(PostRecv_Batch, WritesThenPublishesOnce) {
  Rq rq(shm::rq_elem_bytes(1), 3);
  Bells b;
  const shm::WqeSge sge{0x2000, 64, 9};
  std::uint32_t n = 0;
  while (write_recv(rq.prod, n, n, {&sge, 1}, 1) == 0) ++n;
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(write_recv(rq.prod, n, n, {&sge, 1}, 1), EAGAIN);
  publish_recvs(rq.prod, &b.ringer, 1, n);
  EXPECT_EQ(b.rung(), std::vector<std::uint32_t>{1});
  EXPECT_EQ(rq.prod.free_slots(), 0u);
  EXPECT_EQ(post_recv(rq.prod, &b.ringer, 1, 9, {&sge, 1}, 1), EAGAIN);
}

TEST(PollCq_Pop, AtMostTheSpan) {
  Ring<shm::CqProducer, shm::CqConsumer> cq(shm::cq_elem_bytes(), 7);
  for (std::uint64_t i = 0; i < 5; ++i) {
    ib_uverbs_wc wc{};
    wc.wr_id = i;
    ASSERT_TRUE(cq.prod.try_push(wc));
  }
  ib_uverbs_wc out[3];
  EXPECT_EQ(poll_cq(cq.cons, out), 3u);
  EXPECT_EQ(out[2].wr_id, 2u);
  EXPECT_EQ(poll_cq(cq.cons, out), 2u);
  EXPECT_EQ(out[1].wr_id, 4u);
  EXPECT_EQ(poll_cq(cq.cons, out), 0u);
}

}  // namespace
}  // namespace uroce::inproc
