// The workloads of uroce-transport-bench: two hosts, each an engine
// (datapath/engine/engine_loop.h) with its own port, memory, MR table and RC
// QPs, joined back to back (a crossed net_ring pair, or the simulated link).
// Host A is the requester side (posts SENDs or RDMA WRITEs), host B the
// responder side (posts receives for SENDs).
//
// Both engines run on the CALLING lcore, alternately: every iteration takes
// one timestamp, lets the "application" post work (A: keep `depth` WRs
// outstanding per QP, posted in batches; B: keep the receive queue full),
// then runs A's engine iteration and B's. So the figures are what one core
// achieves doing BOTH ends' transport work, plus the posting.
//
// Two ways to end: time (warm-up, then a measured window) or a fixed count of
// messages (for instruction counting under callgrind, where wall time means
// nothing). In the fixed-count "phased" mode the engine phases are called
// through separate non-inlined functions (the regions below), so callgrind
// can attribute instructions to the TX path (A: requester, sink, tx_burst)
// and the RX path (B: rx_burst, parse, responder, inline ACKs) separately.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "datapath/base/time.h"
#include "datapath/engine/engine_loop.h"
#include "datapath/transport/rc_qp.h"
#include "datapath/wire/addr.h"

namespace uroce::bench {

// A CQ that counts: the benchmark only needs how many WRs completed, and
// whether any failed.
struct CountCq {
  std::uint64_t ok = 0;
  std::uint64_t err = 0;
  std::uint32_t first_err_status = 0;
  bool push(const transport::Cqe& c) {
    if (c.status == 0) {
      ++ok;
    } else {
      if (err++ == 0) first_err_status = c.status;
    }
    return true;
  }
  std::uint64_t done() const { return ok + err; }
};

struct Workload {
  transport::WrOpcode opcode = transport::WrOpcode::kSend;
  std::uint32_t msg_bytes = 64;
  std::uint32_t qps = 1;
  std::uint32_t depth = 128;   // outstanding send WRs per QP
  std::uint32_t batch = 16;    // WRs posted at once
  wire::PathMtu mtu = wire::PathMtu::k4096;
  std::uint8_t timeout = 16;   // 4.096 us * 2^16 = 268 ms: no spurious retries
  double warmup_s = 0.5;
  double duration_s = 3.0;
  std::uint64_t count = 0;     // > 0: fixed count of messages, no timing
  bool phased = false;         // call phases through the region functions
};

struct Totals {
  std::uint64_t messages = 0;     // completed (B's receives for SEND, A's sends for WRITE)
  std::uint64_t frames_ab = 0;    // frames A committed (requests)
  std::uint64_t frames_ba = 0;    // frames B committed (ACKs)
  std::uint64_t iterations = 0;
};

struct RunResult {
  std::string error;     // empty: ok
  Totals window;         // measured window (or the whole fixed-count run)
  double seconds = 0;
  bool verified = false; // destination memory equals the source
  // Whole-run counters.
  std::uint64_t errors = 0;      // completions in error
  std::uint64_t retransmits = 0;
  std::uint64_t timeouts = 0;
  std::uint64_t seq_naks = 0;
  std::uint64_t rnr_naks = 0;
  std::uint64_t tx_no_buffer = 0;  // QPs that found the TX burst full
  std::uint64_t rx_parse_errors = 0;
  std::uint64_t rx_no_qp = 0;
  std::uint64_t timer_fires = 0;
};

inline const wire::MacAddr kBenchMacA{{0x02, 0x00, 0x00, 0x75, 0x74, 0x01}};
inline const wire::MacAddr kBenchMacB{{0x02, 0x00, 0x00, 0x75, 0x74, 0x02}};
inline const wire::Ipv4Addr kBenchIpA{0x0afb0001};  // 10.251.0.1
inline const wire::Ipv4Addr kBenchIpB{0x0afb0002};  // 10.251.0.2

inline constexpr std::uint64_t kBenchVa = 0x7f0000000000ull;
inline constexpr std::uint32_t kQpnBaseA = 0x40;
inline constexpr std::uint32_t kQpnBaseB = 0x80;
inline constexpr std::uint32_t kMaxBenchQps = 32;

// RESET -> INIT -> RTR -> RTS. 0 or the failing modify's errno.
inline int bench_connect(transport::RcQp& qp, std::uint32_t peer_qpn,
                         const wire::MacAddr& dmac, wire::Ipv4Addr dip,
                         const Workload& w) {
  using namespace transport::qp_attr;
  transport::QpAttrValues a;
  a.qp_state = transport::QpState::kInit;
  a.qp_access_flags = transport::access::kRemoteWrite;
  if (int rc = qp.modify(kState | kPkeyIndex | kPort | kAccessFlags, a)) return rc;
  a.qp_state = transport::QpState::kRtr;
  a.av.dmac = dmac;
  a.av.dip = dip;
  a.path_mtu = w.mtu;
  a.dest_qp_num = peer_qpn;
  a.rq_psn = 0;
  a.max_dest_rd_atomic = 1;
  a.min_rnr_timer = 1;
  if (int rc = qp.modify(kState | kAv | kPathMtu | kDestQpn | kRqPsn |
                             kMaxDestRdAtomic | kMinRnrTimer,
                         a)) {
    return rc;
  }
  a.qp_state = transport::QpState::kRts;
  a.sq_psn = 0;
  a.timeout = w.timeout;
  a.retry_cnt = 7;
  a.rnr_retry = 7;
  a.max_rd_atomic = 1;
  return qp.modify(kState | kSqPsn | kTimeout | kRetryCnt | kRnrRetry | kMaxQpRdAtomic, a);
}

// One QP of a host and what its application side has posted.
struct BenchQp {
  std::unique_ptr<transport::RcQp> qp;
  CountCq scq;
  CountCq rcq;
  std::uint64_t sends_posted = 0;
  std::uint64_t recvs_posted = 0;
};

template <class PortIo>
struct BenchHost {
  using Loop = engine::EngineLoop<PortIo, transport::RcQp, CountCq>;

  BenchHost(PortIo& io, std::size_t mem_bytes)
      : io(io), loop(io, 2 * kMaxBenchQps), mem(mem_bytes) {}

  // Creates `n` QPs numbered from `qpn_base`. 0 or an errno.
  int make_qps(std::uint32_t n, std::uint32_t qpn_base, const wire::MacAddr& mac,
               wire::Ipv4Addr ip, const Workload& w) {
    int err = 0;
    key = mrs.reg({1, kBenchVa, mem.size(),
                   transport::access::kLocalWrite | transport::access::kRemoteWrite,
                   mem.data()},
                  &err);
    if (key == 0) return err;
    for (std::uint32_t i = 0; i < n; ++i) {
      transport::RcQpConfig c;
      c.qpn = qpn_base + i;
      c.pd = 1;
      c.local = {mac, ip};
      c.max_send_wr = std::max<std::uint32_t>(w.depth, 1);
      c.max_recv_wr = 2 * std::max<std::uint32_t>(w.depth, w.batch);
      auto q = std::make_unique<BenchQp>();
      q->qp = std::make_unique<transport::RcQp>(c, mrs);
      qps.push_back(std::move(q));
    }
    for (auto& q : qps) {
      if (int rc = loop.add_qp(*q->qp, q->scq, q->rcq)) return rc;
    }
    return 0;
  }

  PortIo& io;
  Loop loop;
  transport::MrTable mrs{4};
  std::vector<std::uint8_t> mem;
  std::uint32_t key = 0;
  std::vector<std::unique_ptr<BenchQp>> qps;
};

// The regions callgrind measures (scripts/bench-callgrind.sh names them in
// --toggle-collect). Not inlined, so each is a function callgrind can see.
template <class Loop>
__attribute__((noinline)) void region_tx_requester(Loop& a, TimeNs now) {
  a.timer_phase(now);
  a.pump_phase(now);
  a.flush_phase();
}
template <class Loop>
__attribute__((noinline)) void region_rx_responder(Loop& b, TimeNs now) {
  b.rx_phase(now);
}
template <class Loop>
__attribute__((noinline)) void region_tx_responder(Loop& b, TimeNs now) {
  b.timer_phase(now);
  b.pump_phase(now);
  b.flush_phase();
}
template <class Loop>
__attribute__((noinline)) void region_rx_completer(Loop& a, TimeNs now) {
  a.rx_phase(now);
}

template <class PortIo>
class TransportRun {
 public:
  using Host = BenchHost<PortIo>;

  TransportRun(Host& a, Host& b, const Workload& w) : a_(a), b_(b), w_(w) {
    slots_ = std::max<std::uint64_t>(1, a_.mem.size() / std::max<std::uint32_t>(w.msg_bytes, 1));
    for (std::size_t i = 0; i < a_.mem.size(); ++i)
      a_.mem[i] = static_cast<std::uint8_t>(i * 131 + (i >> 12) + 7);
    std::fill(b_.mem.begin(), b_.mem.end(), 0);
    send_.opcode = w.opcode;
    send_.flags = transport::send_flag::kSignaled;
    send_.num_sge = 1;
    send_.rkey = b_.key;
    recv_.num_sge = 1;
  }

  // Connects every QP pair. 0 or an errno.
  int connect() {
    for (std::size_t i = 0; i < a_.qps.size(); ++i) {
      if (int rc = bench_connect(*a_.qps[i]->qp, b_.qps[i]->qp->qpn(), kBenchMacB,
                                 kBenchIpB, w_)) {
        return rc;
      }
      if (int rc = bench_connect(*b_.qps[i]->qp, a_.qps[i]->qp->qpn(), kBenchMacA,
                                 kBenchIpA, w_)) {
        return rc;
      }
    }
    return 0;
  }

  // Runs the workload; `clock()` gives the iteration's timestamp in ns,
  // `stop()` says the process was interrupted; `committed(host)` the frames
  // a host's TX sink took.
  template <class Clock, class Stop, class Committed>
  RunResult run(Clock&& clock, Stop&& stop, Committed&& committed) {
    RunResult r;
    const bool counted = w_.count > 0;
    const TimeNs t0 = clock();
    const TimeNs warm_end = counted ? t0 : t0 + to_ns(w_.warmup_s);
    const TimeNs end = warm_end + to_ns(w_.duration_s);
    const TimeNs hard_end = counted ? t0 + 600 * kNsPerSec : end + 5 * kNsPerSec;
    Totals at_start{};
    bool in_window = counted;
    window_start_ = t0;
    TimeNs now = t0;
    TimeNs last_progress = t0;
    std::uint64_t last_done = 0;
    for (;;) {
      now = clock();
      if (!in_window && now >= warm_end) {
        in_window = true;
        at_start = totals(committed);
        window_start_ = now;
      }
      if (!counted && in_window && now >= end) break;
      if (counted && messages() >= w_.count) break;
      if (now >= hard_end || stop()) {
        r.error = now >= hard_end ? "did not finish before the hard deadline"
                                  : "interrupted by a signal";
        break;
      }
      post(counted);
      iterate(now);
      const std::uint64_t d = messages();
      if (d != last_done) {
        last_done = d;
        last_progress = now;
      } else if (now - last_progress > 2 * kNsPerSec) {
        r.error = "no completion for 2 s: the transport stalled";
        break;
      }
    }
    const Totals at_end = totals(committed);
    r.window = {at_end.messages - at_start.messages, at_end.frames_ab - at_start.frames_ab,
                at_end.frames_ba - at_start.frames_ba, at_end.iterations - at_start.iterations};
    r.seconds = static_cast<double>(now - window_start_) / 1e9;
    drain(clock);
    collect(r);
    r.verified = r.error.empty() && verify();
    if (r.error.empty() && r.errors != 0) {
      r.error = "completions in error";
    } else if (r.error.empty() && !r.verified) {
      r.error = "destination memory differs from the source";
    }
    return r;
  }

 private:
  static TimeNs to_ns(double s) { return static_cast<TimeNs>(s * 1e9); }

  std::uint64_t messages() const {
    std::uint64_t n = 0;
    for (std::size_t i = 0; i < a_.qps.size(); ++i) {
      n += w_.opcode == transport::WrOpcode::kSend ? b_.qps[i]->rcq.ok
                                                   : a_.qps[i]->scq.ok;
    }
    return n;
  }

  template <class Committed>
  Totals totals(Committed& committed) const {
    return {messages(), committed(a_), committed(b_),
            a_.loop.counters().iterations};
  }

  // The application side: A keeps `depth` WRs outstanding per QP (posting
  // `batch` at a time); B keeps its receive queue full. In fixed-count mode
  // nothing beyond the count is posted.
  void post(bool counted) {
    for (std::size_t i = 0; i < a_.qps.size(); ++i) {
      BenchQp& qa = *a_.qps[i];
      BenchQp& qb = *b_.qps[i];
      if (w_.opcode == transport::WrOpcode::kSend) {
        const std::uint64_t rq_target = 2ull * std::max(w_.depth, w_.batch);
        while (qb.recvs_posted - qb.rcq.done() + w_.batch <= rq_target) {
          for (std::uint32_t k = 0; k < w_.batch; ++k) {
            const std::uint64_t off = (qb.recvs_posted % slots_) * w_.msg_bytes;
            recv_.wr_id = qb.recvs_posted;
            recv_.sge[0] = {kBenchVa + off, w_.msg_bytes, b_.key};
            if (qb.qp->post_recv(recv_) != 0) break;
            ++qb.recvs_posted;
          }
        }
      }
      while (qa.sends_posted - qa.scq.done() + w_.batch <= w_.depth) {
        for (std::uint32_t k = 0; k < w_.batch; ++k) {
          if (counted && posted_total_ >= w_.count) return;
          const std::uint64_t off = (qa.sends_posted % slots_) * w_.msg_bytes;
          send_.wr_id = qa.sends_posted;
          send_.sge[0] = {kBenchVa + off, w_.msg_bytes, a_.key};
          send_.remote_addr = kBenchVa + off;
          if (qa.qp->post_send(send_) != 0) return;
          ++qa.sends_posted;
          ++posted_total_;
        }
      }
    }
  }

  void iterate(TimeNs now) {
    if (!w_.phased) {
      a_.loop.run_once(now);
      b_.loop.run_once(now);
      return;
    }
    a_.loop.begin(now);
    region_rx_completer(a_.loop, now);
    region_tx_requester(a_.loop, now);
    b_.loop.begin(now);
    region_rx_responder(b_.loop, now);
    region_tx_responder(b_.loop, now);
  }

  // Lets everything in flight complete (at most 0.5 s), posting nothing.
  template <class Clock>
  void drain(Clock& clock) {
    const TimeNs until = clock() + kNsPerSec / 2;
    for (TimeNs now = clock(); now < until; now = clock()) {
      bool busy = false;
      for (auto& q : a_.qps) busy |= q->sends_posted != q->scq.done();
      if (!busy) break;
      iterate(now);
    }
    // Frames still in the ring (late ACKs) are taken off it.
    for (int i = 0; i < 64; ++i) iterate(clock());
  }

  void collect(RunResult& r) const {
    for (const Host* h : {&a_, &b_}) {
      for (const auto& q : h->qps) {
        const transport::RcCounters& c = q->qp->counters();
        r.errors += q->scq.err + q->rcq.err;
        r.retransmits += c.tx_retransmits;
        r.timeouts += c.timeouts;
        r.seq_naks += c.rx_seq_naks;
        r.rnr_naks += c.rx_rnr_naks;
        r.tx_no_buffer += c.tx_no_buffer;
      }
      r.rx_parse_errors += h->loop.counters().rx_parse_errors;
      r.rx_no_qp += h->loop.counters().rx_no_qp;
      r.timer_fires += h->loop.counters().timer_fires;
    }
  }

  // Every slot written at least once holds the source bytes (SEND and WRITE
  // both use slot k % slots for message k on each side).
  bool verify() const {
    std::uint64_t done = messages();
    if (done == 0) return false;
    const std::uint64_t n = std::min<std::uint64_t>(done, slots_) * w_.msg_bytes;
    // With several QPs every QP cycles through the same slots; the first
    // min(done_per_qp, slots) slots are certainly written by QP 0.
    const std::uint64_t per_qp0 = w_.opcode == transport::WrOpcode::kSend
                                      ? b_.qps[0]->rcq.ok
                                      : a_.qps[0]->scq.ok;
    const std::uint64_t m = std::min<std::uint64_t>(per_qp0, slots_) * w_.msg_bytes;
    return std::memcmp(a_.mem.data(), b_.mem.data(), std::min(n, m)) == 0;
  }

  Host& a_;
  Host& b_;
  Workload w_;
  std::uint64_t slots_ = 1;
  std::uint64_t posted_total_ = 0;
  TimeNs window_start_ = 0;
  transport::SendWr send_{};
  transport::RecvWr recv_{};
};

}  // namespace uroce::bench
