// uroced: the uroce daemon. Owns the DPDK ports, runs the engine on the EAL
// main lcore (and, with eal.lcores, one more on each further lcore: docs/
// engine.md "Several lcores") serving every virtual NIC, and serves the verbs provider's
// control connections (server.h) on RUN/uroced.sock.
//
// Start-up, in order (each failure: one log line saying what to do, exit 1):
//   configuration -> run directory -> no live daemon on RUN/uroced.sock
//   -> stale sysfs tree of a crashed daemon removed -> CPU affinity saved
//   -> rte_eal_init -> ports -> Vnics + Engine -> listen (and the metrics
//   address) -> sysfs tree and /dev/infiniband nodes -> accept thread (and
//   the metrics thread) -> "uroced: ready" on stderr
//   (and READY=1 to systemd under Type=notify) -> the engine loop runs on
//   this (the main lcore's) thread.
// SIGTERM / SIGINT (taken by a dedicated thread; blocked everywhere else):
// stop the metrics listener, stop the server (every client's objects are
// reclaimed while the engine still runs), stop the engine, remove the sysfs
// tree, the /dev nodes and the socket, close the ports, exit 0.
// SIGHUP (the same thread): read the configuration again from the same file
// and options, and take the keys that may change live, or refuse the
// reload as a whole (config_reload.h); either is logged.
#include <grp.h>
#include <pthread.h>
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
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "apps/uroced/affinity.h"
#include "apps/uroced/config.h"
#include "apps/uroced/config_reload.h"
#include "apps/uroced/engine_host.h"
#include "apps/uroced/log.h"
#include "apps/uroced/metrics_listener.h"
#include "apps/uroced/metrics_text.h"
#include "apps/uroced/server.h"
#include "apps/uroced/stale_runtime.h"
#include "apps/uroced/sysfs_tree.h"

#ifdef UROCE_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

namespace uroce::daemon {
namespace {

sigset_t termination_signals() {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGTERM);
  sigaddset(&s, SIGINT);
  sigaddset(&s, SIGHUP);
  return s;
}

// Tells systemd (Type=notify, $NOTIFY_SOCKET) how the service stands; a
// no-op when started otherwise or built without libsystemd.
void notify(const std::string& state) {
#ifdef UROCE_HAVE_SYSTEMD
  (void)sd_notify(0, state.c_str());
#else
  (void)state;
#endif
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

// SIGHUP: the configuration `cl` gives now, against `running`, which
// takes the live keys' new values when the reload is not refused.
void reload(const CommandLine& cl, DaemonConfig* running, Server* server,
            const std::vector<Device*>& devices) {
  notify("RELOADING=1\nSTATUS=reloading the configuration");
  DaemonConfig fresh;
  if (std::string err = load_config(cl, &fresh); !err.empty()) {
    spdlog::error("SIGHUP: reload refused: {}. Nothing was changed.", err);
  } else if (const ReloadPlan plan = plan_reload(*running, fresh); !plan.refused.empty()) {
    spdlog::error("SIGHUP: {}", plan.refused);
  } else if (plan.changes.empty()) {
    spdlog::info("SIGHUP: configuration reloaded: nothing changed");
  } else {
    server->reload_limits(fresh.limits);
    spdlog::set_level(spdlog::level::from_str(fresh.log_level));
    for (const std::size_t i : plan.tx_classes) {
      if (const int rc = devices[i]->set_tx_classes(fresh.devices[i].sched.classes); rc != 0) {
        spdlog::error("SIGHUP: {}: the TX classes were not changed: {}", fresh.devices[i].name,
                      std::strerror(rc));
        fresh.devices[i].sched.classes = running->devices[i].sched.classes;
      }
    }
    *running = fresh;
    for (const std::string& c : plan.changes) spdlog::warn("SIGHUP: {}", c);
    spdlog::warn("SIGHUP: configuration reloaded: {} change{}", plan.changes.size(),
                 plan.changes.size() == 1 ? "" : "s");
  }
  notify("READY=1\nSTATUS=serving");
}

int run(const CommandLine& cl, const DaemonConfig& cfg) {
  if (int rc = prepare_run_dir(cfg); rc != 0) return rc;
  raise_fd_limit();

  // Every thread created from here on, EAL's included, inherits this mask:
  // only the signal thread takes SIGTERM/SIGINT/SIGHUP.
  const sigset_t term = termination_signals();
  pthread_sigmask(SIG_BLOCK, &term, nullptr);
  // A client's pipe whose reader is gone must give EPIPE, not kill us.
  signal(SIGPIPE, SIG_IGN);

  const CpuAffinity affinity = CpuAffinity::save();
  EngineHost host;
  if (std::string err = host.open(cfg, cfg.run_dir + "/" + kRuntimeRecord); !err.empty()) {
    return fail(err);
  }
  const std::vector<Device*>& device_ptrs = host.devices();
  std::string err;
  // dpdk-dumpcap attaches as a DPDK secondary process: it needs EAL's
  // shared configuration and memory it can map (hugepages, not
  // --in-memory); uroce-ctl capture needs neither (docs/capture.md).
  if (std::string why = host.enable_pdump(); !why.empty()) {
    spdlog::info("dpdk-dumpcap cannot attach to this daemon: {}", why);
  } else if (std::string blocker = dumpcap_blocker(cfg); !blocker.empty()) {
    spdlog::info("dpdk-dumpcap cannot attach to this daemon: {}; uroce-ctl capture works", blocker);
  } else {
    spdlog::info("dpdk-dumpcap may attach: dpdk-dumpcap --file-prefix {} -i PORT",
                 host.file_prefix());
  }
  CaptureService captures(host.capture_targets(), "uroced " UROCE_VERSION);

  DaemonInfo info;
  info.version = UROCE_VERSION;
  info.pid = static_cast<long>(getpid());
  info.run_dir = cfg.run_dir;
  info.poll = to_string(cfg.poll);
  info.lcores = engine_lcores(cfg);
  info.engine_cpu = sole_cpu_of_current_thread();
  Server server(device_ptrs, info);
  server.set_limits(cfg.limits);
  server.set_captures(&captures);
  server.set_engine_counters([&host] { return host.engine_counters(); });
  server.set_engine_loops([&host] { return host.loop_histograms(); });
  if (!cfg.status_group.empty()) {
    const group* g = getgrnam(cfg.status_group.c_str());
    if (g == nullptr) return fail("daemon.status_group: no group named " + cfg.status_group);
    server.set_status_group(g->gr_gid);
  }
  if (server.listen(cfg.socket_path(), &err) != 0) return fail(err);
  // The metrics listener (daemon.metrics_listen): the status as the peer
  // may see it, rendered on the listener's own thread.
  std::unique_ptr<MetricsListener> metrics;
  if (cfg.metrics_listen.kind != MetricsListen::Kind::kOff) {
    metrics = std::make_unique<MetricsListener>([&server](const ctl::PeerCred* peer) {
      const nlohmann::json j = nlohmann::json::parse(server.metrics_status(peer), nullptr, false);
      if (j.is_discarded()) throw std::runtime_error("the status is not valid JSON");
      return metrics_text(j).text;
    });
    if (metrics->listen(cfg.metrics_listen, &err) != 0) return fail(err);
  }

  SysfsTree tree(cfg.sysfs_root());
  for (std::size_t i = 0; i < cfg.devices.size(); ++i) {
    const DeviceConfig& d = cfg.devices[i];
    const SysfsDevice sd = sysfs_device(d, cfg.socket_path());
    std::uint32_t n = 0;
    if (int rc = tree.add(sd, &n, &err); rc != 0) return fail(d.name + ": " + err);
    host.set_uverbs(i, n);
    spdlog::info("{}: {} mac {} ipv4 {} ipv6 {} mtu {} on {} (/dev/infiniband/uverbs{})", d.name, i,
                 d.mac.to_string(), d.ipv4.to_string(),
                 d.ipv6.is_zero() ? std::string("none") : d.ipv6.to_string(), d.mtu, d.port, n);
  }
  if (int rc = server.start(&affinity); rc != 0) {
    return fail(std::string("cannot start the accept thread: ") + std::strerror(rc));
  }
  if (metrics != nullptr) {
    if (int rc = metrics->start(&affinity); rc != 0) {
      return fail(std::string("cannot start the metrics thread: ") + std::strerror(rc));
    }
    spdlog::info("metrics: GET /metrics on {}", cfg.metrics_listen.text);
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
  // What SIGHUP compares with and updates: the signal thread's alone.
  DaemonConfig running = cfg;
  std::thread signals([&] {
    (void)affinity.apply_to_current_thread();
    int sig = 0;
    while (sigwait(&term, &sig) == 0 && sig == SIGHUP) reload(cl, &running, &server, device_ptrs);
    spdlog::info("SIG{}: stopping", sigabbrev_np(sig));
    notify("STOPPING=1\nSTATUS=stopping: reclaiming the clients' objects");
    if (metrics != nullptr) metrics->stop();
    // While the engine runs: a capture's end waits for an engine call.
    captures.stop();
    server.stop();
    // The log thread calls into the engine: it ends while the engine runs.
    stop_log.store(true, std::memory_order_release);
    pfc_log.join();
    stop.store(true, std::memory_order_release);
  });

  std::fprintf(stderr, "uroced: ready\n");
  std::fflush(stderr);
  std::string names;
  for (const DeviceConfig& d : cfg.devices) names += (names.empty() ? "" : ", ") + d.name;
  notify("READY=1\nSTATUS=serving " + names + " on " + cfg.socket_path());
  host.run(stop);
  signals.join();
  host.stop_ports();
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
  return run(cl, cfg);
}
