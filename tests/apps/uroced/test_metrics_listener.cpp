// The metrics listener (metrics_listener.cpp): the request parser and the
// answers, word for word, then a live listener on a unix socket and on
// loopback TCP: the peer's credentials reach the renderer, other paths are
// 404, an oversized request 431, a silent client holds nobody else up and
// is closed at the timeout, a connection over the limit gets 503.
#include "apps/uroced/metrics_listener.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <vector>

#include "apps/uroced/metrics_text.h"

namespace uroce::daemon {
namespace {

TEST(ParseHttpRequest_Forms, EachAsk) {
  constexpr std::size_t kMax = 8192;
  EXPECT_EQ(parse_http_request("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", kMax),
            HttpAsk::kGetMetrics);
  EXPECT_EQ(parse_http_request("GET /metrics HTTP/1.0\n\n", kMax), HttpAsk::kGetMetrics);
  EXPECT_EQ(parse_http_request("HEAD /metrics?name[]=x HTTP/1.1\r\n\r\n", kMax),
            HttpAsk::kHeadMetrics);
  EXPECT_EQ(parse_http_request("GET / HTTP/1.1\r\n\r\n", kMax), HttpAsk::kNotFound);
  EXPECT_EQ(parse_http_request("GET /metrics/x HTTP/1.1\r\n\r\n", kMax), HttpAsk::kNotFound);
  EXPECT_EQ(parse_http_request("POST /metrics HTTP/1.1\r\n\r\n", kMax), HttpAsk::kBadMethod);
  EXPECT_EQ(parse_http_request("GET /metrics\r\n\r\n", kMax), HttpAsk::kBadRequest);
  EXPECT_EQ(parse_http_request("GET /metrics HTTP/2\r\n\r\n", kMax), HttpAsk::kBadRequest);
  EXPECT_EQ(parse_http_request("GET metrics HTTP/1.1\r\n\r\n", kMax), HttpAsk::kBadRequest);
  EXPECT_EQ(parse_http_request("GET /metrics HTTP/1.1\r\nHost: x\r\n", kMax), HttpAsk::kIncomplete);
  EXPECT_EQ(parse_http_request(std::string(kMax, 'a'), kMax), HttpAsk::kTooLarge);
  EXPECT_EQ(parse_http_request("GET /metrics HTTP/1.1\r\nX: " + std::string(kMax, 'a') + "\r\n\r\n",
                               kMax),
            HttpAsk::kTooLarge);
}

TEST(HttpResponse_Forms, HeadersAndBody) {
  EXPECT_EQ(http_response(404, "Not Found", "text/plain", "no\n"),
            "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n"
            "Connection: close\r\n\r\nno\n");
  EXPECT_EQ(http_response(405, "Method Not Allowed", "text/plain", "x", true),
            "HTTP/1.1 405 Method Not Allowed\r\nContent-Type: text/plain\r\nContent-Length: 1\r\n"
            "Allow: GET, HEAD\r\nConnection: close\r\n\r\n");
}

// Everything the server sends until it closes (10 s at most per read).
std::string read_to_eof(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 10'000) != 1) return out + "<timeout>";
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) return out;
    out.append(buf, static_cast<std::size_t>(n));
  }
}

void send_all(int fd, const std::string& s) {
  ASSERT_EQ(send(fd, s.data(), s.size(), MSG_NOSIGNAL), static_cast<ssize_t>(s.size()));
}

class MetricsListenerTest : public ::testing::Test {
 protected:
  MetricsListenerTest() {
    char tmpl[] = "/tmp/uroce_test_metrics.XXXXXX";
    dir_ = mkdtemp(tmpl);
    path_ = dir_ + "/metrics.sock";
  }
  ~MetricsListenerTest() override {
    listener_.stop();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  int connect_unix() {
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::memcpy(a.sun_path, path_.c_str(), path_.size());
    EXPECT_EQ(connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof(a)), 0);
    return fd;
  }
  void start_unix() {
    MetricsListen m;
    m.kind = MetricsListen::Kind::kUnix;
    m.path = path_;
    m.text = "unix:" + path_;
    std::string err;
    ASSERT_EQ(listener_.listen(m, &err), 0) << err;
    ASSERT_EQ(listener_.start(nullptr), 0);
  }
  std::string get(const std::string& request) {
    const int fd = connect_unix();
    send_all(fd, request);
    std::string r = read_to_eof(fd);
    close(fd);
    return r;
  }

  std::string dir_, path_;
  std::atomic<int> peer_uid_{-2};  // -1: rendered without credentials
  MetricsListener listener_{[this](const ctl::PeerCred* p) {
    peer_uid_ = p != nullptr ? static_cast<int>(p->uid) : -1;
    return std::string("uroce_x 1\n");
  }};
};

const std::string kOk =
    "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
    "Content-Length: 10\r\nConnection: close\r\n\r\nuroce_x 1\n";

TEST_F(MetricsListenerTest, Unix_GetMetricsWithThePeersCredentials) {
  start_unix();
  EXPECT_EQ(get("GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n"), kOk);
  EXPECT_EQ(peer_uid_.load(), static_cast<int>(geteuid()));
  EXPECT_EQ(get("HEAD /metrics HTTP/1.1\r\n\r\n"),
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
            "Content-Length: 10\r\nConnection: close\r\n\r\n");
}

TEST_F(MetricsListenerTest, Unix_OtherPathMethodAndOversize) {
  start_unix();
  EXPECT_EQ(get("GET /other HTTP/1.1\r\n\r\n"),
            "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\n"
            "Content-Length: 29\r\nConnection: close\r\n\r\nonly /metrics is served here\n");
  EXPECT_TRUE(get("DELETE /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 405 "));
  EXPECT_TRUE(get("hello\r\n\r\n").starts_with("HTTP/1.1 400 "));
  EXPECT_TRUE(
      get(std::string(MetricsListener::kMaxRequestBytes + 10, 'a')).starts_with("HTTP/1.1 431 "));
  EXPECT_EQ(peer_uid_.load(), -2);  // none of them was rendered
}

// A client that sent half a request holds its own connection only.
TEST_F(MetricsListenerTest, Unix_SilentClientDoesNotHoldOthers) {
  start_unix();
  const int slow = connect_unix();
  send_all(slow, "GET /met");
  EXPECT_EQ(get("GET /metrics HTTP/1.1\r\n\r\n"), kOk);
  send_all(slow, "rics HTTP/1.1\r\n\r\n");
  EXPECT_EQ(read_to_eof(slow), kOk);
  close(slow);
}

TEST_F(MetricsListenerTest, Unix_SilentClientClosedAtTheTimeout) {
  start_unix();
  const int fd = connect_unix();
  // read_to_eof waits 10 s per read; the listener closes after 5 s.
  EXPECT_EQ(read_to_eof(fd), "");
  close(fd);
}

TEST_F(MetricsListenerTest, Unix_OverTheConnectionLimit503) {
  start_unix();
  std::vector<int> idle;
  for (std::size_t i = 0; i < MetricsListener::kMaxConnections; ++i) idle.push_back(connect_unix());
  const int fd = connect_unix();
  EXPECT_TRUE(read_to_eof(fd).starts_with("HTTP/1.1 503 Service Unavailable\r\n"));
  close(fd);
  for (const int f : idle) close(f);
}

TEST_F(MetricsListenerTest, Unix_StopRemovesTheSocket) {
  start_unix();
  EXPECT_TRUE(std::filesystem::exists(path_));
  listener_.stop();
  EXPECT_FALSE(std::filesystem::exists(path_));
  listener_.stop();  // idempotent
}

TEST_F(MetricsListenerTest, Unix_LiveSocketEaddrinuse) {
  start_unix();
  MetricsListener second([](const ctl::PeerCred*) { return std::string(); });
  MetricsListen m;
  m.kind = MetricsListen::Kind::kUnix;
  m.path = path_;
  std::string err;
  EXPECT_EQ(second.listen(m, &err), EADDRINUSE);
  EXPECT_EQ(err, "daemon.metrics_listen: address in use: something serves " + path_);
}

TEST_F(MetricsListenerTest, Tcp4_LoopbackWithoutCredentials) {
  MetricsListen m;
  m.kind = MetricsListen::Kind::kTcp4;
  m.host = "127.0.0.1";
  m.port = 0;  // the kernel's choice (the configuration asks 1..65535)
  std::string err;
  ASSERT_EQ(listener_.listen(m, &err), 0) << err;
  ASSERT_NE(listener_.port(), 0);
  ASSERT_EQ(listener_.start(nullptr), 0);
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(listener_.port());
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof(a)), 0);
  send_all(fd, "GET /metrics HTTP/1.1\r\n\r\n");
  EXPECT_EQ(read_to_eof(fd), kOk);
  close(fd);
  EXPECT_EQ(peer_uid_.load(), -1);
}

}  // namespace
}  // namespace uroce::daemon
