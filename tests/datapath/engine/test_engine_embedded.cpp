// Engine (engine.h) in embedded mode: the application's threads driving
// it (drive, drive_post), the progress thread (run_progress) and control
// calls beside it. The daemon's loop is in test_engine.cpp.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "datapath/engine/engine.h"
#include "datapath/engine/vnic/all.h"
#include "tests/datapath/engine/engine_test_clocks.h"
#include "tests/datapath/engine/vnic_test_support.h"

namespace uroce::engine::test {
// A port adapter over the simulated link whose end-of-iteration flush
// keeps its burst whenever the test says (as EthPortIo's ACK hold does).
class HoldingSimPortIo : public SimPortIo {
 public:
  using SimPortIo::SimPortIo;
  bool held = false;
  bool tx_held() const { return held; }
};
}  // namespace uroce::engine::test

namespace uroce::engine {
// Made by the engine library (vnic_sim.cpp), not here.
extern template class Vnic<SimPortIo>;
template class Vnic<test::HoldingSimPortIo>;
}  // namespace uroce::engine

namespace uroce::engine::test {
namespace {

// The engine's counters, read by the calling thread as the engine's owner
// (an inline call() once no other thread runs the engine).
template <class E>
EngineRunCounters counters_now(E& e) {
  EngineRunCounters c;
  e.call([&] { c = e.counters(); });
  return c;
}

// Sleeps for real (the progress thread's windows are real time) and counts
// the sleeps and naps; the length of the last nap asked for, if wanted.
struct CountingNanoSleeper {
  std::atomic<std::uint64_t>* sleeps;
  std::atomic<TimeNs>* last_nap = nullptr;
  void sleep(TimeNs ns) {
    sleeps->fetch_add(1);
    NanoSleeper{}.sleep(ns);
  }
  void yield() { NanoSleeper{}.yield(); }
  bool switched_out() { return false; }
  void nap(TimeNs ns, std::atomic<std::uint32_t>& word, std::uint32_t seen) {
    sleeps->fetch_add(1);
    if (last_nap != nullptr) last_nap->store(ns);
    NanoSleeper{}.nap(ns, word, seen);
  }
  void wake(std::atomic<std::uint32_t>& word) { NanoSleeper{}.wake(word); }
};

TEST(Engine_Drive, RunsOneIterationWhenFree) {
  VirtualClock clock;
  Engine<SimPortIo, VirtualClock> e(EngineConfig{}, clock);
  e.drive();
  e.drive();
  EXPECT_EQ(e.counters().iterations, 2u);
}

TEST(Engine_DrivePost, APostWithinPostBatchNsOfTheLastDrivingPostWaits) {
  VirtualClock clock(10 * kNsPerUs);
  EngineConfig cfg;
  Engine<SimPortIo, VirtualClock> e(cfg, clock);
  e.drive_post();  // the first post after a pause: at once
  EXPECT_EQ(e.counters().iterations, 1u);
  clock.advance_by(cfg.post_batch_ns - 1);
  e.drive_post();  // its WQEs wait for the next poll or a later post
  EXPECT_EQ(e.counters().iterations, 1u);
  EXPECT_EQ(e.posts_batched(), 1u);
  e.drive();  // a poll always drives
  EXPECT_EQ(e.counters().iterations, 2u);
  EXPECT_EQ(e.post_windows_widened(), 0u);  // the iteration took no time
  clock.advance_by(1);
  e.drive_post();  // post_batch_ns after the last driving post
  EXPECT_EQ(e.counters().iterations, 3u);
  EXPECT_EQ(e.posts_batched(), 1u);
}

// A clock that moves on every read, as a real one does while an iteration
// runs: each read returns the time and then advances it by `step`.
class TickingClock {
 public:
  TickingClock(TimeNs start, TimeNs step) : now_(start), step_(step) {}
  TimeNs now() const {
    const TimeNs t = now_;
    now_ += step_;
    return t;
  }
  void advance_by(TimeNs d) { now_ += d; }

 private:
  mutable TimeNs now_;
  TimeNs step_;
};

TEST(Engine_DrivePost, WaitsTwiceAsLongAsAnIterationThatOutlastsTheWindow) {
  EngineConfig cfg;
  cfg.tx_burst_syscall = true;
  // Each clock read takes three quarters of the window: the driving post's
  // iteration (its read, at least one inside, one at its end) outlasts
  // post_batch_ns, as a TX burst that is a system call can.
  const TimeNs step = cfg.post_batch_ns * 3 / 4;
  TickingClock clock(10 * kNsPerUs, step);
  Engine<SimPortIo, TickingClock> e(cfg, clock);
  e.drive_post();
  EXPECT_EQ(e.counters().iterations, 1u);
  EXPECT_EQ(e.post_windows_widened(), 1u);
  // The next post comes one read after the iteration's end: more than
  // post_batch_ns after the driving post, less than twice the iteration.
  e.drive_post();
  EXPECT_EQ(e.counters().iterations, 1u);
  EXPECT_EQ(e.posts_batched(), 1u);
  // Once the application stops posting for a while, a post drives again.
  clock.advance_by(100 * step);
  e.drive_post();
  EXPECT_EQ(e.counters().iterations, 2u);
  EXPECT_EQ(e.posts_batched(), 1u);
}

TEST(Engine_DrivePost, WidensTheWindowToEightWindowsAtMost) {
  EngineConfig cfg;
  cfg.tx_burst_syscall = true;
  // Every clock read takes 100 windows: the iteration looks interrupted for
  // a long time, and the window still ends 8 windows after the post.
  TickingClock clock(10 * kNsPerUs, 100 * cfg.post_batch_ns);
  Engine<SimPortIo, TickingClock> e(cfg, clock);
  e.drive_post();
  EXPECT_EQ(e.post_windows_widened(), 1u);
  e.drive_post();  // read 300 windows after the first post's read
  EXPECT_EQ(e.counters().iterations, 2u);
  EXPECT_EQ(e.posts_batched(), 0u);
}

TEST(Engine_DrivePost, KeepsTheWindowAfterALongIterationWithoutSyscallBursts) {
  EngineConfig cfg;
  TickingClock clock(10 * kNsPerUs, cfg.post_batch_ns * 3 / 4);
  Engine<SimPortIo, TickingClock> e(cfg, clock);
  e.drive_post();
  e.drive_post();  // post_batch_ns after the driving post: drives
  EXPECT_EQ(e.counters().iterations, 2u);
  EXPECT_EQ(e.posts_batched(), 0u);
  EXPECT_EQ(e.post_windows_widened(), 0u);
}

TEST(Engine_Drive, SkipsWhileTheProgressThreadOwnsTheEngine) {
  SteadyClock clock;
  EngineConfig cfg;
  cfg.mode = PollMode::kBusy;
  Engine<SimPortIo, SteadyClock> e(cfg, clock);
  std::atomic<bool> stop{false};
  std::thread progress([&] { e.run_progress(stop); });
  // Until the thread serves calls, call() runs closures inline.
  for (std::uint64_t seen = 0; seen == 0;) {
    e.call([&] { seen = e.counters().iterations; });
  }
  // A closure runs inside the progress thread's iteration, which owns the
  // engine: a drive() meanwhile must not run one of its own.
  // The counter is read on the owner, before and after the drive().
  std::atomic<bool> inside{false}, release{false};
  std::uint64_t before = 0, after = 0;
  std::thread control([&] {
    e.call([&] {
      before = e.counters().iterations;
      inside = true;
      while (!release) std::this_thread::yield();
      after = e.counters().iterations;
    });
  });
  while (!inside) std::this_thread::yield();
  EXPECT_EQ(e.drive(), 0u);
  release = true;
  control.join();
  stop = true;
  progress.join();
  EXPECT_EQ(after, before);
}

TEST(Engine_RunProgress, NapsWhileTheApplicationDrivesAndServesCalls) {
  SteadyClock clock;
  std::atomic<std::uint64_t> sleeps{0};
  EngineConfig cfg;
  cfg.mode = PollMode::kBusy;  // no backoff sleeps: every sleep is a nap
  Engine<SimPortIo, SteadyClock, CountingNanoSleeper> e(cfg, clock, CountingNanoSleeper{&sleeps});
  std::atomic<bool> stop{false};
  std::thread progress([&] { e.run_progress(stop); });
  // The application polls until the thread has napped and a control call
  // made meanwhile was served (by the application's iterations or the
  // thread's); on a loaded machine either may take a while, so the bound
  // is there only to end a broken run.
  std::atomic<bool> called{false};
  std::thread control([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    e.call([&] { called = true; });
  });
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while ((!called.load() || sleeps.load() == 0) && std::chrono::steady_clock::now() < end) {
    e.drive();
  }
  control.join();
  stop = true;
  progress.join();
  EXPECT_TRUE(called.load());
  const EngineRunCounters c = counters_now(e);
  EXPECT_GT(c.app_quiet_sleeps, 0u);
  EXPECT_EQ(sleeps.load(), c.app_quiet_sleeps);
}

TEST(Engine_RunProgress, WakeProgressEndsALongNapAtOnce) {
  SteadyClock clock;
  std::atomic<std::uint64_t> sleeps{0};
  std::atomic<TimeNs> last_nap{0};
  EngineConfig cfg;
  cfg.mode = PollMode::kBusy;
  cfg.app_nap_max_ns = 60 * kNsPerSec;
  Engine<SimPortIo, SteadyClock, CountingNanoSleeper> e(cfg, clock,
                                                        CountingNanoSleeper{&sleeps, &last_nap});
  std::atomic<bool> stop{false};
  std::thread progress([&] { e.run_progress(stop); });
  // The application drives until the thread has started a nap of 300 ms
  // or more (20 us doubling while the application keeps driving), then
  // says it stops (as arming a CQ does): a control call then must not wait
  // for the nap to end.
  while (last_nap.load() < 300 * kNsPerMs) e.drive();
  const auto t0 = std::chrono::steady_clock::now();
  e.wake_progress();
  e.call([] {});
  const auto waited = std::chrono::steady_clock::now() - t0;
  stop = true;
  progress.join();
  EXPECT_LT(waited, std::chrono::milliseconds(100));
}

TEST(Engine_RunProgress, RunsTheEngineWhileTheApplicationDoesNotPoll) {
  SteadyClock clock;
  std::atomic<std::uint64_t> sleeps{0};
  EngineConfig cfg;
  cfg.mode = PollMode::kBusy;
  Engine<SimPortIo, SteadyClock, CountingNanoSleeper> e(cfg, clock, CountingNanoSleeper{&sleeps});
  std::atomic<bool> stop{false};
  std::thread progress([&] { e.run_progress(stop); });
  // A call every 200 us (an application that sleeps between messages):
  // the progress thread keeps running the engine. A window of the thread's
  // holds 16 calls only if the thread was descheduled for over 3 ms, which
  // a loaded machine may do; the thread then naps, but finds the
  // application stopped within a few naps (20, 40, 80 us need no call,
  // then one per 50 us), never naps on for the rest of the run.
  constexpr int kCalls = 100;
  for (int i = 0; i < kCalls; ++i) {
    e.drive();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  stop = true;
  progress.join();
  const EngineRunCounters c = counters_now(e);
  EXPECT_LE(c.app_quiet_sleeps, 5 * c.app_stopped);
  EXPECT_EQ(sleeps.load(), c.app_quiet_sleeps);
  EXPECT_GT(c.iterations, 100u * kCalls);
}

// A progress thread's naps on a VirtualClock, with the application played
// by `app`: during each of the first `active_naps` naps it drives the
// engine at the nap's start; backoff sleeps before those naps drive too
// (the application starting), and the first backoff sleep after them stops
// the thread. Everything runs on the progress thread: no timing.
struct ScriptedSleeper {
  VirtualClock* clock;
  const std::function<void()>* app;
  std::atomic<bool>* stop;
  int active_naps;
  int* naps;
  void sleep(TimeNs ns) {
    if (*naps < active_naps) {
      (*app)();
    } else {
      stop->store(true);
    }
    clock->advance_by(ns);
  }
  void yield() {}
  bool switched_out() { return false; }
  void nap(TimeNs ns, std::atomic<std::uint32_t>&, std::uint32_t) {
    if (++*naps <= active_naps) (*app)();
    clock->advance_by(ns);
  }
  void wake(std::atomic<std::uint32_t>&) {}
};

TEST(Engine_RunProgress, NoticesOneNapLaterThatTheApplicationStopped) {
  VirtualClock clock(kNsPerSec);
  std::atomic<bool> stop{false};
  int naps = 0;
  std::function<void()> app;
  EngineConfig cfg;
  cfg.idle_spins = 0;  // every idle iteration backs off: the script runs
  cfg.progress_spin_ns = 0;
  cfg.app_quiet_ns = 1 * kNsPerMs;  // naps of 1, 2, 4 and 8 ms: above kDroveRecentNs
  cfg.app_nap_max_ns = 1000 * kNsPerMs;
  Engine<SimPortIo, VirtualClock, ScriptedSleeper> e(cfg, clock,
                                                     ScriptedSleeper{&clock, &app, &stop, 4,
                                                                     &naps});
  app = [&] {
    for (int i = 0; i < 32; ++i) e.drive();
  };
  e.run_progress(stop);
  // The fourth nap's calls all came at its start: after it the thread must
  // run the engine, not nap a fifth time on the strength of those calls
  // (the clock moves only in sleeps and naps, so the check after a nap
  // sees exactly the nap's length pass).
  EXPECT_EQ(naps, 4);
  EXPECT_EQ(e.counters().app_quiet_sleeps, 4u);
  // Each nap's calls came at its start, so each check after a nap found
  // the application stopped (the backoff sleep that followed restarted it).
  EXPECT_EQ(e.counters().app_stopped, 4u);
  EXPECT_EQ(e.counters().naps_woken, 0u);
}

// As ScriptedSleeper, but the application drives near each nap's end (so
// that after the nap it still counts as driving), and the naps' lengths
// are recorded.
struct LateAppSleeper {
  VirtualClock* clock;
  const std::function<void()>* app;
  std::atomic<bool>* stop;
  int active_naps;
  std::vector<TimeNs>* naps;
  void sleep(TimeNs ns) {
    if (static_cast<int>(naps->size()) < active_naps) {
      (*app)();
    } else {
      stop->store(true);
    }
    clock->advance_by(ns);
  }
  void yield() {}
  bool switched_out() { return false; }
  void nap(TimeNs ns, std::atomic<std::uint32_t>&, std::uint32_t) {
    naps->push_back(ns);
    clock->advance_by(ns - kLate);
    if (static_cast<int>(naps->size()) <= active_naps) (*app)();
    clock->advance_by(kLate);
  }
  void wake(std::atomic<std::uint32_t>&) {}
  static constexpr TimeNs kLate = 100;
};

// An engine over HoldingSimPortIo on a VirtualClock whose progress thread
// runs on the calling thread with LateAppSleeper: naps of app_quiet_ns (1
// ms) doubling to `nap_max`, held_nap_max_ns 1.5 ms; `app` (set by the test)
// drives it during the first `active_naps` naps.
struct ScriptedHoldEngine {
  port::SimLink link{port::SimLinkConfig::symmetric(port::SimDirectionConfig{}, 9)};
  BasicHost<HoldingSimPortIo> a{link, 0, kMacA, kIpA};
  VirtualClock clock{kNsPerSec};
  std::atomic<bool> stop{false};
  std::vector<TimeNs> naps;
  std::function<void()> app;
  Engine<HoldingSimPortIo, VirtualClock, LateAppSleeper> e;

  ScriptedHoldEngine(TimeNs nap_max, int active_naps)
      : e(config(nap_max), clock, LateAppSleeper{&clock, &app, &stop, active_naps, &naps}) {
    e.add_vnic(&a.vnic);
  }
  static EngineConfig config(TimeNs nap_max) {
    EngineConfig cfg;
    cfg.idle_spins = 0;  // every idle iteration backs off: the script runs
    cfg.progress_spin_ns = 0;
    cfg.app_quiet_ns = 1 * kNsPerMs;
    cfg.app_nap_max_ns = nap_max;
    cfg.held_nap_max_ns = 1500 * kNsPerUs;
    return cfg;
  }
};

TEST(Engine_RunProgress, NapsShortWhileBurstsAreKeptAndRunsAnIterationAfterEach) {
  ScriptedHoldEngine s(4 * kNsPerMs, 6);
  // The application's iterations keep their bursts in its second and third
  // naps only, and it stops calling after the sixth.
  s.app = [&] {
    s.a.io.held = s.naps.size() == 2 || s.naps.size() == 3;
    for (int i = 0; i < 200; ++i) s.e.drive();
  };
  s.e.run_progress(s.stop);
  // 1 ms, doubled to 2 ms: nothing kept before either began (the burst
  // kept near the second's end does not wake it: it ends within
  // held_nap_max_ns). Then 1.5 ms while the last burst kept is less than
  // app_nap_max_ns (4 ms) old, and the doubled nap (4 ms) after that.
  const std::vector<TimeNs> want{1 * kNsPerMs,    2 * kNsPerMs,    1500 * kNsPerUs, 1500 * kNsPerUs,
                                 1500 * kNsPerUs, 1500 * kNsPerUs, 4 * kNsPerMs};
  EXPECT_EQ(s.naps, want);
  // An iteration after each nap whose last iteration kept its burst (the
  // second and third), none once the application's iterations sent theirs.
  EXPECT_EQ(s.e.counters().held_runs, 2u);
  EXPECT_EQ(s.e.counters().held_wakes, 0u);
  EXPECT_EQ(s.e.counters().app_stopped, 1u);
}

TEST(Engine_HeldWithin, CountsAStampLaterThanNow) {
  using E = Engine<SimPortIo, VirtualClock>;
  EXPECT_TRUE(E::held_within(1'000, 900, 10));  // another thread's later clock read
  EXPECT_TRUE(E::held_within(1'000, 1'009, 10));
  EXPECT_FALSE(E::held_within(1'000, 1'010, 10));
  EXPECT_FALSE(E::held_within(0, 5, 10));  // nothing kept yet
}

TEST(Engine_RunProgress, NapsAsLongAsEverWhenNothingWasKept) {
  ScriptedHoldEngine s(1000 * kNsPerMs, 4);
  s.app = [&] {
    for (int i = 0; i < 200; ++i) s.e.drive();
  };
  s.e.run_progress(s.stop);
  const std::vector<TimeNs> want{1 * kNsPerMs, 2 * kNsPerMs, 4 * kNsPerMs, 8 * kNsPerMs,
                                 16 * kNsPerMs};
  EXPECT_EQ(s.naps, want);
  EXPECT_EQ(s.e.counters().held_runs, 0u);
}

// Two hosts on a simulated link, B's Vnic in an engine whose progress
// thread runs on the calling thread with LateAppSleeper (naps of 1 ms
// doubling, no longest nap in reach); the application drives B during the
// first four naps and, at the end of the fourth, takes A's SEND in an
// iteration of its own (the last call it makes).
struct CutThenStop {
  port::SimLink link{link_1us(0, 5)};
  Host a{link, 0, kMacA, kIpA};
  Host b;
  RcQpPair p;
  VirtualClock clock{kNsPerSec};
  std::atomic<bool> stop{false};
  std::vector<TimeNs> naps;
  std::function<void()> app;
  Engine<SimPortIo, VirtualClock, LateAppSleeper> e;

  // Set by a call made right after the cut (call_after): whether B had
  // sent its ACK when the call ran.
  bool acked_before_call = false;

  explicit CutThenStop(bool cut, bool call_after = false)
      : b(link, 1, config(cut)),
        e(ScriptedHoldEngine::config(1000 * kNsPerMs), clock,
          LateAppSleeper{&clock, &app, &stop, 4, &naps}) {
    e.add_vnic(&b.vnic);
    p.open(a, b);
    p.bqp->post_recv(1, {b.sge(0, 64)});
    app = [this, call_after] {
      for (int i = 0; i < 200; ++i) e.drive();
      if (naps.size() < 4) return;
      p.aqp->post_send(send_wqe(2), {a.sge(0, 64)});
      a.vnic.poll(clock.now());
      clock.advance_by(2 * kNsPerUs);  // past the link's 1 us
      e.drive();
      if (!call_after) return;
      const std::uint64_t tx = b.vnic.counters().tx_frames;
      e.call([&] { acked_before_call = b.vnic.counters().tx_frames > tx; });
    };
  }
  static VnicConfig config(bool cut) {
    VnicConfig c = Host::config(kMacB, kIpB, 1500);
    c.cut_on_completion = cut;
    return c;
  }
};

TEST(Engine_RunProgress, RunsTheIterationACutLeftAfterTheNapWithoutShorteningIt) {
  CutThenStop s(true);
  s.e.run_progress(s.stop);
  // The application's last call ended after its RX phase: the receive
  // completion written, the ACK owed left to the next iteration.
  EXPECT_EQ(s.b.vnic.counters().iterations_cut, 1u);
  ASSERT_EQ(s.p.brcq->poll().size(), 1u);
  // The fifth nap ran its full length (a cut wakes nothing and shortens
  // nothing), and an iteration followed it for the cut one.
  const std::vector<TimeNs> want{1 * kNsPerMs, 2 * kNsPerMs, 4 * kNsPerMs, 8 * kNsPerMs,
                                 16 * kNsPerMs};
  EXPECT_EQ(s.naps, want);
  EXPECT_EQ(s.e.counters().cut_runs, 1u);
  EXPECT_EQ(s.e.counters().held_runs, 0u);
  EXPECT_EQ(s.e.counters().naps_woken, 0u);
  // That iteration sent the ACK: A's SEND completes.
  s.clock.advance_by(2 * kNsPerUs);
  s.a.vnic.poll(s.clock.now());
  const auto sent = s.p.ascq->poll();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].wr_id, 2u);
  EXPECT_EQ(st(sent[0]), WcStatus::kSuccess);
}

TEST(Engine_Call, RunsInlineAfterThePumpACutLeft) {
  CutThenStop s(true, true);
  s.e.run_progress(s.stop);
  EXPECT_EQ(s.b.vnic.counters().iterations_cut, 1u);
  EXPECT_EQ(s.e.counters().calls_inline, 1u);
  // The call (it might have destroyed the QP) found the ACK sent; no run
  // was left for the nap after it.
  EXPECT_TRUE(s.acked_before_call);
  EXPECT_EQ(s.e.counters().cut_runs, 1u);
}

TEST(Engine_RunProgress, NoCutRunWithCutOnCompletionOff) {
  CutThenStop s(false);
  s.e.run_progress(s.stop);
  EXPECT_EQ(s.b.vnic.counters().iterations_cut, 0u);
  ASSERT_EQ(s.p.brcq->poll().size(), 1u);
  EXPECT_EQ(s.e.counters().cut_runs, 0u);
  // The application's own iteration sent the ACK.
  s.clock.advance_by(2 * kNsPerUs);
  s.a.vnic.poll(s.clock.now());
  EXPECT_EQ(s.p.ascq->poll().size(), 1u);
}

// A progress thread's nap that lasts until wake_progress ends it (or the
// test does): the thread is known to nap, and known to have been woken.
struct BlockingNaps {
  std::mutex mu;
  std::condition_variable cv;
  bool napping = false;
  int wakes = 0;
  TimeNs last_nap_ns = 0;  // the length the last nap asked for
};
struct BlockingSleeper {
  BlockingNaps* b;
  void sleep(TimeNs) {}
  void yield() {}
  bool switched_out() { return false; }
  void nap(TimeNs ns, std::atomic<std::uint32_t>& word, std::uint32_t seen) {
    std::unique_lock<std::mutex> lk(b->mu);
    b->napping = true;
    b->last_nap_ns = ns;
    b->cv.notify_all();
    b->cv.wait(lk, [&] { return word.load() != seen; });
    b->napping = false;
  }
  void wake(std::atomic<std::uint32_t>&) {
    std::lock_guard<std::mutex> lk(b->mu);
    ++b->wakes;
    b->cv.notify_all();
  }
};

// Drives `e` until its progress thread naps (the application counts as
// driving it).
template <class E>
void drive_until_nap(E& e, BlockingNaps& b) {
  for (;;) {
    e.drive();
    std::lock_guard<std::mutex> lk(b.mu);
    if (b.napping) return;
  }
}

// An engine in busy mode whose progress thread runs and naps until woken,
// the application having driven it until the first nap.
struct NappingEngine {
  SteadyClock clock;
  BlockingNaps b;
  Engine<SimPortIo, SteadyClock, BlockingSleeper> e{busy(), clock, BlockingSleeper{&b}};
  std::atomic<bool> stop{false};
  std::thread progress{[this] { e.run_progress(stop); }};
  NappingEngine() { drive_until_nap(e, b); }
  static EngineConfig busy() {
    EngineConfig cfg;
    cfg.mode = PollMode::kBusy;
    return cfg;
  }
  void join() {
    stop = true;
    e.wake_progress();
    progress.join();
  }
};

TEST(Engine_RunProgress, ABurstKeptDuringALongNapWakesIt) {
  port::SimLink link(port::SimLinkConfig::symmetric(port::SimDirectionConfig{}, 9));
  BasicHost<HoldingSimPortIo> a(link, 0, kMacA, kIpA);
  SteadyClock clock;
  BlockingNaps b;
  EngineConfig cfg;
  cfg.mode = PollMode::kBusy;
  // The first nap, 200 ms, begins after 200 ms of driving: far longer than
  // held_nap_max_ns, however slowly this thread gets to its next drive.
  cfg.app_quiet_ns = 200 * kNsPerMs;
  cfg.app_nap_max_ns = 400 * kNsPerMs;
  Engine<HoldingSimPortIo, SteadyClock, BlockingSleeper> e(cfg, clock, BlockingSleeper{&b});
  e.add_vnic(&a.vnic);
  std::atomic<bool> stop{false};
  std::thread progress([&] { e.run_progress(stop); });
  drive_until_nap(e, b);
  {
    std::lock_guard<std::mutex> lk(b.mu);
    EXPECT_EQ(b.last_nap_ns, cfg.app_quiet_ns);
    EXPECT_EQ(b.wakes, 0);
  }
  a.io.held = true;
  e.drive();  // keeps its burst: the nap must not run on
  {
    std::lock_guard<std::mutex> lk(b.mu);
    EXPECT_EQ(b.wakes, 1);
  }
  e.drive();  // a second burst kept is not a first: no second wake
  stop = true;
  e.wake_progress();
  progress.join();
  const EngineRunCounters c = counters_now(e);
  EXPECT_EQ(c.held_wakes, 1u);
}

TEST(Engine_Call, RunsInTheCallerWhileTheProgressThreadNaps) {
  NappingEngine n;
  auto& e = n.e;
  auto& b = n.b;
  std::thread::id ran_on;
  e.call([&] { ran_on = std::this_thread::get_id(); });
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  {
    std::lock_guard<std::mutex> lk(b.mu);
    EXPECT_TRUE(b.napping);  // the call did not need the thread
    EXPECT_EQ(b.wakes, 0);
  }
  n.join();
  const EngineRunCounters c = counters_now(e);
  EXPECT_EQ(c.calls_inline, 1u);
  EXPECT_EQ(c.call_wakes, 0u);
}

TEST(Engine_Call, WakesTheNappingThreadWhenNoIterationServesIt) {
  NappingEngine n;
  auto& e = n.e;
  auto& b = n.b;
  // One control call holds the engine (it runs in its caller) until a
  // second call, which finds the engine taken and nobody iterating, has
  // woken the napping thread; that thread then serves the second call.
  std::atomic<bool> first_inside{false};
  std::thread first([&] {
    e.call([&] {
      first_inside = true;
      std::unique_lock<std::mutex> lk(b.mu);
      b.cv.wait(lk, [&] { return b.wakes > 0; });
    });
  });
  while (!first_inside) std::this_thread::yield();
  bool served = false;
  e.call([&] { served = true; });
  first.join();
  EXPECT_TRUE(served);
  n.join();
  const EngineRunCounters c = counters_now(e);
  EXPECT_EQ(c.calls_inline, 1u);
  EXPECT_EQ(c.call_wakes, 1u);
  EXPECT_EQ(c.naps_woken, 1u);
}

}  // namespace
}  // namespace uroce::engine::test
