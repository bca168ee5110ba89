// uroce-dc-scale: what the DC transport (docs/dc.md) costs as the number of
// targets or initiators grows, on the daemon's engine, in process as
// uroce-engine-bench (bench/engine_rig.h: two engine::Vnic hosts on the
// calling lcore over a crossed net_ring pair, objects made through the Vnic
// API as uroced's sessions make them). Through uroced each QP would need two
// memfds and the daemon's per-QP limits raised; here a hundred thousand
// DCTs cost only what the engine allocates for them.
//
// Modes (host A initiates, host B is the target):
//   fanout     one DCI on A; `--count` DCTs on B sharing one SRQ and one
//              receive CQ, one AH; WR i goes to DCT i % count, on stream
//              i % `--streams`
//   rc-fanout  `--count` RC QP pairs (B's on the same SRQ), WR i on pair
//              i % count: the same fan-out with one connection per target
//   many-dci   `--count` DCIs on A, one DCT on B; WR i on DCI i % count
// WRs are signaled `--size`-byte WRITEs or SENDs. WR i carries slot
// t = i % count: its bytes come from slot t of A's memory (which begins
// with t, so a misdirected message shows) and a WRITE lands in slot t of
// B's; a SEND lands in a receive buffer of the SRQ, checked against slot t
// as it completes and posted again.
//
// One run measures, and prints as one JSON line:
//   rate     `--window` WRs outstanding on A (over all its QPs) for
//            `--duration` s after `--warmup` s: completions per second,
//            frames per message
//   latency  one WR outstanding for `--latency-duration` s: post-to-
//            completion time, median and p99
//   memory   the engine's heap bytes per target object (DCT, or B's RC QP)
//            and per initiator (DCI, or A's RC QP), by mallinfo2 around
//            their creation; the DC pool's heap (mallinfo2 around the first
//            DCT, which makes it) and memory_bytes(); contexts open at the
//            end and at most during the run; heap growth while traffic ran;
//            the process RSS
//   checks   every WR completed, none in error; each WRITE slot reached
//            holds A's bytes, each SEND received the bytes of its slot and
//            (fan-outs) arrived at its slot's target
// With --messages the rate window stops after that many completions (for
// callgrind, which counts measured_window() alone) and latency is skipped.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench/engine_rig.h"
#include "bench/rtt_histogram.h"
#include "datapath/engine/tsc_clock.h"
#include "fmt/format.h"

namespace uroce::bench {
namespace {

constexpr std::uint64_t kDcKey = 0x5ca1ab1e0ddba11ull;
constexpr engine::ObjId kAh = 1'000'000'000;  // beside the objects' ids
constexpr engine::ObjId kSrq = 1'000'000'001;
constexpr std::uint32_t kSrqDepth = 1024;

struct Options {
  std::string mode = "fanout";
  std::uint32_t count = 1;    // targets (fan-outs) or DCIs (many-dci)
  std::uint32_t streams = 1;  // DCI streams, a power of two up to 16
  std::uint32_t window = 16;  // WRs outstanding in the rate window
  std::string op = "write";
  std::uint32_t size = 64;
  double warmup_s = 0.3;
  double duration_s = 1.0;
  double latency_s = 0.5;
  std::uint64_t messages = 0;
  std::uint32_t dc_contexts = engine::VnicConfig{}.dc_contexts;
  std::uint32_t dc_records_log2 = engine::VnicConfig{}.dc_records_log2;
  std::uint32_t dc_idle_us = engine::VnicConfig{}.dc_idle_disconnect_us;
  LinkOptions link;
};

enum class Mode { kFanout, kRcFanout, kManyDci };

struct Srq {
  shm::RqProducer rq;
  std::uint32_t db = 0;
};

// What the hosts hold and what the loop keeps between its windows.
template <class PortIo>
struct Rig {
  Host<PortIo>& a;
  Host<PortIo>& b;
  Mode mode;
  bool send;
  std::uint32_t size;
  std::uint32_t count;
  std::uint32_t streams;
  Cq acq, bcq;
  Srq srq;
  std::size_t recv_base = 0;        // B's receive buffers, after its slots
  std::vector<Qp> senders;          // A: the DCI(s) or RC QPs
  std::vector<Qp> peers;            // B: RC QPs (rc-fanout)
  std::vector<std::uint32_t> dctn;  // B: DCT numbers
  std::uint32_t b_qpn_base = 0;     // B's target QPNs are contiguous from here
  std::vector<std::uint8_t> reached;
  std::uint64_t next = 0;  // the next WR's number
  std::uint32_t inflight = 0;
  TimeNs posted_at = 0;  // of the last WR (latency: the only one)
  std::uint64_t posted = 0, completed = 0, errors = 0;
  std::uint64_t recv_checked = 0, recv_bad = 0;
  std::uint32_t contexts_max = 0;
};

template <class PortIo>
bool post_next(Rig<PortIo>& r) {
  const std::uint32_t t = static_cast<std::uint32_t>(r.next % r.count);
  const std::size_t off = static_cast<std::size_t>(t) * r.size;
  const std::uint64_t remote = reinterpret_cast<std::uint64_t>(r.b.mem.data() + off);
  if (r.mode == Mode::kRcFanout) {
    return post_wr(r.a, r.senders[t], t, r.send, r.size, off, remote, r.b.key);
  }
  shm::WqeDcAddr dc{kAh, r.dctn[0], kDcKey, 0};
  Qp* q = &r.senders[0];
  if (r.mode == Mode::kFanout) {
    dc.dctn = r.dctn[t];
    dc.stream = static_cast<std::uint16_t>(r.next % r.streams);
  } else {
    q = &r.senders[t];
  }
  return post_wr(r.a, *q, t, r.send, r.size, off, remote, r.b.key, &dc);
}

// B's receive completions: each buffer must hold the bytes of the slot it
// names (and, in a fan-out, have come to that slot's target); then it
// goes back to the SRQ.
template <class PortIo>
void reap_recvs(Rig<PortIo>& r) {
  ib_uverbs_wc wc{};
  std::uint32_t n = 0;
  while (r.bcq.cons.try_pop(&wc)) {
    ++r.recv_checked;
    const std::uint8_t* buf = r.b.mem.data() + r.recv_base + wc.wr_id * r.size;
    std::uint64_t t = 0;
    std::memcpy(&t, buf, sizeof(t));
    const bool ok = wc.status == 0 && wc.byte_len == r.size && t < r.count &&
                    std::memcmp(buf, r.a.mem.data() + t * r.size, r.size) == 0 &&
                    (r.mode == Mode::kManyDci || wc.qp_num - r.b_qpn_base == t);
    if (!ok) ++r.recv_bad;
    const shm::WqeSge sge{reinterpret_cast<std::uint64_t>(buf), r.size, r.b.key};
    if (inproc::write_recv(r.srq.rq, n, wc.wr_id, std::span<const shm::WqeSge>(&sge, 1), 1) == 0) {
      ++n;
    }
  }
  inproc::publish_recvs(r.srq.rq, &r.b.bells, r.srq.db, n);
}

struct Window {
  std::uint64_t completions = 0;
  std::uint64_t iterations = 0;
  double seconds = 0;
};

// The loop: keep `outstanding` WRs posted (round robin, each waiting for
// room in its QP's ring), poll A, poll B, reap both CQs.
template <class PortIo, class Now, class Done>
[[gnu::always_inline]] inline Window window(Rig<PortIo>& r, std::uint32_t outstanding, Now&& now,
                                            Done&& done, RttHistogram* lat) {
  Window w;
  const auto* pool = r.b.vnic->dc_pool();
  const TimeNs t0 = now();
  while (!done(w, now())) {
    const TimeNs t = now();
    while (r.inflight < outstanding && post_next(r)) {
      ++r.next;
      ++r.inflight;
      ++r.posted;
      r.posted_at = t;
    }
    r.a.vnic->poll(t);
    r.b.vnic->poll(t);
    if (r.send) reap_recvs(r);
    const TimeNs t2 = lat != nullptr ? now() : 0;
    ib_uverbs_wc wc{};
    while (r.acq.cons.try_pop(&wc)) {
      if (wc.status != 0) ++r.errors;
      else r.reached[wc.wr_id] = 1;
      ++w.completions;
      ++r.completed;
      --r.inflight;
      if (lat != nullptr) lat->record(t2 - r.posted_at);
    }
    if (pool != nullptr) r.contexts_max = std::max(r.contexts_max, pool->table().size());
    ++w.iterations;
  }
  w.seconds = static_cast<double>(now() - t0) / 1e9;
  return w;
}

// Kept out of line and apart, so callgrind counts the measured window
// alone (the warm-up pays the first visit of every object).
template <class PortIo, class... Args>
[[gnu::noinline]] Window measured_window(Rig<PortIo>& r, Args&&... args) {
  return window(r, std::forward<Args>(args)...);
}
template <class PortIo, class... Args>
[[gnu::noinline]] Window warmup_window(Rig<PortIo>& r, Args&&... args) {
  return window(r, std::forward<Args>(args)...);
}

template <class PortIo>
int create_srq(Host<PortIo>& h, Arena& arena, Srq* out) {
  engine::RingMem ring;
  if (!make_ring(arena, shm::rq_elem_bytes(1), kSrqDepth, 0, &ring)) return ENOMEM;
  if (out->rq.attach(ring.mem, ring.bytes, ring.geo) != shm::RingError::kOk) return EINVAL;
  engine::SrqCreate c;
  c.id = kSrq;
  c.client = kClient;
  c.srq_num = 1;
  c.pd = kPd;
  c.max_wr = kSrqDepth;
  c.max_sge = 1;
  c.ring = ring;
  if (int rc = h.vnic->create_srq(c); rc != 0) return rc;
  return h.vnic->srq_doorbell(kSrq, &out->db);
}

// A DCT on the SRQ, in RTR (the state a DCT serves in); its number in *dctn.
template <class PortIo>
int create_dct(Host<PortIo>& h, const Cq& cq, engine::ObjId* id, std::uint32_t* dctn) {
  if (int rc = h.vnic->alloc_qpn(dctn); rc != 0) return rc;
  engine::QpCreate c;
  c.id = *id = h.next_id++;
  c.client = kClient;
  c.type = transport::QpType::kDct;
  c.qpn = *dctn;
  c.pd = kPd;
  c.recv_cq = cq.id;
  c.srq = kSrq;
  c.dct_key = kDcKey;
  if (int rc = h.vnic->create_qp(c); rc != 0) return rc;
  return inproc::bring_up(*h.vnic, c.id, inproc::dct_bring_up({.mtu = wire::PathMtu::k4096}));
}

// A DCI with 2^log_streams streams and an SQ ring of `depth`, in RTS.
template <class PortIo>
int create_dci(Host<PortIo>& h, Arena& arena, const Cq& cq, std::uint32_t depth,
               std::uint8_t log_streams, Qp* out) {
  engine::RingMem sq;
  if (!make_ring(arena, shm::sq_elem_bytes(1, 0), depth, 0, &sq)) return ENOMEM;
  if (out->sq.attach(sq.mem, sq.bytes, sq.geo) != shm::RingError::kOk) return EINVAL;
  if (int rc = h.vnic->alloc_qpn(&out->qpn); rc != 0) return rc;
  engine::QpCreate c;
  c.id = out->id = h.next_id++;
  c.client = kClient;
  c.type = transport::QpType::kDci;
  c.qpn = out->qpn;
  c.pd = kPd;
  c.send_cq = cq.id;
  c.dci_log_streams = log_streams;
  c.max_send_wr = depth;
  c.max_send_sge = 1;
  c.sq = sq;
  if (int rc = h.vnic->create_qp(c); rc != 0) return rc;
  if (int rc = h.vnic->qp_doorbells(c.id, &out->sq_db, &out->rq_db); rc != 0) return rc;
  inproc::DciAttrs d;
  d.mtu = wire::PathMtu::k4096;
  d.timeout = 16;  // 268 ms: no spurious retransmission
  d.max_rd_atomic = 1;
  return inproc::bring_up(*h.vnic, c.id, inproc::dci_bring_up(d));
}

std::size_t ring_bytes(std::size_t elem, std::uint32_t depth) {
  shm::RingGeometry g;
  if (shm::make_geometry(elem, depth, &g) != shm::RingError::kOk) return std::size_t{1} << 20;
  return g.bytes() + 64;
}

std::uint8_t log2_of(std::uint32_t v) {
  std::uint8_t l = 0;
  while ((1u << l) < v) ++l;
  return l;
}

double per(std::uint64_t bytes, std::uint64_t n) {
  return n == 0 ? 0.0 : static_cast<double>(bytes) / static_cast<double>(n);
}

// What the run reports beside its windows.
struct Memory {
  double heap_per_target = 0;      // DCT, or B's RC QP
  double heap_per_initiator = 0;   // DCI, or A's RC QP
  double slot_bytes_b = 0;         // B's Vnic, per QP slot (max_qps)
  std::uint64_t pool_heap = 0;     // the DC pool, mallinfo2
  std::uint64_t targets_heap = 0;  // B's target objects and the pool
  std::uint64_t rss_after_setup = 0;
  double setup_s = 0;
};

template <class PortIo>
int run(PortIo& ia, PortIo& ib, const Options& o, const engine::TscClock& clock) {
  const Mode mode = o.mode == "fanout"      ? Mode::kFanout
                    : o.mode == "rc-fanout" ? Mode::kRcFanout
                                            : Mode::kManyDci;
  const std::uint32_t n = o.count;
  const std::uint32_t w = std::max(o.window, 1u);
  // Ring depths: a lone sender holds the whole window; many share it.
  const std::uint32_t fan_depth = mode == Mode::kFanout ? w + 1 : (w + n - 1) / n + 1;
  const std::size_t sq_elem = shm::sq_elem_bytes(1, 0);
  Arena arena(static_cast<std::size_t>(n) * 2 * (ring_bytes(sq_elem, fan_depth) + 64) +
              ring_bytes(sq_elem, w + 1) + (64u << 20));
  if (!arena.ok()) {
    std::fprintf(stderr, "dc-scale: cannot map the ring arena\n");
    return 1;
  }
  Memory mem;
  const TimeNs setup0 = clock.now();
  const std::size_t slots = static_cast<std::size_t>(n) * o.size;
  const std::uint32_t a_qps = mode == Mode::kFanout ? 8 : n + 8;
  const std::uint32_t b_qps = mode == Mode::kManyDci ? 8 : n + 8;
  engine::VnicConfig ca = host_config(kMacA, kIpA, a_qps);
  ca.dc_idle_disconnect_us = o.dc_idle_us;
  engine::VnicConfig cb = host_config(kMacB, kIpB, b_qps);
  cb.dc_contexts = o.dc_contexts;
  cb.dc_records_log2 = o.dc_records_log2;
  Host<PortIo> a(ia, ca, arena, std::max<std::size_t>(slots, 1 << 20));
  // Slot t of A's memory: t, then bytes that differ from slot to slot.
  for (std::size_t i = 0; i < a.mem.size(); ++i) {
    a.mem[i] = static_cast<std::uint8_t>(i * 7 + 1 + (i / o.size) * 13);
  }
  for (std::uint64_t t = 0; t < n; ++t) std::memcpy(a.mem.data() + t * o.size, &t, sizeof(t));
  const std::uint64_t heap_b0 = heap_bytes();
  const std::size_t b_mem = std::max<std::size_t>(slots, 1 << 20) + kSrqDepth * o.size;
  Host<PortIo> b(ib, cb, arena, b_mem);
  mem.slot_bytes_b = per(heap_bytes() - heap_b0 - b_mem, b_qps);

  Rig<PortIo> r{a, b, mode, o.op == "send", o.size, n, std::max(o.streams, 1u)};
  r.recv_base = std::max<std::size_t>(slots, 1 << 20);
  r.reached.assign(n, 0);
  if (create_cq(a, arena, 4096, &r.acq) || create_cq(b, arena, 4096, &r.bcq) ||
      create_srq(b, arena, &r.srq)) {
    std::fprintf(stderr, "dc-scale: cannot create the CQs and the SRQ\n");
    return 1;
  }
  engine::AhCreate ah;
  ah.id = kAh;
  ah.client = kClient;
  ah.pd = kPd;
  ah.dmac = kMacB;
  ah.dip = kIpB;
  if (a.vnic->create_ah(ah) != 0) return 1;

  auto fail = [](const char* what, std::uint64_t i, int rc) {
    std::fprintf(stderr, "dc-scale: cannot create %s %llu (%d)\n", what,
                 static_cast<unsigned long long>(i), rc);
    return 1;
  };
  // The first DCT makes the pool: one more DCT, idle, before the measured
  // ones, whose own bytes (as one of those) are taken off the pool's.
  std::uint64_t first_dct_heap = 0;
  if (mode != Mode::kRcFanout) {
    engine::ObjId first = 0;
    std::uint32_t first_qpn = 0;
    const std::uint64_t h = heap_bytes();
    if (int rc = create_dct(b, r.bcq, &first, &first_qpn); rc != 0) return fail("DCT", 0, rc);
    first_dct_heap = heap_bytes() - h;
  }
  // Targets on B.
  const std::uint32_t n_targets = mode == Mode::kManyDci ? 1 : n;
  std::uint64_t h0 = heap_bytes();
  std::uint64_t initiators_heap = 0;
  if (mode == Mode::kRcFanout) {
    // A's QPs first (B's connect to their QPNs), measured apart.
    r.senders.resize(n);
    for (std::uint32_t i = 0; i < n; ++i) {
      if (int rc = create_qp(a, arena, r.acq, fan_depth, &r.senders[i]); rc != 0) {
        return fail("RC QP", i, rc);
      }
    }
    initiators_heap = heap_bytes() - h0;
    h0 = heap_bytes();
    r.peers.resize(n);
    for (std::uint32_t i = 0; i < n; ++i) {
      int rc = create_qp(b, arena, r.bcq, 1, &r.peers[i], transport::QpType::kRc, kSrq);
      if (rc == 0) rc = connect(b, r.peers[i].id, r.senders[i].qpn, kMacA, kIpA);
      if (rc != 0) return fail("RC peer", i, rc);
    }
    r.b_qpn_base = r.peers[0].qpn;
  } else {
    r.dctn.resize(n_targets);
    for (std::uint32_t i = 0; i < n_targets; ++i) {
      engine::ObjId id = 0;
      if (int rc = create_dct(b, r.bcq, &id, &r.dctn[i]); rc != 0) return fail("DCT", i, rc);
    }
    r.b_qpn_base = r.dctn[0];
  }
  const std::uint64_t target_heap = heap_bytes() - h0;
  mem.heap_per_target = per(target_heap, n_targets);
  if (mode != Mode::kRcFanout) {
    mem.pool_heap = first_dct_heap - static_cast<std::uint64_t>(mem.heap_per_target);
  }
  mem.targets_heap = target_heap + mem.pool_heap;
  const std::uint32_t last_qpn = mode == Mode::kRcFanout ? r.peers.back().qpn : r.dctn.back();
  if (last_qpn - r.b_qpn_base != n_targets - 1) {
    std::fprintf(stderr, "dc-scale: B's target QPNs are not contiguous\n");
    return 1;
  }
  // Initiators on A.
  h0 = heap_bytes();
  if (mode == Mode::kRcFanout) {
    for (std::uint32_t i = 0; i < n; ++i) {
      if (int rc = connect(a, r.senders[i].id, r.peers[i].qpn, kMacB, kIpB); rc != 0) {
        return fail("RC connect", i, rc);
      }
    }
    mem.heap_per_initiator = per(initiators_heap + heap_bytes() - h0, n);
  } else {
    const std::uint32_t n_dci = mode == Mode::kFanout ? 1 : n;
    const std::uint32_t depth = mode == Mode::kFanout ? w + 1 : fan_depth;
    r.senders.resize(n_dci);
    for (std::uint32_t i = 0; i < n_dci; ++i) {
      if (int rc = create_dci(a, arena, r.acq, depth, log2_of(r.streams), &r.senders[i]); rc != 0) {
        return fail("DCI", i, rc);
      }
    }
    mem.heap_per_initiator = per(heap_bytes() - h0, n_dci);
  }
  if (r.send) {
    std::uint32_t k = 0;
    for (; k < kSrqDepth; ++k) {
      const shm::WqeSge sge{reinterpret_cast<std::uint64_t>(b.mem.data() + r.recv_base +
                                                            std::size_t{k} * o.size),
                            o.size, b.key};
      const int rc = inproc::write_recv(r.srq.rq, k, k, std::span<const shm::WqeSge>(&sge, 1), 1);
      if (rc == EAGAIN) break;
      if (rc != 0) return 1;
    }
    inproc::publish_recvs(r.srq.rq, &b.bells, r.srq.db, k);
  }
  mem.setup_s = static_cast<double>(clock.now() - setup0) / 1e9;
  mem.rss_after_setup = rss_bytes();

  auto now = [&] { return clock.now(); };
  // Lets what is in flight complete (bounded: 5 s).
  auto drain = [&] {
    const TimeNs end = clock.now() + 5 * kNsPerSec;
    warmup_window(
        r, 0, now, [&](const Window&, TimeNs t) { return r.inflight == 0 || t >= end; }, nullptr);
  };
  RttHistogram hist;
  const std::uint64_t heap_traffic0 = heap_bytes();
  const TimeNs warm_end = clock.now() + static_cast<TimeNs>(o.warmup_s * 1e9);
  warmup_window(
      r, w, now, [&](const Window& x, TimeNs t) { return x.iterations != 0 && t >= warm_end; },
      nullptr);
  drain();
  const engine::VnicCounters a0 = a.vnic->counters(), b0 = b.vnic->counters();
  const TimeNs rate_end = clock.now() + static_cast<TimeNs>(o.duration_s * 1e9);
  const Window rate = measured_window(
      r, w, now,
      [&](const Window& x, TimeNs t) {
        return o.messages != 0 ? x.completions >= o.messages : t >= rate_end;
      },
      nullptr);
  const engine::VnicCounters a1 = a.vnic->counters(), b1 = b.vnic->counters();
  drain();
  if (o.messages == 0) {
    const TimeNs lat_end = clock.now() + static_cast<TimeNs>(o.latency_s * 1e9);
    warmup_window(
        r, 1, now, [&](const Window&, TimeNs t) { return t >= lat_end; }, &hist);
    drain();
  }
  const std::int64_t heap_traffic =
      static_cast<std::int64_t>(heap_bytes()) - static_cast<std::int64_t>(heap_traffic0);

  // WRITEs: every slot a WR reached holds A's bytes.
  std::uint64_t reached = 0, bad_slots = 0;
  for (std::uint64_t t = 0; t < n; ++t) {
    if (r.reached[t] == 0) continue;
    ++reached;
    if (!r.send && std::memcmp(a.mem.data() + t * o.size, b.mem.data() + t * o.size, o.size) != 0) {
      ++bad_slots;
    }
  }
  const bool verified = r.inflight == 0 && r.posted == r.completed && r.errors == 0 &&
                        bad_slots == 0 && r.recv_bad == 0 && rate.completions != 0 &&
                        (!r.send || r.recv_checked == r.completed);
  const std::uint64_t frames = (a1.tx_frames - a0.tx_frames) + (b1.tx_frames - b0.tx_frames);
  const transport::DcTargetPool* pool = b.vnic->dc_pool();
  transport::DcTargetCounters pc;
  if (pool != nullptr) pc = pool->table().counters();
  fmt::print(
      R"({{"bench":"uroce-dc-scale","schema":1,"link":"{}","mode":"{}","op":"{}","size":{},)"
      R"("count":{},"streams":{},"window":{},"dc_contexts":{},"dc_records_log2":{},)"
      R"("dc_idle_disconnect_us":{},"setup_s":{:.3f},)"
      R"("rate":{{"seconds":{:.3f},"completions":{},"msgs_per_s":{:.0f},"frames_per_msg":{:.3f},)"
      R"("iterations":{}}},)"
      R"("latency_ns":{{"median":{:.0f},"p99":{:.0f},"samples":{}}},)"
      R"("posted":{},"completed":{},"errors":{},"slots_reached":{},"bad_slots":{},)"
      R"("recv_checked":{},"recv_bad":{},"verified":{},)"
      R"("memory":{{"engine_heap_bytes_per_target":{:.1f},"engine_heap_bytes_per_initiator":{:.1f},)"
      R"("engine_slot_bytes_per_qp_b":{:.1f},"pool_heap_bytes":{},"pool_memory_bytes":{},)"
      R"("target_heap_bytes":{},"contexts_capacity":{},"contexts_open_end":{},"contexts_max":{},)"
      R"("heap_growth_traffic_bytes":{},"rss_bytes_after_setup":{},"rss_bytes":{}}},)"
      R"("pool":{{"opened":{},"restarted":{},"retired_pressure":{},"retired_disconnect":{},)"
      R"("retired_stale":{},"busy":{},"unknown":{},"gone":{}}},)"
      R"("rx_dc_no_target":{}}})"
      "\n",
      o.link.link, o.mode, o.op, o.size, n, r.streams, w, o.dc_contexts, o.dc_records_log2,
      o.dc_idle_us, mem.setup_s, rate.seconds, rate.completions,
      rate.seconds > 0 ? static_cast<double>(rate.completions) / rate.seconds : 0.0,
      per(frames, rate.completions), rate.iterations, hist.quantile_ns(0.5), hist.quantile_ns(0.99),
      hist.count(), r.posted, r.completed, r.errors, reached, bad_slots, r.recv_checked, r.recv_bad,
      verified, mem.heap_per_target, mem.heap_per_initiator, mem.slot_bytes_b, mem.pool_heap,
      pool != nullptr ? pool->memory_bytes() : 0, mem.targets_heap,
      pool != nullptr ? pool->table().capacity() : 0, pool != nullptr ? pool->table().size() : 0,
      r.contexts_max, heap_traffic, mem.rss_after_setup, rss_bytes(), pc.opened, pc.restarted,
      pc.retired_pressure, pc.retired_disconnect, pc.retired_stale, pc.busy, pc.unknown, pc.gone,
      a.vnic->counters().rx_dc_no_target + b.vnic->counters().rx_dc_no_target);
  std::fflush(stdout);
  return verified ? 0 : 1;
}

}  // namespace
}  // namespace uroce::bench

int main(int argc, char** argv) {
  using namespace uroce;
  bench::Options o;
  CLI::App app{
      "uroce-dc-scale: DC fan-out and fan-in on the daemon's engine (see the source "
      "header)"};
  app.add_option("--mode", o.mode, "fanout, rc-fanout or many-dci")
      ->check(CLI::IsMember({"fanout", "rc-fanout", "many-dci"}))
      ->capture_default_str();
  app.add_option("--count", o.count, "targets (fan-outs) or DCIs (many-dci)")
      ->check(CLI::Range(1u, 4'000'000u))
      ->capture_default_str();
  app.add_option("--streams", o.streams, "DCI streams (1, 2, 4, 8, 16)")
      ->check(CLI::IsMember({1u, 2u, 4u, 8u, 16u}))
      ->capture_default_str();
  app.add_option("--window", o.window, "WRs outstanding in the rate window")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  app.add_option("--op", o.op, "write or send")
      ->check(CLI::IsMember({"write", "send"}))
      ->capture_default_str();
  app.add_option("--size", o.size, "message bytes (one SGE; the first 8 name its slot)")
      ->check(CLI::Range(8u, 4096u))
      ->capture_default_str();
  app.add_option("--warmup", o.warmup_s, "seconds")->capture_default_str();
  app.add_option("--duration", o.duration_s, "rate window, seconds")->capture_default_str();
  app.add_option("--latency-duration", o.latency_s, "latency window, seconds")
      ->capture_default_str();
  app.add_option("--messages", o.messages,
                 "stop the rate window after this many completions, no latency (callgrind)");
  app.add_option("--dc-contexts", o.dc_contexts, "B's dc_contexts")->capture_default_str();
  app.add_option("--dc-records-log2", o.dc_records_log2, "B's dc_records_log2")
      ->capture_default_str();
  app.add_option("--dc-idle-disconnect-us", o.dc_idle_us, "A's dc_idle_disconnect_us")
      ->capture_default_str();
  app.add_option("--link", o.link.link, "ring (net_ring pair, EAL) or sim (simulated link)")
      ->check(CLI::IsMember({"ring", "sim"}))
      ->capture_default_str();
  app.add_option("--lcore", o.link.lcore, "EAL -l")->capture_default_str();
  app.add_option("--memory", o.link.memory, "EAL -m, MB")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  return bench::with_link(o.link, "dc-scale", [&](auto& ia, auto& ib) {
    // The TSC rate comes from the EAL, which with_link has started.
    const engine::TscClock clock = engine::TscClock::from_eal();
    return bench::run(ia, ib, o, clock);
  });
}
