// The daemon's mapping of one memory registration: what the engine's
// MrTable points at (MrDesc::host), kept for as long as the registration
// lives. Two sources (ctl::MrSource, docs/shm.md "Memory registration"):
//
//   from_memfd: the memfd the provider moved private pages onto, checked
//     and mapped by shm::SharedRegion::map_fd (a memfd sealed against
//     shrinking, at least map_len long).
//   from_process: objects the client maps MAP_SHARED itself (a file, a
//     memfd, anonymous shared memory, a SysV segment with or without
//     SHM_HUGETLB), the memfds the provider moved its private pages onto
//     included. The daemon reads the client's /proc/PID/maps itself (it
//     trusts nothing the client says about its memory): the pages of
//     [addr, addr + length) must all map shared objects, each contiguously
//     (at most ctl::kMaxMrObjects runs of one object), and be readable
//     (EFAULT otherwise, as for a hole), and writable when the registration
//     asks to write (EFAULT, as rxe). It opens each object through
//     /proc/PID/map_files (needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE:
//     uroced runs as root), checks it is the same device and inode, and maps
//     the object's pages under the range MAP_SHARED: the same pages as the
//     client's, no copy; several runs side by side in one reserved range.
//     Read-write when the client's own pages are writable, read-only
//     otherwise. Alignment is the object's page size (huge pages on
//     hugetlbfs, which map only alone). An object the client can truncate
//     (anything but a memfd sealed against shrinking) is guarded against
//     SIGBUS (sigbus_guard.h). The descriptors are closed once mapped.
//
// Destruction unmaps (and unguards): the engine must already have let go of
// the registration (MrTable dereg), which is what makes a deregistration
// revoke remote access at once.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "datapath/shm/shared_region.h"

namespace uroce::daemon {

class MrMemory {
 public:
  MrMemory() = default;
  ~MrMemory() { reset(); }
  MrMemory(MrMemory&& o) noexcept { *this = static_cast<MrMemory&&>(o); }
  MrMemory& operator=(MrMemory&& o) noexcept;
  MrMemory(const MrMemory&) = delete;
  MrMemory& operator=(const MrMemory&) = delete;

  // Takes ownership of fd. 0, EINVAL (not a sealed memfd of map_len bytes)
  // or ENOMEM (no address space).
  static int from_memfd(int fd, std::uint64_t map_len, std::uint64_t map_offset, MrMemory* out);
  // 0 or errno: EFAULT (hole, unreadable, or write to read-only pages),
  // EINVAL (not shared objects, too many of them, or past an end), EPERM/EACCES (no
  // access to map_files), ENOMEM.
  static int from_process(pid_t pid, std::uint64_t addr, std::uint64_t length, bool write,
                          MrMemory* out);

  std::uint8_t* host() const { return host_; }    // the registration's first byte
  std::uint64_t map_len() const { return len_; }  // bytes mapped (charged as map_bytes)
  bool writable() const { return writable_; }
  bool guarded() const { return slot_ >= 0; }

  void reset();
  // Forgets the mapping without unmapping it (nor unguarding it), for the
  // rest of the process: the engine refused to let go and may still touch it.
  void leak();

 private:
  // Takes the mapping [p, p + len), guarded against SIGBUS unless sealed.
  // 0 or ENOMEM (unmapped then).
  int adopt(void* p, std::uint64_t len, std::uint64_t host_offset, bool sealed, std::uint64_t align,
            bool writable);

  shm::SharedRegion region_;  // from_memfd
  void* addr_ = nullptr;      // from_process: our mmap
  std::uint8_t* host_ = nullptr;
  std::uint64_t len_ = 0;
  int slot_ = -1;  // sigbus_guard slot
  bool writable_ = false;
};

}  // namespace uroce::daemon
