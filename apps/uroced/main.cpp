// uroced: the uroce daemon. Owns the DPDK ports, runs ONE engine on the EAL
// main lcore serving every virtual NIC, and serves the verbs provider's
// control connections (server.h) on RUN/uroced.sock.
//
// Start-up, in order (each failure: one log line saying what to do, exit 1):
//   configuration -> run directory -> no live daemon on RUN/uroced.sock
//   -> stale sysfs tree of a crashed daemon removed -> CPU affinity saved
//   -> rte_eal_init -> ports -> Vnics + Engine -> listen -> sysfs tree and
//   /dev/infiniband nodes -> accept thread -> "uroced: ready" on stderr
//   -> the engine loop runs on this (the main lcore's) thread.
// SIGTERM / SIGINT (taken by a dedicated thread; blocked everywhere else):
// stop the server (every client's objects are reclaimed while the engine
// still runs), stop the engine, remove the sysfs tree, the /dev nodes and
// the socket, close the ports, exit 0.
#include <grp.h>
#include <pthread.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "apps/uroced/affinity.h"
#include "apps/uroced/config.h"
#include "apps/uroced/config_dc.h"
#include "apps/uroced/log.h"
#include "apps/uroced/ports.h"
#include "apps/uroced/server.h"
#include "apps/uroced/stale_runtime.h"
#include "apps/uroced/sysfs_tree.h"
#include "apps/uroced/vnic_device.h"
#include "datapath/engine/engine.h"
#include "datapath/engine/eth_port_io.h"
#include "datapath/engine/tsc_clock.h"
#include "datapath/port/eal.h"
#include "datapath/wire/eth.h"

namespace uroce::daemon {
namespace {

using EngineT = engine::Engine<engine::EthPortIo, engine::TscClock>;
using VnicT = EngineT::VnicT;

// rte_eal_cleanup when run()'s scope ends, after every port is closed; then
// the EAL runtime directory of our file prefix (/var/run/dpdk/<prefix>),
// which EAL leaves behind and which nobody else uses: the prefix is ours.
// The record of that directory in the run directory (stale_runtime.h) goes
// with it.
struct EalGuard {
  bool active = false;
  std::string runtime_dir;
  std::string record;
  ~EalGuard() {
    if (!active) return;
    port::eal_cleanup();
    std::error_code ec;
    if (!runtime_dir.empty()) std::filesystem::remove_all(runtime_dir, ec);
    if (!record.empty()) std::filesystem::remove(record, ec);
  }
};

// The link speed PFC quanta are timed with: the configured link_mbps, else
// what the port reports, else 10 Gb/s (a link still down at start-up, or a
// virtual port that reports nothing), said in the log.
std::uint64_t link_bps(const DeviceConfig& d, std::uint16_t port_id) {
  if (d.link_mbps != 0) return std::uint64_t{d.link_mbps} * 1'000'000;
  rte_eth_link link{};
  if (rte_eth_link_get_nowait(port_id, &link) == 0 && link.link_speed != RTE_ETH_SPEED_NUM_NONE &&
      link.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN) {
    return std::uint64_t{link.link_speed} * 1'000'000;
  }
  if (d.pfc.enable != 0) {
    spdlog::warn(
        "{}: the port reports no link speed; PFC quanta timed at 10000 Mb/s "
        "(set link_mbps)",
        d.name);
  }
  return 10'000'000'000ull;
}

sigset_t termination_signals() {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGTERM);
  sigaddset(&s, SIGINT);
  return s;
}

int fail(const std::string& what) {
  spdlog::critical("{}", what);
  return 1;
}

int prepare_run_dir(const DaemonConfig& cfg) {
  std::error_code ec;
  std::filesystem::create_directories(cfg.run_dir, ec);
  if (ec) {
    return fail("cannot create the run directory " + cfg.run_dir + ": " + ec.message() +
                " (run uroced as root or choose a writable --run-dir)");
  }
  if (socket_is_live(cfg.socket_path())) {
    return fail("address in use: another uroced serves " + cfg.socket_path() +
                "; stop it or give this one another --run-dir");
  }
  std::string removed;
  const std::string record = cfg.run_dir + "/" + kRuntimeRecord;
  if (std::string why = clean_stale_runtime(record, &removed); !why.empty()) {
    spdlog::warn("EAL runtime directory of a previous uroced left in place: {}", why);
  } else if (!removed.empty()) {
    spdlog::warn("removed the EAL runtime directory {} of a uroced that did not exit cleanly",
                 removed);
  }
  const int stale = cleanup_stale_tree(cfg.sysfs_root(), kCdevDir);
  if (stale > 0) {
    spdlog::warn(
        "removed the sysfs tree and {} /dev/infiniband node(s) of a uroced that "
        "did not exit cleanly",
        stale);
  }
  return 0;
}

// The daemon holds descriptors for its clients (sockets, pipes, ring
// regions), within the per-user [limits]; the usual soft limit of 1,024
// would be reached long before those. Up to the hard limit, then, which the
// administrator controls.
void raise_fd_limit() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur >= r.rlim_max) return;
  const rlim_t was = r.rlim_cur;
  r.rlim_cur = r.rlim_max;
  if (setrlimit(RLIMIT_NOFILE, &r) == 0) {
    spdlog::info("descriptor limit raised from {} to {}", was, r.rlim_max);
  }
}

int run(const DaemonConfig& cfg) {
  if (int rc = prepare_run_dir(cfg); rc != 0) return rc;
  raise_fd_limit();

  // Every thread created from here on, EAL's included, inherits this mask:
  // only the signal thread takes SIGTERM/SIGINT.
  const sigset_t term = termination_signals();
  pthread_sigmask(SIG_BLOCK, &term, nullptr);
  // A client's pipe whose reader is gone must give EPIPE, not kill us.
  signal(SIGPIPE, SIG_IGN);

  const CpuAffinity affinity = CpuAffinity::save();
  port::EalConfig eal;
  if (std::string err = make_eal_config(cfg, static_cast<int>(getpid()), &eal); !err.empty()) {
    return fail(err);
  }
  EalGuard eal_guard;
  std::string err;
  if (port::eal_init(eal, &err) != 0) return fail(err);
  eal_guard.active = true;
  const std::string runtime_dir = rte_eal_get_runtime_dir();
  if (runtime_dir.ends_with("/" + eal.file_prefix)) {
    eal_guard.runtime_dir = runtime_dir;
    const std::string record = cfg.run_dir + "/" + kRuntimeRecord;
    if (std::string e = write_runtime_record(record, static_cast<long>(getpid()), runtime_dir);
        !e.empty()) {
      spdlog::warn("{}; a successor will not find this EAL runtime directory", e);
    } else {
      eal_guard.record = record;
    }
  }

  std::vector<std::unique_ptr<port::EthPort>> ports;
  if (open_ports(cfg, &ports, &err) != 0) return fail(err);
  std::vector<std::unique_ptr<engine::EthPortIo>> ios;
  std::vector<std::unique_ptr<VnicT>> vnics;
  engine::TscClock clock = engine::TscClock::from_eal();
  engine::EngineConfig ecfg;
  ecfg.mode = cfg.poll == PollMode::kBusy ? engine::PollMode::kBusy : engine::PollMode::kBackoff;
  ecfg.backoff_max_us = cfg.backoff_max_us;
  EngineT eng(ecfg, clock);
  std::vector<std::unique_ptr<VnicDevice<EngineT>>> devices;
  std::vector<Device*> device_ptrs;
  for (std::size_t i = 0; i < cfg.devices.size(); ++i) {
    const DeviceConfig& d = cfg.devices[i];
    engine::VnicConfig vc;
    vc.name = d.name;
    vc.mac = d.mac;
    vc.ip = d.ipv4;
    vc.ip6 = d.ipv6;
    vc.eth_mtu = d.mtu;
    vc.impair = d.impair;
    vc.pfc = d.pfc;
    vc.pfc.link_bps = link_bps(d, ports[i]->port_id());
    vc.sched = d.sched;
    vc.pacer = d.pacer;
    vc.port_limit.limit_bytes = d.tx_limit_bytes;
    vc.port_limit.link_bps = vc.pfc.link_bps;
    vc.port_limit.overhead_bytes = wire::kEthWireOverheadBytes;
    vc.dcqcn = d.dcqcn;
    vc.dcqcn.rp.line_rate_bps = vc.pfc.link_bps;
    if (d.dcqcn.enabled) {
      spdlog::info("{}: DCQCN at {} Mb/s line rate, CNPs at DSCP {} at most every {} us", d.name,
                   vc.pfc.link_bps / 1'000'000, d.dcqcn.cnp_dscp,
                   d.dcqcn.cnp_interval_ns / kNsPerUs);
    }
    vc.homa = d.homa;
    apply_dc_keys(d, &vc);
    if (d.homa.enabled) {
      const sched::homa::HomaSettings& h = d.homa;
      spdlog::info(
          "{}: Homa-like scheduler on: {} priorities ({} unscheduled), unscheduled {} B, "
          "RTT {} B, overcommit {}, max incoming {} B, FIFO {} permille, grant resend {} us, "
          "grant timeout {} us",
          d.name, h.priorities, h.unsched_levels(), h.unsched_bytes, h.rtt_bytes, h.overcommit,
          h.max_incoming, h.fifo_permille, h.resend_ns / kNsPerUs, h.grant_timeout_ns / kNsPerUs);
    }
    if (d.sched.isolation != sched::Isolation::kOff) {
      spdlog::info("{}: TX isolation {}", d.name, sched::isolation_name(d.sched.isolation));
    }
    if (d.tx_limit_bytes != 0) {
      spdlog::info("{}: TX port limit {} bytes at {} Mb/s", d.name, d.tx_limit_bytes,
                   vc.pfc.link_bps / 1'000'000);
    }
    if (d.pfc.enable != 0) {
      spdlog::info("{}: PFC on priorities mask 0x{:02x} at {} Mb/s, tx_ttl {}", d.name,
                   d.pfc.enable, vc.pfc.link_bps / 1'000'000, d.pfc.ttl.tx_ttl);
    }
    if (d.impair.active()) {
      spdlog::warn(
          "{}: loss injection on: drop_tx_every={} drop_rx_every={} drop_tx_rate={} "
          "drop_rx_rate={} drop_seed={}",
          d.name, d.impair.drop_tx_every, d.impair.drop_rx_every, d.impair.drop_tx_rate,
          d.impair.drop_rx_rate, d.impair.drop_seed);
    }
    ios.push_back(std::make_unique<engine::EthPortIo>(*ports[i]));
    vnics.push_back(std::make_unique<VnicT>(vc, *ios.back()));
    eng.add_vnic(vnics.back().get());
    devices.push_back(std::make_unique<VnicDevice<EngineT>>(*vnics.back(), eng,
                                                            static_cast<std::uint32_t>(i), d.port));
    // rte_eth_link_get_nowait only reads the ethdev's link word: safe from
    // the control thread while the engine lcore runs the port.
    devices.back()->set_link_probe([pid = ports[i]->port_id()] {
      rte_eth_link link{};
      return rte_eth_link_get_nowait(pid, &link) == 0 && link.link_status == RTE_ETH_LINK_UP;
    });
    device_ptrs.push_back(devices.back().get());
  }

  DaemonInfo info;
  info.version = UROCE_VERSION;
  info.pid = static_cast<long>(getpid());
  info.run_dir = cfg.run_dir;
  info.poll = to_string(cfg.poll);
  info.lcore = cfg.lcore;
  Server server(device_ptrs, info);
  server.set_limits(cfg.limits);
  if (!cfg.status_group.empty()) {
    const group* g = getgrnam(cfg.status_group.c_str());
    if (g == nullptr) return fail("daemon.status_group: no group named " + cfg.status_group);
    server.set_status_group(g->gr_gid);
  }
  if (server.listen(cfg.socket_path(), &err) != 0) return fail(err);

  SysfsTree tree(cfg.sysfs_root());
  for (std::size_t i = 0; i < cfg.devices.size(); ++i) {
    const DeviceConfig& d = cfg.devices[i];
    SysfsDevice sd;
    sd.ibdev = d.name;
    sd.mac = d.mac;
    sd.ipv4 = d.ipv4;
    sd.ipv6 = d.ipv6;
    sd.socket_path = cfg.socket_path();
    std::uint32_t n = 0;
    if (int rc = tree.add(sd, &n, &err); rc != 0) return fail(d.name + ": " + err);
    devices[i]->set_uverbs(n);
    spdlog::info("{}: {} mac {} ipv4 {} ipv6 {} mtu {} on {} (/dev/infiniband/uverbs{})", d.name, i,
                 d.mac.to_string(), d.ipv4.to_string(),
                 d.ipv6.is_zero() ? std::string("none") : d.ipv6.to_string(), d.mtu, d.port, n);
  }
  if (int rc = server.start(&affinity); rc != 0) {
    return fail(std::string("cannot start the accept thread: ") + std::strerror(rc));
  }

  std::atomic<bool> stop{false};
  std::atomic<bool> stop_log{false};
  // PFC storms and TTL loop signals, recorded by the engine in a fixed ring
  // per device (the loop signals already rate-limited there), logged here.
  std::thread pfc_log([&] {
    (void)affinity.apply_to_current_thread();
    std::vector<pfc::PfcEvent> ev;
    char line[256];
    while (!stop_log.load(std::memory_order_acquire)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      for (Device* dev : device_ptrs) {
        ev.clear();
        dev->drain_pfc_events(&ev);
        for (const pfc::PfcEvent& e : ev) {
          pfc::format_pfc_event(e, line);
          spdlog::warn("{}: {}", dev->config().name, line);
        }
      }
    }
  });
  std::thread signals([&] {
    (void)affinity.apply_to_current_thread();
    int sig = 0;
    sigwait(&term, &sig);
    spdlog::info("SIG{}: stopping", sigabbrev_np(sig));
    server.stop();
    // The log thread calls into the engine: it ends while the engine runs.
    stop_log.store(true, std::memory_order_release);
    pfc_log.join();
    stop.store(true, std::memory_order_release);
  });

  std::fprintf(stderr, "uroced: ready\n");
  std::fflush(stderr);
  eng.run(stop);
  signals.join();
  // Stop every port before any is closed and its pool freed: stopping a
  // memif port makes its peer (possibly another port of this daemon) handle
  // a disconnect in EAL's interrupt thread, which must not find the other
  // side's memory already gone.
  for (auto& p : ports) p->stop();
  tree.remove_all();
  spdlog::info("stopped");
  return 0;
}

}  // namespace
}  // namespace uroce::daemon

int main(int argc, char** argv) {
  using namespace uroce::daemon;
  CommandLine cl;
  if (const int rc = parse_command_line(argc, argv, &cl); rc >= 0) return rc;
  DaemonConfig cfg;
  if (std::string err = load_config(cl, &cfg); !err.empty()) {
    std::fprintf(stderr, "uroced: %s\n", err.c_str());
    return 1;
  }
  setup_logging(cfg.log_level);
  return run(cfg);
}
