#include "datapath/ctl/socket.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace uroce::ctl {
namespace {

constexpr int kMaxCmsgFds = 16;

bool make_addr(const char* path, sockaddr_un* addr) {
  std::memset(addr, 0, sizeof(*addr));
  addr->sun_family = AF_UNIX;
  const std::size_t n = std::strlen(path);
  if (n == 0 || n >= sizeof(addr->sun_path)) {
    errno = ENAMETOOLONG;
    return false;
  }
  std::memcpy(addr->sun_path, path, n);
  return true;
}

void close_all(const int* fds, int n) {
  for (int i = 0; i < n; ++i) close(fds[i]);
}

}  // namespace

const char* to_string(IoError e) {
  switch (e) {
    case IoError::kOk: return "ok";
    case IoError::kClosed: return "connection closed by peer";
    case IoError::kTruncated: return "message truncated";
    case IoError::kTooManyFds: return "too many file descriptors";
    case IoError::kFdsLost: return "file descriptors lost (receiver at its fd limit)";
    case IoError::kSys: return "system call failed";
  }
  return "unknown";
}

IoResult send_msg(int sock, std::span<const std::byte> msg, std::span<const int> fds) {
  IoResult r;
  if (fds.size() > static_cast<std::size_t>(kMaxCmsgFds)) {
    r.err = IoError::kTooManyFds;
    return r;
  }
  iovec iov{const_cast<std::byte*>(msg.data()), msg.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxCmsgFds)];
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  if (!fds.empty()) {
    std::memset(control, 0, sizeof(control));
    mh.msg_control = control;
    mh.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  for (;;) {
    const ssize_t n = sendmsg(sock, &mh, MSG_NOSIGNAL);
    if (n >= 0) {
      r.bytes = static_cast<std::size_t>(n);
      return r;
    }
    if (errno == EINTR) continue;
    r.err = IoError::kSys;
    r.sys_errno = errno;
    return r;
  }
}

IoResult recv_msg(int sock, std::span<std::byte> buf, std::span<int> fds) {
  IoResult r;
  iovec iov{buf.data(), buf.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxCmsgFds) + CMSG_SPACE(sizeof(ucred))];
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = control;
  mh.msg_controllen = sizeof(control);
  ssize_t n;
  for (;;) {
    n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
    if (n >= 0) break;
    if (errno == EINTR) continue;
    r.err = IoError::kSys;
    r.sys_errno = errno;
    return r;
  }
  // Collect every fd that arrived, whatever else went wrong, so that none
  // leaks.
  int got[kMaxCmsgFds];
  int ngot = 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c != nullptr; c = CMSG_NXTHDR(&mh, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
        c->cmsg_len >= CMSG_LEN(sizeof(ucred))) {
      ucred u;
      std::memcpy(&u, CMSG_DATA(c), sizeof(u));
      r.sender = PeerCred{u.pid, u.uid, u.gid};
      continue;
    }
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < k && ngot < kMaxCmsgFds; ++i) {
      std::memcpy(&got[ngot++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
    }
  }
  if (n == 0 && ngot == 0) {
    r.err = IoError::kClosed;
    return r;
  }
  if ((mh.msg_flags & MSG_TRUNC) != 0) {
    close_all(got, ngot);
    r.err = IoError::kTruncated;
    return r;
  }
  if ((mh.msg_flags & MSG_CTRUNC) != 0) {
    // Our control buffer holds kMaxCmsgFds and the credentials, more than
    // any message carries, so the kernel could not install the fds: the
    // process is out of them.
    close_all(got, ngot);
    r.err = IoError::kFdsLost;
    r.bytes = static_cast<std::size_t>(n);
    return r;
  }
  if (static_cast<std::size_t>(ngot) > fds.size()) {
    close_all(got, ngot);
    r.err = IoError::kTooManyFds;
    return r;
  }
  for (int i = 0; i < ngot; ++i) fds[static_cast<std::size_t>(i)] = got[i];
  r.nfds = ngot;
  r.bytes = static_cast<std::size_t>(n);
  return r;
}

bool peer_cred(int sock, PeerCred* out) {
  ucred c{};
  socklen_t len = sizeof(c);
  if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &c, &len) != 0) return false;
  out->pid = c.pid;
  out->uid = c.uid;
  out->gid = c.gid;
  return true;
}

bool pass_credentials(int sock) {
  const int on = 1;
  return setsockopt(sock, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) == 0;
}

int listen_at(const char* path, unsigned mode, int backlog) {
  sockaddr_un addr;
  if (!make_addr(path, &addr)) return -1;
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  struct stat st;
  if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode)) unlink(path);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || chmod(path, mode) != 0 ||
      listen(fd, backlog) != 0) {
    const int err = errno;
    close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

int connect_to(const char* path) {
  sockaddr_un addr;
  if (!make_addr(path, &addr)) return -1;
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  for (;;) {
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
      return fd;
    }
    if (errno == EINTR) continue;
    const int err = errno;
    close(fd);
    errno = err;
    return -1;
  }
}

}  // namespace uroce::ctl
