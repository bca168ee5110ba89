// liburoce-engine.so: uroced's engine in an application's process
// (docs/embedded.md). The provider dlopens it for a device in embedded mode
// and reaches it through ctl::EmbeddedOps (datapath/ctl/embedded_abi.h):
//
//   connect   the first call reads the configuration file (uroced's
//             arguments, one per line), starts the progress thread, which
//             initialises EAL (becoming its main lcore), opens the ports
//             and builds the engine (EngineHost) and then runs
//             Engine::run_progress; the calling thread starts a Server that
//             listens on the run directory's uroced.sock for uroce-ctl
//             (`uroce-ctl --pid PID`; the directory is uroce-embedded's
//             private one, mode 0700: its user and root alone reach it).
//             Every call then hands the server one end of
//             a socketpair and returns the other: the provider talks to
//             this engine exactly as to uroced, over the same protocol,
//             arena and checks.
//   progress  Engine::drive of the connection's shard (HelloRep.shard)
//             from the application's thread, which is registered with EAL
//             on its first call (mempool caches). With eal.lcores of n,
//             every device has n shards, a connection is placed on the one
//             serving the fewest (ShardedDevice), and shard k's progress
//             thread is EAL's lcore k: a thread that opens its own context
//             drives its own shard (eRPC's thread per core).
//   progress_idle  Engine::wake_progress of the connection's shard: a CQ
//             was armed, and the application may sleep on its events.
//
// At exit (an atexit handler): the server stops (every session
// reclaims its objects through the still-running engine), then the
// progress thread, then the ports and EAL.
#include <pthread.h>
#include <rte_eal.h>
#include <rte_lcore.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "apps/counters_json.h"
#include "apps/uroced/affinity.h"
#include "apps/uroced/capture_service.h"
#include "apps/uroced/config.h"
#include "apps/uroced/engine_host.h"
#include "apps/uroced/log.h"
#include "apps/uroced/server.h"
#include "apps/uroced/stale_runtime.h"
#include "datapath/ctl/embedded_abi.h"

namespace uroce::daemon {
namespace {

struct Embedded {
  std::string config_file;
  DaemonConfig cfg;
  CpuAffinity affinity;
  std::unique_ptr<EngineHost> host;
  // uroce-ctl capture (capture_service.h), as in uroced; ended before the
  // server, while the engines still serve calls.
  std::unique_ptr<CaptureService> captures;
  std::unique_ptr<Server> server;
  std::atomic<bool> stop{false};
  std::thread progress;
};

std::mutex g_mu;  // guards g_state (control path only)
Embedded* g_state = nullptr;
// What progress() drives: set once the engines run, cleared at exit.
std::atomic<EngineHost*> g_host{nullptr};

void put_error(const std::string& what, char* error, std::size_t len) {
  if (len == 0) return;
  std::snprintf(error, len, "%s", what.c_str());
}

// uroced's arguments from `path`, one per line (empty lines skipped).
std::string read_config(const std::string& path, DaemonConfig* cfg) {
  std::ifstream in(path);
  if (!in) return "cannot read " + path + ": " + std::strerror(errno);
  std::vector<std::string> args{"uroce-engine"};
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) args.push_back(line);
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  CommandLine cl;
  if (parse_command_line(static_cast<int>(args.size()), argv.data(), &cl) >= 0) {
    return path + ": not a valid uroced command line (see above)";
  }
  return load_config(cl, cfg);
}

// A port opened a moment ago may not be up yet (a memif server's link comes
// up when its peer connects, which may be a program started just after
// this one), and programs check the port's state once, at start (perftest
// gives up on a port that is down). So the first open waits for every link,
// up to kLinkWaitMs, and goes on with the link down after that (said on
// stderr): the port then comes up whenever the link does, as on a NIC.
// The same wait covers a memif client port whose server does not listen
// yet (a peer that opens its device later, as ucx_perftest's server does
// after the client's TCP connect): it cannot even start until then, so it
// is opened again when the server shows up (open_ports, ports.h); one that
// does not by the deadline fails the engine's start.
constexpr int kLinkWaitMs = 10'000;

void wait_for_links(const Embedded& e, std::chrono::steady_clock::time_point deadline) {
  for (const Device* d : e.host->devices()) {
    while (!d->link_up() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (!d->link_up()) {
      spdlog::warn("{}: the link of {} is still down after {} ms; going on", d->config().name,
                   d->port_name(), kLinkWaitMs);
    }
  }
}

// uroced ignores SIGPIPE; an application may keep its default, which kills
// the process. The engine's own writes whose reader may be gone run with
// SIGPIPE blocked, so that they fail with EPIPE instead: the server's
// threads (async events and completion-channel records for a context just
// closed), the progress thread and EAL's (memif's control channel tells a
// peer that may have exited of a disconnect) and the exit, which stops the
// ports.
void block_sigpipe(sigset_t* old) {
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, old);
}

// SIGPIPE blocked in this thread while it lives; one raised meanwhile is
// taken off before the mask is restored (unless the thread had it blocked
// already: then it is the application's).
class QuietSigpipe {
 public:
  QuietSigpipe() { block_sigpipe(&old_); }
  ~QuietSigpipe() {
    if (sigismember(&old_, SIGPIPE) == 1) return;
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    const timespec now{};
    while (sigtimedwait(&pipe, nullptr, &now) == SIGPIPE) {
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  QuietSigpipe(const QuietSigpipe&) = delete;
  QuietSigpipe& operator=(const QuietSigpipe&) = delete;

 private:
  sigset_t old_;
};

// The engine and its server. Returns "" or what failed (nothing running).
std::string start(Embedded* e) {
  if (std::string err = read_config(e->config_file, &e->cfg); !err.empty()) return err;
  setup_logging(e->cfg.log_level);
  e->affinity = CpuAffinity::save();
  e->host = std::make_unique<EngineHost>();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kLinkWaitMs);
  std::promise<std::string> opened;
  std::future<std::string> result = opened.get_future();
  // EAL's main lcore is the progress thread: rte_eal_init pins its caller,
  // which must not be the application's thread. The pin is undone at once
  // (the engine runs on whichever thread drives it).
  e->progress = std::thread([e, &opened, deadline] {
    // Before rte_eal_init: EAL's threads (the interrupt thread that runs
    // memif's control channel) inherit the mask. This thread keeps it too:
    // a write to a completion channel whose reader has gone gets EPIPE.
    block_sigpipe(nullptr);
    // The record names EAL's runtime directory for uroce-embedded, which
    // removes it if this process dies without removing it itself.
    std::string err = e->host->open(e->cfg, e->cfg.run_dir + "/" + kRuntimeRecord, deadline);
    const bool ok = err.empty();
    opened.set_value(std::move(err));
    if (!ok) return;
    // One progress thread per shard: this one (EAL's main lcore) for shard
    // 0, EAL's worker lcores for the others (eal.lcores), each unpinned
    // like this one, since the application's threads drive the engines.
    e->host->run(e->stop, [e](EngineHost::EngineT& eng, const std::atomic<bool>& stop) {
      (void)e->affinity.apply_to_current_thread();
      // The backoff's naps are microseconds; the default timer slack (50
      // us) would stretch every one of them to a scheduler tick's worth.
      (void)prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
      eng.run_progress(stop);
    });
  });
  if (std::string err = result.get(); !err.empty()) {
    e->progress.join();
    e->host.reset();
    return err;
  }
  DaemonInfo info;
  info.version = UROCE_VERSION;
  info.pid = static_cast<long>(getpid());
  info.run_dir = e->cfg.run_dir;
  info.poll = "embedded";
  info.lcores = engine_lcores(e->cfg);
  e->server = std::make_unique<Server>(e->host->devices(), info);
  e->server->set_engine_counters([h = e->host.get()] { return h->engine_counters(); });
  e->server->set_engine_loops([h = e->host.get()] { return h->loop_histograms(); });
  e->server->set_limits(e->cfg.limits);
  e->captures = std::make_unique<CaptureService>(e->host->capture_targets(),
                                                 "uroce embedded engine " UROCE_VERSION);
  e->server->set_captures(e->captures.get());
  // uroce-ctl's way in; the engine serves its program without it.
  if (std::string lerr; e->server->listen(e->cfg.socket_path(), &lerr) != 0) {
    spdlog::warn("embedded engine: uroce-ctl cannot reach it: {}", lerr);
  }
  int started = 0;
  {
    // The server's threads write async events and completion-channel
    // records into pipes whose reader (a closed context) may be gone.
    const QuietSigpipe quiet;
    started = e->server->start(&e->affinity);
  }
  if (int rc = started; rc != 0) {
    e->captures->stop();
    e->server.reset();
    e->captures.reset();
    e->stop.store(true, std::memory_order_release);
    e->progress.join();
    e->host.reset();
    return std::string("cannot start the control threads: ") + std::strerror(rc);
  }
  g_host.store(e->host.get(), std::memory_order_release);
  wait_for_links(*e, deadline);
  return "";
}

void stop_engine();
int open_connection(const char* config_file, int* fd, char* error, std::size_t len);

// Why the engine could not start, said again at every later open: EAL
// cannot be initialised twice in a process. Guarded by g_mu.
std::string g_start_error;

int connect_locked(const char* config_file, int* fd, char* error, std::size_t len) {
  if (!g_start_error.empty()) {
    put_error("embedded engine: did not start in this process: " + g_start_error, error, len);
    return EINVAL;
  }
  if (g_state == nullptr) {
    auto e = std::make_unique<Embedded>();
    e->config_file = config_file;
    if (std::string err = start(e.get()); !err.empty()) {
      g_start_error = err;
      put_error("embedded engine: " + err, error, len);
      return EINVAL;
    }
    g_state = e.release();
    // exit() runs its handlers in the reverse order of registration, and
    // those of function-local statics (spdlog's registry, libstdc++'s)
    // registered before this one run after it: the engine stops while
    // everything it logs with still exists. (A library destructor would run
    // after them all.)
    std::atexit(stop_engine);
  } else if (g_state->config_file != config_file) {
    put_error(std::string("embedded engine: this process runs the engine of ") +
                  g_state->config_file + ", not " + config_file + " (one per process)",
              error, len);
    return EBUSY;
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    const int err = errno;
    put_error(std::string("embedded engine: socketpair: ") + std::strerror(err), error, len);
    return err;
  }
  if (int rc = g_state->server->adopt(sv[0]); rc != 0) {
    ::close(sv[1]);
    put_error(std::string("embedded engine: connection refused: ") + std::strerror(rc), error, len);
    return rc;
  }
  *fd = sv[1];
  return 0;
}

// An application thread's EAL registration, undone when the thread ends.
struct ThreadLcore {
  bool registered = false;
  ~ThreadLcore() {
    if (registered) rte_thread_unregister();
  }
};
thread_local ThreadLcore t_lcore;
thread_local bool t_tried = false;

// An application thread's first call registers it with EAL. Without an
// lcore id (all taken) mempools work without their cache.
void register_thread() {
  if (t_tried) [[likely]]
    return;
  t_tried = true;
  if (rte_lcore_id() == LCORE_ID_ANY) t_lcore.registered = rte_thread_register() == 0;
}

// The engine of `shard` (a context's HelloRep.shard), or null before the
// engines run and after exit.
EngineHost::EngineT* shard_engine(std::uint32_t shard) {
  EngineHost* host = g_host.load(std::memory_order_acquire);
  if (host == nullptr) return nullptr;
  return &host->engine(shard < host->lcores() ? shard : 0);
}

void progress(std::uint32_t shard) {
  EngineHost::EngineT* eng = shard_engine(shard);
  if (eng == nullptr) return;
  register_thread();
  eng->drive();
}

void progress_post(std::uint32_t shard) {
  EngineHost::EngineT* eng = shard_engine(shard);
  if (eng == nullptr) return;
  register_thread();
  eng->drive_post();
}

void progress_idle(std::uint32_t shard) {
  if (EngineHost::EngineT* eng = shard_engine(shard); eng != nullptr) eng->wake_progress();
}

constexpr ctl::EmbeddedOps kOps{ctl::kEmbeddedAbi, open_connection, progress, progress_post,
                                progress_idle};

// Nothing may throw into the provider (a C library calls it): what the
// control path could throw (no memory, no thread) ends here as an errno.
int open_connection(const char* config_file, int* fd, char* error, std::size_t len) {
  try {
    std::lock_guard<std::mutex> lk(g_mu);
    return connect_locked(config_file, fd, error, len);
  } catch (const std::system_error& x) {
    put_error(std::string("embedded engine: ") + x.what(), error, len);
    return x.code().value() != 0 ? x.code().value() : EAGAIN;
  } catch (const std::exception& x) {
    put_error(std::string("embedded engine: ") + x.what(), error, len);
    return ENOMEM;
  }
}

void stop_engine() {
  std::lock_guard<std::mutex> lk(g_mu);
  Embedded* e = g_state;
  if (e == nullptr) return;
  g_host.store(nullptr, std::memory_order_release);
  // uroce-ctl has no socket to reach this engine: what `uroce-ctl status`
  // would say (device and port counters), at --log-level debug.
  if (spdlog::should_log(spdlog::level::debug)) {
    spdlog::debug("status at exit: {}", e->server->status(0));
  }
  // The stage stamps of the devices that keep them (docs/tails.md), one
  // line of JSON {device: its status "stages"}: the program's engine goes
  // with it, so this is the last chance to read them (bench/stack_bench.sh).
  if (spdlog::should_log(spdlog::level::info)) {
    const nlohmann::json st = nlohmann::json::parse(e->server->status(0), nullptr, false);
    nlohmann::json stages = nlohmann::json::object();
    if (st.is_object() && st.contains("devices")) {
      for (const auto& d : st["devices"]) {
        if (d.contains("stages")) stages[d["name"].get<std::string>()] = d["stages"];
      }
    }
    if (!stages.empty()) spdlog::info("stages at exit: {}", stages.dump());
  }
  // While the engines run: a capture's end waits for an engine call.
  e->captures->stop();
  e->server->stop();
  e->stop.store(true, std::memory_order_release);
  e->progress.join();
  // The progress threads are gone: the calls run inline, this thread
  // owning each engine meanwhile (base/owner_thread.h).
  // Per shard: whether the application's calls reached its engine.
  for (std::size_t k = 0; k < e->host->lcores(); ++k) {
    EngineHost::EngineT& eng = e->host->engine(k);
    engine::EngineRunCounters c;
    engine::LoopHistograms h;
    eng.call([&] {
      c = eng.counters();
      h = eng.loop_histograms();
    });
    // Every run counter, from its field list (the status's "engine"
    // object names the same keys).
    nlohmann::json run = nlohmann::json::object();
    counters::put(run, c);
    spdlog::info(
        "engine shard {}: {} application calls, {} posts batched ({} windows widened by a long "
        "iteration); run counters {}",
        k, eng.app_calls(), eng.posts_batched(), eng.post_windows_widened(), run.dump());
    spdlog::info(
        "engine shard {} loop: after work p50 <= {} ns, p99 <= {} ns, max <= {} ns; after an idle "
        "spin p99.9 <= {} ns; {} intervals of 65 us or more",
        k, engine::loop_quantile_ns(h.work_ns, 0.5), engine::loop_quantile_ns(h.work_ns, 0.99),
        engine::loop_quantile_ns(h.work_ns, 1.0), engine::loop_quantile_ns(h.idle_ns, 0.999),
        engine::loop_at_least(h.work_ns, TimeNs{1} << 16) +
            engine::loop_at_least(h.idle_ns, TimeNs{1} << 16));
  }
  {
    const QuietSigpipe quiet;
    e->host->stop_ports();
    e->server.reset();
    e->captures.reset();
    e->host.reset();
  }
  delete e;
  g_state = nullptr;
}

}  // namespace
}  // namespace uroce::daemon

extern "C" __attribute__((visibility("default"))) const uroce::ctl::EmbeddedOps*
uroce_embedded_ops() {
  return &uroce::daemon::kOps;
}
