// How other threads reach the engine lcore: one pending closure at a time,
// run by the engine between two iterations.
//
//   call(fn)    any thread: hands `fn` to the engine and blocks (condition
//               variable) until the engine ran it. Callers queue behind one
//               another (one pending closure). While the engine is not
//               running (before open(), after close()) and on the engine
//               thread itself, fn runs inline in the caller.
//   call(fn, after, slow)  the same, and if fn has not run within `after`,
//               calls slow() once (under mu_, so it must not call back into
//               the mailbox) and waits on: the engine's way to wake a
//               thread that sleeps and would otherwise serve fn late.
//   pending()   engine thread, once per iteration: one acquire load of an
//               atomic flag. No lock is taken unless a call is waiting, so
//               the packet path never touches the mutex.
//   serve()     engine thread: runs the pending closure (under the mutex,
//               which its caller is not holding: it sleeps in wait()).
//   open()/close()  engine thread, around its loop; close() serves a call
//               that arrived meanwhile, so no caller is left waiting.
//
// Memory order: a caller publishes fn_ under mu_ and then sets pending_
// (release); the engine's acquire load sees pending_ and then takes mu_
// before reading fn_, so fn_ is always visible. Everything fn does happens
// before call() returns (mu_ + condition variable), and everything the engine
// did before serve() happens before fn runs: fn sees the engine's state as of
// the end of an iteration.
//
// A closure must not call call() on the same mailbox from another thread and
// wait for it (deadlock), nor throw.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace uroce::engine {

class Mailbox {
 public:
  void call(const std::function<void()>& fn) {
    call(fn, std::chrono::nanoseconds::max(), [] {});
  }

  template <class Slow>
  void call(const std::function<void()>& fn, std::chrono::nanoseconds after, Slow&& slow) {
    if (std::this_thread::get_id() == engine_thread_.load(std::memory_order_acquire)) {
      fn();
      return;
    }
    std::lock_guard<std::mutex> one(callers_);
    std::unique_lock<std::mutex> lk(mu_);
    if (!running_) {
      // Holding mu_ keeps open() from starting the loop meanwhile.
      fn();
      return;
    }
    fn_ = &fn;
    done_ = false;
    pending_.store(true, std::memory_order_release);
    const auto served = [this] { return done_; };
    if (after != std::chrono::nanoseconds::max() && !cv_.wait_for(lk, after, served)) slow();
    cv_.wait(lk, served);
  }

  bool pending() const { return pending_.load(std::memory_order_acquire); }

  // Runs the pending closure, if any; true when one ran.
  bool serve() {
    std::lock_guard<std::mutex> lk(mu_);
    return serve_locked();
  }

  void open() {
    std::lock_guard<std::mutex> lk(mu_);
    running_ = true;
    engine_thread_.store(std::this_thread::get_id(), std::memory_order_release);
  }
  void close() {
    std::lock_guard<std::mutex> lk(mu_);
    serve_locked();
    running_ = false;
    engine_thread_.store(std::thread::id{}, std::memory_order_release);
  }

  // Closures run by serve() (engine thread or under the lock).
  std::uint64_t served() const { return served_; }

 private:
  bool serve_locked() {
    if (!pending_.load(std::memory_order_relaxed)) return false;
    (*fn_)();
    fn_ = nullptr;
    ++served_;
    pending_.store(false, std::memory_order_relaxed);
    done_ = true;
    cv_.notify_all();
    return true;
  }

  std::mutex callers_;  // serialises callers: one pending closure
  std::mutex mu_;       // guards fn_, done_, running_
  std::condition_variable cv_;
  std::atomic<bool> pending_{false};
  std::atomic<std::thread::id> engine_thread_{};
  const std::function<void()>* fn_ = nullptr;
  bool done_ = false;
  bool running_ = false;
  std::uint64_t served_ = 0;
};

}  // namespace uroce::engine
