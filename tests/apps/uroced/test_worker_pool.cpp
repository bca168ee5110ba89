#include "apps/uroced/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

namespace uroce::daemon {
namespace {

using namespace std::chrono_literals;

// Polls `pred` for up to 5 s (threads take their time on a loaded machine).
template <typename Pred>
bool eventually(Pred pred) {
  for (int i = 0; i < 500; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return pred();
}

WorkerPoolConfig config(std::size_t max_workers, std::size_t keep_idle,
                        std::chrono::milliseconds retire) {
  WorkerPoolConfig c;
  c.max_workers = max_workers;
  c.keep_idle = keep_idle;
  c.idle_retire = retire;
  return c;
}

// Tasks on `pool` that count themselves in, wait until released, then
// count out. Declared after the pool: going out of scope first, it releases
// its tasks and stops the pool while its counters still exist, so a failed
// assertion ends the test instead of hanging it.
struct Gate {
  explicit Gate(WorkerPool& p) : pool(p) {}
  ~Gate() {
    open();
    pool.stop();
  }
  void submit(int n) {
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE(pool.submit([this, go = go] {
        ++started;
        go.wait();
        ++finished;
      }));
    }
  }
  void open() {
    if (!opened.exchange(true)) release.set_value();
  }
  WorkerPool& pool;
  std::promise<void> release;
  std::shared_future<void> go = release.get_future().share();
  std::atomic<bool> opened{false};
  std::atomic<int> started{0}, finished{0};
};

TEST(WorkerPool, Submit_SequentialTasks_OneWorkerReused) {
  WorkerPool pool(config(8, 4, 60s));
  for (int i = 0; i < 1000; ++i) {
    std::promise<void> ran;
    ASSERT_TRUE(pool.submit([&ran] { ran.set_value(); }));
    ran.get_future().wait();
    // The worker is back waiting before the next task comes.
    ASSERT_TRUE(eventually([&] { return pool.stats().idle == 1; }));
  }
  const WorkerPoolStats s = pool.stats();
  EXPECT_EQ(s.started, 1u);
  EXPECT_EQ(s.workers, 1u);
  EXPECT_EQ(s.tasks, 1000u);
}

TEST(WorkerPool, Submit_ConcurrentTasks_OneWorkerEach) {
  WorkerPool pool(config(8, 4, 60s));
  Gate gate(pool);
  gate.submit(5);
  ASSERT_TRUE(eventually([&] { return gate.started.load() == 5; }));
  EXPECT_EQ(pool.stats().started, 5u);
  gate.open();
  ASSERT_TRUE(eventually([&] { return pool.stats().idle == 5; }));
}

TEST(WorkerPool, Submit_AtMaxWorkers_TaskWaitsForAFreeWorker) {
  WorkerPool pool(config(2, 2, 60s));
  Gate gate(pool);
  gate.submit(3);
  ASSERT_TRUE(eventually([&] { return gate.started.load() == 2; }));
  EXPECT_EQ(pool.stats().queued, 1u);
  EXPECT_EQ(pool.stats().workers, 2u);
  gate.open();
  ASSERT_TRUE(eventually([&] { return gate.finished.load() == 3; }));
  EXPECT_EQ(pool.stats().started, 2u);
}

TEST(WorkerPool, IdleRetire_BurstShrinksToKeepIdle) {
  WorkerPool pool(config(16, 2, 50ms));
  Gate gate(pool);
  gate.submit(6);
  ASSERT_TRUE(eventually([&] { return gate.started.load() == 6; }));
  gate.open();
  ASSERT_TRUE(eventually([&] { return pool.stats().workers == 2; }));
  EXPECT_EQ(pool.stats().retired, 4u);
  // The two kept stay (several retire periods later) and serve the next.
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(pool.stats().workers, 2u);
  std::promise<void> ran;
  ASSERT_TRUE(pool.submit([&ran] { ran.set_value(); }));
  ran.get_future().wait();
  EXPECT_EQ(pool.stats().started, 6u);
}

TEST(WorkerPool, Stop_WaitsForRunningDropsQueuedRefusesNew) {
  WorkerPool pool(config(1, 1, 60s));
  std::atomic<bool> first_started{false}, first_done{false}, second_ran{false};
  // The first task runs until stop() has begun, so the second is still
  // queued then: stop() must wait for the first and drop the second.
  ASSERT_TRUE(pool.submit([&] {
    first_started = true;
    while (!pool.stopping()) std::this_thread::sleep_for(1ms);
    first_done = true;
  }));
  ASSERT_TRUE(pool.submit([&] { second_ran = true; }));
  ASSERT_TRUE(eventually([&] { return first_started.load(); }));
  pool.stop();
  EXPECT_TRUE(first_done.load());
  EXPECT_FALSE(second_ran.load());
  EXPECT_FALSE(pool.submit([&] { second_ran = true; }));
  EXPECT_EQ(pool.stats().workers, 0u);
  pool.stop();  // idempotent
}

TEST(WorkerPool, OnStart_RunsOncePerWorker) {
  std::atomic<int> starts{0};
  WorkerPoolConfig c = config(4, 4, 60s);
  c.on_start = [&starts] { ++starts; };
  WorkerPool pool(std::move(c));
  for (int i = 0; i < 20; ++i) {
    std::promise<void> ran;
    ASSERT_TRUE(pool.submit([&ran] { ran.set_value(); }));
    ran.get_future().wait();
    ASSERT_TRUE(eventually([&] { return pool.stats().idle == 1; }));
  }
  EXPECT_EQ(starts.load(), 1);
}

}  // namespace
}  // namespace uroce::daemon
