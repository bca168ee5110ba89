// The control socket: RUN/uroced.sock (SOCK_SEQPACKET, mode 0666), an
// accept thread, and a pool of workers (worker_pool.h), each running one
// connection's ClientSession at a time. Also produces the Status body,
// since it knows every device and every session.
//
// Threading: listen/start/stop from the main thread; the accept thread and
// the workers are created here and apply the saved CPU affinity first; the
// pool has as many workers at most as Limits::connections. The session registry is guarded by a mutex (control path only).
// Back-pressure (issue 12): the accept thread drains the listen queue in
// batches. When accept fails for want of descriptors (EMFILE, ENFILE), it
// frees a reserve descriptor for one accept at a time to drain the queue,
// answers root's Status request on such a connection and closes every
// other one, then stops polling the listen socket for kAcceptPauseMs and
// logs at most one line per second with the counts; connected clients are
// served throughout. Over Limits::connections live connections, new ones
// are handled the same way (root's Status answered, the rest closed).
//
// stop() wakes the accept thread through a pipe, shuts every client
// connection down (their sessions reclaim their objects through the engine,
// which must still be able to serve Engine::call: running, or stopped so
// calls run inline), waits for the sessions and joins every thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "apps/uroced/affinity.h"
#include "apps/uroced/client_session.h"
#include "apps/uroced/cm_service.h"
#include "apps/uroced/device.h"
#include "apps/uroced/rate_limiter.h"
#include "apps/uroced/reserve_fd.h"
#include "apps/uroced/resource_limits.h"
#include "apps/uroced/status_json.h"
#include "apps/uroced/worker_pool.h"

namespace uroce::daemon {

class Server {
 public:
  Server(std::vector<Device*> devices, DaemonInfo info, ResolveTiming resolve = {});
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Listens at `path`. A socket file there whose owner still accepts
  // connections means another daemon serves it: EADDRINUSE (nothing is
  // touched). A stale socket file (nobody listening) is replaced. Returns 0
  // or an errno value with `error` saying what to do.
  int listen(const std::string& path, std::string* error);
  // Before start().
  // Resolves the defaults (resource_limits.h) from the devices' maxima.
  void set_limits(const Limits& limits);
  // Any thread, while serving (SIGHUP): new quotas, as set_limits resolves
  // them; `connections` must be the running one (config_reload.h). A
  // charge made before keeps what it holds; the next is checked against
  // the new limits.
  void reload_limits(const Limits& limits);
  // Starts the accept thread. `affinity` (may be null) is applied by every
  // thread the server creates.
  int start(const CpuAffinity* affinity);
  // Serves a connected socket as if it had been accepted (embedded mode:
  // one end of a socketpair, docs/embedded.md). After start(); any thread.
  // 0, EAGAIN at the connection limit, ESHUTDOWN once stop() has begun;
  // the descriptor is the server's in every case.
  int adopt(int fd);
  // Idempotent; also run by the destructor. Removes the socket file.
  void stop();

  // The Status body for the kStatus* `flags` (any thread), everything in it.
  std::string status(std::uint32_t flags);
  // The same as `asker` may see it: root and members of the status group
  // see everything; anyone else only their own clients, their QPs and
  // their own line of per-user use (the devices' totals stay).
  std::string status_for(std::uint32_t flags, const ctl::PeerCred& asker);
  // What the metrics listener (metrics_listener.h) renders: the status with
  // kStatusClients as `asker` may see it (null: a peer without
  // credentials, who sees no client and no user's line), and the sums by QP
  // class but no QP lines. The sums read every QP's status in the engine
  // call of each device (as `uroce-ctl qps` does), a cost that grows with
  // the QPs: over kMetricsQpLimit QPs they are left out, and
  // daemon.qp_classes_omitted says how many QPs there were. Never cut to
  // a control message's size: the listener writes any size.
  std::string metrics_status(const ctl::PeerCred* asker);
  static constexpr std::uint64_t kMetricsQpLimit = 4096;
  // Members of this group see every client (none by default). Before start().
  void set_status_group(gid_t gid) { status_gid_ = gid; }
  // How status reads the engine loop's counters (on the engine thread,
  // e.g. through Engine::call). Before start().
  void set_engine_counters(std::function<engine::EngineRunCounters()> read) {
    engine_counters_ = std::move(read);
  }
  // How status reads each engine lcore's loop histograms. Before start().
  void set_engine_loops(std::function<std::vector<engine::LoopHistograms>()> read) {
    engine_loops_ = std::move(read);
  }
  // Serves Capture requests with `c` (outlives the server). Before start().
  void set_captures(CaptureService* c) { env_.capture = c; }
  std::size_t client_count() const;
  // The rdma_cm service (its counters, for status).
  CmService& cm() { return cm_; }

 private:
  // A connection; its session runs as one task of pool_. Once `done` is
  // set the task touches the Conn no more, so reap() may destroy it.
  struct Conn {
    std::unique_ptr<ClientSession> session;
    std::atomic<bool> done{false};
  };

  void accept_loop();
  // Accepts what is queued (at most kAcceptBatch connections).
  void accept_pending();
  // accept failed for want of descriptors (`err`): drains the queue through
  // the reserve descriptor, pauses accepting, logs (rate-limited).
  void at_descriptor_limit(int err);
  // A connection that gets no thread: root's Status is answered (one
  // request, kRefusedReadMs at most), anything else gets `refusal` or,
  // from others, just the close.
  void refuse(int fd, int refusal);
  // Gives an admitted connection its session and a worker (closes it
  // after stop()): 0 or ESHUTDOWN.
  int serve(int fd);
  std::size_t live_connections();
  static constexpr int kAcceptBatch = 256;
  static constexpr int kAcceptPauseMs = 100;
  static constexpr int kRefusedReadMs = 250;
  // Compares every device's link state with the last one seen and, on a
  // change, sends PORT_ACTIVE or PORT_ERR to the clients of that device.
  // Accept thread only.
  void check_links();
  // How often the accept thread looks at the links (also its poll timeout).
  static constexpr int kLinkPollMs = 200;
  std::vector<bool> link_up_;  // accept thread only, after start()
  // Drops finished connections (all of them with `all`, after pool_ has
  // stopped).
  void reap(bool all);

  // Before env_: sessions reach it through env_.cm until they are reaped.
  CmService cm_;
  SessionEnv env_;
  HandleCounter handles_;
  Quotas quotas_;
  DaemonInfo info_;
  std::chrono::steady_clock::time_point started_;
  std::string path_;
  int listen_fd_ = -1;
  Limits resolved(const Limits& limits) const;
  Limits limits_{};  // under mu_ once serving (status, reload_limits)
  // limits_.connections, read by the accept thread; fixed once serving.
  std::uint64_t max_connections_ = 0;
  std::optional<gid_t> status_gid_;
  std::function<engine::EngineRunCounters()> engine_counters_;
  std::function<std::vector<engine::LoopHistograms>()> engine_loops_;
  bool sees_all(const ctl::PeerCred& asker) const;
  // The body, cut to fit one control message (status_json) unless
  // `whole` (the metrics listener, which writes a body of any size).
  std::string status_as(std::uint32_t flags, const ctl::PeerCred* asker, bool qp_lines = true,
                        std::uint64_t qp_classes_omitted = 0, bool whole = false);
  // Held so that one accept can still succeed at the fd limit; accept
  // thread only once serving.
  ReserveFd reserve_;
  // Accept thread only: accepting is paused until then (steady clock, ns).
  TimeNs accept_paused_until_ = 0;
  RateLimiter accept_log_{1, kNsPerSec};
  std::uint64_t fd_limit_hits_ = 0;  // since the last log line
  std::uint64_t refused_ = 0;        // connections closed, since the last log line
  int wake_[2] = {-1, -1};           // stop() writes, the accept thread polls
  const CpuAffinity* affinity_ = nullptr;
  std::thread accept_thread_;
  std::unique_ptr<WorkerPool> pool_;  // from start()
  std::atomic<std::uint32_t> next_client_{1};
  mutable std::mutex mu_;
  std::list<Conn> conns_;
  bool stopped_ = false;
};

// Whether something accepts connections on the Unix socket at `path`.
bool socket_is_live(const std::string& path);

}  // namespace uroce::daemon
