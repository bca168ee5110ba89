// uroce-transport-bench: the RC transport alone, two engines back to back on
// one lcore (bench/transport_workload.h), over a crossed net_ring pair
// (mbufs, MbufTxSink, tx_burst/rx_burst: the DPDK path without a wire) or
// over the simulated link (no DPDK in the frame path; one copy into the
// link's frame pool).
//
// Workloads:
//   send64    64 B SENDs: messages/s (B's receive completions)
//   write64k  64 KiB RDMA WRITEs: Gb/s of payload (A's send completions)
//   write4k   a fixed count (--count) of 4 KiB WRITEs; with --phased the
//             engine phases run through named functions for callgrind
//             (scripts/bench-callgrind.sh)
// Each workload prints one JSON line (keys below; the "stream" section has
// the shape of uroce-raw-bench's, so bench/bench_table.py can put both in
// one table) and, with --json, appends it to a file. docs/benchmarks.md
// ("Transport benchmark") explains the figures.
#include <CLI/CLI.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "bench/raw_report.h"
#include "bench/transport_workload.h"
#include "datapath/engine/eth_port_io.h"
#include "datapath/engine/sim_port_io.h"
#include "datapath/engine/tsc_clock.h"
#include "datapath/port/eal.h"
#include "datapath/port/eal_config.h"
#include "datapath/port/eth_port.h"
#include "datapath/port/sim_link.h"
#include "datapath/wire/bth.h"
#include "datapath/wire/eth.h"
#include "datapath/wire/ipv4.h"
#include "datapath/wire/reth.h"
#include "datapath/wire/udp.h"

namespace {

using namespace uroce;
using namespace uroce::bench;

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop.store(true, std::memory_order_relaxed); }

struct Options {
  std::vector<std::string> workloads{"send64", "write64k"};
  std::string link = "ring";
  double duration = 3.0;
  double warmup = 0.5;
  std::uint32_t qps = 1;
  std::uint32_t depth = 0;
  std::uint32_t batch = 16;
  std::uint32_t size = 0;
  std::uint64_t count = 20000;
  std::uint32_t mtu = 4096;
  bool phased = false;
  std::uint32_t mem_mb = 4;
  std::string lcore = "0";
  std::uint32_t memory = 512;
  std::uint32_t mbufs = 8191;
  std::string log_level = "warning";
  std::string json_file;
};

struct Setup {
  std::string name;
  Workload w;
};

Setup workload_of(const std::string& name, const Options& o) {
  Setup s{name, {}};
  Workload& w = s.w;
  if (name == "send64") {
    w.opcode = transport::WrOpcode::kSend;
    w.msg_bytes = 64;
    w.depth = 128;
  } else if (name == "write64k") {
    w.opcode = transport::WrOpcode::kRdmaWrite;
    w.msg_bytes = 65536;
    w.depth = 16;
  } else {
    w.opcode = transport::WrOpcode::kRdmaWrite;
    w.msg_bytes = 4096;
    w.depth = 64;
    w.count = o.count;
    w.phased = o.phased;
  }
  if (o.size != 0) w.msg_bytes = o.size;
  if (o.depth != 0) w.depth = o.depth;
  w.batch = std::max<std::uint32_t>(1, std::min(o.batch, w.depth));
  w.qps = o.qps;
  w.warmup_s = o.warmup;
  w.duration_s = o.duration;
  w.mtu = o.mtu == 1024   ? wire::PathMtu::k1024
          : o.mtu == 2048 ? wire::PathMtu::k2048
          : o.mtu == 512  ? wire::PathMtu::k512
          : o.mtu == 256  ? wire::PathMtu::k256
                          : wire::PathMtu::k4096;
  return s;
}

// Bytes of a RoCEv2 data frame around its payload (Ethernet, IPv4, UDP,
// BTH, ICRC); a WRITE's first (or only) packet adds a RETH.
constexpr std::uint32_t kRoceHeaders = wire::EthHdr::kSize + wire::Ipv4Hdr::kSize +
                                       wire::UdpHdr::kSize + wire::BthHdr::kSize + 4;

std::string result_json(const Options& o, const Setup& s, const RunResult& r) {
  const Workload& w = s.w;
  const std::uint32_t mtu = wire::path_mtu_bytes(w.mtu);
  const std::uint32_t frame_payload = std::min(w.msg_bytes, mtu);
  const bool write = w.opcode == transport::WrOpcode::kRdmaWrite;
  const std::uint32_t frame_bytes =
      kRoceHeaders + frame_payload + (write && w.msg_bytes <= mtu ? wire::RethHdr::kSize : 0);
  const Totals& t = r.window;
  const double secs = r.seconds > 0 ? r.seconds : 0;
  const double per_s = secs > 0 ? 1.0 / secs : 0.0;
  const double payload_bits = static_cast<double>(t.messages) * w.msg_bytes * 8;
  const double l2_bytes = static_cast<double>(t.messages) * w.msg_bytes +
                          static_cast<double>(t.frames_ab) * kRoceHeaders +
                          (write ? static_cast<double>(t.messages) * wire::RethHdr::kSize : 0);
  std::string j = fmt::format(
      "{{\"bench\":\"uroce-transport\",\"schema\":1,\"transport\":{},"
      "\"role\":\"transport-selftest\",\"workload\":{},\"ok\":{},\"error\":{},"
      "\"payload_bytes\":{},\"message_bytes\":{},\"frame_bytes\":{},\"burst\":32,"
      "\"path_mtu\":{},\"qps\":{},\"depth\":{},\"batch\":{},\"count\":{},"
      "\"phased\":{},\"warmup_s\":{},\"duration_s\":{}",
      json_quote(o.link), json_quote(s.name), r.error.empty() ? "true" : "false",
      json_quote(r.error), frame_payload, w.msg_bytes, frame_bytes, mtu, w.qps,
      w.depth, w.batch, w.count, w.phased ? "true" : "false",
      w.count > 0 ? 0.0 : w.warmup_s, w.count > 0 ? 0.0 : w.duration_s);
  j += fmt::format(
      ",\"messages\":{{\"count\":{},\"seconds\":{:.6f},\"mmsgs_per_s\":{:.4f},"
      "\"payload_gbps\":{:.4f},\"verified\":{}}}",
      t.messages, secs, static_cast<double>(t.messages) * per_s / 1e6,
      payload_bits * per_s / 1e9, r.verified ? "true" : "false");
  j += fmt::format(
      ",\"frames\":{{\"requests\":{},\"acks\":{},\"iterations\":{},"
      "\"requests_per_message\":{:.4f},\"acks_per_message\":{:.4f}}}",
      t.frames_ab, t.frames_ba, t.iterations,
      t.messages ? static_cast<double>(t.frames_ab) / static_cast<double>(t.messages) : 0.0,
      t.messages ? static_cast<double>(t.frames_ba) / static_cast<double>(t.messages) : 0.0);
  // The data direction in uroce-raw-bench's "stream" shape (L2 bytes:
  // Ethernet header through ICRC, no FCS).
  j += fmt::format(
      ",\"stream\":{{\"packets\":{},\"bytes\":{:.0f},\"seconds\":{:.6f},"
      "\"mpps\":{:.4f},\"gbps\":{:.4f},\"payload_gbps\":{:.4f},\"lost\":0,"
      "\"foreign\":0}}",
      t.frames_ab, l2_bytes, secs, static_cast<double>(t.frames_ab) * per_s / 1e6,
      l2_bytes * 8 * per_s / 1e9, payload_bits * per_s / 1e9);
  j += fmt::format(
      ",\"counters\":{{\"completion_errors\":{},\"retransmits\":{},\"timeouts\":{},"
      "\"seq_naks\":{},\"rnr_naks\":{},\"tx_no_buffer\":{},\"rx_parse_errors\":{},"
      "\"rx_no_qp\":{},\"timer_fires\":{}}}}}",
      r.errors, r.retransmits, r.timeouts, r.seq_naks, r.rnr_naks, r.tx_no_buffer,
      r.rx_parse_errors, r.rx_no_qp, r.timer_fires);
  return j;
}

template <class PortIo>
RunResult run_hosts(PortIo& ia, PortIo& ib, const Options& o, const Workload& w,
                    const engine::TscClock& clock) {
  RunResult r;
  const std::size_t mem = static_cast<std::size_t>(o.mem_mb) << 20;
  BenchHost<PortIo> a(ia, mem), b(ib, mem);
  if (int rc = a.make_qps(w.qps, kQpnBaseA, kBenchMacA, kBenchIpA, w)) {
    r.error = "cannot create host A's QPs: error " + std::to_string(rc);
    return r;
  }
  if (int rc = b.make_qps(w.qps, kQpnBaseB, kBenchMacB, kBenchIpB, w)) {
    r.error = "cannot create host B's QPs: error " + std::to_string(rc);
    return r;
  }
  TransportRun<PortIo> run(a, b, w);
  if (int rc = run.connect()) {
    r.error = "cannot bring the QPs to RTS: error " + std::to_string(rc);
    return r;
  }
  return run.run([&] { return clock.now(); },
                 [] { return g_stop.load(std::memory_order_relaxed); },
                 [](const BenchHost<PortIo>& h) { return h.io.tx().counters().committed; });
}

RunResult run_ring(const Options& o, const Workload& w, unsigned idx,
                   const engine::TscClock& clock) {
  RunResult r;
  std::uint16_t ida = 0, idb = 0;
  const std::string name = "utb" + std::to_string(idx);
  if (int rc = port::create_ring_pair(name, &ida, &idb)) {
    r.error = "cannot create the net_ring pair: error " + std::to_string(rc);
    return r;
  }
  port::PortConfig pc;
  pc.mtu = 9000;
  pc.mbufs = o.mbufs;
  pc.data_room = static_cast<std::uint32_t>(wire::kMaxRoceFrame);
  port::EthPort pa, pb;
  std::string err;
  pc.device = name + "_a";
  if (pa.open_port_id(ida, pc, &err) != 0) {
    r.error = err;
    return r;
  }
  pc.device = name + "_b";
  if (pb.open_port_id(idb, pc, &err) != 0) {
    r.error = err;
    return r;
  }
  engine::EthPortIo ia(pa), ib(pb);
  return run_hosts(ia, ib, o, w, clock);
}

RunResult run_sim(const Options& o, const Workload& w, const engine::TscClock& clock) {
  port::SimDirectionConfig d;  // infinite bandwidth, no delay, no impairment
  d.queue_frames = 8192;
  port::SimLinkConfig cfg = port::SimLinkConfig::symmetric(d, 1);
  cfg.pool_frames = 8192;
  cfg.slot_bytes = static_cast<std::uint32_t>(wire::kMaxRoceFrame);
  port::SimLink link(cfg);
  port::SimPort pa(link, 0), pb(link, 1);
  engine::SimPortIo ia(pa), ib(pb);
  return run_hosts(ia, ib, o, w, clock);
}

void emit(const Options& o, const std::string& line) {
  std::cout << line << std::endl;
  if (!o.json_file.empty()) {
    std::ofstream f(o.json_file, std::ios::app);
    f << line << '\n';
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"uroce-transport-bench: the RC transport alone, two engines on one lcore"};
  app.add_option("--workload", o.workloads, "send64, write64k, write4k (repeatable)")
      ->check(CLI::IsMember({"send64", "write64k", "write4k"}))
      ->capture_default_str();
  app.add_option("--link", o.link, "ring (net_ring pair) or sim (simulated link)")
      ->check(CLI::IsMember({"ring", "sim"}))
      ->capture_default_str();
  app.add_option("--duration", o.duration, "Measured seconds")
      ->check(CLI::Range(0.01, 3600.0))
      ->capture_default_str();
  app.add_option("--warmup", o.warmup, "Unmeasured seconds first")
      ->check(CLI::Range(0.0, 600.0))
      ->capture_default_str();
  app.add_option("--qps", o.qps, "RC QP pairs")
      ->check(CLI::Range(1u, kMaxBenchQps))
      ->capture_default_str();
  app.add_option("--depth", o.depth,
                 "Outstanding WRs per QP (0: 128 send64, 16 write64k, 64 write4k)")
      ->check(CLI::Range(0u, 4096u));
  app.add_option("--batch", o.batch, "WRs posted at once")
      ->check(CLI::Range(1u, 256u))
      ->capture_default_str();
  app.add_option("--size", o.size, "Message bytes (0: the workload's own)")
      ->check(CLI::Range(0u, 1u << 24));
  app.add_option("--count", o.count, "write4k: messages")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40))
      ->capture_default_str();
  app.add_option("--mtu", o.mtu, "RoCE path MTU")
      ->check(CLI::IsMember({256u, 512u, 1024u, 2048u, 4096u}))
      ->capture_default_str();
  app.add_flag("--phased", o.phased,
               "write4k: run engine phases through named functions (callgrind)");
  app.add_option("--mem-mb", o.mem_mb, "Registered memory per host, MiB")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  app.add_option("--lcore", o.lcore, "EAL -l")->capture_default_str();
  app.add_option("--memory", o.memory, "EAL -m, MB")->capture_default_str();
  app.add_option("--mbufs", o.mbufs, "mbufs per port pool")->capture_default_str();
  app.add_option("--log-level", o.log_level, "EAL --log-level")->capture_default_str();
  app.add_option("--json", o.json_file, "Also append the JSON lines to this file");
  CLI11_PARSE(app, argc, argv);

  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);

  port::EalConfig eal;
  eal.lcores = o.lcore;
  eal.memory_mb = o.memory;
  eal.log_level = o.log_level;
  std::string err;
  if (port::eal_init(eal, &err) != 0) {
    Setup s = workload_of(o.workloads.empty() ? "send64" : o.workloads[0], o);
    RunResult r;
    r.error = err;
    emit(o, result_json(o, s, r));
    return 1;
  }
  const engine::TscClock clock = engine::TscClock::from_eal();
  bool all_ok = true;
  unsigned idx = 0;
  for (const std::string& name : o.workloads) {
    const Setup s = workload_of(name, o);
    const RunResult r =
        o.link == "ring" ? run_ring(o, s.w, idx++, clock) : run_sim(o, s.w, clock);
    all_ok = all_ok && r.error.empty();
    emit(o, result_json(o, s, r));
    if (g_stop.load()) break;
  }
  port::eal_cleanup();
  return all_ok ? 0 : 1;
}
