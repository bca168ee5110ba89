#include "datapath/engine/mailbox.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

namespace uroce::engine {
namespace {

// An engine thread that opens `m`, serves its calls while `may_serve()`
// holds, and closes it when the object goes.
class ServingThread {
 public:
  ServingThread(Mailbox& m, std::function<bool()> may_serve)
      : thread_([this, &m, may_serve = std::move(may_serve)] {
          id_ = std::this_thread::get_id();
          m.open();
          opened_.store(true);
          while (!stop_.load()) {
            if (may_serve() && m.pending()) m.serve();
          }
          m.close();
        }) {
    while (!opened_.load()) std::this_thread::yield();
  }
  ~ServingThread() {
    stop_.store(true);
    thread_.join();
  }
  std::thread::id id() const { return id_; }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<bool> opened_{false};
  std::thread::id id_;
  std::thread thread_;
};

TEST(Mailbox_Call, InlineWhileClosed) {
  Mailbox m;
  int x = 0;
  m.call([&] { x = 1; });
  EXPECT_EQ(x, 1);
  EXPECT_FALSE(m.pending());
  EXPECT_EQ(m.served(), 0u);
}

TEST(Mailbox_Call, ServedByTheEngineThread) {
  Mailbox m;
  ServingThread engine(m, [] { return true; });
  std::thread::id ran_on;
  m.call([&] { ran_on = std::this_thread::get_id(); });
  EXPECT_EQ(ran_on, engine.id());
  EXPECT_EQ(m.served(), 1u);
}

TEST(Mailbox_CallSlow, WakesTheEngineWhenNotServedInTime) {
  // The engine thread serves only once slow() woke it: the call must run
  // slow() once after `after` and then be served.
  Mailbox m;
  std::atomic<bool> woken{false};
  ServingThread engine(m, [&] { return woken.load(); });
  int slow_runs = 0;
  bool ran = false;
  m.call([&] { ran = true; }, std::chrono::microseconds(100),
         [&] {
           ++slow_runs;
           woken.store(true);
         });
  EXPECT_TRUE(ran);
  EXPECT_EQ(slow_runs, 1);
}

TEST(Mailbox_CallSlow, NoWakeWhenServedInTime) {
  Mailbox m;
  ServingThread engine(m, [] { return true; });
  int slow_runs = 0;
  bool ran = false;
  // An hour: the serving thread spins, so only a stopped machine misses it.
  m.call([&] { ran = true; }, std::chrono::hours(1), [&] { ++slow_runs; });
  EXPECT_TRUE(ran);
  EXPECT_EQ(slow_runs, 0);
}

TEST(Mailbox_Call, FromTheEngineThreadRunsInline) {
  Mailbox m;
  m.open();
  int x = 0;
  m.call([&] { x = 2; });  // would deadlock if queued
  EXPECT_EQ(x, 2);
  m.close();
}

TEST(Mailbox_Close, ServesAPendingCall) {
  Mailbox m;
  std::atomic<bool> opened{false};
  std::atomic<bool> may_close{false};
  std::thread engine([&] {
    m.open();
    opened.store(true);
    while (!m.pending()) std::this_thread::yield();
    while (!may_close.load()) std::this_thread::yield();
    m.close();  // no serve() in the loop: close must run it
  });
  while (!opened.load()) std::this_thread::yield();
  int x = 0;
  std::thread caller([&] { m.call([&] { x = 3; }); });
  may_close.store(true);
  caller.join();
  engine.join();
  EXPECT_EQ(x, 3);
  EXPECT_EQ(m.served(), 1u);
}

}  // namespace
}  // namespace uroce::engine
