// The threads that serve client connections (issue 12).
//
// A connection's session blocks in recv for its whole life, so each one
// needs a thread. Starting a thread per connection made the cost of a
// connection flood grow with the number of connections ever made, not with
// the number served at once: ASan (and any tool that records threads)
// keeps a record per thread ever created, and thread creation is the most
// expensive part of an accept. The pool keeps finished workers waiting for
// the next connection instead:
//   - submit() hands a task to a waiting worker, or starts a new one while
//     fewer than `max_workers` exist; beyond that the task waits in the
//     queue for the first worker that finishes (the server caps live
//     connections at the same number, so that wait is one task's tail);
//   - a worker that has waited `idle_retire` for work exits, unless only
//     `keep_idle` workers would be left waiting; so a burst's threads go
//     away after it, and threads started over the daemon's life grow with
//     bursts, never with connections;
//   - stop() lets running tasks finish (the caller makes them end: the
//     server shuts their sockets down), runs nothing queued after that, and
//     joins every worker.
// Invariants: workers() <= max_workers; a worker that retired is joined by
// the next submit() or by stop() (never by itself). Control path only: a
// mutex and a condition variable, std::function tasks.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <mutex>
#include <thread>

namespace uroce::daemon {

struct WorkerPoolStats {
  std::size_t workers = 0;    // threads alive
  std::size_t idle = 0;       // of them waiting for a task
  std::size_t queued = 0;     // tasks waiting for a worker
  std::uint64_t started = 0;  // threads ever started
  std::uint64_t retired = 0;  // threads that exited after idle_retire
  std::uint64_t tasks = 0;    // tasks ever submitted
};

struct WorkerPoolConfig {
  std::size_t max_workers = 256;
  std::size_t keep_idle = 4;
  std::chrono::milliseconds idle_retire{30'000};
  // Run first by every new worker (the daemon's CPU affinity); may be empty.
  std::function<void()> on_start;
};

class WorkerPool {
 public:
  explicit WorkerPool(WorkerPoolConfig config);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Runs `task` on a worker. False (the task dropped) after stop().
  bool submit(std::function<void()> task);
  // Idempotent. Waits for the running tasks, drops the queued ones.
  void stop();
  WorkerPoolStats stats() const;
  // stop() has begun.
  bool stopping() const {
    std::lock_guard<std::mutex> lk(mu_);
    return stopping_;
  }

 private:
  struct Worker {
    std::thread thread;
    bool exited = false;  // under mu_: the thread returned or is returning
  };
  void work(std::list<Worker>::iterator self);
  // Joins and erases exited workers; called without mu_ held.
  void join_exited();

  const WorkerPoolConfig config_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  std::list<Worker> workers_;
  std::size_t alive_ = 0;  // workers not exited
  std::size_t idle_ = 0;
  std::uint64_t started_ = 0, retired_ = 0, tasks_ = 0;
  bool stopping_ = false;
};

}  // namespace uroce::daemon
