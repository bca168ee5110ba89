// uroce-lcore-bench: the engine on several lcores in one process (docs/
// engine.md "Several lcores"). Two devices, A and B, each split into
// `--lcores` shards (engine::Vnic with VnicConfig::shard/shards), shard i of
// each on queue i of a crossed net_ring pair whose A-to-B and B-to-A rings
// are per queue (what a NIC's RSS does for steered packets: a packet sent on
// queue i arrives on the peer's queue i). Lcore i runs A's shard i and B's
// shard i alternately, and its `--active` RC QPs on A send `--size`-byte
// WRITEs (or SENDs, B keeping receives posted) to their peers on B, each
// with `--depth` outstanding. The figure is the aggregate of completions
// per second over every lcore.
//
// With --cross the A QPs of lcore i are connected to B QPs of lcore i + 1
// (mod n): every request arrives on B's shard i and every response on A's
// shard i + 1, so every packet is handed to its owner through the hand-off
// rings (shard_links.h): what a peer that chooses its own UDP source ports
// (rxe, an RNIC) costs. With one lcore --cross changes nothing.
//
// One JSON line: the aggregate and per-lcore messages/s, payload Gb/s, the
// frames sent and the hand-offs per message (measured window), the
// hand-offs refused over the whole run, and whether B's memory holds A's
// bytes.
#include <rte_launch.h>
#include <rte_lcore.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench/engine_rig.h"
#include "datapath/engine/shard_links.h"
#include "datapath/engine/tsc_clock.h"
#include "fmt/format.h"

namespace uroce::bench {
namespace {

struct Options {
  std::uint16_t lcores = 1;
  std::uint32_t active = 2;  // active QP pairs per lcore
  std::uint32_t depth = 16;  // outstanding WRs per active QP
  std::string op = "send";   // write or send
  std::uint32_t size = 64;
  double warmup_s = 0.3;
  double duration_s = 2.0;
  bool cross = false;
  std::uint32_t memory = 1024;
};

using Io = engine::EthPortIo;

// One lcore's share: A's and B's shards, its QPs and CQs. `peer` is the lane
// whose B QPs its A QPs talk to (itself, or the next one with --cross); the
// receives it posts and the completions it reaps on B are its own B QPs',
// so every ring an application writes stays on its lcore and only packets
// cross between lcores.
// Cache-line aligned: each lcore writes its own lane's results, and no line
// may hold two lanes' fields.
struct alignas(64) Lane {
  std::unique_ptr<Io> io_a, io_b;
  std::unique_ptr<Host<Io>> a, b;
  Cq acq, bcq;
  std::vector<Qp> aq, bq;
  Lane* peer = nullptr;  // whose bq/bcq/b this lane's QPs talk to
  // Results: of the measured window only, but errors.
  std::uint64_t completions = 0, errors = 0, handoffs = 0, frames = 0;
  double seconds = 0;
};

// Starts every lane's measurement at the same time.
std::atomic<std::uint32_t> g_ready{0};
std::atomic<bool> g_go{false};

struct LaneRun {
  Lane* lane;
  const Options* o;
  const engine::TscClock* clock;
  std::uint16_t lanes;
};

// The loop of one lcore: post up to depth per QP (and refill the peer's
// receives), poll A's shard and B's shard, reap both CQs.
int lane_main(void* arg) {
  const LaneRun& r = *static_cast<const LaneRun*>(arg);
  Lane& l = *r.lane;
  Lane& p = *l.peer;
  // This lcore runs both shards from now on (base/owner_thread.h).
  l.a->vnic->adopt_thread();
  l.b->vnic->adopt_thread();
  const bool send = r.o->op == "send";
  const std::uint64_t remote = reinterpret_cast<std::uint64_t>(p.b->mem.data());
  std::vector<std::uint32_t> inflight(l.aq.size(), 0);
  // Counted here, stored in the lane at the end.
  std::uint64_t completions = 0, errors = 0;
  auto now = [&] { return r.clock->now(); };
  auto step = [&](bool count) {
    for (std::size_t i = 0; i < l.aq.size(); ++i) {
      // Receives for this lcore's own B QPs (which lcore i - 1's QPs send
      // to with --cross): the application's side stays on the lcore.
      if (send) post_recvs(*l.b, l.bq[i], r.o->size);
      while (inflight[i] < r.o->depth &&
             post_send(*l.a, l.aq[i], i, send, r.o->size, remote, p.b->key)) {
        ++inflight[i];
      }
    }
    const TimeNs t = now();
    l.a->vnic->poll(t);
    l.b->vnic->poll(t);
    ib_uverbs_wc wc{};
    while (l.bcq.cons.try_pop(&wc)) {
      if (wc.status != 0) ++errors;
    }
    while (l.acq.cons.try_pop(&wc)) {
      if (wc.status != 0) ++errors;
      if (count) ++completions;
      --inflight[wc.wr_id];
    }
  };
  const TimeNs warm_end = now() + static_cast<TimeNs>(r.o->warmup_s * 1e9);
  while (now() < warm_end) step(false);
  // Every lane warmed up, then all measure together; each keeps polling
  // until the last is done, so that no lane's peer stops answering early.
  g_ready.fetch_add(1);
  while (g_ready.load() < r.lanes) step(false);
  auto moved = [&](std::uint64_t engine::VnicCounters::*f) {
    return l.a->vnic->counters().*f + l.b->vnic->counters().*f;
  };
  const std::uint64_t h0 = moved(&engine::VnicCounters::rx_handoff);
  const std::uint64_t f0 = moved(&engine::VnicCounters::tx_frames);
  const TimeNs t0 = now();
  const TimeNs end = t0 + static_cast<TimeNs>(r.o->duration_s * 1e9);
  while (now() < end) step(true);
  l.seconds = static_cast<double>(now() - t0) / 1e9;
  l.handoffs = moved(&engine::VnicCounters::rx_handoff) - h0;
  l.frames = moved(&engine::VnicCounters::tx_frames) - f0;
  g_ready.fetch_add(1);
  while (g_ready.load() < 2u * r.lanes) step(false);
  for (int i = 0; i < 20000; ++i) step(false);
  l.completions = completions;
  l.errors = errors;
  return 0;
}

int run(const Options& o) {
  const std::uint16_t n = o.lcores;
  port::EthPort pa, pb;
  if (open_ring_ports("ulb", n, 16383, pa, pb, "lcore-bench") != 0) return 1;
  std::string err;
  engine::ShardLinks la, lb;
  if (la.open("ulb_la", n, engine::ShardLinks::kDefaultDepth, &err) != 0 ||
      lb.open("ulb_lb", n, engine::ShardLinks::kDefaultDepth, &err) != 0) {
    std::fprintf(stderr, "lcore-bench: %s\n", err.c_str());
    return 1;
  }
  auto ring_bytes = [&] {
    shm::RingGeometry sq, rq;
    (void)shm::make_geometry(shm::sq_elem_bytes(1, 0), o.depth, &sq);
    (void)shm::make_geometry(shm::rq_elem_bytes(1), o.depth, &rq);
    return sq.bytes() + rq.bytes() + 128;
  }();
  Arena arena(2u * n * o.active * ring_bytes + n * (64u << 20));
  if (!arena.ok()) {
    std::fprintf(stderr, "lcore-bench: cannot map the ring arena\n");
    return 1;
  }
  std::vector<Lane> lanes(n);
  for (std::uint16_t i = 0; i < n; ++i) {
    Lane& l = lanes[i];
    l.io_a = std::make_unique<Io>(pa, i, &la);
    l.io_b = std::make_unique<Io>(pb, i, &lb);
    engine::VnicConfig ca = host_config(kMacA, kIpA, o.active + 4);
    engine::VnicConfig cb = host_config(kMacB, kIpB, o.active + 4);
    ca.shard = cb.shard = i;
    ca.shards = cb.shards = n;
    l.a = std::make_unique<Host<Io>>(*l.io_a, ca, arena);
    l.b = std::make_unique<Host<Io>>(*l.io_b, cb, arena);
    for (std::size_t k = 0; k < l.a->mem.size(); ++k) {
      l.a->mem[k] = static_cast<std::uint8_t>(k * 7 + 1 + i);
    }
    if (create_cq(*l.a, arena, 4096, &l.acq) || create_cq(*l.b, arena, 4096, &l.bcq)) {
      std::fprintf(stderr, "lcore-bench: cannot create the CQs of lcore %u\n", i);
      return 1;
    }
    l.aq.resize(o.active);
    l.bq.resize(o.active);
    for (std::uint32_t k = 0; k < o.active; ++k) {
      if (create_qp(*l.a, arena, l.acq, o.depth, &l.aq[k]) ||
          create_qp(*l.b, arena, l.bcq, o.depth, &l.bq[k])) {
        std::fprintf(stderr, "lcore-bench: cannot create QP %u of lcore %u\n", k, i);
        return 1;
      }
    }
  }
  for (std::uint16_t i = 0; i < n; ++i) {
    Lane& l = lanes[i];
    l.peer = &lanes[o.cross ? (i + 1) % n : i];
    // Each side of a pair is brought up by its own shard (the control path
    // of the Vnic that owns it), on this thread before any lcore runs.
    for (std::uint32_t k = 0; k < o.active; ++k) {
      if (connect(*l.a, l.aq[k].id, l.peer->bq[k].qpn, kMacB, kIpB) ||
          connect(*l.peer->b, l.peer->bq[k].id, l.aq[k].qpn, kMacA, kIpA)) {
        std::fprintf(stderr, "lcore-bench: cannot connect QP %u of lcore %u\n", k, i);
        return 1;
      }
    }
  }
  const engine::TscClock clock = engine::TscClock::from_eal();
  std::vector<LaneRun> runs(n);
  std::vector<unsigned> ids;
  unsigned lc = 0;
  RTE_LCORE_FOREACH_WORKER(lc) ids.push_back(lc);
  if (ids.size() + 1 < n) {
    std::fprintf(stderr, "lcore-bench: %u lcores asked, EAL has %zu\n", n, ids.size() + 1);
    return 1;
  }
  for (std::uint16_t i = 0; i < n; ++i) runs[i] = {&lanes[i], &o, &clock, n};
  for (std::uint16_t i = 1; i < n; ++i) {
    if (rte_eal_remote_launch(lane_main, &runs[i], ids[i - 1]) != 0) {
      std::fprintf(stderr, "lcore-bench: cannot launch lcore %u\n", ids[i - 1]);
      return 1;
    }
  }
  lane_main(&runs[0]);
  rte_eal_mp_wait_lcore();
  // Every lcore stopped: this thread reads and destroys the shards.
  for (Lane& l : lanes) {
    l.a->vnic->adopt_thread();
    l.b->vnic->adopt_thread();
  }

  double msgs = 0;
  std::uint64_t errors = 0, frames = 0, handoff = 0, handoff_drop = 0, done = 0;
  std::string per;
  bool verified = true;
  for (std::uint16_t i = 0; i < n; ++i) {
    const Lane& l = lanes[i];
    const double r = l.seconds > 0 ? static_cast<double>(l.completions) / l.seconds : 0;
    msgs += r;
    errors += l.errors;
    done += l.completions;
    frames += l.frames;
    handoff += l.handoffs;
    for (const auto* h : {l.a.get(), l.b.get()}) {
      handoff_drop += h->vnic->counters().rx_handoff_drop;
    }
    per += fmt::format("{}{:.0f}", i == 0 ? "" : ",", r);
    verified = verified && std::memcmp(l.peer->b->mem.data(), l.a->mem.data(), o.size) == 0;
  }
  fmt::print(R"({{"bench":"uroce-lcore","schema":1,"lcores":{},"cross":{},"op":"{}","size":{},)"
             R"("active_qps_per_lcore":{},"depth":{},"seconds":{:.3f},"msgs_per_s":{:.0f},)"
             R"("msgs_per_s_per_lcore":[{}],"payload_gbps":{:.3f},"errors":{},)"
             R"("frames_per_msg":{:.3f},"handoffs_per_msg":{:.3f},"rx_handoff_drop":{},)"
             R"("verified":{}}})"
             "\n",
             n, o.cross, o.op, o.size, o.active, o.depth, o.duration_s, msgs, per,
             msgs * o.size * 8 / 1e9, errors,
             done == 0 ? 0.0 : static_cast<double>(frames) / static_cast<double>(done),
             done == 0 ? 0.0 : static_cast<double>(handoff) / static_cast<double>(done),
             handoff_drop, verified);
  lanes.clear();
  la.close();
  lb.close();
  return errors == 0 && verified ? 0 : 1;
}

}  // namespace
}  // namespace uroce::bench

int main(int argc, char** argv) {
  using namespace uroce;
  bench::Options o;
  CLI::App app{"uroce-lcore-bench: the engine on several lcores in one process (see the source)"};
  app.add_option("--lcores", o.lcores, "engine lcores (EAL -l 0..n-1)")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  app.add_option("--active", o.active, "active QP pairs per lcore")->capture_default_str();
  app.add_option("--depth", o.depth, "outstanding WRs per active QP")->capture_default_str();
  app.add_option("--op", o.op, "write or send")
      ->check(CLI::IsMember({"write", "send"}))
      ->capture_default_str();
  app.add_option("--size", o.size, "message bytes (one SGE)")
      ->check(CLI::Range(1u, 65536u))
      ->capture_default_str();
  app.add_option("--warmup", o.warmup_s, "seconds")->capture_default_str();
  app.add_option("--duration", o.duration_s, "seconds")->capture_default_str();
  app.add_flag("--cross", o.cross, "connect lcore i's QPs to lcore i+1's: every packet handed off");
  app.add_option("--memory", o.memory, "EAL -m, MB")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  port::EalConfig eal;
  eal.lcores = o.lcores == 1 ? "0" : fmt::format("0-{}", o.lcores - 1);
  eal.memory_mb = o.memory;
  eal.log_level = "error";
  std::string err;
  if (port::eal_init(eal, &err) != 0) {
    std::fprintf(stderr, "lcore-bench: EAL: %s\n", err.c_str());
    return 1;
  }
  const int rc = bench::run(o);
  port::eal_cleanup();
  return rc;
}
