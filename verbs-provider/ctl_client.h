// The provider's end of the control connection to uroced (one per
// ibv_context): a request/reply exchange per control verb over the
// SOCK_SEQPACKET socket of datapath/ctl (protocol.h, socket.h).
//
// Threading: call() may be used by any number of application threads; a
// mutex keeps one exchange on the socket at a time, so a reply always
// belongs to the request just sent (its op and seq are checked anyway). The
// death watcher (death_watcher.h) only polls the socket and calls
// mark_dead(); it never reads from it.
//
// Errors (the verb's errno, rdma-core convention: a positive value):
//   - the daemon's status from the reply (EINVAL, ENOENT, ...);
//   - EIO once the connection is gone (send or receive found it closed, or
//     the watcher saw it hang up); the client then stays dead and every
//     later call fails with EIO without touching the socket; EIO also in a
//     child of fork() for a connection made before it (inherited());
//   - EPROTO for a reply that breaks protocol.h (wrong magic, version, op,
//     seq or length, or a successful reply without the fds its op carries);
//     any fds that came with it are closed;
//   - the status of a refusal notice (protocol.h: EAGAIN, EMFILE, ENFILE)
//     when the daemon refused the connection; the client is then dead;
//   - EMFILE for a reply whose fds this process could not receive (at its
//     RLIMIT_NOFILE; only Hello's and CmOpen's replies carry any).
// No exceptions, no allocation.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "datapath/ctl/protocol.h"
#include "verbs-provider/fork.h"

namespace uroce::provider {

class CtlClient {
 public:
  CtlClient() = default;
  ~CtlClient();
  CtlClient(const CtlClient&) = delete;
  CtlClient& operator=(const CtlClient&) = delete;

  // Connects to the daemon socket at `path`. Returns 0 or errno.
  int connect(const char* path);
  // Takes a connected socket (tests use one end of a socketpair).
  void adopt(int sock) { fd_ = sock; }
  int fd() const { return fd_; }

  bool dead() const { return dead_.load(std::memory_order_acquire); }
  // Made before a fork() and used in the child: the connection (and the
  // daemon's objects behind it) are the parent's; call() answers EIO
  // without touching the socket (fork.h).
  bool inherited() const { return born_ != fork_generation(); }
  void mark_dead() { dead_.store(true, std::memory_order_release); }

  // One exchange: sends MsgHeader + `req` (req_len bytes) with `fds_in`,
  // receives MsgHeader + ReplyStatus + `rep_len` bytes into `rep` and
  // exactly `want_fds` fds into fds_out (caller owns them on success; on
  // any error none are left open). Returns 0 or errno as above.
  int call(ctl::Op op, const void* req, std::size_t req_len, void* rep, std::size_t rep_len,
           std::span<const int> fds_in, std::span<int> fds_out, int want_fds);

  // Typed form: the sizes come from protocol.h's OpTypes.
  template <ctl::Op O>
  int call(const typename ctl::OpTypes<O>::Req& req, typename ctl::OpTypes<O>::Rep* rep,
           std::span<const int> fds_in = {}, std::span<int> fds_out = {}, int want_fds = 0) {
    using Rep = typename ctl::OpTypes<O>::Rep;
    constexpr std::size_t rep_len = std::is_same_v<Rep, ctl::NoReply> ? 0 : sizeof(Rep);
    return call(O, &req, sizeof(req), rep, rep_len, fds_in, fds_out, want_fds);
  }

  // Largest request and reply bodies call() handles (protocol.h's largest
  // are a few hundred bytes; both live in stack buffers).
  static constexpr std::size_t kMaxRequestBody = 512;
  static constexpr std::size_t kMaxReplyBody = 512;

 private:
  int exchange_locked(ctl::Op op, const void* req, std::size_t req_len, void* rep,
                      std::size_t rep_len, std::span<const int> fds_in, std::span<int> fds_out,
                      int want_fds);
  // After a send found the peer gone: the status of a refusal notice left
  // in the socket, or 0. Under mu_.
  int read_refusal_locked();

  pthread_mutex_t mu_ = PTHREAD_MUTEX_INITIALIZER;
  int fd_ = -1;
  std::uint32_t seq_ = 0;  // guarded by mu_
  std::atomic<bool> dead_{false};
  std::uint32_t born_ = fork_generation();
};

}  // namespace uroce::provider
