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
#include <malloc.h>
#include <sys/mman.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench/rtt_histogram.h"
#include "datapath/engine/eth_port_io.h"
#include "datapath/engine/sim_port_io.h"
#include "datapath/engine/tsc_clock.h"
#include "datapath/engine/vnic.h"
#include "datapath/port/eal.h"
#include "datapath/port/eal_config.h"
#include "datapath/port/eth_port.h"
#include "datapath/shm/doorbell.h"
#include "datapath/shm/ring.h"
#include "datapath/shm/wqe_write.h"
#include "fmt/format.h"

namespace uroce::bench {
namespace {

namespace qa = transport::qp_attr;

const wire::MacAddr kMacA{{0x02, 0, 0, 0x75, 0x73, 0x01}};
const wire::MacAddr kMacB{{0x02, 0, 0, 0x75, 0x73, 0x02}};
const wire::Ipv4Addr kIpA{0x0afc0001};
const wire::Ipv4Addr kIpB{0x0afc0002};
constexpr std::uint32_t kClient = 1;
constexpr transport::PdHandle kPd = 1;

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
};

std::uint64_t heap_bytes() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

std::uint64_t rss_bytes() {
  std::ifstream f("/proc/self/statm");
  std::uint64_t size = 0, rss = 0;
  f >> size >> rss;
  return rss * 4096;
}

// One anonymous mapping the rings are carved from, 64-byte aligned; pages
// are touched only as rings are initialised.
class Arena {
 public:
  explicit Arena(std::size_t bytes) : bytes_(bytes) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    base_ = p == MAP_FAILED ? nullptr : static_cast<std::byte*>(p);
  }
  ~Arena() {
    if (base_ != nullptr) munmap(base_, bytes_);
  }
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  bool ok() const { return base_ != nullptr; }
  std::byte* take(std::size_t n) {
    n = (n + 63) & ~std::size_t{63};
    if (used_ + n > bytes_) return nullptr;
    std::byte* p = base_ + used_;
    used_ += n;
    return p;
  }
  std::size_t used() const { return used_; }

 private:
  std::byte* base_ = nullptr;
  std::size_t bytes_ = 0;
  std::size_t used_ = 0;
};

bool make_ring(Arena& a, std::size_t elem, std::uint32_t depth, std::size_t extra,
               engine::RingMem* out) {
  shm::RingGeometry g;
  if (shm::make_geometry(elem, depth, &g) != shm::RingError::kOk) return false;
  std::byte* p = a.take(g.bytes() + extra);
  if (p == nullptr || shm::ring_init(p, g.bytes(), g) != shm::RingError::kOk) return false;
  *out = engine::RingMem{p, g.bytes(), g};
  return true;
}

// One host: a Vnic, its client's doorbell page, registered memory.
template <class PortIo>
struct Host {
  using VnicT = engine::Vnic<PortIo>;
  PortIo& io;
  std::unique_ptr<VnicT> vnic;
  std::vector<std::uint8_t> mem = std::vector<std::uint8_t>(1 << 20);
  std::uint32_t key = 0;
  std::byte* page = nullptr;
  shm::DoorbellRinger bells;
  engine::ObjId next_id = 1;

  Host(PortIo& p, const wire::MacAddr& mac, wire::Ipv4Addr ip, std::uint32_t max_qps, Arena& arena)
      : io(p) {
    engine::VnicConfig c;
    c.name = "scale";
    c.mac = mac;
    c.ip = ip;
    c.eth_mtu = 9000;
    c.max_qps = max_qps;
    c.max_cqs = max_qps + 8;  // --idle-type cq creates one per idle object
    c.max_srqs = 1;
    vnic = std::make_unique<VnicT>(c, io);
    const shm::DoorbellGeometry& g = vnic->doorbell_geometry();
    page = arena.take(g.bytes());
    if (page == nullptr || bells.attach(page, g.bytes(), g) != shm::DoorbellError::kOk ||
        vnic->open_client(kClient, page, g.bytes()) != 0) {
      std::abort();
    }
    engine::MrCreate m;
    m.desc = {kPd, reinterpret_cast<std::uint64_t>(mem.data()), mem.size(),
              transport::access::kLocalWrite | transport::access::kRemoteAny, mem.data()};
    int err = 0;
    key = vnic->reg_mr(m, &err);
    if (err != 0) std::abort();
  }
};

struct Cq {
  engine::ObjId id = 0;
  shm::CqConsumer cons;
};

struct Qp {
  engine::ObjId id = 0;
  std::uint32_t qpn = 0;
  shm::SqProducer sq;
  shm::RqProducer rq;
  std::uint32_t sq_db = 0;
  std::uint32_t rq_db = 0;
};

template <class PortIo>
int create_cq(Host<PortIo>& h, Arena& a, std::uint32_t depth, Cq* out) {
  engine::RingMem r;
  if (!make_ring(a, shm::cq_elem_bytes(), depth, ctl::kCqNotifyBytes, &r)) return ENOMEM;
  if (out->cons.attach(r.mem, r.bytes, r.geo) != shm::RingError::kOk) return EINVAL;
  engine::CqCreate c;
  c.id = out->id = h.next_id++;
  c.ring = r;
  c.notify = reinterpret_cast<ctl::CqNotify*>(static_cast<std::byte*>(r.mem) + r.bytes);
  return h.vnic->create_cq(c);
}

template <class PortIo>
int create_qp(Host<PortIo>& h, Arena& a, const Cq& cq, std::uint32_t depth, Qp* out,
              transport::QpType type = transport::QpType::kRc) {
  engine::RingMem sq, rq;
  if (!make_ring(a, shm::sq_elem_bytes(1, 0), depth, 0, &sq) ||
      !make_ring(a, shm::rq_elem_bytes(1), depth, 0, &rq)) {
    return ENOMEM;
  }
  if (out->sq.attach(sq.mem, sq.bytes, sq.geo) != shm::RingError::kOk ||
      out->rq.attach(rq.mem, rq.bytes, rq.geo) != shm::RingError::kOk) {
    return EINVAL;
  }
  if (int rc = h.vnic->alloc_qpn(&out->qpn); rc != 0) return rc;
  engine::QpCreate c;
  c.id = out->id = h.next_id++;
  c.client = kClient;
  c.type = type;
  c.qpn = out->qpn;
  c.pd = kPd;
  c.send_cq = c.recv_cq = cq.id;
  c.max_send_wr = c.max_recv_wr = depth;
  c.max_send_sge = c.max_recv_sge = 1;
  c.sq = sq;
  c.rq = rq;
  if (int rc = h.vnic->create_qp(c); rc != 0) return rc;
  return h.vnic->qp_doorbells(c.id, &out->sq_db, &out->rq_db);
}

// Takes a QP through INIT and RTR to RTS, connected to `peer_qpn` at
// mac/ip (RC and UC; a UD QP only gets its Q_Key).
template <class PortIo>
int connect(Host<PortIo>& h, engine::ObjId id, std::uint32_t peer_qpn, const wire::MacAddr& mac,
            wire::Ipv4Addr ip, transport::QpType type = transport::QpType::kRc) {
  const bool rc = type == transport::QpType::kRc;
  const bool ud = type == transport::QpType::kUd;
  engine::QpModify m;
  m.values.qp_state = transport::QpState::kInit;
  m.values.qp_access_flags = rc ? transport::access::kRemoteAny : transport::access::kRemoteWrite;
  m.values.qkey = 0x11111111;
  m.mask = qa::kState | qa::kPkeyIndex | qa::kPort | (ud ? qa::kQkey : qa::kAccessFlags);
  if (int r = h.vnic->modify_qp(id, m); r != 0) return r;
  m.values.qp_state = transport::QpState::kRtr;
  m.values.av.dmac = mac;
  m.values.av.dip = ip;
  m.values.path_mtu = wire::PathMtu::k4096;
  m.values.dest_qp_num = peer_qpn;
  m.values.max_dest_rd_atomic = 1;
  m.values.min_rnr_timer = 1;
  m.mask = ud ? qa::kState : qa::kState | qa::kAv | qa::kPathMtu | qa::kDestQpn | qa::kRqPsn;
  if (rc) m.mask |= qa::kMaxDestRdAtomic | qa::kMinRnrTimer;
  if (int r = h.vnic->modify_qp(id, m); r != 0) return r;
  m.values.qp_state = transport::QpState::kRts;
  m.values.timeout = 16;  // 268 ms: no spurious retransmission
  m.values.retry_cnt = 7;
  m.values.rnr_retry = 7;
  m.values.max_rd_atomic = 1;
  m.mask = qa::kState | qa::kSqPsn;
  if (rc) m.mask |= qa::kTimeout | qa::kRetryCnt | qa::kRnrRetry | qa::kMaxQpRdAtomic;
  return h.vnic->modify_qp(id, m);
}

// A signaled WRITE (or SEND) of `size` bytes from the start of A's memory
// to the start of B's, as the provider writes it: WQE, publish, doorbell.
template <class PortIo>
bool post_send(Host<PortIo>& a, Qp& q, std::uint64_t wr_id, bool send, std::uint32_t size,
               std::uint64_t remote, std::uint32_t rkey) {
  if (q.sq.free_slots() == 0) return false;
  shm::SendWqeFields f;
  f.wr_id = wr_id;
  f.opcode = send ? IBV_WR_SEND : IBV_WR_RDMA_WRITE;
  f.send_flags = IBV_SEND_SIGNALED;
  f.remote_addr = remote;
  f.rkey = rkey;
  const std::span<std::byte> slot{q.sq.slot_bytes(), q.sq.elem_size()};
  if (shm::write_send_fixed(slot, f) != shm::WqeWriteError::kOk) return false;
  const shm::WqeSge sge{reinterpret_cast<std::uint64_t>(a.mem.data()), size, a.key};
  if (shm::set_send_sges(slot, std::span<const shm::WqeSge>(&sge, 1), 1) !=
      shm::WqeWriteError::kOk) {
    return false;
  }
  q.sq.publish();
  a.bells.ring(q.sq_db);
  return true;
}

// Fills B's receive ring of `q` (SEND workload), one `size`-byte SGE each.
template <class PortIo>
void post_recvs(Host<PortIo>& b, Qp& q, std::uint32_t size) {
  std::uint32_t n = 0;
  const shm::WqeSge sge{reinterpret_cast<std::uint64_t>(b.mem.data()), size, b.key};
  while (q.rq.free_slots() > n) {
    if (shm::write_recv_wqe({q.rq.slot_bytes(n), q.rq.elem_size()}, 0,
                            std::span<const shm::WqeSge>(&sge, 1), 1) != shm::WqeWriteError::kOk) {
      break;
    }
    ++n;
  }
  if (n == 0) return;
  q.rq.publish(n);
  b.bells.ring(q.rq_db);
}

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
  Host<PortIo> a(ia, kMacA, kIpA, max_a, arena);
  for (std::size_t i = 0; i < a.mem.size(); ++i) a.mem[i] = static_cast<std::uint8_t>(i * 7 + 1);
  const double slot_bytes =
      static_cast<double>(heap_bytes() - heap_pre - a.mem.size()) / static_cast<double>(max_a);
  Host<PortIo> b(ib, kMacB, kIpB, o.active + 4, arena);
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
  CLI11_PARSE(app, argc, argv);

  port::EalConfig eal;
  eal.lcores = o.lcore;
  eal.memory_mb = o.memory;
  eal.log_level = "error";
  std::string err;
  if (port::eal_init(eal, &err) != 0) {
    std::fprintf(stderr, "engine-bench: EAL: %s\n", err.c_str());
    return 1;
  }
  const engine::TscClock clock = engine::TscClock::from_eal();
  int rc = 1;
  if (o.link == "ring") {
    std::uint16_t ida = 0, idb = 0;
    if (port::create_ring_pair("uqs", &ida, &idb) != 0) {
      std::fprintf(stderr, "engine-bench: cannot create the net_ring pair\n");
      return 1;
    }
    port::PortConfig pc;
    pc.mtu = 9000;
    pc.mbufs = 8191;
    pc.data_room = static_cast<std::uint32_t>(wire::kMaxRoceFrame);
    port::EthPort pa, pb;
    pc.device = "uqs_a";
    if (pa.open_port_id(ida, pc, &err) != 0) {
      std::fprintf(stderr, "engine-bench: %s\n", err.c_str());
      return 1;
    }
    pc.device = "uqs_b";
    if (pb.open_port_id(idb, pc, &err) != 0) {
      std::fprintf(stderr, "engine-bench: %s\n", err.c_str());
      return 1;
    }
    engine::EthPortIo ia(pa), ib(pb);
    rc = bench::run(ia, ib, o, clock);
  } else {
    port::SimDirectionConfig d;
    d.queue_frames = 8192;
    port::SimLinkConfig cfg = port::SimLinkConfig::symmetric(d, 1);
    cfg.pool_frames = 8192;
    cfg.slot_bytes = static_cast<std::uint32_t>(wire::kMaxRoceFrame);
    port::SimLink link(cfg);
    port::SimPort pa(link, 0), pb(link, 1);
    engine::SimPortIo ia(pa), ib(pb);
    rc = bench::run(ia, ib, o, clock);
  }
  port::eal_cleanup();
  return rc;
}
