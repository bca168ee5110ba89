#include "apps/uroced/client_process.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace uroce::daemon {
namespace {

// "Uid:\t0\t0\t0\t0" (or Gid:) into four ids; false when absent or short.
template <typename Id>
bool parse_ids(const char* text, const char* key, std::array<Id, 4>* out) {
  const char* p = std::strstr(text, key);
  if (p == nullptr) return false;
  unsigned long v[4];
  if (std::sscanf(p + std::strlen(key), "%lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) != 4) {
    return false;
  }
  for (int i = 0; i < 4; ++i) (*out)[static_cast<std::size_t>(i)] = static_cast<Id>(v[i]);
  return true;
}

}  // namespace

int read_process_ids(pid_t pid, ProcessIds* out) {
  if (pid <= 0) return ESRCH;
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/status", static_cast<int>(pid));
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT || errno == ESRCH ? ESRCH : EIO;
  // The owner of a process's /proc files (not of its /proc/PID directory,
  // which always shows the effective ids): root when not dumpable.
  struct stat st;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return EIO;
  }
  // The Uid and Gid lines come within the first kilobyte of status.
  char text[2048];
  ssize_t n = read(fd, text, sizeof(text) - 1);
  close(fd);
  if (n <= 0) return n == 0 ? ESRCH : EIO;
  text[n] = '\0';
  ProcessIds ids;
  if (!parse_ids(text, "\nUid:", &ids.uid) || !parse_ids(text, "\nGid:", &ids.gid)) return EIO;
  ids.owner = st.st_uid;
  ids.owner_gid = st.st_gid;
  *out = ids;
  return 0;
}

ClientProcess::~ClientProcess() {
  if (pidfd_ >= 0) close(pidfd_);
}

int ClientProcess::open(pid_t pid, uid_t connection_uid) {
  assert(pidfd_ < 0);
  if (pid <= 0) return ESRCH;
  const int fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return ESRCH;
  pidfd_ = fd;
  pid_ = pid;
  const int rc = read_process_ids(pid, &ids_);
  if (rc != 0) return rc == EIO ? EPERM : rc;
  if (connection_uid == 0) return unchanged();
  if (ids_.uid[1] != connection_uid || ids_.owner != connection_uid) return EPERM;
  return unchanged();
}

int ClientProcess::unchanged() const {
  assert(pidfd_ >= 0);
  ProcessIds now;
  const int rc = read_process_ids(pid_, &now);
  // A pidfd turns readable once its process has exited: then the pid may
  // name another process already, and what was read under it proves
  // nothing. Checked after the ids, so they are the pidfd's process's.
  pollfd p{pidfd_, POLLIN, 0};
  if (poll(&p, 1, 0) != 0) return ESRCH;
  if (rc != 0) return rc == EIO ? EPERM : rc;
  return now == ids_ ? 0 : EPERM;
}

}  // namespace uroce::daemon
