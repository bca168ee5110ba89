// Checks and small helpers the files of ClientSession share
// (client_session.cpp, session_memory.cpp, session_queues.cpp,
// session_reclaim.cpp): one definition of each rule a request is held to.
#pragma once

#include <fcntl.h>
#include <infiniband/verbs.h>
#include <sys/stat.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "apps/uroced/device_attr.h"
#include "datapath/base/time.h"

namespace uroce::daemon::session {

using daemon::kPageSize;

inline constexpr std::uint64_t kPage = kPageSize;
// MR access flags uroced accepts (IBV_ACCESS_MW_BIND: memory windows may be
// bound to the MR, docs/memory-windows.md); optional flags
// (IBV_ACCESS_OPTIONAL_RANGE) are hints a device may ignore, as libibverbs
// defines them.
inline constexpr std::uint32_t kMrAccessMask = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                                               IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
                                               IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED;

inline TimeNs steady_now() {
  return static_cast<TimeNs>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::steady_clock::now().time_since_epoch())
                                 .count());
}

inline std::uint64_t round_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

// The write end of a pipe (async events, comp channels): what the daemon
// writes records to. Anything else (a socket, a file, a read end) is EINVAL.
inline bool is_pipe_write_end(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) return false;
  const int fl = fcntl(fd, F_GETFL);
  return fl >= 0 && (fl & O_ACCMODE) == O_WRONLY;
}

// A NUL within `n` bytes.
inline bool terminated(const char* s, std::size_t n) { return std::memchr(s, 0, n) != nullptr; }

// MR access rule of the verbs spec: remote write or atomic access needs
// local write.
inline bool valid_mr_access(std::uint32_t access) {
  const std::uint32_t a = access & ~static_cast<std::uint32_t>(IBV_ACCESS_OPTIONAL_RANGE);
  if ((a & ~kMrAccessMask) != 0) return false;
  if ((a & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) != 0 &&
      (a & IBV_ACCESS_LOCAL_WRITE) == 0) {
    return false;
  }
  return true;
}

}  // namespace uroce::daemon::session
