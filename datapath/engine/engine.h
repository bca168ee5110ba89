// The daemon's engine: one loop on one lcore over every Vnic of the daemon.
//
// Public API (final signatures):
//
//   enum class PollMode { kBusy, kBackoff, kYield };
//   struct EngineConfig { PollMode mode = PollMode::kBackoff;
//                         std::uint32_t backoff_max_us = 200;
//                         std::uint32_t idle_spins = 1024;
//                         YieldPolicyConfig yield; ... };  // and more
//   template <class PortIo, class Clock, class Sleeper = NanoSleeper,
//             sched::TxScheduler Sched = sched::TxPolicy>
//   class Engine {
//    public:
//     Engine(const EngineConfig& cfg, Clock& clock, Sleeper sleeper = {});
//     void add_vnic(Vnic<PortIo, Sched>* v);     // before run()
//     void run(const std::atomic<bool>& stop);   // engine lcore, until stop
//     std::uint32_t run_once(bool may_cut = false);  // one iteration (tests)
//     void call(const std::function<void()>& fn);   // any thread
//     TimeNs now() const;                        // last iteration's time
//     const EngineRunCounters& counters() const;
//     const LoopHistograms& loop_histograms() const;  // loop_histogram.h
//     // Embedded mode (docs/embedded.md): several threads drive one engine.
//     std::uint32_t drive();                     // an application's poll
//     std::uint32_t drive_post();                // an application's post
//     void run_progress(const std::atomic<bool>& stop);  // the progress thread
//   };
//
// One iteration (run_once): take ONE timestamp from the clock, poll every
// Vnic in turn with it (vnic.h documents the phases), then serve a pending
// Engine::call. The same timestamp closes the interval since the previous
// iteration's start, counted in the loop histograms (loop_histogram.h) by
// what that iteration did and what followed it: no clock read more. Vnics
// are polled round-robin from a rotating start so that none is always
// first to the shared TX resources.
//
// call(fn) runs fn on the engine thread between two iterations and returns
// after it ran (mailbox.h): the control plane's only way into Vnic state.
// While run() is not running (before it starts, after it stops) fn runs
// inline in the caller's thread.
//
// Poll modes: busy never sleeps. Backoff (backoff.h) sleeps after
// idle_spins iterations without work, with a nanosleep that doubles from
// 1 us up to backoff_max_us and resets on the first iteration with work (a
// served call counts as work). Yield (docs/engine.md, "Sharing a core")
// never sleeps either; it hands the core to another thread that wants it
// (an application spinning on its CQ, which the provider makes yield back:
// HelloRep.engine_cpu) and spins like busy mode when none does. After
// yield.spins idle iterations in a row: while the core is contended it
// yields (sched_yield) on every idle iteration; otherwise it probes with
// one yield per yield.probe_ns of idleness (base/yield_policy.h, which
// the provider's empty polls follow too). An application that sleeps on
// completion events therefore leaves the engine busy-polling (its fastest
// reaction), one that spins on its CQ gets the core at once instead of at
// the end of the engine's time slice. Sleeper is the sleeping policy:
// NanoSleeper in the daemon, a recorder in tests (sleep(ns) and yield()).
//
// Clock: anything with `TimeNs now()`: TscClock in the daemon,
// uroce::VirtualClock (or a fake) in tests.
//
// Embedded mode: the engine runs in the application's process, and whoever
// holds the owner word (owner.h) runs an iteration: the application's
// threads inside their verbs calls (drive(): one iteration if nobody else
// runs one, else nothing, since the owner will see their doorbell) and the
// progress thread (run_progress(): the passive side, timers, the mailbox).
// The progress thread stays away (naps) while the application keeps calling, so on a busy application one thread spins, not two.
// Everything said of "the engine thread" below means "the owner" there.
//
// Threading: run()/run_once() on the engine thread only; call() from any
// thread; now() and counters() on the engine thread (inside a call()).
// Each of them asserts it (base/owner_thread.h): the thread that runs the
// loop, or in embedded mode took the owner word, or runs a call()'s closure
// owns the engine and its Vnics until another one does.
// SIGPIPE is blocked on the engine thread while run() runs (and a pending
// one consumed before run() returns), so a write to a client's pipe whose
// reader is gone fails with EPIPE instead of killing the daemon. Control
// operations that run inline (no run() active) are not covered: the daemon
// should also ignore SIGPIPE process-wide.
#pragma once

#include <pthread.h>
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "datapath/base/counter_fields.h"
#include "datapath/base/owner_thread.h"
#include "datapath/base/time.h"
#include "datapath/base/yield_policy.h"
#include "datapath/engine/backoff.h"
#include "datapath/engine/loop_histogram.h"
#include "datapath/engine/mailbox.h"
#include "datapath/engine/nano_sleeper.h"
#include "datapath/engine/owner.h"
#include "datapath/engine/vnic.h"
#include "sched/round_robin.h"
#include "sched/tx_scheduler.h"

namespace uroce::engine {

enum class PollMode { kBusy, kBackoff, kYield };

struct EngineConfig {
  PollMode mode = PollMode::kBackoff;
  std::uint32_t backoff_max_us = 200;
  // Idle iterations before the first sleep (backoff mode).
  std::uint32_t idle_spins = 1024;
  // Yield mode: the spins before a yield, the probe period while nobody
  // else wants the core, and how long a yield must take to have run
  // another thread (base/yield_policy.h).
  YieldPolicyConfig yield{};
  // Embedded mode: the progress thread's first and longest nap while the
  // application drives the engine (run_progress). A CQ armed for events
  // (the application may sleep on them next) wakes the thread at once
  // (wake_progress), and so does a control call that no iteration served
  // within call_wake_ns. The longest nap bounds how long the engine goes
  // undriven after an application stops calling without arming a CQ; each
  // wake-up of a nap costs a spinning application on the same CPU a
  // context switch there and back (docs/tails.md).
  TimeNs app_quiet_ns = 20 * kNsPerUs;
  TimeNs app_nap_max_ns = 10 * kNsPerMs;
  // Embedded mode: the longest nap while iterations keep TX bursts for a
  // later one (engine/ack_hold.h; any kept within app_nap_max_ns). A held
  // ACK is what a peer waits for when the application stops calling after
  // the last message of a stream: it then leaves within about this, not
  // within a long nap (a burst kept while a longer nap runs wakes the
  // thread: note_held).
  TimeNs held_nap_max_ns = 1 * kNsPerMs;
  TimeNs call_wake_ns = 50 * kNsPerUs;
  // Embedded mode: how long the progress thread keeps polling after its
  // last iteration with work before the backoff starts counting.
  TimeNs progress_spin_ns = 200 * kNsPerUs;
  // Embedded mode: a post drives the engine only if no post did within
  // this (drive_post), or, with tx_burst_syscall, within twice the time
  // that post's iteration took if it took longer than this.
  TimeNs post_batch_ns = 2 * kNsPerUs;
  // Some port of the engine enters the kernel for every TX burst (af_xdp,
  // af_packet: a sendto per burst).
  bool tx_burst_syscall = false;
};

struct EngineRunCounters {
  std::uint64_t iterations = 0;
  std::uint64_t idle_iterations = 0;  // iterations without work
  std::uint64_t sleeps = 0;           // backoff sleeps taken
  std::uint64_t slept_ns = 0;         // their requested total
  std::uint64_t yields = 0;           // yield mode: CPU yields
  std::uint64_t yields_switched = 0;  // of which ran another thread
  std::uint64_t calls = 0;            // closures served between iterations
  // Embedded mode: the progress thread's naps while the application drove.
  std::uint64_t app_quiet_sleeps = 0;
  // Embedded mode: call()s run by their caller as the owner, and call()s
  // that no iteration served within call_wake_ns, which woke the thread.
  std::uint64_t calls_inline = 0;
  std::uint64_t call_wakes = 0;
  // Embedded mode: naps cut short by wake_progress, and checks after which
  // the progress thread found the application no longer driving (it then
  // drives the engine itself, and its next nap starts short again).
  std::uint64_t naps_woken = 0;
  std::uint64_t app_stopped = 0;
  // Embedded mode: iterations the progress thread ran after a nap because
  // the last iteration kept its TX burst (ack_hold.h), and naps cut short
  // because a burst was kept while a nap longer than held_nap_max_ns ran.
  std::uint64_t held_runs = 0;
  std::uint64_t held_wakes = 0;
  // Embedded mode: runs of the pump an application's cut iteration left
  // (Vnic::poll's may_cut) by someone other than the application's next
  // iteration: the progress thread after a nap (the application stopped
  // calling with those ACKs owed), or before a control call or its stop.
  std::uint64_t cut_runs = 0;
};

inline constexpr counters::FieldList<EngineRunCounters, 15> kEngineRunCounterFields{{
    {"iterations", &EngineRunCounters::iterations, "engine loop iterations"},
    {"idle_iterations", &EngineRunCounters::idle_iterations, "iterations without work"},
    {"sleeps", &EngineRunCounters::sleeps, "backoff sleeps taken"},
    {"slept_ns", &EngineRunCounters::slept_ns, "their requested total"},
    {"yields", &EngineRunCounters::yields, "yield mode: CPU yields"},
    {"yields_switched", &EngineRunCounters::yields_switched, "of which ran another thread"},
    {"calls", &EngineRunCounters::calls, "closures served between iterations"},
    {"app_quiet_sleeps", &EngineRunCounters::app_quiet_sleeps,
     "embedded: progress thread naps while the application drove"},
    {"calls_inline", &EngineRunCounters::calls_inline,
     "embedded: calls run by their caller as the owner"},
    {"call_wakes", &EngineRunCounters::call_wakes,
     "embedded: calls unserved within call_wake_ns that woke the progress thread"},
    {"naps_woken", &EngineRunCounters::naps_woken,
     "embedded: progress thread naps cut short (a CQ armed, a call unserved)"},
    {"app_stopped", &EngineRunCounters::app_stopped,
     "embedded: checks that found the application no longer driving the engine"},
    {"held_runs", &EngineRunCounters::held_runs,
     "embedded: iterations run after a nap for a TX burst kept by the last one"},
    {"held_wakes", &EngineRunCounters::held_wakes,
     "embedded: progress thread naps cut short by a TX burst kept during a long one"},
    {"cut_runs", &EngineRunCounters::cut_runs,
     "embedded: runs of the pump a cut iteration left: after a nap, before a call, at stop"},
}};
static_assert(counters::covers(kEngineRunCounterFields));
constexpr const auto& counter_fields(const EngineRunCounters&) { return kEngineRunCounterFields; }

template <class PortIo, class Clock, class Sleeper = NanoSleeper,
          sched::TxScheduler Sched = sched::TxPolicy>
class Engine {
 public:
  using VnicT = Vnic<PortIo, Sched>;

  // `clock` must outlive the engine.
  Engine(const EngineConfig& cfg, Clock& clock, Sleeper sleeper = {})
      : cfg_(cfg),
        clock_(clock),
        sleeper_(sleeper),
        backoff_(BackoffConfig{cfg.idle_spins, 1 * kNsPerUs,
                               static_cast<TimeNs>(cfg.backoff_max_us) * kNsPerUs}),
        yield_(cfg.yield) {}
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Before run() (or from inside a call()). `v` must outlive the engine.
  void add_vnic(VnicT* v) {
    assert(thread_.here());
    vnics_.push_back(v);
    // The stage stamps (stage_stamps.h) read this engine's clock.
    v->set_stage_clock([](const void*
                              c) { return static_cast<Clock*>(const_cast<void*>(c))->now(); },
                       &clock_);
  }
  std::size_t vnic_count() const { return vnics_.size(); }

  // One iteration: every Vnic, then a pending call. Returns the work done
  // (a served call counts as 1). `may_cut`: an application's poll drives
  // it (drive()), and a Vnic whose RX phase wrote a completion of peer data
  // may end its iteration there (Vnic::poll).
  std::uint32_t run_once(bool may_cut = false) {
    assert(thread_.here());
    const TimeNs now = clock_.now();
    note_interval(now);
    now_ = now;
    ++ctr_.iterations;
    std::uint32_t work = 0;
    bool held = false;
    bool cut = false;
    const std::size_t n = vnics_.size();
    for (std::size_t k = 0; k < n; ++k) {
      VnicT* v = vnics_[(first_ + k) % n];
      work += v->poll(now, may_cut);
      held |= v->tx_held();
      cut |= v->cut_pending();
    }
    if (n != 0) first_ = (first_ + 1) % n;
    if (held || held_now_.load(std::memory_order_relaxed)) [[unlikely]]
      note_held(held, now);
    if (mailbox_.pending()) [[unlikely]] {
      if (cut) {
        work += finish_cuts(now);
        cut = false;
      }
      if (mailbox_.serve()) {
        ++ctr_.calls;
        ++work;
      }
    }
    if (cut != cut_now_.load(std::memory_order_relaxed))
      cut_now_.store(cut, std::memory_order_relaxed);
    if (work == 0) ++ctr_.idle_iterations;
    last_worked_ = work != 0;
    return work;
  }

  // Runs iterations until `stop` reads true (checked once per iteration).
  void run(const std::atomic<bool>& stop) {
    sigset_t pipe_set, old_set;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
    mailbox_.open();
    take_thread();
    while (!stop.load(std::memory_order_acquire)) back_off(run_once());
    mailbox_.close();
    // A SIGPIPE raised meanwhile is pending on this thread; unblocking would
    // deliver it (default action: exit). Consume it first, unless it was
    // blocked before run() too.
    if (sigismember(&old_set, SIGPIPE) == 0) {
      const timespec zero{};
      while (sigtimedwait(&pipe_set, nullptr, &zero) == SIGPIPE) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
  }

  // Embedded mode, an application thread inside a verbs call (a post or a
  // poll): one iteration if no other thread runs the engine now (0
  // otherwise: the owner sees this thread's doorbell on its next
  // iteration). Every call is counted, so that the progress thread can tell
  // an application that keeps calling (and so drives the engine itself)
  // from one that posts and then sleeps. Returns the work done.
  std::uint32_t drive() {
    // Approximate across application threads (no locked add on the
    // packet path): any increase is all the progress thread looks for.
    app_calls_.store(app_calls_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    if (!owner_.try_take()) return 0;
    take_thread();
    const std::uint32_t work = run_once(true);
    // The iteration's own timestamp: no clock read added.
    app_drove_at_.store(now_, std::memory_order_relaxed);
    owner_.release();
    return work;
  }

  // Embedded mode, a post: drive() unless a post drove the engine less than
  // post_batch_ns ago. The WQEs of a burst of posts then go out together, at
  // the application's next poll (or the next post after that), instead of
  // one iteration each; the first post after a pause still drives at once,
  // so a post that precedes a sleep (an application waiting on completion
  // events) is not left waiting.
  // Where a TX burst is a system call (tx_burst_syscall), a driving post's
  // iteration can outlast post_batch_ns: every post of a burst then found
  // the window over and sent its one frame in a system call of its own. So
  // there an iteration that outlasts the window widens it to twice the
  // iteration (up to kPostWindowMaxFactor windows), and posts drive at most
  // half of the thread's time. Not elsewhere: a long iteration over memif
  // is one with many frames, not a costly burst, and the wider windows held
  // frames back from a sender with few messages in flight (ib_send_bw 64 B,
  // 9 % fewer messages).
  std::uint32_t drive_post() {
    const TimeNs t = clock_.now();
    if (t < next_post_drive_.load(std::memory_order_relaxed)) {
      app_calls_.store(app_calls_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      posts_batched_.store(posts_batched_.load(std::memory_order_relaxed) + 1,
                           std::memory_order_relaxed);
      return 0;
    }
    next_post_drive_.store(t + cfg_.post_batch_ns, std::memory_order_relaxed);
    const std::uint32_t work = drive();
    if (cfg_.tx_burst_syscall) widen_post_window(t);
    return work;
  }
  // Posts that left their WQEs to a later iteration (approximate across
  // application threads: no locked add).
  std::uint64_t posts_batched() const { return posts_batched_.load(std::memory_order_relaxed); }
  // Driving posts whose iteration outlasted post_batch_ns and so widened
  // the window (approximate across application threads, as above).
  std::uint64_t post_windows_widened() const {
    return post_windows_widened_.load(std::memory_order_relaxed);
  }
  // The application's drive() and drive_post() calls so far (approximate
  // across application threads, as above): with several shards, whether an
  // application's calls reached this one.
  std::uint64_t app_calls() const { return app_calls_.load(std::memory_order_relaxed); }

  // Embedded mode's progress thread, until `stop` reads true. Every
  // app_quiet_ns it counts the application's calls: at least kActiveCalls
  // means the application keeps calling (and drives the engine itself),
  // and the thread naps, from app_quiet_ns doubling up to
  // app_nap_max_ns (held_nap_max_ns while iterations keep TX bursts: an
  // iteration follows each such nap), so that the application keeps its
  // core. After a nap
  // the application must have driven in the nap's second half or within
  // kDroveRecentNs, and made a call per kActiveCallGapNs of the nap (none
  // for a nap shorter than that): an application that stopped during a
  // long nap is noticed within one and a half naps, not two, one that was
  // only preempted for less than half a nap still counts as driving, and
  // one that calls now and then (a call every 200 us) does not keep the
  // thread napping once a hiccup made it look busy. Otherwise the thread runs
  // iterations, polling for progress_spin_ns after the last one with work
  // and then with run()'s backoff: the passive side (a WRITE or READ
  // target), timers and ACKs owed, and the mailbox, so control calls never
  // wait for the application to poll.
  void run_progress(const std::atomic<bool>& stop) {
    mailbox_.open();
    progress_runs_.store(true, std::memory_order_release);
    std::uint64_t seen = app_calls_.load(std::memory_order_relaxed);
    TimeNs window = clock_.now();
    TimeNs nap = cfg_.app_quiet_ns;
    TimeNs last_work = window;
    bool app_active = false;
    TimeNs napped = 0;  // the nap just ended, 0 if none
    while (!stop.load(std::memory_order_acquire)) {
      const TimeNs t = clock_.now();
      if (t - window >= cfg_.app_quiet_ns) {
        const std::uint64_t calls = app_calls_.load(std::memory_order_relaxed);
        const bool was_active = app_active;
        // Running the engine itself, the thread counts the application's
        // calls. After a nap it asks only when the application last drove:
        // the thread's own nap and wake-up may have taken most of a short
        // nap's CPU time from an application on the same CPU, so a count
        // of calls in it says nothing (an embedded UCX tag_lat found its
        // application "stopped" after 20 us naps 100-400 times a second,
        // with the application's last drive under 100 us old).
        app_active = napped == 0 ? calls - seen >= kActiveCalls
                                 : app_drove_at_.load(std::memory_order_relaxed) +
                                               std::max(napped / 2, kDroveRecentNs) >=
                                           t &&
                                       calls - seen >= napped / kActiveCallGapNs;
        seen = calls;
        window = t;
        if (was_active && !app_active) ++ctr_.app_stopped;
        if (!app_active) nap = cfg_.app_quiet_ns;
      }
      napped = 0;
      if (app_active) {
        ++ctr_.app_quiet_sleeps;
        // While iterations keep TX bursts (ack_hold.h), the nap is short
        // and an iteration after it sends what the last one kept: an
        // application that stopped calling after a stream's last message
        // left its ACK there. The nap's end is published before the last
        // burst kept is read, and note_held stores a first burst kept
        // before it reads the end (both sequentially consistent): either
        // this nap is short or the owner wakes it.
        nap_until_.store(t + nap, std::memory_order_seq_cst);
        napped = held_within(held_at_.load(std::memory_order_seq_cst), t, cfg_.app_nap_max_ns)
                     ? std::min(nap, cfg_.held_nap_max_ns)
                     : nap;
        if (napped != nap) nap_until_.store(t + napped, std::memory_order_relaxed);
        const bool woken = nap_woken(napped);
        nap_until_.store(0, std::memory_order_relaxed);
        if (woken) {
          ++ctr_.naps_woken;
          napped = 0;
          // The application said it stops driving: count afresh, and run
          // the engine meanwhile.
          app_active = false;
          nap = cfg_.app_quiet_ns;
          seen = app_calls_.load(std::memory_order_relaxed);
          window = clock_.now();
        } else {
          nap = std::min(nap * 2, cfg_.app_nap_max_ns);
          // A pump left by a cut iteration (Vnic::poll's may_cut) is
          // resolved by the application's next call, microseconds later
          // while it drives; one still left after a nap means it stopped
          // calling, and the ACKs owed leave now. Its bound is the nap
          // under way (at most app_nap_max_ns), as for a frame that arrives
          // after the application stopped: a cut wakes nothing, since an
          // application that cuts does so on every exchange and each
          // wake-up takes its CPU (docs/tails.md).
          const bool held_last = held_now_.load(std::memory_order_relaxed);
          const bool cut_last = cut_now_.load(std::memory_order_relaxed);
          std::uint32_t held_work = 0;
          if ((held_last || cut_last) && try_iterate(held_work)) {
            if (held_last) ++ctr_.held_runs;
            if (cut_last) ++ctr_.cut_runs;
          }
        }
        continue;
      }
      std::uint32_t work = 0;
      (void)try_iterate(work);
      if (work != 0) last_work = t;
      // Spin through the gaps of an exchange (a READ or WRITE target whose
      // peer is a round trip away) before the backoff counts idle rounds.
      if (work == 0 && t - last_work < cfg_.progress_spin_ns) continue;
      back_off(work);
    }
    progress_runs_.store(false, std::memory_order_release);
    // close() serves a call that arrived meanwhile: as the owner.
    while (!owner_.try_take()) {
    }
    take_thread();
    if (cut_now_.load(std::memory_order_relaxed)) (void)finish_cuts(clock_.now());
    mailbox_.close();
    owner_.release();
  }

  // Embedded mode, any thread: the application is about to stop driving
  // the engine (it armed a CQ to sleep on its events): a napping progress
  // thread wakes now. Costs a system call only while the thread naps. Not
  // called by call(): the CM service's periodic drain is a call, and waking
  // the thread on each made it run beside a spinning application
  // (docs/tails.md).
  void wake_progress() { progress_wake_.wake(sleeper_); }

  // Calls within app_quiet_ns that mean the application drives the engine
  // (one that sleeps on completion events makes two or three per
  // completion: a post, a poll or two).
  static constexpr std::uint64_t kActiveCalls = 16;
  // After a nap, the application counts as driving if it drove within half
  // the nap or within this, whichever is longer: the thread's own wake-up
  // preempts an application on its CPU, which then cannot have driven in
  // the last few microseconds, and a short nap's second half is no longer
  // than a context switch on a VM.
  static constexpr TimeNs kDroveRecentNs = 500 * kNsPerUs;
  // After a nap, an application that drives made at least one call per
  // this much of it: an application spinning on its CQ makes thousands; a
  // nap shorter than this asks for none (the thread's wake-up may have
  // taken the application's CPU for most of it).
  static constexpr TimeNs kActiveCallGapNs = 50 * kNsPerUs;

  // Whether a burst kept at `held_at` (0: none yet) is within `window` of
  // `now`; a stamp later than `now` (another thread's clock read after
  // this thread's) is.
  static constexpr bool held_within(TimeNs held_at, TimeNs now, TimeNs window) {
    return held_at != 0 && held_at + window > now;
  }

  // Any thread: runs fn on the engine thread between two iterations and
  // returns after it ran (inline while run() is not running). The thread
  // that runs fn owns the engine and its Vnics meanwhile.
  //
  // Embedded mode (the progress thread runs): a caller that takes the
  // owner word is between two iterations by definition and runs fn itself;
  // otherwise an owner's iteration serves it, and if none did within
  // call_wake_ns (the application stopped driving and the progress thread
  // naps) the call wakes the progress thread. So a control call never
  // waits for a nap to end, and a spinning application's engine serves
  // the CM service's periodic calls without the thread waking.
  void call(const std::function<void()>& fn) {
    const bool progress = progress_runs_.load(std::memory_order_acquire);
    if (progress && owner_.try_take()) {
      take_thread();
      ++ctr_.calls_inline;
      if (cut_now_.load(std::memory_order_relaxed)) (void)finish_cuts(clock_.now());
      fn();
      owner_.release();
      return;
    }
    // Set and read under the mailbox's lock (slow() and the closure both
    // run under it).
    bool woke = false;
    mailbox_.call(
        [&] {
          take_thread();
          if (woke) ++ctr_.call_wakes;
          fn();
        },
        progress ? std::chrono::nanoseconds(cfg_.call_wake_ns) : std::chrono::nanoseconds::max(),
        [&] {
          woke = true;
          wake_progress();
        });
  }

  // Any thread: returns once no iteration that began before the call still
  // runs, without running anything on the engine or taking it over (a
  // call() would make the caller the engine's owner while run() is not
  // running). For work on another thread that must not overlap a port
  // burst in progress (port/memif_unmap_guard.h). Embedded mode: every
  // iteration runs under the owner word, so taking and giving it back is
  // the point; run() (the daemon) iterates without it, so a no-op closure
  // served between two of its iterations is (inline while run() is not
  // running). Must not be called from an iteration, nor from a closure
  // that run() serves.
  void barrier() {
    while (!owner_.try_take()) std::this_thread::yield();
    owner_.release();
    if (!progress_runs_.load(std::memory_order_acquire)) mailbox_.call([] {});
  }

  TimeNs now() const {
    assert(thread_.here());
    return now_;
  }
  const EngineRunCounters& counters() const {
    assert(thread_.here());
    return ctr_;
  }
  // Where the time between iterations went (loop_histogram.h).
  const LoopHistograms& loop_histograms() const {
    assert(thread_.here());
    return loops_;
  }
  const EngineConfig& config() const { return cfg_; }
  Sleeper& sleeper() { return sleeper_; }

 private:
  // The calling thread now runs the engine (it holds owner_, or the engine
  // is not running): the engine and its Vnics are its own until another
  // thread takes them (base/owner_thread.h).
  void take_thread() noexcept {
    thread_.adopt();
    for (VnicT* v : vnics_) v->adopt_thread();
  }

  // After an iteration that did `work`: backoff mode sleeps as the policy
  // says, yield mode hands the core over as the header says, busy mode
  // does nothing.
  void back_off(std::uint32_t work) {
    if (cfg_.mode == PollMode::kYield) {
      yield_if_wanted(work);
      return;
    }
    if (cfg_.mode != PollMode::kBackoff) return;
    const TimeNs d = backoff_.after(work != 0);
    if (d == 0) return;
    ++ctr_.sleeps;
    ctr_.slept_ns += d;
    away_asked_.store(d, std::memory_order_relaxed);
    sleeper_.sleep(d);
  }

  // The interval since the last iteration's start, into loops_: its kind
  // from what that iteration did and what followed it (a sleep asked for,
  // a yield; back_off says so through away_asked_, since in embedded mode
  // the progress thread backs off without owning the engine).
  void note_interval(TimeNs now) {
    const TimeNs asked = away_asked_.load(std::memory_order_relaxed);
    if (asked != 0) away_asked_.store(0, std::memory_order_relaxed);
    const TimeNs last = last_start_;
    last_start_ = now;
    if (last == 0 || now < last || asked == kYielded) return;
    const TimeNs d = now - last;
    if (asked != 0) {
      ++loops_.oversleep_ns[loop_bucket(d > asked ? d - asked : 0)];
    } else {
      ++(last_worked_ ? loops_.work_ns : loops_.idle_ns)[loop_bucket(d)];
    }
  }
  // away_asked_ after a yield: the interval is not counted.
  static constexpr TimeNs kYielded = ~TimeNs{0};

  void yield_if_wanted(std::uint32_t work) {
    if (work != 0) {
      yield_.worked();
      return;
    }
    // The iteration's timestamp tells whether a probe is due (no clock read
    // per idle iteration while spinning); the yield is timed from here.
    if (!yield_.idle() || !yield_.due(now_)) return;
    const TimeNs t0 = clock_.now();
    away_asked_.store(kYielded, std::memory_order_relaxed);
    sleeper_.yield();
    const TimeNs t1 = clock_.now();
    ++ctr_.yields;
    if (yield_.yielded(t0, t1, [this] { return sleeper_.switched_out(); })) ++ctr_.yields_switched;
  }
  // After an iteration that kept a TX burst, or the first after one that
  // did: for the progress thread's naps (run_progress). Owner only. The
  // first burst kept after held_nap_max_ns without one may find the
  // progress thread in a longer nap (begun before it): that nap is woken,
  // so a burst never waits out more than about held_nap_max_ns. Within a
  // stream the stores are plain; the fence is paid at its start only.
  // The owner is the only writer of held_at_ and held_now_: its relaxed
  // loads of them read its own last stores.
  [[gnu::noinline]] void note_held(bool held, TimeNs now) {
    if (held) {
      if (!held_within(held_at_.load(std::memory_order_relaxed), now, cfg_.held_nap_max_ns)) {
        held_at_.store(now, std::memory_order_seq_cst);
        if (nap_until_.load(std::memory_order_seq_cst) > now + cfg_.held_nap_max_ns) {
          ++ctr_.held_wakes;
          wake_progress();
        }
      } else {
        held_at_.store(now, std::memory_order_relaxed);
      }
    }
    if (held != held_now_.load(std::memory_order_relaxed)) {
      held_now_.store(held, std::memory_order_relaxed);
    }
  }

  // The owner: polls whole each Vnic whose last poll was cut (Vnic::poll's
  // may_cut), so that the ACKs that pump owes leave before a control call
  // runs (it may destroy their QP: a receiver that destroys its QP after
  // its last completion must still have acknowledged it, as an RNIC
  // would) and before the progress thread stops. Returns the work done.
  std::uint32_t finish_cuts(TimeNs now) {
    assert(thread_.here());
    std::uint32_t work = 0;
    for (VnicT* v : vnics_) {
      if (!v->cut_pending()) continue;
      work += v->poll(now, false);
      ++ctr_.cut_runs;
    }
    cut_now_.store(false, std::memory_order_relaxed);
    return work;
  }

  // The progress thread: one iteration as the owner if no other thread
  // runs one; whether it ran, its work in `work`.
  bool try_iterate(std::uint32_t& work) {
    if (!owner_.try_take()) return false;
    take_thread();
    work = run_once();
    owner_.release();
    return true;
  }

  // The progress thread's nap of up to `ns`, cut short by wake_progress:
  // whether it was (nano_sleeper.h, WakeWord).
  bool nap_woken(TimeNs ns) { return progress_wake_.nap(sleeper_, ns); }

  // The widest window a long iteration makes, in post_batch_ns: an
  // iteration the machine interrupted for milliseconds must not leave a
  // post that is not followed by a poll waiting as long.
  static constexpr TimeNs kPostWindowMaxFactor = 8;

  // drive_post with tx_burst_syscall, after the iteration of a post at `t`.
  // Out of line: the code inlined into the posts' path stays what it was.
  [[gnu::noinline]] void widen_post_window(TimeNs t) {
    const TimeNs took = clock_.now() - t;
    if (took < cfg_.post_batch_ns) return;
    next_post_drive_.store(t + std::min(2 * took, kPostWindowMaxFactor * cfg_.post_batch_ns),
                           std::memory_order_relaxed);
    post_windows_widened_.store(post_windows_widened_.load(std::memory_order_relaxed) + 1,
                                std::memory_order_relaxed);
  }

  EngineConfig cfg_;
  Clock& clock_;
  Sleeper sleeper_;
  Backoff backoff_;
  Mailbox mailbox_;
  EngineOwner owner_;
  base::OwnerThread thread_;
  // Embedded mode: the application's calls (drive(), drive_post()), the
  // start of the last iteration an application drove, when a post may
  // drive the engine next, the posts that did not, the windows widened.
  // Written by the application's threads on each call.
  alignas(64) std::atomic<std::uint64_t> app_calls_{0};
  std::atomic<TimeNs> app_drove_at_{0};
  std::atomic<TimeNs> next_post_drive_{0};
  std::atomic<std::uint64_t> post_windows_widened_{0};
  std::atomic<std::uint64_t> posts_batched_{0};
  // The start of the last iteration that kept a TX burst (ack_hold.h), and
  // whether the last iteration did (written by the owner in note_held, read
  // by run_progress).
  std::atomic<TimeNs> held_at_{0};
  std::atomic<bool> held_now_{false};
  // Whether the last iteration ended after its RX phase in some Vnic
  // (Vnic::cut_pending; written by the owner in run_once, read by
  // run_progress).
  std::atomic<bool> cut_now_{false};
  // wake_progress's futex word and whether the progress thread naps on it
  // (written by the progress thread on each nap: a line of their own, so
  // that a nap does not take the application's line away), and whether the
  // progress thread runs (call()'s embedded path).
  alignas(64) WakeWord progress_wake_;
  std::atomic<bool> progress_runs_{false};
  // When the progress thread's nap under way ends (0: none; note_held).
  std::atomic<TimeNs> nap_until_{0};
  std::vector<VnicT*> vnics_;
  std::size_t first_ = 0;
  // Yield mode's policy: idle iterations in a row, the last yield, whether
  // another thread wants the core.
  YieldPolicy yield_;
  TimeNs now_ = 0;
  EngineRunCounters ctr_{};
  // The loop histograms (note_interval): the last iteration's start and
  // whether it worked; what back_off asked for after it (a sleep's ns,
  // kYielded, or 0), written by the thread that backs off.
  LoopHistograms loops_{};
  TimeNs last_start_ = 0;
  bool last_worked_ = false;
  std::atomic<TimeNs> away_asked_{0};
};

}  // namespace uroce::engine
