// uroce-engine-bench: the daemon's engine (engine::Vnic, with its doorbells,
// scheduler, PFC hooks and CQ rings) between two hosts. `--active` RC QPs on
// host A send `--size`-byte RDMA WRITEs (or SENDs, B keeping receives posted)
// to host B, beside `--qps` idle RC QPs on A (connected, in RTS, never
// posting). Both Vnics run on the calling lcore, alternately, over a crossed
// net_ring pair (the daemon's EthPortIo) or the simulated link, so a figure
// is what one core achieves doing both ends' work. Used by
// scripts/bench-transport.sh (messages/s, Gb/s), scripts/bench-callgrind.sh
// (instructions per 4 KiB WRITE and per 64 B SEND) and scripts/bench-scale.sh
// (what idle QPs cost).
//
// Objects are created through the Vnic API directly (the control operations
// the daemon's sessions call), not through uroced: a million QPs through the
// daemon would need two memfds each and a provider context holding them.
// The rings live in one anonymous arena; one client doorbell page per host.
//
// Two measurements, each printed as one JSON line:
//   rate     each active QP keeps `--depth` signaled WRITEs outstanding;
//            completions per second over `--duration` s after a warm-up
//   latency  each active QP has one WRITE outstanding; post-to-completion
//            time of every WRITE (median, p99)
// and, for both, the engine's heap bytes per idle object (mallinfo2 around
// their creation; `--idle-type` rc, uc or ud QPs in RTS, or CQs), the process RSS, the frames moved, and whether B's memory holds
// A's bytes at the end (every message carries the same bytes to the same
// place). With --count the run stops after that many completions instead
// (for callgrind, which counts the instructions of measured_window() only).
// `--policy` turns one of the engine's policies on in both hosts (homa,
// dcqcn, or isolation auto), for scripts/bench-callgrind.sh --policy.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "bench/engine_rig.h"
#include "bench/rtt_histogram.h"
#include "datapath/engine/tsc_clock.h"
#include "fmt/format.h"

namespace uroce::bench {
namespace {

struct Options {
  std::uint64_t qps = 0;          // idle QPs on A
  std::uint32_t active = 1;       // active QP pairs
  std::uint32_t depth = 16;       // outstanding WRITEs per active QP (rate)
  std::uint32_t idle_depth = 16;  // SQ/RQ ring depth of an idle QP
  std::string idle_type = "rc";   // rc, uc or ud QPs, or cq
  std::string mode = "rate";
  std::string op = "write";  // write or send
  std::uint32_t size = 64;   // message bytes
  std::string link = "ring";
  double warmup_s = 0.3;
  double duration_s = 2.0;
  std::uint64_t count = 0;
  std::string lcore = "0";
  std::uint32_t memory = 512;
  // A policy both hosts run: off, homa (the Homa-like scheduler), dcqcn,
  // isolation (isolation auto), or stages (the stage stamps, read from the
  // run's TSC clock).
  std::string policy = "off";
};

// `policy` (Options::policy) turned on in c.
void enable_policy(const std::string& policy, engine::VnicConfig* c) {
  if (policy == "homa") c->homa.enabled = true;
  if (policy == "dcqcn") c->dcqcn.enabled = true;
  if (policy == "isolation") c->sched.isolation = sched::Isolation::kAuto;
  if (policy == "stages") c->stage_stamps = true;
}

// The stage stamps' clock (engine/stage_stamps.h): the run's.
TimeNs read_tsc_clock(const void* c) { return static_cast<const engine::TscClock*>(c)->now(); }

struct Window {
  std::uint64_t completions = 0;
  std::uint64_t errors = 0;
  std::uint64_t iterations = 0;
  double seconds = 0;
};

struct Traffic {
  bool send = false;
  std::uint32_t size = 64;
  std::uint32_t outstanding = 1;
};

// The loop: post up to `outstanding` per QP (and, for SENDs, refill B's
// receives), poll A, poll B, reap both CQs.
template <class PortIo, class Now, class Done>
[[gnu::always_inline]] inline Window window(Host<PortIo>& a, Host<PortIo>& b, std::vector<Qp>& qps,
                                            std::vector<Qp>& peers, Cq& cq, Cq& peer_cq,
                                            const Traffic& tr, Now&& now, Done&& done,
                                            RttHistogram* lat, std::vector<TimeNs>* posted_at) {
  Window w;
  const std::uint64_t remote = reinterpret_cast<std::uint64_t>(b.mem.data());
  std::vector<std::uint32_t> inflight(qps.size(), 0);
  const TimeNs t0 = now();
  while (!done(w, now())) {
    const TimeNs t = now();
    for (std::size_t i = 0; i < qps.size(); ++i) {
      if (tr.send) post_recvs(b, peers[i], tr.size);
      while (inflight[i] < tr.outstanding &&
             post_send(a, qps[i], i, tr.send, tr.size, remote, b.key)) {
        if (posted_at != nullptr) (*posted_at)[i] = t;
        ++inflight[i];
      }
    }
    a.vnic->poll(t);
    b.vnic->poll(t);
    ib_uverbs_wc wc{};
    while (peer_cq.cons.try_pop(&wc)) {
      if (wc.status != 0) ++w.errors;
    }
    const TimeNs t2 = lat != nullptr ? now() : 0;
    while (cq.cons.try_pop(&wc)) {
      if (wc.status != 0) ++w.errors;
      ++w.completions;
      --inflight[wc.wr_id];
      if (lat != nullptr) lat->record(t2 - (*posted_at)[wc.wr_id]);
    }
    ++w.iterations;
  }
  w.seconds = static_cast<double>(now() - t0) / 1e9;
  return w;
}

// The measured loop and the warm-up, kept out of line and apart so callgrind
// counts the measured one alone (the warm-up pays one-time costs: the first
// visit of every new QP's rings).
template <class PortIo, class... Args>
[[gnu::noinline]] Window measured_window(Host<PortIo>& a, Args&&... args) {
  return window(a, std::forward<Args>(args)...);
}
template <class PortIo, class... Args>
[[gnu::noinline]] Window warmup_window(Host<PortIo>& a, Args&&... args) {
  return window(a, std::forward<Args>(args)...);
}

template <class PortIo>
int run(PortIo& ia, PortIo& ib, const Options& o, const engine::TscClock& clock) {
  // Room for every ring: an idle QP's two at idle_depth, 2 x active at depth.
  auto ring_bytes_at = [](std::uint32_t depth) {
    shm::RingGeometry sq, rq;
    if (shm::make_geometry(shm::sq_elem_bytes(1, 0), depth, &sq) != shm::RingError::kOk ||
        shm::make_geometry(shm::rq_elem_bytes(1), depth, &rq) != shm::RingError::kOk) {
      return std::size_t{1} << 30;
    }
    return sq.bytes() + rq.bytes() + 128;
  };
  Arena arena(static_cast<std::size_t>(o.qps) * ring_bytes_at(o.idle_depth) +
              2 * static_cast<std::size_t>(o.active) * ring_bytes_at(std::max(o.depth, 1u)) +
              (64u << 20));
  if (!arena.ok()) {
    std::fprintf(stderr, "engine-bench: cannot map the ring arena\n");
    return 1;
  }
  const auto max_a = static_cast<std::uint32_t>(o.qps + o.active + 4);
  // What the Vnic allocates per QP slot at construction (its tables are
  // sized by max_qps), apart from what each QP allocates when created.
  const std::uint64_t heap_pre = heap_bytes();
  engine::VnicConfig cfg_a = host_config(kMacA, kIpA, max_a);
  enable_policy(o.policy, &cfg_a);
  Host<PortIo> a(ia, cfg_a, arena);
  for (std::size_t i = 0; i < a.mem.size(); ++i) a.mem[i] = static_cast<std::uint8_t>(i * 7 + 1);
  const double slot_bytes =
      static_cast<double>(heap_bytes() - heap_pre - a.mem.size()) / static_cast<double>(max_a);
  engine::VnicConfig cfg_b = host_config(kMacB, kIpB, o.active + 4);
  enable_policy(o.policy, &cfg_b);
  Host<PortIo> b(ib, cfg_b, arena);
  a.vnic->set_stage_clock(&read_tsc_clock, &clock);
  b.vnic->set_stage_clock(&read_tsc_clock, &clock);
  Cq acq, bcq, idle_cq;
  if (create_cq(a, arena, 4096, &acq) || create_cq(b, arena, 4096, &bcq) ||
      create_cq(a, arena, 1, &idle_cq)) {
    std::fprintf(stderr, "engine-bench: cannot create the CQs\n");
    return 1;
  }
  std::vector<Qp> aq(o.active), bq(o.active);
  for (std::uint32_t i = 0; i < o.active; ++i) {
    if (create_qp(a, arena, acq, std::max(o.depth, 1u), &aq[i]) ||
        create_qp(b, arena, bcq, std::max(o.depth, 1u), &bq[i])) {
      std::fprintf(stderr, "engine-bench: cannot create active QP %u\n", i);
      return 1;
    }
  }
  for (std::uint32_t i = 0; i < o.active; ++i) {
    if (connect(a, aq[i].id, bq[i].qpn, kMacB, kIpB) ||
        connect(b, bq[i].id, aq[i].qpn, kMacA, kIpA)) {
      std::fprintf(stderr, "engine-bench: cannot connect active QP %u\n", i);
      return 1;
    }
  }
  // The idle objects: QPs connected to a QPN B does not have (they never
  // post), or CQs nothing completes into.
  const std::uint64_t heap0 = heap_bytes();
  const std::uint64_t rss0 = rss_bytes();
  const std::size_t arena0 = arena.used();
  const transport::QpType idle_type = o.idle_type == "uc"   ? transport::QpType::kUc
                                      : o.idle_type == "ud" ? transport::QpType::kUd
                                                            : transport::QpType::kRc;
  Qp idle;
  Cq idle_cqs;
  for (std::uint64_t i = 0; i < o.qps; ++i) {
    int rc = 0;
    if (o.idle_type == "cq") {
      rc = create_cq(a, arena, o.idle_depth, &idle_cqs);
    } else {
      rc = create_qp(a, arena, idle_cq, o.idle_depth, &idle, idle_type);
      if (rc == 0) rc = connect(a, idle.id, 0xFFFFF0, kMacB, kIpB, idle_type);
    }
    if (rc != 0) {
      std::fprintf(stderr, "engine-bench: cannot create idle QP %llu\n",
                   static_cast<unsigned long long>(i));
      return 1;
    }
  }
  const std::uint64_t heap1 = heap_bytes();
  const std::uint64_t rss1 = rss_bytes();
  const std::size_t ring_bytes = arena.used() - arena0;

  const bool latency = o.mode == "latency";
  Traffic tr;
  tr.send = o.op == "send";
  tr.size = o.size;
  tr.outstanding = latency ? 1 : std::max(o.depth, 1u);
  std::vector<TimeNs> posted_at(o.active, 0);
  RttHistogram hist;
  auto now = [&] { return clock.now(); };
  // Warm-up (also lets the connect's queued ring visits run).
  const TimeNs warm_end = clock.now() + static_cast<TimeNs>(o.warmup_s * 1e9);
  warmup_window(
      a, b, aq, bq, acq, bcq, tr, now,
      [&](const Window& x, TimeNs t) { return x.iterations != 0 && t >= warm_end; }, nullptr,
      &posted_at);
  // Let what is in flight complete (before measuring, and after).
  ib_uverbs_wc wc{};
  auto drain = [&] {
    for (int i = 0; i < 10000; ++i) {
      a.vnic->poll(clock.now());
      b.vnic->poll(clock.now());
      while (acq.cons.try_pop(&wc) || bcq.cons.try_pop(&wc)) {
      }
    }
  };
  drain();
  const engine::VnicCounters ca0 = a.vnic->counters(), cb0 = b.vnic->counters();
  const TimeNs end = clock.now() + static_cast<TimeNs>(o.duration_s * 1e9);
  const Window w = measured_window(
      a, b, aq, bq, acq, bcq, tr, now,
      [&](const Window& x, TimeNs t) { return o.count != 0 ? x.completions >= o.count : t >= end; },
      latency ? &hist : nullptr, &posted_at);
  const engine::VnicCounters ca = a.vnic->counters(), cb = b.vnic->counters();
  drain();
  const bool verified = std::memcmp(b.mem.data(), a.mem.data(), o.size) == 0;
  const std::uint64_t frames = (ca.tx_frames - ca0.tx_frames) + (cb.tx_frames - cb0.tx_frames);
  const double per_idle_heap =
      o.qps == 0 ? 0.0 : static_cast<double>(heap1 - heap0) / static_cast<double>(o.qps);
  std::string lat;
  if (latency) {
    lat = fmt::format(R"(,"latency_ns":{{"median":{:.0f},"p99":{:.0f},"samples":{}}})",
                      hist.quantile_ns(0.5), hist.quantile_ns(0.99), hist.count());
  }
  fmt::print(R"({{"bench":"uroce-engine","schema":1,"link":"{}","mode":"{}","op":"{}","size":{},)"
             R"("idle_qps":{},"idle_type":"{}",)"
             R"("active_qps":{},"depth":{},"idle_depth":{},"seconds":{:.3f},"completions":{},)"
             R"("errors":{},"msgs_per_s":{:.0f},"payload_gbps":{:.3f},"verified":{},)"
             R"("frames":{},"iterations":{},)"
             R"("ring_visits":{},"timer_scans":{},"engine_heap_bytes_per_idle_qp":{:.1f},)"
             R"("engine_slot_bytes_per_qp":{:.1f},)"
             R"("rss_bytes":{},"rss_bytes_per_idle_qp":{:.1f},"ring_bytes_per_idle_qp":{:.1f}{}}})"
             "\n",
             o.link, o.mode, o.op, o.size, o.qps, o.idle_type, o.active, o.depth, o.idle_depth,
             w.seconds, w.completions, w.errors,
             w.seconds > 0 ? static_cast<double>(w.completions) / w.seconds : 0.0,
             w.seconds > 0 ? static_cast<double>(w.completions) * o.size * 8 / w.seconds / 1e9
                           : 0.0,
             verified, frames, w.iterations, ca.ring_visits - ca0.ring_visits,
             ca.timer_scans - ca0.timer_scans, per_idle_heap, slot_bytes, rss_bytes(),
             o.qps == 0 ? 0.0 : static_cast<double>(rss1 - rss0) / static_cast<double>(o.qps),
             o.qps == 0 ? 0.0 : static_cast<double>(ring_bytes) / static_cast<double>(o.qps), lat);
  std::fflush(stdout);
  return w.errors == 0 && w.completions != 0 && verified ? 0 : 1;
}

}  // namespace
}  // namespace uroce::bench

int main(int argc, char** argv) {
  using namespace uroce;
  bench::Options o;
  CLI::App app{
      "uroce-engine-bench: the daemon's engine between two hosts on one lcore (see the source "
      "header)"};
  app.add_option("--qps", o.qps, "idle objects (QPs or CQs) on host A")->capture_default_str();
  app.add_option("--idle-type", o.idle_type, "rc, uc or ud QPs in RTS, or cq")
      ->check(CLI::IsMember({"rc", "uc", "ud", "cq"}))
      ->capture_default_str();
  app.add_option("--active", o.active, "active QP pairs")->capture_default_str();
  app.add_option("--depth", o.depth, "outstanding WRITEs per active QP (rate mode)")
      ->capture_default_str();
  app.add_option("--idle-depth", o.idle_depth, "ring depth of an idle QP")->capture_default_str();
  app.add_option("--mode", o.mode, "rate or latency")
      ->check(CLI::IsMember({"rate", "latency"}))
      ->capture_default_str();
  app.add_option("--op", o.op, "write or send")
      ->check(CLI::IsMember({"write", "send"}))
      ->capture_default_str();
  app.add_option("--size", o.size, "message bytes (one SGE)")
      ->check(CLI::Range(1u, 65536u))
      ->capture_default_str();
  app.add_option("--link", o.link, "ring (net_ring pair, EAL) or sim (simulated link)")
      ->check(CLI::IsMember({"ring", "sim"}))
      ->capture_default_str();
  app.add_option("--warmup", o.warmup_s, "seconds")->capture_default_str();
  app.add_option("--duration", o.duration_s, "seconds")->capture_default_str();
  app.add_option("--count", o.count, "stop after this many completions (callgrind)");
  app.add_option("--lcore", o.lcore, "EAL -l")->capture_default_str();
  app.add_option("--memory", o.memory, "EAL -m, MB")->capture_default_str();
  app.add_option("--policy", o.policy,
                 "a policy both hosts run: off, homa, dcqcn, isolation or stages")
      ->check(CLI::IsMember({"off", "homa", "dcqcn", "isolation", "stages"}))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  const bench::LinkOptions link{o.link, o.lcore, o.memory};
  return bench::with_link(link, "engine-bench", [&](auto& ia, auto& ib) {
    // The TSC rate comes from the EAL, which with_link has started.
    const engine::TscClock clock = engine::TscClock::from_eal();
    return bench::run(ia, ib, o, clock);
  });
}
