// Sending and receiving one control message (protocol.h) with file
// descriptors over a connected AF_UNIX SOCK_SEQPACKET socket.
//
// SOCK_SEQPACKET keeps message boundaries, so a message is exactly one
// sendmsg/recvmsg; a message longer than the receive buffer is reported as
// kTruncated (MSG_TRUNC) and its fds closed, never half-read. Received fds
// are always O_CLOEXEC (MSG_CMSG_CLOEXEC), and any fds beyond what the
// caller can take, or arriving with a truncated control buffer, are closed
// here, so a hostile peer cannot make us leak descriptors.
//
// Used by both sides: the provider (blocking calls from verbs) and the
// daemon's control thread. Neither is on the data path.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace uroce::ctl {

enum class IoError : std::uint8_t {
  kOk = 0,
  kClosed,      // the peer closed the connection (recv returned 0)
  kTruncated,   // the message or its fds did not fit what we accept
  kTooManyFds,  // more fds than the caller's array (all closed)
  // The message arrived whole (bytes says how long) but its fds did not:
  // MSG_CTRUNC alone, which the kernel sets when the receiver cannot take
  // another descriptor (RLIMIT_NOFILE); those it could take are closed.
  kFdsLost,
  kSys,  // a system call failed; see errno in IoResult
};

const char* to_string(IoError e);

// Credentials of a process: SO_PEERCRED (the connecting process, at
// connect: effective ids) or SCM_CREDENTIALS (the process that sent one
// message: its thread group id and real ids, checked by the kernel).
struct PeerCred {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};

struct IoResult {
  IoError err = IoError::kOk;
  int sys_errno = 0;
  std::size_t bytes = 0;  // message bytes sent or received
  int nfds = 0;           // fds received
  // recv_msg on a socket with credential passing on (pass_credentials):
  // who sent this message. pid 0 when the message carried none, or when
  // the sender is in a PID namespace the receiver cannot see.
  PeerCred sender{};
  bool ok() const { return err == IoError::kOk; }
};

// Sends `msg` and `fds` as one message. MSG_NOSIGNAL: a closed peer gives
// kSys with EPIPE, never SIGPIPE. Retries on EINTR.
IoResult send_msg(int sock, std::span<const std::byte> msg, std::span<const int> fds = {});

// Receives one message into `buf`; up to fds.size() fds land in `fds`
// (caller owns them). Blocks unless `sock` is non-blocking (then kSys with
// EAGAIN). Retries on EINTR.
IoResult recv_msg(int sock, std::span<std::byte> buf, std::span<int> fds);

// The peer's credentials (SO_PEERCRED) of a connected socket.
bool peer_cred(int sock, PeerCred* out);

// Turns on SO_PASSCRED: every message received on `sock` then names its
// sender (IoResult::sender). Set on a listening socket, the sockets it
// accepts inherit it. False with errno.
bool pass_credentials(int sock);

// A listening SOCK_SEQPACKET socket at `path` (an existing socket file there
// is replaced), mode `mode`, close-on-exec. Returns the fd, or -1 with errno.
int listen_at(const char* path, unsigned mode, int backlog = 64);

// A connected SOCK_SEQPACKET socket to `path`, close-on-exec. Returns the
// fd, or -1 with errno.
int connect_to(const char* path);

}  // namespace uroce::ctl
