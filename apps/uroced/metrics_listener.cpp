#include "apps/uroced/metrics_listener.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <optional>
#include <vector>

#include "apps/uroced/metrics_text.h"

namespace uroce::daemon {

HttpAsk parse_http_request(std::string_view bytes, std::size_t max_bytes) {
  // The head ends at the first blank line (CRLF CRLF, or bare LFs).
  std::size_t end = bytes.find("\r\n\r\n");
  if (end == std::string_view::npos) end = bytes.find("\n\n");
  if (end == std::string_view::npos || end > max_bytes) {
    return bytes.size() >= max_bytes ? HttpAsk::kTooLarge : HttpAsk::kIncomplete;
  }
  const std::string_view line = bytes.substr(0, bytes.find_first_of("\r\n"));
  const std::size_t sp1 = line.find(' ');
  const std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp1 == std::string_view::npos || sp2 == std::string_view::npos ||
      line.find(' ', sp2 + 1) != std::string_view::npos) {
    return HttpAsk::kBadRequest;
  }
  const std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (method.empty() || target.empty() || target[0] != '/' ||
      (version != "HTTP/1.1" && version != "HTTP/1.0")) {
    return HttpAsk::kBadRequest;
  }
  if (method != "GET" && method != "HEAD") return HttpAsk::kBadMethod;
  target = target.substr(0, target.find('?'));
  if (target != "/metrics") return HttpAsk::kNotFound;
  return method == "GET" ? HttpAsk::kGetMetrics : HttpAsk::kHeadMetrics;
}

std::string http_response(int code, std::string_view reason, std::string_view content_type,
                          std::string_view body, bool head) {
  std::string out = "HTTP/1.1 " + std::to_string(code) + " " + std::string(reason) + "\r\n";
  out += "Content-Type: " + std::string(content_type) + "\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  if (code == 405) out += "Allow: GET, HEAD\r\n";
  out += "Connection: close\r\n\r\n";
  if (!head) out += body;
  return out;
}

namespace {

constexpr std::string_view kTextPlain = "text/plain; charset=utf-8";

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Whether something accepts connections on the stream socket at `path`.
bool unix_stream_live(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path, path.c_str(), std::min(path.size(), sizeof(a.sun_path) - 1));
  const bool live = connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof(a)) == 0;
  close(fd);
  return live;
}

}  // namespace

struct MetricsListener::Conn {
  int fd = -1;
  std::optional<ctl::PeerCred> peer;  // a unix socket's peer
  std::int64_t deadline_ms = 0;
  std::string in;
  std::string out;
  std::size_t sent = 0;
  bool answered = false;  // `out` is the whole answer
  bool draining = false;  // answer sent and write side shut: reading to EOF
};

MetricsListener::MetricsListener(Render render) : render_(std::move(render)) {}

MetricsListener::~MetricsListener() { stop(); }

int MetricsListener::listen(const MetricsListen& where, std::string* error) {
  const std::string name = where.text.empty() ? std::string("the metrics address") : where.text;
  int fd = -1;
  if (where.kind == MetricsListen::Kind::kUnix) {
    struct stat st;
    if (lstat(where.path.c_str(), &st) == 0) {
      if (!S_ISSOCK(st.st_mode)) {
        *error = "daemon.metrics_listen: " + where.path + " exists and is not a socket";
        return EEXIST;
      }
      if (unix_stream_live(where.path)) {
        *error = "daemon.metrics_listen: address in use: something serves " + where.path;
        return EADDRINUSE;
      }
      (void)unlink(where.path.c_str());
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    if (where.path.size() >= sizeof(a.sun_path)) {
      if (fd >= 0) close(fd);
      *error = "daemon.metrics_listen: " + where.path + " is too long for a socket path";
      return ENAMETOOLONG;
    }
    std::memcpy(a.sun_path, where.path.c_str(), where.path.size());
    const bool bound = fd >= 0 && bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof(a)) == 0;
    const int bind_err = errno;
    // Any local user may connect (as to the control socket): each peer is
    // shown what its own credentials allow.
    if (bound) (void)chmod(where.path.c_str(), 0666);
    if (!bound) {
      if (fd >= 0) close(fd);
      *error = "daemon.metrics_listen: cannot bind " + where.path + ": " + std::strerror(bind_err);
      return bind_err;
    }
    unix_ = true;
    path_ = where.path;
  } else if (where.kind == MetricsListen::Kind::kTcp4 || where.kind == MetricsListen::Kind::kTcp6) {
    const bool v6 = where.kind == MetricsListen::Kind::kTcp6;
    fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
      const int err = errno;
      *error = "daemon.metrics_listen: socket: " + std::string(std::strerror(err));
      return err;
    }
    const int one = 1;
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    int rc = 0;
    if (v6) {
      (void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
      sockaddr_in6 a{};
      a.sin6_family = AF_INET6;
      a.sin6_port = htons(where.port);
      (void)inet_pton(AF_INET6, where.host.c_str(), &a.sin6_addr);
      rc = bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof(a));
    } else {
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(where.port);
      (void)inet_pton(AF_INET, where.host.c_str(), &a.sin_addr);
      rc = bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof(a));
    }
    if (rc != 0) {
      const int err = errno;
      close(fd);
      *error = "daemon.metrics_listen: cannot bind " + name + ": " + std::strerror(err);
      return err;
    }
    sockaddr_storage bound{};
    socklen_t len = sizeof(bound);
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len) == 0) {
      port_ = ntohs(v6 ? reinterpret_cast<const sockaddr_in6*>(&bound)->sin6_port
                       : reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);
    }
  } else {
    *error = "daemon.metrics_listen: no address";
    return EINVAL;
  }
  if (::listen(fd, static_cast<int>(kMaxConnections)) != 0) {
    const int err = errno;
    close(fd);
    if (unix_) (void)unlink(path_.c_str());
    *error = "daemon.metrics_listen: cannot listen on " + name + ": " + std::strerror(err);
    return err;
  }
  fd_ = fd;
  return 0;
}

int MetricsListener::start(const CpuAffinity* affinity) {
  affinity_ = affinity;
  if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) return errno;
  thread_ = std::thread([this] { loop(); });
  return 0;
}

void MetricsListener::stop() {
  if (stopped_.exchange(true)) return;
  if (wake_[1] >= 0) {
    const char b = 1;
    // One byte into this process's own empty pipe: it cannot fill.
    [[maybe_unused]] const ssize_t n = write(wake_[1], &b, 1);
  }
  if (thread_.joinable()) thread_.join();
  for (int& f : wake_) {
    if (f >= 0) close(f);
    f = -1;
  }
  if (fd_ >= 0) {
    close(fd_);
    fd_ = -1;
    if (unix_) (void)unlink(path_.c_str());
  }
}

bool MetricsListener::accept_pending(std::vector<Conn>* conns) {
  for (;;) {
    const int fd = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      const int err = errno;
      if (err == EINTR || err == ECONNABORTED) continue;
      if (err == EAGAIN || err == EWOULDBLOCK) return true;
      std::uint64_t suppressed = 0;
      if (accept_log_.allow(static_cast<TimeNs>(now_ms()) * kNsPerMs, &suppressed)) {
        spdlog::warn("metrics: accept failed: {} ({} more such messages held back)",
                     std::strerror(err), suppressed);
      }
      return false;
    }
    if (conns->size() >= kMaxConnections) {
      // A fresh socket's send buffer is empty: this short write does not block.
      const std::string busy =
          http_response(503, "Service Unavailable", kTextPlain, "too many metrics connections\n");
      [[maybe_unused]] const ssize_t n = send(fd, busy.data(), busy.size(), MSG_NOSIGNAL);
      close(fd);
      continue;
    }
    Conn c;
    c.fd = fd;
    c.deadline_ms = now_ms() + kTimeoutMs;
    if (unix_) {
      ctl::PeerCred cred{};
      if (ctl::peer_cred(fd, &cred)) c.peer = cred;
    }
    conns->push_back(std::move(c));
  }
}

bool MetricsListener::on_readable(Conn& c) {
  char buf[2048];
  for (;;) {
    const ssize_t n = recv(c.fd, buf, sizeof(buf), 0);
    if (n == 0) return false;  // the peer is done (or left before asking)
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    if (c.draining || c.answered) continue;  // what follows the head is not read
    c.in.append(buf, static_cast<std::size_t>(n));
    const HttpAsk ask = parse_http_request(c.in, kMaxRequestBytes);
    if (ask == HttpAsk::kIncomplete) continue;
    c.answered = true;
    c.in.clear();
    switch (ask) {
      case HttpAsk::kGetMetrics:
      case HttpAsk::kHeadMetrics: {
        std::string body;
        try {
          body = render_(c.peer ? &*c.peer : nullptr);
        } catch (const std::exception& e) {
          // The status is built with allocations and JSON: a failure is
          // this request's, answered as such.
          spdlog::warn("metrics: cannot build the exposition: {}", e.what());
          c.out = http_response(500, "Internal Server Error", kTextPlain,
                                "the metrics could not be built\n");
          break;
        }
        c.out = http_response(200, "OK", kMetricsContentType, body, ask == HttpAsk::kHeadMetrics);
        break;
      }
      case HttpAsk::kNotFound:
        c.out = http_response(404, "Not Found", kTextPlain, "only /metrics is served here\n");
        break;
      case HttpAsk::kBadMethod:
        c.out = http_response(405, "Method Not Allowed", kTextPlain, "GET or HEAD only\n");
        break;
      case HttpAsk::kTooLarge:
        c.out = http_response(431, "Request Header Fields Too Large", kTextPlain,
                              "the request is longer than 8192 bytes\n");
        break;
      case HttpAsk::kBadRequest:
      case HttpAsk::kIncomplete:
        c.out = http_response(400, "Bad Request", kTextPlain, "not an HTTP/1.x request\n");
        break;
    }
    return on_writable(c);
  }
}

bool MetricsListener::on_writable(Conn& c) {
  while (c.sent < c.out.size()) {
    const ssize_t n = send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    c.sent += static_cast<std::size_t>(n);
  }
  if (c.answered && !c.draining) {
    // Closing with unread bytes would reset the connection, and the peer
    // could lose the end of the answer: shut the write side, read to EOF.
    (void)shutdown(c.fd, SHUT_WR);
    c.draining = true;
    c.out.clear();
  }
  return true;
}

void MetricsListener::loop() {
  if (affinity_ != nullptr) (void)affinity_->apply_to_current_thread();
  std::vector<Conn> conns;
  std::vector<pollfd> fds;
  std::int64_t accept_paused_until = 0;
  for (;;) {
    fds.clear();
    fds.push_back({wake_[0], POLLIN, 0});
    // After a failed accept (out of descriptors) the queue would wake poll
    // at once again: the socket is left out for kAcceptPauseMs.
    const bool accepting = now_ms() >= accept_paused_until;
    fds.push_back({accepting ? fd_ : -1, POLLIN, 0});
    std::int64_t next = now_ms() + kTimeoutMs;
    if (!accepting) next = std::min(next, accept_paused_until);
    for (const Conn& c : conns) {
      const bool writing = c.answered && !c.draining;
      fds.push_back({c.fd, static_cast<short>(writing ? POLLOUT : POLLIN), 0});
      next = std::min(next, c.deadline_ms);
    }
    const int timeout = static_cast<int>(std::max<std::int64_t>(0, next - now_ms()));
    const int n = poll(fds.data(), fds.size(), timeout);
    if (n < 0 && errno != EINTR) {
      spdlog::error("metrics: poll failed: {}", std::strerror(errno));
      break;
    }
    if (fds[0].revents != 0) break;
    const std::int64_t now = now_ms();
    std::vector<Conn> keep;
    keep.reserve(conns.size());
    for (std::size_t i = 0; i < conns.size(); ++i) {
      Conn& c = conns[i];
      const short ev = fds[i + 2].revents;
      bool open = now < c.deadline_ms;
      if (open && (ev & (POLLERR | POLLNVAL)) != 0) open = false;
      // Gone while its answer was being written: nothing will read it.
      if (open && (ev & POLLHUP) != 0 && c.answered && !c.draining) open = false;
      if (open && (ev & (POLLIN | POLLHUP)) != 0 && !(c.answered && !c.draining)) {
        open = on_readable(c);
      }
      if (open && (ev & POLLOUT) != 0) open = on_writable(c);
      if (open) {
        keep.push_back(std::move(c));
      } else {
        close(c.fd);
      }
    }
    conns = std::move(keep);
    if ((fds[1].revents & POLLIN) != 0 && !accept_pending(&conns)) {
      accept_paused_until = now_ms() + kAcceptPauseMs;
    }
  }
  for (const Conn& c : conns) close(c.fd);
}

}  // namespace uroce::daemon
