#include "apps/uroced/worker_pool.h"

#include <cassert>
#include <utility>

namespace uroce::daemon {

WorkerPool::WorkerPool(WorkerPoolConfig config) : config_(std::move(config)) {
  assert(config_.max_workers > 0);
}

WorkerPool::~WorkerPool() { stop(); }

bool WorkerPool::submit(std::function<void()> task) {
  join_exited();
  std::lock_guard<std::mutex> lk(mu_);
  if (stopping_) return false;
  queue_.push_back(std::move(task));
  ++tasks_;
  // Every waiting worker will take one queued task: start a new worker only
  // when the queue outgrows them.
  if (queue_.size() <= idle_ || alive_ >= config_.max_workers) {
    cv_.notify_one();
    return true;
  }
  auto it = workers_.emplace(workers_.end());
  ++alive_;
  ++started_;
  it->thread = std::thread([this, it] { work(it); });
  return true;
}

void WorkerPool::work(std::list<Worker>::iterator self) {
  if (config_.on_start) config_.on_start();
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    if (!queue_.empty() && !stopping_) {
      std::function<void()> task = std::move(queue_.front());
      queue_.pop_front();
      lk.unlock();
      task();
      task = nullptr;  // what it captured goes before the worker waits
      lk.lock();
      continue;
    }
    if (stopping_) break;
    ++idle_;
    const bool woken =
        cv_.wait_for(lk, config_.idle_retire, [this] { return stopping_ || !queue_.empty(); });
    --idle_;
    if (!woken && idle_ >= config_.keep_idle) {
      ++retired_;
      break;
    }
  }
  self->exited = true;
  --alive_;
}

void WorkerPool::join_exited() {
  std::list<Worker> done;
  {
    std::lock_guard<std::mutex> lk(mu_);
    for (auto it = workers_.begin(); it != workers_.end();) {
      auto next = std::next(it);
      if (it->exited) done.splice(done.end(), workers_, it);
      it = next;
    }
  }
  for (Worker& w : done) w.thread.join();
}

void WorkerPool::stop() {
  std::list<Worker> all;
  {
    std::lock_guard<std::mutex> lk(mu_);
    stopping_ = true;
    queue_.clear();
    cv_.notify_all();
    all.splice(all.end(), workers_);
  }
  for (Worker& w : all) {
    if (w.thread.joinable()) w.thread.join();
  }
}

WorkerPoolStats WorkerPool::stats() const {
  std::lock_guard<std::mutex> lk(mu_);
  return {alive_, idle_, queue_.size(), started_, retired_, tasks_};
}

}  // namespace uroce::daemon
