// uroce-raw-bench: plain DPDK UDP/IPv4 frames (no RoCE) over one port or a
// ring pair, the baseline the stack's benchmarks are reported against.
// docs/benchmarks.md explains what is measured; scripts/bench.sh runs it all.
//
// Roles:
//   ring-selftest  one process, one lcore, a crossed net_ring pair: streams
//                  then ping-pongs, alternating bursts between the two ends
//   sender         streams data frames until the receiver says stop
//   receiver       counts for --warmup + --duration, then tells the sender
//   ping           one frame outstanding, RTT histogram, stops the pong
//   pong           echoes every frame back with addresses swapped
// Each prints one JSON line (raw_report.h) on stdout and, with --json, to a
// file; the exit status is 0 only when the measurement succeeded.
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "bench/bench_frame.h"
#include "bench/raw_report.h"
#include "bench/raw_roles.h"
#include "datapath/port/eal.h"
#include "datapath/port/eal_config.h"
#include "datapath/port/eth_port.h"

namespace {

using namespace uroce;
using namespace uroce::bench;

struct Options {
  std::string role;
  std::string test = "both";
  std::uint32_t size = 64;
  double duration = 3.0;
  double warmup = 0.5;
  std::uint64_t count = 0;
  double wait = 10.0;
  std::uint16_t burst = 32;
  std::string lcore = "0";
  std::string file_prefix;
  std::uint32_t memory = 512;
  bool hugepages = false;
  std::string log_level = "warning";
  std::vector<std::string> eal_args;
  std::string vdev;
  std::string devargs;
  std::string transport;
  std::uint16_t mtu = 9000;
  std::uint32_t mbufs = 8191;
  std::uint32_t data_room = 0;
  std::string json_file;
  std::uint64_t echo_hold_ns = 0;
};

// Locally administered addresses: side A sends data, side B receives/echoes.
const wire::MacAddr kMacA{{0x02, 0x00, 0x00, 0x75, 0x72, 0x01}};
const wire::MacAddr kMacB{{0x02, 0x00, 0x00, 0x75, 0x72, 0x02}};
const wire::Ipv4Addr kIpA{0x0afa0001};  // 10.250.0.1
const wire::Ipv4Addr kIpB{0x0afa0002};  // 10.250.0.2

FrameSpec spec_a_to_b(std::uint32_t payload) {
  return FrameSpec{kMacA, kMacB, kIpA, kIpB, kTxPort, kRxPort, payload};
}
FrameSpec spec_b_to_a(std::uint32_t payload) {
  return FrameSpec{kMacB, kMacA, kIpB, kIpA, kRxPort, kTxPort, payload};
}

std::string transport_of(const Options& o) {
  if (!o.transport.empty()) return o.transport;
  if (o.role == "ring-selftest") return "ring";
  for (const char* t : {"memif", "af_packet", "ring", "tap", "af_xdp"})
    if (o.vdev.rfind(std::string("net_") + t, 0) == 0) return t;
  return o.vdev;
}

// The mbuf data room is at least one whole frame: some PMDs (memif) carry
// frames larger than the MTU they accept, and the benchmark never chains.
port::PortConfig port_config(const Options& o) {
  port::PortConfig pc;
  pc.device = o.vdev;
  pc.vdev_args = o.devargs;
  pc.mtu = o.mtu;
  pc.mbufs = o.mbufs;
  pc.data_room =
      std::max<std::uint32_t>(o.data_room, static_cast<std::uint32_t>(kFrameHeaderBytes + o.size));
  return pc;
}

// The frame must fit one mbuf: the benchmark never chains.
std::string check_room(const port::EthPort& p, std::uint32_t frame_bytes) {
  const std::uint32_t room = rte_pktmbuf_data_room_size(p.pool()) - RTE_PKTMBUF_HEADROOM;
  if (room >= frame_bytes) return {};
  return "mbuf data room " + std::to_string(room) + " B < frame " + std::to_string(frame_bytes) +
         " B: raise --mtu or --data-room";
}

void on_signal(int) { g_interrupted.store(true, std::memory_order_relaxed); }

void emit(const Options& o, const std::string& line) {
  std::fflush(stdout);
  std::cout << line << std::endl;
  if (!o.json_file.empty()) {
    std::ofstream f(o.json_file, std::ios::trunc);
    f << line << '\n';
  }
}

// Runs the role; fills the report sections. Returns "" or an error sentence.
std::string run(const Options& o, const RunParams& rp, ReportHeader& h, StreamStats& stream,
                TxStats& tx, RttStats& rtt, EchoStats& echo, bool& has_stream, bool& has_tx,
                bool& has_rtt, bool& has_echo) {
  const FrameTemplate data(spec_a_to_b(o.size));
  h.frame_bytes = data.frame_bytes();
  std::string err;

  if (o.role == "ring-selftest") {
    std::uint16_t ida = 0, idb = 0;
    const int rc = port::create_ring_pair("uroce_bench", &ida, &idb);
    if (rc != 0) return "cannot create the net_ring pair: error " + std::to_string(rc);
    port::EthPort a, b;
    port::PortConfig pc = port_config(o);
    pc.device = "ring_a";
    if (a.open_port_id(ida, pc, &err) != 0) return err;
    pc.device = "ring_b";
    if (b.open_port_id(idb, pc, &err) != 0) return err;
    if (!(err = check_room(a, h.frame_bytes)).empty()) return err;
    if (o.test == "both" || o.test == "stream") {
      has_stream = true;
      if (ring_stream(a, b, data, rp, &stream) != 0) return "no frame crossed the ring pair";
    }
    if (o.test == "both" || o.test == "rtt") {
      has_rtt = true;
      if (ring_pingpong(a, b, data, rp, &rtt) != 0) return "no echo came back over the ring pair";
    }
    return {};
  }

  if (o.vdev.empty()) return "--vdev is required for role " + o.role;
  port::EthPort p;
  if (p.open(port_config(o), &err) != 0) return err;
  if (!(err = check_room(p, h.frame_bytes)).empty()) return err;
  if (o.role == "sender") {
    has_tx = true;
    if (stream_send(p, data, rp, &tx) != 0) return "the port never accepted a frame";
  } else if (o.role == "receiver") {
    has_stream = true;
    const FrameTemplate stop(spec_b_to_a(o.size));
    if (stream_receive(p, stop, rp, &stream) != 0)
      return "no data frame arrived within --wait seconds";
  } else if (o.role == "ping") {
    has_rtt = true;
    if (ping(p, data, rp, &rtt) != 0) return "no echo arrived within --wait seconds";
  } else {
    has_echo = true;
    if (pong(p, rp, &echo) != 0) return "no ping arrived within --wait seconds";
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"uroce-raw-bench: raw DPDK UDP/IPv4 baseline (throughput and RTT)"};
  app.add_option("--role", o.role, "What this process does")
      ->required()
      ->check(CLI::IsMember({"ring-selftest", "sender", "receiver", "ping", "pong"}));
  app.add_option("--test", o.test, "ring-selftest: stream, rtt or both")
      ->check(CLI::IsMember({"stream", "rtt", "both"}))
      ->capture_default_str();
  app.add_option("--size", o.size, "UDP payload bytes")
      ->check(CLI::Range(kMinPayload, 9000u - 28u))
      ->capture_default_str();
  app.add_option("--duration", o.duration, "Measured seconds")
      ->check(CLI::Range(0.01, 3600.0))
      ->capture_default_str();
  app.add_option("--count", o.count,
                 "ping: stop after this many measured round trips (0: --duration only)")
      ->capture_default_str();
  app.add_option("--warmup", o.warmup, "Unmeasured seconds after the first frame")
      ->check(CLI::Range(0.0, 600.0))
      ->capture_default_str();
  app.add_option("--wait", o.wait, "Longest wait for the peer, seconds")
      ->check(CLI::Range(0.1, 600.0))
      ->capture_default_str();
  app.add_option("--burst", o.burst, "Frames per rx/tx burst")
      ->check(CLI::Range(1, static_cast<int>(kMaxBurst)))
      ->capture_default_str();
  app.add_option("--lcore", o.lcore, "EAL -l (give each process its own core)")
      ->capture_default_str();
  app.add_option("--file-prefix", o.file_prefix,
                 "EAL --file-prefix (unique per process); empty: --no-shconf");
  app.add_option("--memory", o.memory, "EAL -m, MB")->capture_default_str();
  app.add_flag("--hugepages", o.hugepages, "Use hugepages (--in-memory)");
  app.add_option("--log-level", o.log_level, "EAL --log-level")->capture_default_str();
  app.add_option("--eal-arg", o.eal_args, "Extra EAL argument (repeatable)");
  app.add_option("--vdev", o.vdev,
                 "Port: device name (net_memif0, net_af_packet0, or an existing port)");
  app.add_option("--devargs", o.devargs,
                 "Hot-plug --vdev with these devargs (empty: it must exist)");
  app.add_option("--transport", o.transport, "Label in the JSON (default from --vdev)");
  app.add_option("--mtu", o.mtu, "Port MTU (L3 bytes)")->capture_default_str();
  app.add_option("--mbufs", o.mbufs, "mbufs per port pool")->capture_default_str();
  app.add_option("--data-room", o.data_room, "mbuf data room (at least the frame); 0: from the MTU")
      ->capture_default_str();
  app.add_option("--echo-hold-ns", o.echo_hold_ns,
                 "pong: hold each echo this long before sending it (a longer round trip)")
      ->capture_default_str();
  app.add_option("--json", o.json_file, "Also write the JSON line to this file");
  CLI11_PARSE(app, argc, argv);

  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);

  RunParams rp;
  rp.burst = o.burst;
  rp.warmup_s = o.warmup;
  rp.count = o.count;
  rp.duration_s = o.duration;
  rp.wait_s = o.wait;
  rp.echo_hold_ns = o.echo_hold_ns;

  ReportHeader h;
  h.transport = transport_of(o);
  h.role = o.role;
  h.payload_bytes = o.size;
  h.frame_bytes = static_cast<std::uint32_t>(kFrameHeaderBytes + o.size);
  h.burst = o.burst;
  h.warmup_s = o.warmup;
  h.duration_s = o.duration;

  port::EalConfig eal;
  eal.lcores = o.lcore;
  eal.memory_mb = o.memory;
  eal.file_prefix = o.file_prefix;
  eal.hugepages = o.hugepages;
  eal.in_memory = o.hugepages;
  eal.log_level = o.log_level;
  eal.extra_args = o.eal_args;
  std::string err;
  if (port::eal_init(eal, &err) != 0) {
    h.ok = false;
    h.error = err;
    emit(o, report_json(h, nullptr, nullptr, nullptr, nullptr));
    return 1;
  }

  StreamStats stream;
  TxStats tx;
  RttStats rtt;
  EchoStats echo;
  bool has_stream = false, has_tx = false, has_rtt = false, has_echo = false;
  err = run(o, rp, h, stream, tx, rtt, echo, has_stream, has_tx, has_rtt, has_echo);
  if (err.empty() && g_interrupted.load()) err = "interrupted by a signal";
  h.ok = err.empty();
  h.error = err;
  emit(o, report_json(h, has_stream ? &stream : nullptr, has_tx ? &tx : nullptr,
                      has_rtt ? &rtt : nullptr, has_echo ? &echo : nullptr));
  port::eal_cleanup();
  return h.ok ? 0 : 1;
}
