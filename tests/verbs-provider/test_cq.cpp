#include "verbs-provider/cq.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <thread>

#include "tests/verbs-provider/fake_daemon.h"

namespace uroce::provider {
namespace {

using testing::FakeContext;
using testing::FakeRing;
using testing::Reply;
using testing::Request;

ib_uverbs_wc cqe(std::uint64_t wr_id, std::uint32_t byte_len = 0) {
  ib_uverbs_wc wc{};
  wc.wr_id = wr_id;
  wc.status = IBV_WC_SUCCESS;
  wc.opcode = IBV_WC_RECV;
  wc.byte_len = byte_len;
  wc.qp_num = 0x11;
  return wc;
}

FakeRing& ring_of(FakeContext& fc, ibv_cq* cq) {
  std::lock_guard<std::mutex> g(fc.daemon.mu);
  return *fc.daemon.cqs.at(to_ucq(cq)->handle);
}

TEST(CreateCq_Ring, CapacityAndUserHandle) {
  FakeContext fc;
  std::uint64_t user_handle = 0;
  fc.daemon.tweak = [&](const Request& r, Reply&) {
    if (r.op == ctl::Op::kCreateCq) user_handle = r.as<ctl::CreateCqReq>().user_handle;
  };
  ibv_cq* cq = fc.create_cq(10);
  ASSERT_NE(cq, nullptr);
  EXPECT_EQ(cq->cqe, 15);  // 16 slots, one always empty
  EXPECT_EQ(user_handle, reinterpret_cast<std::uintptr_t>(cq));
  EXPECT_EQ(fc.st()->objects.size(), 1u);
  EXPECT_EQ(destroy_cq(cq), 0);
  EXPECT_EQ(fc.st()->objects.size(), 0u);
}

TEST(PollCq_Ring, CompletionsInOrderAcrossCalls) {
  FakeContext fc;
  ibv_cq* cq = fc.create_cq(8);
  ASSERT_NE(cq, nullptr);
  auto engine = testing::engine_end<shm::CqProducer>(ring_of(fc, cq));
  ibv_wc wc[4];
  EXPECT_EQ(poll_cq(cq, 4, wc), 0);
  for (std::uint64_t i = 1; i <= 3; ++i) ASSERT_TRUE(engine.try_push(cqe(i, 100 * i)));
  ASSERT_EQ(poll_cq(cq, 2, wc), 2);
  EXPECT_EQ(wc[0].wr_id, 1u);
  EXPECT_EQ(wc[1].wr_id, 2u);
  EXPECT_EQ(wc[1].byte_len, 200u);
  EXPECT_EQ(wc[1].opcode, IBV_WC_RECV);
  EXPECT_EQ(wc[1].qp_num, 0x11u);
  ASSERT_EQ(poll_cq(cq, 4, wc), 1);
  EXPECT_EQ(wc[0].wr_id, 3u);
  EXPECT_EQ(poll_cq(cq, 4, wc), 0);
  EXPECT_EQ(poll_cq(cq, 0, wc), 0);
  // Released slots are free again for the engine: wrap the ring.
  for (std::uint64_t i = 0; i < 40; ++i) {
    ASSERT_TRUE(engine.try_push(cqe(i)));
    ASSERT_EQ(poll_cq(cq, 1, wc), 1);
    EXPECT_EQ(wc[0].wr_id, i);
  }
  EXPECT_EQ(destroy_cq(cq), 0);
}

TEST(CqClean_Reset, RemovesOneQpsEntriesAndKeepsTheRestInOrder) {
  FakeContext fc;
  ibv_cq* cq = fc.create_cq(8);
  ASSERT_NE(cq, nullptr);
  auto engine = testing::engine_end<shm::CqProducer>(ring_of(fc, cq));
  ibv_wc wc[8];
  // Move the indices off zero so the compaction crosses the ring's end.
  for (std::uint64_t i = 0; i < 6; ++i) ASSERT_TRUE(engine.try_push(cqe(i)));
  ASSERT_EQ(poll_cq(cq, 8, wc), 6);
  const std::uint32_t qpns[] = {0x22, 0x11, 0x22, 0x22, 0x11, 0x22};
  for (std::uint64_t i = 0; i < 6; ++i) {
    ib_uverbs_wc c = cqe(100 + i);
    c.qp_num = qpns[i];
    ASSERT_TRUE(engine.try_push(c));
  }
  EXPECT_EQ(cq_clean(to_ucq(cq), 0x22), 4u);
  ASSERT_EQ(poll_cq(cq, 8, wc), 2);
  EXPECT_EQ(wc[0].wr_id, 101u);
  EXPECT_EQ(wc[1].wr_id, 104u);
  EXPECT_EQ(cq_clean(to_ucq(cq), 0x22), 0u);
  // The freed slots are usable again: the ring takes its full capacity.
  std::uint32_t pushed = 0;
  while (engine.try_push(cqe(200 + pushed))) ++pushed;
  EXPECT_EQ(pushed, engine.geometry().capacity());
  EXPECT_EQ(destroy_cq(cq), 0);
}

TEST(PollCq_Dead, DrainsThenReturnsMinusOne) {
  FakeContext fc;
  ibv_cq* cq = fc.create_cq(4);
  auto engine = testing::engine_end<shm::CqProducer>(ring_of(fc, cq));
  ASSERT_TRUE(engine.try_push(cqe(9)));
  fc.st()->ctl.mark_dead();
  ibv_wc wc[2];
  ASSERT_EQ(poll_cq(cq, 2, wc), 1);
  EXPECT_EQ(wc[0].wr_id, 9u);
  errno = 0;
  EXPECT_EQ(poll_cq(cq, 2, wc), -EIO);
  EXPECT_EQ(errno, EIO);         // not whatever the last failing call left
  EXPECT_EQ(destroy_cq(cq), 0);  // the daemon is gone: destroy succeeds locally
}

TEST(ReqNotifyCq_Arming, StoresTheWordNextWinsOverSolicited) {
  FakeContext fc;
  ibv_cq* cq = fc.create_cq(4);
  ctl::CqNotify* n = to_ucq(cq)->notify;
  EXPECT_EQ(n->armed, ctl::kCqDisarmed);
  ASSERT_EQ(req_notify_cq(cq, 1), 0);
  EXPECT_EQ(n->armed, ctl::kCqArmedSolicited);
  ASSERT_EQ(req_notify_cq(cq, 0), 0);
  EXPECT_EQ(n->armed, ctl::kCqArmedNext);
  ASSERT_EQ(req_notify_cq(cq, 1), 0);
  EXPECT_EQ(n->armed, ctl::kCqArmedNext);
  n->armed = ctl::kCqDisarmed;  // the engine sent the event
  // The word is in the daemon's region, right after the ring.
  FakeRing& r = ring_of(fc, cq);
  const auto* daemon_word =
      reinterpret_cast<const std::uint32_t*>(static_cast<const std::byte*>(r.mem) + r.ring_bytes);
  ASSERT_EQ(req_notify_cq(cq, 0), 0);
  EXPECT_EQ(*daemon_word, ctl::kCqArmedNext);
  fc.st()->ctl.mark_dead();
  errno = 0;
  EXPECT_EQ(req_notify_cq(cq, 0), EIO);
  EXPECT_EQ(errno, EIO);
  EXPECT_EQ(destroy_cq(cq), 0);
}

TEST(CreateCq_Channel, RegistersThePipeAndPassesItsHandle) {
  FakeContext fc;
  int p[2];
  ASSERT_EQ(pipe2(p, O_CLOEXEC), 0);
  close(p[1]);
  // As the interposer allocates channels (channel_abi.h), magic unset.
  PreloadChannel pch{};
  pch.ch = ibv_comp_channel{fc.ctx(), p[0], 0};
  ibv_comp_channel& ch = pch.ch;
  std::uint32_t channel_handle = 0;
  fc.daemon.tweak = [&](const Request& r, Reply&) {
    if (r.op == ctl::Op::kCreateCq) channel_handle = r.as<ctl::CreateCqReq>().channel_handle;
  };
  ibv_cq* a = fc.create_cq(4, &ch);
  ibv_cq* b = fc.create_cq(4, &ch);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(channel_handle, ctl::kNoChannel);
  EXPECT_EQ(fc.st()->channels.size(), 1u);
  // An event as the engine writes it: the CQ's user handle, read back as
  // ibv_get_cq_event does; cq_event then counts it for destroy.
  const std::uint64_t rec = reinterpret_cast<std::uintptr_t>(a);
  {
    std::lock_guard<std::mutex> g(fc.daemon.mu);
    ASSERT_EQ(write(fc.daemon.channel_fds.at(0), &rec, 8), 8);
  }
  std::uint64_t got = 0;
  ASSERT_EQ(read(p[0], &got, 8), 8);
  EXPECT_EQ(reinterpret_cast<ibv_cq*>(got), a);
  cq_event(a);
  std::thread acker([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    pthread_mutex_lock(&a->mutex);
    a->comp_events_completed += 1;  // ibv_ack_cq_events
    pthread_cond_signal(&a->cond);
    pthread_mutex_unlock(&a->mutex);
  });
  EXPECT_EQ(destroy_cq(a), 0);
  acker.join();
  EXPECT_EQ(destroy_cq(b), 0);
  close(p[0]);
}

TEST(CreateCq_Errors, BadArgumentsRefusalAndBadGeometry) {
  FakeContext fc;
  errno = 0;
  EXPECT_EQ(create_cq(fc.ctx(), 0, nullptr, 0), nullptr);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(create_cq(fc.ctx(), 70000, nullptr, 0), nullptr);  // over max_cqe
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(create_cq(fc.ctx(), 4, nullptr, 1), nullptr);  // one vector only
  EXPECT_EQ(errno, EINVAL);
  PreloadChannel foreign{};
  foreign.ch = ibv_comp_channel{nullptr, -1, 0};
  EXPECT_EQ(create_cq(fc.ctx(), 4, &foreign.ch, 0), nullptr);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_TRUE(fc.server().ops().size() == 1);  // only Hello went out

  fc.daemon.refuse = {ctl::Op::kCreateCq};
  EXPECT_EQ(create_cq(fc.ctx(), 4, nullptr, 0), nullptr);
  EXPECT_EQ(errno, EINVAL);
  fc.daemon.refuse.clear();

  // A reply whose ring does not fit its region: EPROTO, and the daemon's CQ
  // is destroyed again.
  fc.daemon.tweak = [](const Request& r, Reply& rep) {
    if (r.op != ctl::Op::kCreateCq) return;
    ctl::CreateCqRep c;
    std::memcpy(&c, rep.body.data(), sizeof(c));
    c.ring_bytes = c.region_bytes;  // no room for CqNotify
    std::memcpy(rep.body.data(), &c, sizeof(c));
  };
  EXPECT_EQ(create_cq(fc.ctx(), 4, nullptr, 0), nullptr);
  EXPECT_EQ(errno, EPROTO);
  EXPECT_EQ(fc.server().ops().back(), ctl::Op::kDestroyCq);
  {
    std::lock_guard<std::mutex> g(fc.daemon.mu);
    EXPECT_TRUE(fc.daemon.cqs.empty());
  }

  // A region outside the arena (past its chunks, or across a chunk
  // boundary): EPROTO too, nothing mapped.
  for (const std::uint64_t offset :
       {std::uint64_t{testing::MiniDaemon::kChunk} * testing::MiniDaemon::kMaxChunks,
        std::uint64_t{testing::MiniDaemon::kChunk} - 64}) {
    fc.daemon.tweak = [offset](const Request& r, Reply& rep) {
      if (r.op != ctl::Op::kCreateCq) return;
      ctl::CreateCqRep c;
      std::memcpy(&c, rep.body.data(), sizeof(c));
      c.region_offset = offset;
      std::memcpy(rep.body.data(), &c, sizeof(c));
    };
    EXPECT_EQ(create_cq(fc.ctx(), 4, nullptr, 0), nullptr);
    EXPECT_EQ(errno, EPROTO);
    EXPECT_EQ(fc.server().ops().back(), ctl::Op::kDestroyCq);
  }
}

TEST(CreateCq_Errors, DeadDaemonGivesEio) {
  FakeContext fc;
  fc.st()->ctl.mark_dead();
  errno = 0;
  EXPECT_EQ(create_cq(fc.ctx(), 4, nullptr, 0), nullptr);
  EXPECT_EQ(errno, EIO);
}

TEST(ResizeCq_Ring, UnpolledCompletionsSurviveAndCapacityGrows) {
  FakeContext fc;
  ibv_cq* cq = fc.create_cq(4);
  {
    auto engine = testing::engine_end<shm::CqProducer>(ring_of(fc, cq));
    ASSERT_TRUE(engine.try_push(cqe(1)));
    ASSERT_TRUE(engine.try_push(cqe(2)));
  }
  ASSERT_EQ(resize_cq(cq, 100), 0);
  EXPECT_EQ(cq->cqe, 127);
  ibv_wc wc[4];
  ASSERT_EQ(poll_cq(cq, 4, wc), 2);
  EXPECT_EQ(wc[0].wr_id, 1u);
  EXPECT_EQ(wc[1].wr_id, 2u);
  auto engine = testing::engine_end<shm::CqProducer>(ring_of(fc, cq));
  ASSERT_TRUE(engine.try_push(cqe(3)));
  ASSERT_EQ(poll_cq(cq, 4, wc), 1);
  EXPECT_EQ(wc[0].wr_id, 3u);
  EXPECT_EQ(resize_cq(cq, 0), EINVAL);
  {
    auto e2 = testing::engine_end<shm::CqProducer>(ring_of(fc, cq));
    ASSERT_TRUE(e2.try_push(cqe(4)));
    ASSERT_TRUE(e2.try_push(cqe(5)));
  }
  const auto ops_before = fc.server().ops().size();
  EXPECT_EQ(resize_cq(cq, 1), EINVAL);  // two completions not polled yet
  EXPECT_EQ(fc.server().ops().size(), ops_before);
  ASSERT_EQ(poll_cq(cq, 4, wc), 2);
  fc.daemon.refuse = {ctl::Op::kResizeCq};
  EXPECT_EQ(resize_cq(cq, 8), EINVAL);
  EXPECT_EQ(cq->cqe, 127);
  EXPECT_EQ(destroy_cq(cq), 0);
}

TEST(DestroyCq_Errors, DaemonRefusalKeepsTheCq) {
  FakeContext fc;
  ibv_cq* cq = fc.create_cq(4);
  fc.daemon.refuse = {ctl::Op::kDestroyCq};
  EXPECT_EQ(destroy_cq(cq), EINVAL);
  EXPECT_EQ(fc.st()->objects.size(), 1u);
  fc.daemon.refuse.clear();
  EXPECT_EQ(destroy_cq(cq), 0);
}

}  // namespace
}  // namespace uroce::provider
