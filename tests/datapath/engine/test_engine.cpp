#include "datapath/engine/engine.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "datapath/engine/eth_port_io.h"
#include "datapath/engine/tsc_clock.h"
#include "tests/datapath/engine/vnic_test_support.h"

namespace uroce::engine {
// The daemon's instantiation, every member compiled.
template class Engine<EthPortIo, TscClock>;
}  // namespace uroce::engine

namespace uroce::engine::test {
namespace {

// A monotonic clock for threaded tests.
struct SteadyClock {
  TimeNs now() const {
    return static_cast<TimeNs>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
  }
};

// A clock that stops the engine after `limit` readings (one per iteration).
struct CountingClock {
  std::atomic<bool>* stop;
  std::uint64_t limit;
  std::uint64_t reads = 0;
  TimeNs t = 0;
  TimeNs now() {
    if (++reads >= limit) stop->store(true);
    return t += 100;
  }
};

// Records the sleeps, and each yield as a 0; `on_sleep` may act on the
// world (stop the engine, inject a frame).
struct RecordingSleeper {
  std::vector<TimeNs>* log;
  std::function<void(std::size_t)>* on_sleep;
  void sleep(TimeNs ns) {
    log->push_back(ns);
    if (on_sleep != nullptr && *on_sleep) (*on_sleep)(log->size());
  }
  void yield() { sleep(0); }
  void nap(TimeNs ns, std::atomic<std::uint32_t>&, std::uint32_t) { sleep(ns); }
  void wake(std::atomic<std::uint32_t>&) {}
};

// The engine's counters, read by the calling thread as the engine's owner
// (an inline call() once no other thread runs the engine).
template <class E>
EngineRunCounters counters_now(E& e) {
  EngineRunCounters c;
  e.call([&] { c = e.counters(); });
  return c;
}

TEST(Engine_Call, RunsInlineWhenNotRunning) {
  VirtualClock clock;
  Engine<SimPortIo, VirtualClock> e(EngineConfig{}, clock);
  const auto caller = std::this_thread::get_id();
  std::thread::id ran_on;
  e.call([&] { ran_on = std::this_thread::get_id(); });
  EXPECT_EQ(ran_on, caller);
  EXPECT_EQ(e.counters().calls, 0u);  // not served by an iteration
}

TEST(Engine_Call, FromOtherThreadsWhileRunSpins) {
  SteadyClock clock;
  EngineConfig cfg;
  cfg.mode = PollMode::kBusy;
  Engine<SimPortIo, SteadyClock> e(cfg, clock);
  std::atomic<bool> stop{false};
  std::thread::id engine_id;
  std::thread engine([&] {
    engine_id = std::this_thread::get_id();
    e.run(stop);
  });
  // Wait until the loop runs (a call served by an iteration counts).
  std::uint64_t seen_iterations = 0;
  while (seen_iterations == 0) {
    e.call([&] { seen_iterations = e.counters().iterations; });
  }
  // Engine-thread-only state touched from two control threads: no race
  // because every touch runs on the engine thread.
  std::uint64_t counter = 0;
  bool all_on_engine = true;
  auto worker = [&] {
    for (int i = 0; i < 500; ++i) {
      e.call([&] {
        ++counter;
        if (std::this_thread::get_id() != engine_id) all_on_engine = false;
      });
    }
  };
  std::thread t1(worker), t2(worker);
  t1.join();
  t2.join();
  std::uint64_t calls = 0;
  e.call([&] { calls = e.counters().calls; });
  stop.store(true);
  engine.join();
  EXPECT_EQ(counter, 1000u);
  EXPECT_TRUE(all_on_engine);
  EXPECT_GE(calls, 1000u);
  // Stopped: inline again.
  std::thread::id ran_on;
  e.call([&] { ran_on = std::this_thread::get_id(); });
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

#ifndef NDEBUG
// A Vnic operation called directly by a thread other than the one running
// the engine (instead of through call()) stops the program at its assert;
// the same operation through call() runs.
TEST(Engine_OwnerDeathTest, AVnicOperationOffTheEngineThreadAsserts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  port::SimLink link(port::SimLinkConfig::symmetric(port::SimDirectionConfig{}, 9));
  Host a(link, 0, kMacA, kIpA);
  SteadyClock clock;
  EngineConfig cfg;
  cfg.mode = PollMode::kBusy;
  Engine<SimPortIo, SteadyClock> e(cfg, clock);
  e.add_vnic(&a.vnic);
  auto direct_while_running = [&] {
    std::atomic<bool> stop{false};
    std::thread engine([&] { e.run(stop); });
    for (std::uint64_t seen = 0; seen == 0;) {
      e.call([&] { seen = e.counters().iterations; });
    }
    std::uint32_t qpn = 0;
    (void)a.vnic.alloc_qpn(&qpn);
    stop = true;
    engine.join();
  };
  EXPECT_DEATH(direct_while_running(), "owner_.here");
  std::atomic<bool> stop{false};
  std::thread engine([&] { e.run(stop); });
  std::uint32_t qpn = 0;
  int rc = -1;
  e.call([&] { rc = a.vnic.alloc_qpn(&qpn); });
  stop = true;
  engine.join();
  EXPECT_EQ(rc, 0);
  EXPECT_NE(qpn, 0u);
}
#endif

TEST(Engine_RunOnce, PollsEveryVnicWithOneTimestamp) {
  port::SimDirectionConfig d;
  d.propagation_ns = 1000;
  port::SimLink link(port::SimLinkConfig::symmetric(d, 9));
  Host a(link, 0, kMacA, kIpA);
  Host b(link, 1, kMacB, kIpB);
  VirtualClock clock(5000);
  Engine<SimPortIo, VirtualClock> e(EngineConfig{}, clock);
  e.add_vnic(&a.vnic);
  e.add_vnic(&b.vnic);
  EXPECT_EQ(e.vnic_count(), 2u);
  bool resolved = false;
  wire::MacAddr mac{};
  e.call([&] { resolved = a.vnic.resolve(kIpB, e.now(), &mac); });
  EXPECT_FALSE(resolved);
  for (int i = 0; i < 10; ++i) {
    e.run_once();
    EXPECT_EQ(a.vnic.last_now(), clock.now());
    EXPECT_EQ(b.vnic.last_now(), clock.now());
    clock.advance_by(500);
  }
  EXPECT_EQ(a.vnic.counters().iterations, 10u);
  EXPECT_EQ(b.vnic.counters().iterations, 10u);
  e.call([&] { resolved = a.vnic.resolve(kIpB, e.now(), &mac); });
  EXPECT_TRUE(resolved);
  EXPECT_EQ(mac, kMacB);
  EXPECT_EQ(e.counters().iterations, 10u);
}

TEST(Engine_Backoff, SleepsDoublingUpToMax) {
  std::atomic<bool> stop{false};
  VirtualClock clock;
  std::vector<TimeNs> log;
  std::function<void(std::size_t)> hook = [&](std::size_t n) {
    if (n == 6) stop.store(true);
  };
  EngineConfig cfg;
  cfg.mode = PollMode::kBackoff;
  cfg.backoff_max_us = 8;
  cfg.idle_spins = 3;
  using E = Engine<SimPortIo, VirtualClock, RecordingSleeper>;
  E e(cfg, clock, RecordingSleeper{&log, &hook});
  e.run(stop);
  const std::vector<TimeNs> want = {1000, 2000, 4000, 8000, 8000, 8000};
  EXPECT_EQ(log, want);
  EXPECT_EQ(e.counters().sleeps, 6u);
  EXPECT_EQ(e.counters().slept_ns, 31000u);
  EXPECT_EQ(e.counters().iterations, 3u + 6u);
  EXPECT_EQ(e.counters().idle_iterations, 9u);
}

TEST(Engine_Backoff, ResetsOnWork) {
  port::SimLink link(port::SimLinkConfig{});
  Host a(link, 0, kMacA, kIpA);
  port::SimPort peer(link, 1);
  std::atomic<bool> stop{false};
  VirtualClock clock;
  std::vector<TimeNs> log;
  // On the third sleep a frame arrives for the Vnic: the next iteration has
  // work and the backoff starts over.
  std::function<void(std::size_t)> hook = [&](std::size_t n) {
    if (n == 3) {
      const std::uint8_t junk[60] = {};
      EXPECT_TRUE(peer.tx(junk, clock.now()));
    }
    if (n == 5) stop.store(true);
  };
  EngineConfig cfg;
  cfg.backoff_max_us = 100;
  cfg.idle_spins = 2;
  using E = Engine<SimPortIo, VirtualClock, RecordingSleeper>;
  E e(cfg, clock, RecordingSleeper{&log, &hook});
  e.add_vnic(&a.vnic);
  e.run(stop);
  const std::vector<TimeNs> want = {1000, 2000, 4000, 1000, 2000};
  EXPECT_EQ(log, want);
  EXPECT_EQ(a.vnic.counters().rx_frames, 1u);
  EXPECT_EQ(a.vnic.counters().rx_parse_errors, 1u);
}

TEST(Engine_LoopHistograms, IntervalsAfterWorkAndAfterIdleIterations) {
  port::SimLink link(port::SimLinkConfig{});
  Host a(link, 0, kMacA, kIpA);
  port::SimPort peer(link, 1);
  VirtualClock clock(1000);
  Engine<SimPortIo, VirtualClock> e(EngineConfig{}, clock);
  e.add_vnic(&a.vnic);
  e.run_once();  // the first: no interval before it
  clock.advance_by(700);
  const std::uint8_t junk[60] = {};
  ASSERT_TRUE(peer.tx(junk, clock.now()));
  EXPECT_NE(e.run_once(), 0u);  // a frame: work; 700 ns after an idle one
  clock.advance_by(3000);
  EXPECT_EQ(e.run_once(), 0u);  // 3 us after the one with work
  clock.advance_by(100'000);
  e.run_once();  // away for 100 us after an idle one
  const LoopHistograms& h = e.loop_histograms();
  EXPECT_EQ(total(h.work_ns), 1u);
  EXPECT_EQ(h.work_ns[loop_bucket(3000)], 1u);
  EXPECT_EQ(total(h.idle_ns), 2u);
  EXPECT_EQ(h.idle_ns[loop_bucket(700)], 1u);
  EXPECT_EQ(h.idle_ns[loop_bucket(100'000)], 1u);
  EXPECT_EQ(total(h.oversleep_ns), 0u);
}

TEST(Engine_LoopHistograms, SleepsCountTheirLatenessOnly) {
  std::atomic<bool> stop{false};
  VirtualClock clock(1000);
  std::vector<TimeNs> log;
  // Every sleep ends 500 ns late; the fourth stops the engine.
  std::function<void(std::size_t)> hook = [&](std::size_t n) {
    clock.advance_by(log.back() + 500);
    if (n == 4) stop.store(true);
  };
  EngineConfig cfg;
  cfg.backoff_max_us = 8;
  cfg.idle_spins = 2;
  using E = Engine<SimPortIo, VirtualClock, RecordingSleeper>;
  E e(cfg, clock, RecordingSleeper{&log, &hook});
  e.run(stop);
  ASSERT_EQ(log.size(), 4u);
  const LoopHistograms& h = e.loop_histograms();
  // Three sleeps were followed by an iteration, each 500 ns late.
  EXPECT_EQ(total(h.oversleep_ns), 3u);
  EXPECT_EQ(h.oversleep_ns[loop_bucket(500)], 3u);
  // Every other interval followed an idle spin (the clock stood still).
  EXPECT_EQ(total(h.work_ns), 0u);
  EXPECT_EQ(total(h.idle_ns), e.counters().iterations - 1 - 3);
  EXPECT_EQ(h.idle_ns[0], total(h.idle_ns));
}

// A clock that moves `step` ns at every reading and stops the engine after
// `limit` readings; yields move it further (YieldSleeper).
struct SteppingClock {
  std::atomic<bool>* stop;
  std::uint64_t limit;
  TimeNs step = 100;
  std::uint64_t reads = 0;
  TimeNs t = 0;
  TimeNs now() {
    if (++reads >= limit) stop->store(true);
    return t += step;
  }
};

// Yields that last as long as `cost(n)` says for the n-th yield (from 0):
// a long one is a yield that ran another thread.
struct YieldSleeper {
  SteppingClock* clock;
  std::function<TimeNs(std::uint64_t)> cost;
  std::uint64_t n = 0;
  void sleep(TimeNs) { ADD_FAILURE() << "yield mode slept"; }
  void yield() { clock->t += cost(n++); }
  void nap(TimeNs, std::atomic<std::uint32_t>&, std::uint32_t) { ADD_FAILURE() << "napped"; }
  void wake(std::atomic<std::uint32_t>&) {}
};

EngineConfig yield_config() {
  EngineConfig cfg;
  cfg.mode = PollMode::kYield;
  cfg.yield_spins = 2;
  cfg.yield_probe_ns = 10 * kNsPerUs;
  cfg.yield_switch_ns = 1500;
  return cfg;
}

TEST(Engine_Yield, AloneProbesOncePerPeriod) {
  std::atomic<bool> stop{false};
  SteppingClock clock{&stop, 30000};
  using E = Engine<SimPortIo, SteppingClock, YieldSleeper>;
  E e(yield_config(), clock, YieldSleeper{&clock, [](std::uint64_t) { return TimeNs{300}; }});
  e.run(stop);
  // Nobody else wants the core: one probing yield per 10 us of idleness,
  // none of which ran anybody.
  const TimeNs period = 10 * kNsPerUs;
  EXPECT_GE(e.counters().yields, clock.t / (period + 1000) - 1);
  EXPECT_LE(e.counters().yields, clock.t / period + 1);
  EXPECT_EQ(e.counters().yields_switched, 0u);
  EXPECT_EQ(e.counters().sleeps, 0u);
  // An idle iteration that does not probe reads the clock once (run_once);
  // a probe reads it twice more, around its yield.
  EXPECT_EQ(clock.reads, e.counters().iterations + 2 * e.counters().yields);
  // The interval after a yield is not counted; every other one followed an
  // idle spin.
  const LoopHistograms& h = e.loop_histograms();
  EXPECT_EQ(total(h.idle_ns), e.counters().iterations - 1 - e.counters().yields);
  EXPECT_EQ(total(h.work_ns) + total(h.oversleep_ns), 0u);
}

TEST(Engine_Yield, ContendedYieldsOnEveryIdleIteration) {
  std::atomic<bool> stop{false};
  SteppingClock clock{&stop, 3000};
  using E = Engine<SimPortIo, SteppingClock, YieldSleeper>;
  E e(yield_config(), clock, YieldSleeper{&clock, [](std::uint64_t) { return TimeNs{3000}; }});
  e.run(stop);
  // The first probe (within the first 10 us) ran another thread: from then
  // on every idle iteration past the two spins yields, and each does.
  const auto& c = e.counters();
  EXPECT_EQ(c.yields_switched, c.yields);
  EXPECT_GT(c.yields, 0u);
  // Every iteration after the first probe yields: three clock readings an
  // iteration (run_once, before and after the yield).
  EXPECT_GE(c.yields, c.iterations - 10 * kNsPerUs / 100 - 1);
}

TEST(Engine_Yield, QuickYieldsEndTheContention) {
  std::atomic<bool> stop{false};
  SteppingClock clock{&stop, 20000};
  using E = Engine<SimPortIo, SteppingClock, YieldSleeper>;
  // Five yields run another thread; after that nobody wants the core.
  E e(yield_config(), clock,
      YieldSleeper{&clock, [](std::uint64_t n) { return n < 5 ? TimeNs{3000} : TimeNs{300}; }});
  e.run(stop);
  const auto& c = e.counters();
  EXPECT_EQ(c.yields_switched, 5u);
  // Eight quick yields end the contention; then one probe per period.
  const TimeNs period = 10 * kNsPerUs;
  EXPECT_LE(c.yields, 5u + 8u + clock.t / period + 1);
  EXPECT_GE(c.yields, 5u + 8u);
  EXPECT_LT(c.yields, c.iterations / 10);
}

TEST(Engine_Yield, WorkStartsTheSpinsOver) {
  port::SimLink link(port::SimLinkConfig{});
  Host a(link, 0, kMacA, kIpA);
  port::SimPort peer(link, 1);
  std::atomic<bool> stop{false};
  SteppingClock clock{&stop, 1u << 30};
  std::uint64_t yields_at_frame = 0, iterations_at_frame = 0;
  using E = Engine<SimPortIo, SteppingClock, YieldSleeper>;
  E* ep = nullptr;
  // Contended throughout. On the second yield a frame arrives: the next
  // iteration has work, and the two idle iterations after it spin before
  // the next yield, which stops the run.
  YieldSleeper sl{&clock, [&](std::uint64_t n) {
                    if (n == 1) {
                      const std::uint8_t junk[60] = {};
                      EXPECT_TRUE(peer.tx(junk, clock.t));
                      iterations_at_frame = ep->counters().iterations;
                      yields_at_frame = n + 1;
                    }
                    if (n == 2) stop.store(true);
                    return TimeNs{3000};
                  }};
  E e(yield_config(), clock, sl);
  ep = &e;
  e.add_vnic(&a.vnic);
  e.run(stop);
  EXPECT_EQ(a.vnic.counters().rx_frames, 1u);
  EXPECT_EQ(yields_at_frame, 2u);
  // The frame's iteration, two idle spins, then the yield that stopped it.
  EXPECT_EQ(e.counters().iterations, iterations_at_frame + 4);
  EXPECT_EQ(e.counters().yields, 3u);
}

TEST(Engine_Busy, NeverSleeps) {
  std::atomic<bool> stop{false};
  CountingClock clock{&stop, 5000};
  std::vector<TimeNs> log;
  EngineConfig cfg;
  cfg.mode = PollMode::kBusy;
  cfg.idle_spins = 0;
  using E = Engine<SimPortIo, CountingClock, RecordingSleeper>;
  E e(cfg, clock, RecordingSleeper{&log, nullptr});
  e.run(stop);
  EXPECT_TRUE(log.empty());
  EXPECT_EQ(e.counters().iterations, 5000u);
  EXPECT_EQ(e.counters().sleeps, 0u);
}

// A comp event written to a pipe whose reader is gone raises SIGPIPE on the
// engine thread; run() must neither die of it nor leave it pending.
TEST(Engine_Run, SurvivesAClosedCompChannel) {
  port::SimLink link(port::SimLinkConfig{});
  Host a(link, 0, kMacA, kIpA);
  Pipe chan;
  ::close(chan.rd);
  chan.rd = -1;
  auto cq = a.make_cq(1, 15, chan.wr);
  auto q = a.make_qp(2, QpType::kUd, 1, 1);
  a.ud_up(2, 1);
  AhCreate h;
  h.id = 1;
  h.client = Host::kClient;
  h.pd = Host::kPd;
  h.dmac = kMacB;
  h.dip = kIpB;
  ASSERT_EQ(a.vnic.create_ah(h), 0);
  cq->arm();
  shm::SendWqeFields f;
  f.wr_id = 1;
  f.opcode = IBV_WR_SEND;
  f.send_flags = IBV_SEND_SIGNALED;
  f.remote_qpn = 0x99;
  f.remote_qkey = 1;
  f.ah_num = 1;
  q->post_send(f, {a.sge(0, 8)});
  std::atomic<bool> stop{false};
  CountingClock clock{&stop, 20};
  EngineConfig cfg;
  cfg.mode = PollMode::kBusy;
  Engine<SimPortIo, CountingClock> e(cfg, clock);
  e.add_vnic(&a.vnic);
  std::thread t([&] { e.run(stop); });
  t.join();
  EXPECT_EQ(cq->poll().size(), 1u);
  VnicCounters c;
  e.call([&] { c = a.vnic.counters(); });  // the engine's thread is gone: inline
  EXPECT_EQ(c.cq.comp_events, 1u);         // raised
  EXPECT_EQ(c.comp.errors, 1u);            // and lost
  EXPECT_EQ(c.comp.records, 0u);
}

}  // namespace
}  // namespace uroce::engine::test

namespace uroce::engine::test {
namespace {

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
  clock.advance_by(1);
  e.drive_post();  // post_batch_ns after the last driving post
  EXPECT_EQ(e.counters().iterations, 3u);
  EXPECT_EQ(e.posts_batched(), 1u);
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

// A progress thread's nap that lasts until wake_progress ends it (or the
// test does): the thread is known to nap, and known to have been woken.
struct BlockingNaps {
  std::mutex mu;
  std::condition_variable cv;
  bool napping = false;
  int wakes = 0;
};
struct BlockingSleeper {
  BlockingNaps* b;
  void sleep(TimeNs) {}
  void yield() {}
  void nap(TimeNs, std::atomic<std::uint32_t>& word, std::uint32_t seen) {
    std::unique_lock<std::mutex> lk(b->mu);
    b->napping = true;
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
