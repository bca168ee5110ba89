#include "datapath/engine/engine.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>
#include <vector>

#include "datapath/engine/eth_port_io.h"
#include "datapath/engine/tsc_clock.h"
#include "tests/datapath/engine/engine_test_clocks.h"
#include "tests/datapath/engine/vnic_test_support.h"

namespace uroce::engine {
// The daemon's instantiation, every member compiled.
template class Engine<EthPortIo, TscClock>;
}  // namespace uroce::engine

namespace uroce::engine::test {
namespace {

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
  bool switched_out() { return false; }
  void nap(TimeNs ns, std::atomic<std::uint32_t>&, std::uint32_t) { sleep(ns); }
  void wake(std::atomic<std::uint32_t>&) {}
};

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

// A clock whose reading (the first thing of an iteration) holds the
// iteration while `hold` is set, after saying so in `inside`.
struct GateClock {
  std::atomic<bool>* hold;
  std::atomic<bool>* inside;
  SteadyClock steady;
  TimeNs now() {
    if (hold->load()) {
      inside->store(true);
      while (hold->load()) std::this_thread::yield();
    }
    return steady.now();
  }
};

// barrier() from a second thread while `iterating` is inside an iteration
// that `hold` keeps going: it must not return before `hold` is cleared.
void expect_barrier_waits(Engine<SimPortIo, GateClock>& e, std::atomic<bool>& hold,
                          std::atomic<bool>& inside) {
  while (!inside.load()) std::this_thread::yield();
  std::atomic<bool> returned{false};
  std::thread waiter([&] {
    e.barrier();
    returned.store(true);
  });
  // Enough for a barrier that does not wait to return.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(returned.load());
  hold.store(false);
  waiter.join();
  EXPECT_TRUE(returned.load());
}

TEST(Engine_Barrier, WaitsForTheIterationOfRunInProgress) {
  std::atomic<bool> hold{false}, inside{false}, stop{false};
  GateClock clock{&hold, &inside, {}};
  EngineConfig cfg;
  cfg.mode = PollMode::kBusy;
  Engine<SimPortIo, GateClock> e(cfg, clock);
  std::thread engine([&] { e.run(stop); });
  for (std::uint64_t seen = 0; seen == 0;) e.call([&] { seen = e.counters().iterations; });
  hold.store(true);
  expect_barrier_waits(e, hold, inside);
  stop.store(true);
  engine.join();
}

TEST(Engine_Barrier, WaitsForAnApplicationThreadsIteration) {
  std::atomic<bool> hold{true}, inside{false};
  GateClock clock{&hold, &inside, {}};
  Engine<SimPortIo, GateClock> e(EngineConfig{}, clock);
  std::thread app([&] { (void)e.drive(); });  // embedded mode: under the owner word
  expect_barrier_waits(e, hold, inside);
  app.join();
}

TEST(Engine_Barrier, ReturnsAtOnceWhenNothingRuns) {
  std::atomic<bool> hold{false}, inside{false};
  GateClock clock{&hold, &inside, {}};
  Engine<SimPortIo, GateClock> e(EngineConfig{}, clock);
  e.barrier();
  std::thread other([&] { e.barrier(); });
  other.join();
  EXPECT_EQ(e.counters().calls, 0u);
  EXPECT_EQ(e.counters().calls_inline, 0u);
}

#ifndef NDEBUG
// A Vnic operation called directly by a thread other than the one running
// the engine (instead of through call()) stops the program at its assert;
// the same operation through call() runs.
// barrier() from another thread does not make that thread the engine's
// owner (a call() would: the direct operation below would then assert).
TEST(Engine_Barrier, LeavesTheEngineToItsOwner) {
  port::SimLink link(port::SimLinkConfig::symmetric(port::SimDirectionConfig{}, 9));
  Host a(link, 0, kMacA, kIpA);
  VirtualClock clock;
  Engine<SimPortIo, VirtualClock> e(EngineConfig{}, clock);
  e.add_vnic(&a.vnic);
  e.call([] {});  // not running: inline, this thread owns the engine
  std::thread other([&] { e.barrier(); });
  other.join();
  std::uint32_t qpn = 0;
  EXPECT_EQ(a.vnic.alloc_qpn(&qpn), 0);
}

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
// a long one is a yield that ran another thread; and those after which the
// kernel says this thread was switched out, as `switched(n)` says.
struct YieldSleeper {
  SteppingClock* clock;
  std::function<TimeNs(std::uint64_t)> cost;
  std::function<bool(std::uint64_t)> switched = [](std::uint64_t) { return false; };
  std::uint64_t n = 0;
  void sleep(TimeNs) { ADD_FAILURE() << "yield mode slept"; }
  void yield() { clock->t += cost(n++); }
  bool switched_out() { return switched(n - 1); }
  void nap(TimeNs, std::atomic<std::uint32_t>&, std::uint32_t) { ADD_FAILURE() << "napped"; }
  void wake(std::atomic<std::uint32_t>&) {}
};

EngineConfig yield_config() {
  EngineConfig cfg;
  cfg.mode = PollMode::kYield;
  cfg.yield.spins = 2;
  cfg.yield.probe_ns = 10 * kNsPerUs;
  cfg.yield.switch_ns = 1500;
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

// A switch there and back that is quick (the VM's fast state: under
// switch_ns) still counts when the kernel says the thread was switched out:
// every idle iteration yields, as with slow switches.
TEST(Engine_Yield, QuickSwitchesTheKernelReportsStayContended) {
  std::atomic<bool> stop{false};
  SteppingClock clock{&stop, 3000};
  using E = Engine<SimPortIo, SteppingClock, YieldSleeper>;
  E e(yield_config(), clock,
      YieldSleeper{&clock, [](std::uint64_t) { return TimeNs{300}; },
                   [](std::uint64_t) { return true; }});
  e.run(stop);
  const auto& c = e.counters();
  EXPECT_EQ(c.yields_switched, c.yields);
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
