// The examples' out-of-band exchange: one TCP connection over which the
// two sides of a verbs program swap their QP numbers, GIDs and keys before
// any RDMA traffic, as rdma-core's pingpongs and perftest do. Header only,
// so each example stays one source file plus this.
#pragma once

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>

namespace uroce::examples {

// Connects to `server`:`port` (IPv4), retrying for about 10 s while the
// server is not yet listening. The socket, or -1.
inline int oob_connect(const char* server, int port) {
  addrinfo hints{};
  hints.ai_family = AF_INET;  // the servers listen on IPv4
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  char p[16];
  std::snprintf(p, sizeof p, "%d", port);
  if (getaddrinfo(server, p, &hints, &res) != 0) return -1;
  int fd = -1;
  for (int tries = 0; tries < 100 && fd < 0; ++tries) {
    for (addrinfo* a = res; a != nullptr; a = a->ai_next) {
      fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
      if (fd < 0) continue;
      if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
      close(fd);
      fd = -1;
    }
    if (fd < 0) usleep(100000);
  }
  freeaddrinfo(res);
  return fd;
}

// Listens on `port` (all IPv4 addresses) and accepts one client. The
// connected socket, or -1.
inline int oob_accept(int port) {
  const int ls = socket(AF_INET, SOCK_STREAM, 0);
  if (ls < 0) return -1;
  const int one = 1;
  setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  if (bind(ls, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(ls, 1) != 0) {
    close(ls);
    return -1;
  }
  const int fd = accept(ls, nullptr, nullptr);
  close(ls);
  return fd;
}

inline bool oob_write_all(int fd, const void* buf, std::size_t n) {
  const char* s = static_cast<const char*>(buf);
  while (n > 0) {
    const ssize_t w = write(fd, s, n);
    if (w <= 0) return false;
    s += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

inline bool oob_read_all(int fd, void* buf, std::size_t n) {
  char* s = static_cast<char*>(buf);
  while (n > 0) {
    const ssize_t r = read(fd, s, n);
    if (r <= 0) return false;
    s += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

// One '\n'-terminated line without its '\n' (at most cap - 1 bytes).
inline bool oob_read_line(int fd, char* out, std::size_t cap) {
  std::size_t n = 0;
  while (n + 1 < cap) {
    char c;
    if (read(fd, &c, 1) != 1) return false;
    if (c == '\n') break;
    out[n++] = c;
  }
  out[n] = 0;
  return true;
}

}  // namespace uroce::examples
