// thread_shards: several threads of one process, each with contexts of its
// own (issue 30: one engine shard per application thread, eRPC's thread per
// core). For thread t the main thread opens DEV_A, for every t, then DEV_B
// for every t; an engine of n shards places each context on the shard
// serving the fewest of that device's, so both of thread t's contexts land
// on shard t mod n. The program asks each context where it lives
// (uroce_dv_query_device, UROCE_DV_CONTEXT_MASK_ENGINE_SHARD) and checks
// that. Then every thread connects an RC QP on its DEV_A context to one on
// its DEV_B context and sends ITERS 64-byte SENDs, 16 in flight, each
// carrying (thread, sequence), which the receiver checks in order. In
// embedded mode each thread's polls and posts then drive its own shard's
// engine.
//
// Prints a line per context ("placement"), a line per thread (messages,
// seconds, msg/s) and the total (every message over the slowest thread's
// seconds); exits 0 only if every placement is
// as expected and every message arrived intact, in order.
//
//   thread_shards DEV_A DEV_B THREADS ITERS [GID_INDEX]
#include <infiniband/uroce_dv.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "probe.h"
#include "rc_connect.h"

namespace {

constexpr std::uint32_t kMsg = 64;
constexpr int kWindow = 16;
constexpr int kRecvs = 2 * kWindow;
constexpr int kWaitMs = 20000;  // only a broken run waits this long

std::atomic<int> g_failures{0};

void fail(const std::string& what) {
  g_failures.fetch_add(1);
  std::fprintf(stderr, "thread_shards: %s\n", what.c_str());
}

using probe::die;

// One end: a context's PD, CQ, buffer and RC QP.
struct End {
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  ibv_mr* mr = nullptr;
  std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(kRecvs * kMsg);
  ibv_gid gid{};

  void make(int gid_index) {
    pd = ibv_alloc_pd(ctx);
    cq = ibv_create_cq(ctx, 4 * kRecvs, nullptr, nullptr, 0);
    if (pd == nullptr || cq == nullptr) die("ibv_alloc_pd / ibv_create_cq");
    mr = ibv_reg_mr(pd, buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE);
    if (mr == nullptr) die("ibv_reg_mr");
    ibv_qp_init_attr ia{};
    ia.send_cq = cq;
    ia.recv_cq = cq;
    ia.qp_type = IBV_QPT_RC;
    ia.cap.max_send_wr = kWindow;
    ia.cap.max_recv_wr = kRecvs;
    ia.cap.max_send_sge = 1;
    ia.cap.max_recv_sge = 1;
    qp = ibv_create_qp(pd, &ia);
    if (qp == nullptr) die("ibv_create_qp");
    if (ibv_query_gid(ctx, 1, gid_index, &gid) != 0) die("ibv_query_gid");
  }

  void post_recv(std::uint64_t id) {
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(buf.data() + (id % kRecvs) * kMsg), kMsg,
                mr->lkey};
    ibv_recv_wr wr{};
    wr.wr_id = id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    if (ibv_post_recv(qp, &wr, &bad) != 0) die("ibv_post_recv");
  }

  void post_send(std::uint32_t thread, std::uint64_t seq) {
    std::uint8_t* p = buf.data() + (seq % kWindow) * kMsg;
    std::memcpy(p, &thread, sizeof(thread));
    std::memcpy(p + sizeof(thread), &seq, sizeof(seq));
    ibv_sge sge{reinterpret_cast<std::uintptr_t>(p), kMsg, mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = seq;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    ibv_send_wr* bad = nullptr;
    if (ibv_post_send(qp, &wr, &bad) != 0) die("ibv_post_send");
  }
};

void connect(End& from, const End& to, int gid_index) {
  const char* step = nullptr;
  if (uroce_it::rc_connect(from.qp, {to.qp->qp_num, to.gid, gid_index}, &step) != 0) {
    die(std::string("connect ") + step);
  }
}

// The shard that serves `ctx`, of how many.
void shard_of(ibv_context* ctx, std::uint32_t* shard, std::uint32_t* shards) {
  uroce_dv_context c{};
  c.comp_mask = UROCE_DV_CONTEXT_MASK_ENGINE_SHARD;
  if (uroce_dv_query_device(ctx, &c) != 0) die("uroce_dv_query_device");
  if ((c.comp_mask & UROCE_DV_CONTEXT_MASK_ENGINE_SHARD) == 0) die("no shard in the reply");
  *shard = c.engine_shard;
  *shards = c.engine_shards;
}

struct Thread {
  End a, b;
  std::uint64_t done = 0;
  double seconds = 0;
};

// Thread t's traffic: SENDs from a to b, at most kWindow in flight, each
// received one checked for (t, its sequence number) in order.
void run(std::uint32_t t, Thread* th, std::uint64_t iters, std::barrier<>* start) {
  for (int i = 0; i < kRecvs; ++i) th->b.post_recv(static_cast<std::uint64_t>(i));
  start->arrive_and_wait();
  const auto t0 = std::chrono::steady_clock::now();
  const auto give_up = t0 + std::chrono::milliseconds(kWaitMs) +
                       std::chrono::microseconds(iters * 100);  // 10 k msg/s at least
  std::uint64_t sent = 0, acked = 0, received = 0, reposted = kRecvs;
  ibv_wc wc[kWindow];
  while (received < iters || acked < iters) {
    while (sent < iters && sent - acked < kWindow) th->a.post_send(t, sent++);
    int n = ibv_poll_cq(th->a.cq, kWindow, wc);
    if (n < 0) die("ibv_poll_cq");
    for (int i = 0; i < n; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS || wc[i].opcode != IBV_WC_SEND) {
        fail("thread " + std::to_string(t) + ": send completion " +
             ibv_wc_status_str(wc[i].status));
        return;
      }
      ++acked;
    }
    n = ibv_poll_cq(th->b.cq, kWindow, wc);
    if (n < 0) die("ibv_poll_cq");
    for (int i = 0; i < n; ++i) {
      if (wc[i].status != IBV_WC_SUCCESS || wc[i].opcode != IBV_WC_RECV || wc[i].byte_len != kMsg) {
        fail("thread " + std::to_string(t) + ": receive completion " +
             ibv_wc_status_str(wc[i].status));
        return;
      }
      const std::uint8_t* p = th->b.buf.data() + (wc[i].wr_id % kRecvs) * kMsg;
      std::uint32_t who = 0;
      std::uint64_t seq = 0;
      std::memcpy(&who, p, sizeof(who));
      std::memcpy(&seq, p + sizeof(who), sizeof(seq));
      if (who != t || seq != received) {
        fail("thread " + std::to_string(t) + ": message " + std::to_string(received) +
             " carried thread " + std::to_string(who) + " sequence " + std::to_string(seq));
        return;
      }
      ++received;
      if (reposted < iters) th->b.post_recv(reposted++);
    }
    if (std::chrono::steady_clock::now() > give_up) {
      fail("thread " + std::to_string(t) + ": stuck at " + std::to_string(received) +
           " received, " + std::to_string(acked) + " acknowledged of " + std::to_string(iters));
      return;
    }
  }
  th->done = received;
  th->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5 || argc > 6) {
    std::fprintf(stderr, "usage: thread_shards DEV_A DEV_B THREADS ITERS [GID_INDEX]\n");
    return 2;
  }
  const int threads = std::atoi(argv[3]);
  const std::uint64_t iters = std::strtoull(argv[4], nullptr, 10);
  const int gid_index = argc == 6 ? std::atoi(argv[5]) : 1;
  if (threads < 1 || threads > 64 || iters == 0) {
    std::fprintf(stderr, "thread_shards: THREADS 1..64, ITERS > 0\n");
    return 2;
  }
  std::vector<Thread> th(static_cast<std::size_t>(threads));
  for (Thread& x : th) x.a.ctx = probe::open_device(argv[1]);
  for (Thread& x : th) x.b.ctx = probe::open_device(argv[2]);
  for (int t = 0; t < threads; ++t) {
    for (End* e : {&th[t].a, &th[t].b}) {
      std::uint32_t shard = 0, shards = 0;
      shard_of(e->ctx, &shard, &shards);
      const bool ok = shards >= 1 && shard == static_cast<std::uint32_t>(t) % shards;
      std::printf("placement: thread %d %s on shard %u of %u%s\n", t,
                  ibv_get_device_name(e->ctx->device), shard, shards, ok ? "" : " (unexpected)");
      if (!ok) fail("thread " + std::to_string(t) + " is not on shard t mod n");
    }
  }
  for (Thread& x : th) {
    x.a.make(gid_index);
    x.b.make(gid_index);
    connect(x.a, x.b, gid_index);
    connect(x.b, x.a, gid_index);
  }
  std::barrier start(threads);
  std::vector<std::thread> run_threads;
  for (int t = 0; t < threads; ++t) {
    run_threads.emplace_back(run, static_cast<std::uint32_t>(t), &th[t], iters, &start);
  }
  for (std::thread& r : run_threads) r.join();
  // The threads start together (the barrier): the aggregate rate is every
  // message over the slowest thread's time.
  std::uint64_t all = 0;
  double slowest = 0;
  for (int t = 0; t < threads; ++t) {
    const double rate = th[t].seconds > 0 ? static_cast<double>(th[t].done) / th[t].seconds : 0;
    std::printf("thread %d: %llu messages in %.3f s, %.0f msg/s\n", t,
                static_cast<unsigned long long>(th[t].done), th[t].seconds, rate);
    all += th[t].done;
    slowest = std::max(slowest, th[t].seconds);
  }
  std::printf("total: %llu messages in %.3f s, %.0f msg/s\n", static_cast<unsigned long long>(all),
              slowest, slowest > 0 ? static_cast<double>(all) / slowest : 0.0);
  for (Thread& x : th) {
    for (End* e : {&x.a, &x.b}) {
      ibv_destroy_qp(e->qp);
      ibv_dereg_mr(e->mr);
      ibv_destroy_cq(e->cq);
      ibv_dealloc_pd(e->pd);
      ibv_close_device(e->ctx);
    }
  }
  const int failures = g_failures.load();
  std::printf("%s\n", failures == 0 ? "thread_shards: ok" : "thread_shards: FAILED");
  return failures == 0 ? 0 : 1;
}
