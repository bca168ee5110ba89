// The engine's writes to the pipes the control plane hands it: comp-channel
// records (8-byte ib_uverbs_comp_event_desc) and async events (16-byte
// ib_uverbs_async_event_desc). Both are shorter than PIPE_BUF, so a write is
// all-or-nothing.
//
// The engine never blocks: set_nonblocking() is applied when an fd is handed
// over (control path), and a write that fails (pipe full: EAGAIN; reader
// gone: EPIPE, which needs SIGPIPE ignored or blocked on the engine thread;
// anything else) is reported to the caller, which counts it and moves on. No
// retry: a comp event is one per arming, an async event is advisory.
#pragma once

#include <fcntl.h>
#include <rdma/ib_user_verbs.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace uroce::engine {

enum class FdWrite : std::uint8_t {
  kOk = 0,
  kNoFd,    // fd < 0: nobody to tell
  kFull,    // EAGAIN: the reader is not reading
  kClosed,  // EPIPE: the reader is gone
  kError,   // any other errno, or a short write
};

// Sets O_NONBLOCK on `fd` (no-op for fd < 0). 0 or the errno of fcntl.
inline int set_nonblocking(int fd) {
  if (fd < 0) return 0;
  const int fl = ::fcntl(fd, F_GETFL);
  if (fl < 0) return errno;
  if ((fl & O_NONBLOCK) != 0) return 0;
  return ::fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? errno : 0;
}

inline FdWrite write_record(int fd, const void* p, std::size_t n) {
  if (fd < 0) return FdWrite::kNoFd;
  ssize_t r;
  do {
    r = ::write(fd, p, n);
  } while (r < 0 && errno == EINTR);
  if (r == static_cast<ssize_t>(n)) return FdWrite::kOk;
  if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return FdWrite::kFull;
  if (r < 0 && errno == EPIPE) return FdWrite::kClosed;
  return FdWrite::kError;
}

// One completion event for the CQ whose user_handle is `cq_handle`.
inline FdWrite write_comp_event(int fd, std::uint64_t cq_handle) {
  ib_uverbs_comp_event_desc d{};
  d.cq_handle = cq_handle;
  return write_record(fd, &d, sizeof(d));
}

// One async event {element, event_type} (ibv_event_type value).
inline FdWrite write_async_event(int fd, std::uint64_t element, std::uint32_t event_type) {
  ib_uverbs_async_event_desc d{};
  d.element = element;
  d.event_type = event_type;
  return write_record(fd, &d, sizeof(d));
}

static_assert(sizeof(ib_uverbs_comp_event_desc) == 8);
static_assert(sizeof(ib_uverbs_async_event_desc) == 16);

}  // namespace uroce::engine
