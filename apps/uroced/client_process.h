// The process whose memory a registration maps (docs/security.md, "A local
// unprivileged user"): the one that sent the request (SCM_CREDENTIALS),
// never the one that connected, and only while it is a process the
// connection's user could read anyway.
//
// MrMemory::from_process reads /proc/PID/maps and opens /proc/PID/map_files
// as root. Between those reads and the request, the pid could name another
// process (the sender exited and the pid was reused) or another image of
// the same process (a thread of it exec'd a set-user-ID program). A
// ClientProcess brackets the reads:
//
//   open()       takes a pidfd of the pid, then the process's ids (the four
//                of /proc/PID/status's Uid and Gid lines) and the owner of
//                that file, and refuses (EPERM) unless the effective uid is
//                the connection's and the file is owned by it: the kernel
//                makes a non-dumpable process's /proc files root's, and a
//                process that is not dumpable (after a set-user-ID exec,
//                or PR_SET_DUMPABLE 0) is one its user cannot ptrace either.
//   unchanged()  reads the ids and owner again and checks the pidfd: 0 when
//                the same process, with the same ids, is still there (so
//                every read between the two calls saw it); EPERM when its
//                ids or owner changed, ESRCH when it exited.
//
// Root's connections (uid 0) pass the owner check by construction: root
// may read any process.
#pragma once

#include <sys/types.h>

#include <array>

namespace uroce::daemon {

struct ProcessIds {
  std::array<uid_t, 4> uid{};  // real, effective, saved, filesystem
  std::array<gid_t, 4> gid{};
  uid_t owner = 0;  // of /proc/PID/status: root's when not dumpable
  gid_t owner_gid = 0;
  bool operator==(const ProcessIds&) const = default;
};

// The ids of `pid` now. 0, ESRCH (no such process) or EIO (unreadable).
int read_process_ids(pid_t pid, ProcessIds* out);

class ClientProcess {
 public:
  ClientProcess() = default;
  ~ClientProcess();
  ClientProcess(const ClientProcess&) = delete;
  ClientProcess& operator=(const ClientProcess&) = delete;

  // 0, ESRCH (pid <= 0 or no such process) or EPERM (not the user's, or
  // not dumpable).
  int open(pid_t pid, uid_t connection_uid);
  // 0, EPERM or ESRCH, as above. Only after open() returned 0.
  int unchanged() const;

  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = 0;
  int pidfd_ = -1;
  ProcessIds ids_{};
};

}  // namespace uroce::daemon
