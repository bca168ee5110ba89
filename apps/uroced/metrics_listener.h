// uroced's metrics listener (daemon.metrics_listen, docs/metrics.md): GET
// /metrics over HTTP/1.1 on a unix socket or a loopback TCP address, the
// Prometheus text of metrics_text.h.
//
// One thread of its own, with the control threads' CPU affinity (never the
// engine lcore), polls the listening socket and at most kMaxConnections
// connections, all non-blocking: a client that sends slowly, or reads its
// answer slowly, holds only its own connection, for at most kTimeoutMs,
// and never the control socket (server.h), whose threads this one does not
// share. A request is read up to its blank line, at most kMaxRequestBytes;
// the answer closes the connection ("Connection: close"). GET and HEAD of
// /metrics (a query string is ignored) answer 200 with the exposition;
// another path 404, another method 405, a malformed request 400, a longer
// one 431, a connection over the limit 503.
//
// Who sees what: `render` gets the peer's credentials on a unix socket
// (SO_PEERCRED: as `uroce-ctl metrics` run by that user would show it) and
// null on TCP, where the peer has none (Server::metrics_status).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "apps/uroced/affinity.h"
#include "apps/uroced/config.h"
#include "apps/uroced/rate_limiter.h"
#include "datapath/ctl/socket.h"

namespace uroce::daemon {

// What a request asks, from its bytes so far.
enum class HttpAsk : std::uint8_t {
  kIncomplete,  // no blank line yet
  kGetMetrics,
  kHeadMetrics,
  kNotFound,    // GET or HEAD of another path
  kBadMethod,   // another method
  kBadRequest,  // not "METHOD TARGET HTTP/1.x"
  kTooLarge,    // no blank line within max_bytes
};

HttpAsk parse_http_request(std::string_view bytes, std::size_t max_bytes);

// A whole HTTP/1.1 answer that closes the connection; `head`: without the
// body (its Content-Length still given).
std::string http_response(int code, std::string_view reason, std::string_view content_type,
                          std::string_view body, bool head = false);

class MetricsListener {
 public:
  static constexpr std::size_t kMaxRequestBytes = 8192;
  static constexpr std::size_t kMaxConnections = 16;
  static constexpr int kTimeoutMs = 5000;

  // The exposition for a peer (null: no credentials); called on the
  // listener's thread.
  using Render = std::function<std::string(const ctl::PeerCred* peer)>;

  explicit MetricsListener(Render render);
  ~MetricsListener();
  MetricsListener(const MetricsListener&) = delete;
  MetricsListener& operator=(const MetricsListener&) = delete;

  // Binds and listens at `where` (not kOff). A unix socket file that
  // something still accepts on is EADDRINUSE; a stale one is replaced.
  // 0 or an errno value with `error` saying what to do.
  int listen(const MetricsListen& where, std::string* error);
  // The TCP port bound (the configured one, or the kernel's for port 0).
  std::uint16_t port() const { return port_; }
  // Starts the thread, which applies `affinity` (may be null) first.
  int start(const CpuAffinity* affinity);
  // Idempotent; also run by the destructor. Removes a unix socket file.
  void stop();

 private:
  struct Conn;
  void loop();
  // Accepts what is queued; false when accept failed for another reason
  // than an empty queue.
  bool accept_pending(std::vector<Conn>* conns);
  static constexpr int kAcceptPauseMs = 100;
  // Reads what is there; when the request is whole, builds the answer.
  // False: close the connection.
  bool on_readable(Conn& c);
  bool on_writable(Conn& c);

  Render render_;
  const CpuAffinity* affinity_ = nullptr;
  int fd_ = -1;
  bool unix_ = false;
  std::string path_;
  std::uint16_t port_ = 0;
  int wake_[2] = {-1, -1};
  std::thread thread_;
  std::atomic<bool> stopped_{false};
  RateLimiter accept_log_{1, kNsPerSec};  // the thread's
};

}  // namespace uroce::daemon
