// The rdma_cm part of liburoce-preload.so: librdmacm opens
// /dev/infiniband/rdma_cm and speaks the kernel's ucma ABI on it (write()
// of a command, the reply copied to the command's `response` pointer). A
// process under uroce-run has no such device; this interposer makes the
// open() return the read end of an event pipe that uroced's CM service
// (apps/uroced/cm_service.h) feeds, and turns each write() on it into a
// CmCommand on a control connection of its own (docs/cm.md):
//   open    connects to uroced (the socket named in the sysfs tree uroce-run
//           points SYSFS_PATH at), CmOpen; the fd returned is the event pipe
//   write   GET_EVENT waits for a byte on the pipe (blocking or not, as the
//           fd's flags say: poll() on the fd works as on the kernel's), then
//           takes the event; every other command is one exchange; the reply
//           bytes go to the command's response pointer
//   fstat   the fd reports a character device, as librdmacm checks
//   close   closes the pipe and the control connection: the daemon destroys
//           every id of the file, as the kernel does when a process exits
// Every other fd goes to libc's own function (dlsym RTLD_NEXT).
//
// No exceptions, no libstdc++; a fixed table of open rdma_cm fds.
//
// The build sets _FILE_OFFSET_BITS=64, which makes glibc's headers rename
// open/fstat to open64/fstat64; both names are defined here, each with its
// own signature, so the 32-bit-offset names must stay themselves.
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <rdma/rdma_user_cm.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "datapath/ctl/protocol.h"
#include "verbs-provider/ctl_client.h"

namespace {

using uroce::provider::CtlClient;
namespace ctl = uroce::ctl;

constexpr char kRdmaCmPath[] = "/dev/infiniband/rdma_cm";
constexpr int kMaxFiles = 64;

// One open rdma_cm fd. A command in progress holds a reference (users):
// close() marks the entry closed and closes the fd, and the control
// connection goes (the daemon then reclaims the file) only when the last
// command returns, as the kernel keeps a file whose write() is still
// running. A GET_EVENT blocked on a closed fd thus waits on, as it would on
// the kernel's device.
struct Entry {
  int fd = -1;  // the application's fd (the event pipe's read end)
  std::uint32_t file = 0;
  CtlClient* ctl = nullptr;
  int users = 0;
  bool closed = false;
};

pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
Entry g_files[kMaxFiles];
// How many entries are in use: while 0, write/close/fstat cost one load.
std::atomic<int> g_open{0};

template <class Fn>
Fn next_fn(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

using WriteFn = ssize_t (*)(int, const void*, size_t);
using ReadFn = ssize_t (*)(int, void*, size_t);
using CloseFn = int (*)(int);
using OpenFn = int (*)(const char*, int, ...);
using FstatFn = int (*)(int, struct stat*);

// libc's functions, looked up once; a racing second lookup stores the same
// pointer (no function-local statics: their guards need libstdc++).
WriteFn g_write = nullptr;
ReadFn g_read = nullptr;
CloseFn g_close = nullptr;
OpenFn g_open_fn = nullptr;
OpenFn g_open64_fn = nullptr;
FstatFn g_fstat = nullptr;
using Fstat64Fn = int (*)(int, struct stat64*);
Fstat64Fn g_fstat64 = nullptr;

template <class Fn>
Fn cached(Fn* slot, const char* name) {
  if (*slot == nullptr) *slot = next_fn<Fn>(name);
  return *slot;
}
WriteFn real_write() { return cached(&g_write, "write"); }
ReadFn real_read() { return cached(&g_read, "read"); }
CloseFn real_close() { return cached(&g_close, "close"); }

// The live entry for `fd`, referenced (release() it), or null when `fd` is
// not an open rdma_cm fd.
Entry* acquire(int fd) {
  if (g_open.load(std::memory_order_acquire) == 0 || fd < 0) return nullptr;
  pthread_mutex_lock(&g_mu);
  Entry* found = nullptr;
  for (Entry& e : g_files) {
    if (e.fd == fd && !e.closed) {
      ++e.users;
      found = &e;
      break;
    }
  }
  pthread_mutex_unlock(&g_mu);
  return found;
}

// Drops a reference; the last one of a closed entry frees its slot and
// then (outside the lock: the destructor's close() comes back here) its
// control connection, whose end makes the daemon reclaim the file.
void release(Entry* e) {
  CtlClient* doomed = nullptr;
  pthread_mutex_lock(&g_mu);
  if (--e->users == 0 && e->closed) {
    doomed = e->ctl;
    *e = Entry{};
    g_open.fetch_sub(1, std::memory_order_release);
  }
  pthread_mutex_unlock(&g_mu);
  if (doomed != nullptr) {
    doomed->~CtlClient();
    std::free(doomed);
  }
}

bool is_rdma_cm(int fd) {
  Entry* e = acquire(fd);
  if (e == nullptr) return false;
  release(e);
  return true;
}

// The daemon's socket: the first device of the sysfs tree names it.
bool socket_path(char* out, std::size_t n) {
  const char* sysfs = std::getenv("SYSFS_PATH");
  if (sysfs == nullptr) return false;
  for (int i = 0; i < 64; ++i) {
    char p[512];
    std::snprintf(p, sizeof(p), "%s/class/infiniband/uroce%d/device/uroce_socket", sysfs, i);
    FILE* f = std::fopen(p, "re");
    if (f == nullptr) continue;
    const bool ok = std::fgets(out, static_cast<int>(n), f) != nullptr;
    std::fclose(f);
    if (!ok) return false;
    out[std::strcspn(out, "\n")] = '\0';
    return true;
  }
  return false;
}

int open_rdma_cm(int flags) {
  char path[256];
  if (!socket_path(path, sizeof(path))) {
    errno = ENODEV;
    return -1;
  }
  void* mem = std::malloc(sizeof(CtlClient));
  if (mem == nullptr) {
    errno = ENOMEM;
    return -1;
  }
  auto* c = new (mem) CtlClient();
  int rc = c->connect(path);
  int fds[1] = {-1};
  ctl::CmOpenRep rep{};
  if (rc == 0) rc = c->call<ctl::Op::kCmOpen>(ctl::CmOpenReq{}, &rep, {}, fds, 1);
  if (rc != 0) {
    c->~CtlClient();
    std::free(mem);
    errno = rc == EIO ? ENODEV : rc;
    return -1;
  }
  const int fd = fds[0];
  if ((flags & O_CLOEXEC) == 0) (void)fcntl(fd, F_SETFD, 0);
  if ((flags & O_NONBLOCK) != 0) (void)fcntl(fd, F_SETFL, O_NONBLOCK);
  pthread_mutex_lock(&g_mu);
  Entry* slot = nullptr;
  for (Entry& e : g_files) {
    if (e.ctl == nullptr) {
      slot = &e;
      break;
    }
  }
  if (slot != nullptr) {
    *slot = Entry{fd, rep.file, c, 0, false};
    g_open.fetch_add(1, std::memory_order_release);
  }
  pthread_mutex_unlock(&g_mu);
  if (slot == nullptr) {
    real_close()(fd);
    c->~CtlClient();
    std::free(mem);
    errno = EMFILE;
    return -1;
  }
  return fd;
}

// One command exchange; copies the reply to the response pointer.
ssize_t exchange(const Entry& e, const ctl::CmCommandReq& req, std::size_t len) {
  ctl::CmCommandRep rep{};
  const int rc = e.ctl->call<ctl::Op::kCmCommand>(req, &rep);
  if (rc != 0) {
    errno = rc == EIO ? ENODEV : rc;
    return -1;
  }
  if (rep.resp_len != 0 && rep.response_addr != 0 && rep.resp_len <= req.out &&
      rep.resp_len <= sizeof(rep.resp)) {
    std::memcpy(reinterpret_cast<void*>(static_cast<std::uintptr_t>(rep.response_addr)), rep.resp,
                rep.resp_len);
  }
  return static_cast<ssize_t>(len);
}

ssize_t ucma_write(const Entry& e, const void* buf, std::size_t len) {
  rdma_ucm_cmd_hdr h;
  if (len < sizeof(h)) {
    errno = EINVAL;
    return -1;
  }
  std::memcpy(&h, buf, sizeof(h));
  if (sizeof(h) + h.in > len || h.in > ctl::kUcmaMaxBody) {
    errno = EINVAL;
    return -1;
  }
  ctl::CmCommandReq req{};
  req.cmd = h.cmd;
  req.in = h.in;
  req.out = h.out;
  std::memcpy(req.body, static_cast<const std::uint8_t*>(buf) + sizeof(h), h.in);
  if (h.cmd == RDMA_USER_CM_CMD_MIGRATE_ID) {
    rdma_ucm_migrate_id m{};
    std::memcpy(&m, req.body, h.in < sizeof(m) ? h.in : sizeof(m));
    Entry* from = acquire(static_cast<int>(m.fd));
    if (from == nullptr) {
      errno = EBADF;
      return -1;
    }
    req.migrate_file = from->file;
    release(from);
  }
  if (h.cmd != RDMA_USER_CM_CMD_GET_EVENT) return exchange(e, req, len);
  // GET_EVENT: one wake-up byte per queued event; a byte whose event a
  // destroy dropped meanwhile gets ENODATA, and we wait for the next.
  const int fd = e.fd;
  for (;;) {
    char b;
    const ssize_t n = real_read()(fd, &b, 1);
    if (n < 0) return -1;  // EAGAIN on a non-blocking fd, EINTR, ...
    if (n == 0) {
      pthread_mutex_lock(&g_mu);
      const bool closed = e.closed;
      pthread_mutex_unlock(&g_mu);
      if (closed) {
        // The application closed the fd under this call: the kernel's
        // GET_EVENT would wait for an event that never comes.
        for (;;) pause();
      }
      errno = ENODEV;  // the daemon is gone
      return -1;
    }
    const ssize_t r = exchange(e, req, len);
    if (r >= 0 || errno != ENODATA) return r;
  }
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int open(const char* path, int flags, ...) {
  mode_t mode = 0;
  if ((flags & (O_CREAT | O_TMPFILE)) != 0) {
    va_list ap;
    va_start(ap, flags);
    mode = static_cast<mode_t>(va_arg(ap, int));
    va_end(ap);
  }
  if (std::strcmp(path, kRdmaCmPath) == 0) return open_rdma_cm(flags);
  return cached(&g_open_fn, "open")(path, flags, mode);
}

__attribute__((visibility("default"))) int open64(const char* path, int flags, ...) {
  mode_t mode = 0;
  if ((flags & (O_CREAT | O_TMPFILE)) != 0) {
    va_list ap;
    va_start(ap, flags);
    mode = static_cast<mode_t>(va_arg(ap, int));
    va_end(ap);
  }
  if (std::strcmp(path, kRdmaCmPath) == 0) return open_rdma_cm(flags);
  return cached(&g_open64_fn, "open64")(path, flags, mode);
}

__attribute__((visibility("default"))) ssize_t write(int fd, const void* buf, size_t n) {
  Entry* e = acquire(fd);
  if (e == nullptr) return real_write()(fd, buf, n);
  const ssize_t r = ucma_write(*e, buf, n);
  const int err = errno;
  release(e);
  errno = err;
  return r;
}

__attribute__((visibility("default"))) int close(int fd) {
  Entry* e = acquire(fd);
  if (e != nullptr) {
    pthread_mutex_lock(&g_mu);
    e->closed = true;
    // The fd number is free for reuse once closed below.
    e->fd = -2;
    pthread_mutex_unlock(&g_mu);
    release(e);
  }
  return real_close()(fd);
}

__attribute__((visibility("default"))) int fstat(int fd, struct stat* st) {
  const int rc = cached(&g_fstat, "fstat")(fd, st);
  if (rc == 0 && is_rdma_cm(fd)) {
    // librdmacm accepts only a character device (open_cdev.c).
    st->st_mode = S_IFCHR | 0666;
    st->st_rdev = 0;
  }
  return rc;
}

__attribute__((visibility("default"))) int fstat64(int fd, struct stat64* st) {
  const int rc = cached(&g_fstat64, "fstat64")(fd, st);
  if (rc == 0 && is_rdma_cm(fd)) {
    st->st_mode = S_IFCHR | 0666;
    st->st_rdev = 0;
  }
  return rc;
}

}  // extern "C"
