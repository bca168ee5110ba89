#include "apps/uroced/server.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>

#include "datapath/ctl/socket.h"

namespace uroce::daemon {

bool socket_is_live(const std::string& path) {
  const int fd = ctl::connect_to(path.c_str());
  if (fd < 0) return false;
  close(fd);
  return true;
}

Server::Server(std::vector<Device*> devices, DaemonInfo info, ResolveTiming resolve)
    : cm_(devices), info_(std::move(info)), started_(std::chrono::steady_clock::now()) {
  env_.devices = std::move(devices);
  env_.cm = &cm_;
  env_.handles = &handles_;
  env_.status = [this](std::uint32_t flags, const ctl::PeerCred& asker) {
    return status_for(flags, asker);
  };
  env_.resolve = resolve;
  env_.quotas = &quotas_;
  env_.engine_cpu = info_.engine_cpu;
  set_limits(Limits{});
}

Limits Server::resolved(const Limits& limits) const {
  DeviceMaxima m;
  bool first = true;
  for (const Device* d : env_.devices) {
    const auto& c = d->config();
    m.qps = first ? c.max_qps : std::min<std::uint64_t>(m.qps, c.max_qps);
    m.cqs = first ? c.max_cqs : std::min<std::uint64_t>(m.cqs, c.max_cqs);
    m.mrs = first ? c.max_mrs : std::min<std::uint64_t>(m.mrs, c.max_mrs);
    first = false;
  }
  return resolve_limits(limits, m);
}

void Server::set_limits(const Limits& limits) {
  limits_ = resolved(limits);
  max_connections_ = limits_.connections;
  quotas_.set_limits(limits_);
}

void Server::reload_limits(const Limits& limits) {
  const Limits r = resolved(limits);
  // `connections` sizes the worker pool: config_reload.h refuses a change.
  assert(r.connections == max_connections_);
  quotas_.set_limits(r);
  std::lock_guard<std::mutex> lk(mu_);
  limits_ = r;
}

Server::~Server() { stop(); }

int Server::listen(const std::string& path, std::string* error) {
  struct stat st;
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      *error = path + " exists and is not a socket: remove it or choose another run directory";
      return EEXIST;
    }
    if (socket_is_live(path)) {
      *error = "address in use: another uroced serves " + path +
               "; stop it or give this one another --run-dir";
      return EADDRINUSE;
    }
  }
  const int fd = ctl::listen_at(path.c_str(), 0666);
  if (fd < 0) {
    const int err = errno;
    *error = "cannot listen on " + path + ": " + std::strerror(err) +
             (err == EACCES ? " (run uroced as root or choose a writable --run-dir)" : "");
    return err;
  }
  // Every request then names the process that sent it (SCM_CREDENTIALS),
  // which is whose memory a registration maps (client_process.h); the
  // accepted sockets inherit the option.
  if (!ctl::pass_credentials(fd)) {
    const int err = errno;
    close(fd);
    *error = "cannot turn on SO_PASSCRED on " + path + ": " + std::strerror(err);
    return err;
  }
  listen_fd_ = fd;
  path_ = path;
  info_.socket = path;
  return 0;
}

int Server::start(const CpuAffinity* affinity) {
  affinity_ = affinity;
  // Non-blocking: the accept thread drains the queue until EAGAIN.
  (void)fcntl(listen_fd_, F_SETFL, fcntl(listen_fd_, F_GETFL) | O_NONBLOCK);
  (void)reserve_.take();
  link_up_.clear();
  for (const Device* d : env_.devices) link_up_.push_back(d->link_up());
  if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) return errno;
  WorkerPoolConfig pool;
  pool.max_workers = static_cast<std::size_t>(std::max<std::uint64_t>(max_connections_, 1));
  if (affinity != nullptr) {
    pool.on_start = [affinity] { (void)affinity->apply_to_current_thread(); };
  }
  pool_ = std::make_unique<WorkerPool>(std::move(pool));
  cm_.start();
  accept_thread_ = std::thread([this] { accept_loop(); });
  return 0;
}

namespace {

TimeNs steady_now() {
  return static_cast<TimeNs>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::steady_clock::now().time_since_epoch())
                                 .count());
}

}  // namespace

void Server::accept_loop() {
  if (affinity_ != nullptr) (void)affinity_->apply_to_current_thread();
  for (;;) {
    const TimeNs now = steady_now();
    const bool paused = now < accept_paused_until_;
    int timeout = kLinkPollMs;
    if (paused) {
      timeout =
          std::min<int>(timeout, static_cast<int>((accept_paused_until_ - now) / kNsPerMs) + 1);
    }
    // A negative fd is ignored by poll: while paused only stop() and the
    // link timer wake this thread, however many connections are queued.
    pollfd p[2] = {{paused ? -1 : listen_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    const int n = poll(p, 2, timeout);
    check_links();
    // Finished connections hold their socket until joined: reaped here too,
    // not only after an accept, or a daemon at its descriptor limit (where
    // accepts fail) would never get them back.
    reap(false);
    if (n == 0) continue;
    if (n < 0) {
      if (errno == EINTR) continue;
      spdlog::error("control socket: poll failed: {}", std::strerror(errno));
      return;
    }
    if (p[1].revents != 0) return;
    if ((p[0].revents & POLLIN) == 0) continue;
    accept_pending();
    std::lock_guard<std::mutex> lk(mu_);
    if (stopped_) return;
  }
}

void Server::accept_pending() {
  for (int i = 0; i < kAcceptBatch; ++i) {
    // A free slot goes to the reserve before any session: without it a
    // daemon at its limit cannot drain its queue (reserve_fd.h).
    if (!reserve_.take()) {
      at_descriptor_limit(EMFILE);
      return;
    }
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      if (err == EINTR || err == ECONNABORTED) continue;
      if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
        at_descriptor_limit(err);
      } else if (err != EAGAIN && err != EWOULDBLOCK) {
        std::uint64_t suppressed = 0;
        if (accept_log_.allow(steady_now(), &suppressed)) {
          spdlog::warn("control socket: accept failed: {} ({} more accept messages held back)",
                       std::strerror(err), suppressed);
        }
        accept_paused_until_ = steady_now() + kAcceptPauseMs * kNsPerMs;
      }
      return;
    }
    reap(false);
    if (live_connections() >= max_connections_) {
      ++refused_;
      refuse(fd, EAGAIN);
      std::uint64_t suppressed = 0;
      if (accept_log_.allow(steady_now(), &suppressed)) {
        spdlog::warn(
            "control socket: {} connections served, the [limits] maximum: {} connection{} "
            "refused since the last message",
            max_connections_, refused_, refused_ == 1 ? "" : "s");
        refused_ = 0;
      }
      continue;
    }
    if (serve(fd) != 0) return;
  }
}

int Server::serve(int fd) {
  std::lock_guard<std::mutex> lk(mu_);
  if (stopped_) {
    close(fd);
    return ESHUTDOWN;
  }
  Conn& c = conns_.emplace_back();
  c.session = std::make_unique<ClientSession>(env_, fd, next_client_.fetch_add(1));
  // The pool has a worker for every connection under the cap; submit
  // fails only once stop() has begun, which stopped_ excludes here.
  const bool queued = pool_->submit([&c] {
    c.session->run();
    c.done.store(true, std::memory_order_release);
  });
  assert(queued);
  (void)queued;
  return 0;
}

int Server::adopt(int fd) {
  reap(false);
  if (live_connections() >= max_connections_) {
    close(fd);
    return EAGAIN;
  }
  return serve(fd);
}

void Server::at_descriptor_limit(int err) {
  ++fd_limit_hits_;
  // The classic trick: give the reserve descriptor back for one accept,
  // handle that connection, take the reserve again; until the queue is
  // empty, or the reserve cannot be had again (another thread took the
  // slot: accept_pending takes it back at the first free one). The queue
  // then no longer wakes poll at once, and root's status request in it is
  // answered.
  for (int i = 0; i < kAcceptBatch && reserve_.take(); ++i) {
    reserve_.give();
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    const int accept_err = errno;
    if (fd >= 0) {
      ++refused_;
      refuse(fd, err == ENFILE ? ENFILE : EMFILE);
    }
    if (fd < 0 && accept_err != EINTR && accept_err != ECONNABORTED) break;
  }
  (void)reserve_.take();
  const TimeNs now = steady_now();
  accept_paused_until_ = now + kAcceptPauseMs * kNsPerMs;
  std::uint64_t suppressed = 0;
  if (accept_log_.allow(now, &suppressed)) {
    spdlog::warn(
        "control socket: out of descriptors ({}): {} accept failure{} and {} connection{} refused "
        "since the last message; accepting paused for {} ms at a time",
        std::strerror(err), fd_limit_hits_, fd_limit_hits_ == 1 ? "" : "s", refused_,
        refused_ == 1 ? "" : "s", kAcceptPauseMs);
    fd_limit_hits_ = 0;
    refused_ = 0;
  }
}

void Server::refuse(int fd, int refusal) {
  ctl::PeerCred cred{};
  if (!ctl::peer_cred(fd, &cred) || cred.uid != 0) {
    // The refusal notice (protocol.h): the client learns why, without the
    // accept thread waiting for its request. A fresh socket's send buffer
    // is empty, so this does not block.
    const ctl::MsgHeader h{ctl::kMagic, ctl::kVersion, ctl::kRefusedOp,
                           sizeof(ctl::MsgHeader) + sizeof(ctl::ReplyStatus), 0};
    const ctl::ReplyStatus st{refusal, 0};
    std::byte msg[sizeof(h) + sizeof(st)];
    std::memcpy(msg, &h, sizeof(h));
    std::memcpy(msg + sizeof(h), &st, sizeof(st));
    (void)ctl::send_msg(fd, msg);
    close(fd);
    return;
  }
  // Root (the administrator's uroce-ctl) is answered inline, its one
  // request read within kRefusedReadMs: the accept thread waits no longer.
  const timeval tv{0, kRefusedReadMs * 1000};
  (void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  (void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  ClientSession session(env_, fd, next_client_.fetch_add(1));
  session.serve_status_only(refusal);
}

std::size_t Server::live_connections() { return client_count(); }

void Server::check_links() {
  for (std::size_t i = 0; i < env_.devices.size(); ++i) {
    const Device* d = env_.devices[i];
    const bool up = d->link_up();
    if (up == link_up_[i]) continue;
    link_up_[i] = up;
    const ibv_event_type t = up ? IBV_EVENT_PORT_ACTIVE : IBV_EVENT_PORT_ERR;
    std::size_t told = 0;
    {
      std::lock_guard<std::mutex> lk(mu_);
      for (Conn& c : conns_) told += c.session->post_port_event(d, t) ? 1 : 0;
    }
    spdlog::info("{}: link {} ({} sent to {} client{})", d->config().name, up ? "up" : "down",
                 up ? "PORT_ACTIVE" : "PORT_ERR", told, told == 1 ? "" : "s");
  }
}

void Server::reap(bool all) {
  std::list<Conn> finished;
  {
    std::lock_guard<std::mutex> lk(mu_);
    for (auto it = conns_.begin(); it != conns_.end();) {
      if (all || it->done.load(std::memory_order_acquire)) {
        auto next = std::next(it);
        finished.splice(finished.end(), conns_, it);
        it = next;
      } else {
        ++it;
      }
    }
  }
  // The sessions' destructors close their sockets, outside mu_.
  finished.clear();
}

void Server::stop() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  if (wake_[1] >= 0) {
    const char b = 1;
    // One byte into this process's own empty wake-up pipe: it cannot fill,
    // and the accept thread only needs the pipe readable.
    [[maybe_unused]] const ssize_t n = write(wake_[1], &b, 1);
  }
  if (accept_thread_.joinable()) accept_thread_.join();
  {
    std::lock_guard<std::mutex> lk(mu_);
    for (Conn& c : conns_) c.session->shutdown();
  }
  // Every session ends once its socket is shut down; the pool waits for
  // them (a connection accepted but not yet run is dropped unrun).
  if (pool_ != nullptr) pool_->stop();
  reap(true);
  cm_.stop();
  if (listen_fd_ >= 0) {
    close(listen_fd_);
    listen_fd_ = -1;
    (void)unlink(path_.c_str());
  }
  for (int& f : wake_) {
    if (f >= 0) close(f);
    f = -1;
  }
  reserve_.give();
}

std::size_t Server::client_count() const {
  std::lock_guard<std::mutex> lk(mu_);
  std::size_t n = 0;
  for (const Conn& c : conns_) n += c.done.load(std::memory_order_acquire) ? 0 : 1;
  return n;
}

std::string Server::status(std::uint32_t flags) { return status_as(flags, nullptr); }

std::string Server::status_for(std::uint32_t flags, const ctl::PeerCred& asker) {
  return status_as(flags, sees_all(asker) ? nullptr : &asker);
}

bool Server::sees_all(const ctl::PeerCred& asker) const {
  if (asker.uid == 0) return true;
  if (!status_gid_) return false;
  if (asker.gid == *status_gid_) return true;
  // Supplementary groups: SO_PEERCRED carries only the primary one.
  passwd pw{};
  passwd* found = nullptr;
  std::vector<char> buf(16384);
  if (getpwuid_r(asker.uid, &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr) {
    return false;
  }
  int n = 64;
  std::vector<gid_t> groups(static_cast<std::size_t>(n));
  if (getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &n) < 0) {
    groups.resize(static_cast<std::size_t>(n));
    if (getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &n) < 0) return false;
  }
  groups.resize(static_cast<std::size_t>(n));
  return std::find(groups.begin(), groups.end(), *status_gid_) != groups.end();
}

std::string Server::metrics_status(const ctl::PeerCred* asker) {
  // No peer credentials (a TCP peer): nobody's clients, no user's line.
  const ctl::PeerCred anonymous{0, static_cast<uid_t>(-1), static_cast<gid_t>(-1)};
  const ctl::PeerCred& who = asker != nullptr ? *asker : anonymous;
  // The QP count first (no QP's status read): whether the sums are cheap.
  std::uint64_t qps = 0;
  for (Device* d : env_.devices) {
    DeviceSnapshot s;
    d->snapshot(false, &s);
    qps += s.qps;
  }
  const bool sums = qps <= kMetricsQpLimit;
  return status_as(ctl::kStatusClients | (sums ? ctl::kStatusQps : 0u),
                   sees_all(who) ? nullptr : &who, false, sums ? 0 : qps, true);
}

std::string Server::status_as(std::uint32_t flags, const ctl::PeerCred* asker, bool qp_lines,
                              std::uint64_t qp_classes_omitted, bool whole) {
  const bool with_qps = (flags & ctl::kStatusQps) != 0;
  std::vector<DeviceSnapshot> snaps(env_.devices.size());
  for (std::size_t i = 0; i < env_.devices.size(); ++i) {
    env_.devices[i]->snapshot(with_qps, &snaps[i]);
  }
  std::vector<ClientSummary> clients;
  {
    std::lock_guard<std::mutex> lk(mu_);
    for (const Conn& c : conns_) {
      if (!c.done.load(std::memory_order_acquire)) clients.push_back(c.session->summary());
    }
  }
  DaemonInfo info = info_;
  info.uptime_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  info.clients = clients.size();
  info.cm = cm_.status();
  {
    std::lock_guard<std::mutex> lk(mu_);
    info.limits = limits_;
  }
  info.users = quotas_.users();
  if (pool_ != nullptr) info.workers = pool_->stats();
  if (engine_counters_) info.engine = engine_counters_();
  if (engine_loops_) info.loops = engine_loops_();
  info.qp_classes_omitted = qp_classes_omitted;
  // The sums by QP class name no client: taken over every QP, before the
  // QP lines are cut to the asker's own (as the device totals stay whole).
  QpSums sums;
  if (with_qps) sums = qp_sums(snaps);
  // Which devices are being captured is the administrator's business.
  if (env_.capture != nullptr && asker == nullptr) info.captures = env_.capture->status();
  if (asker != nullptr) {
    // Only the asker's own: its clients, their QPs, its per-user line.
    std::erase_if(clients, [&](const ClientSummary& c) { return c.cred.uid != asker->uid; });
    std::vector<std::uint32_t> mine;
    for (const ClientSummary& c : clients) mine.push_back(c.id);
    for (DeviceSnapshot& s : snaps) {
      std::erase_if(s.qp_status, [&](const engine::QpStatus& q) {
        return std::find(mine.begin(), mine.end(), q.client) == mine.end();
      });
    }
    std::erase_if(info.users, [&](const auto& u) { return u.first != asker->uid; });
  }
  const std::size_t room =
      whole ? SIZE_MAX : ctl::kMaxMessageBytes - sizeof(ctl::MsgHeader) - sizeof(ctl::ReplyStatus);
  return status_json(info, env_.devices, snaps, with_qps && qp_lines,
                     (flags & ctl::kStatusClients) != 0 ? &clients : nullptr, room,
                     with_qps ? &sums : nullptr);
}

}  // namespace uroce::daemon
