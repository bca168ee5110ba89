// How a registered buffer reaches the daemon (docs/shm.md, "Memory
// registration"). acquire(addr, len, write) rounds [addr, addr + len) out to
// whole pages, finds what backs them in /proc/self/maps and picks one of two
// zero-copy paths:
//
// 1. Remap (MrSource::kMemfd): the pages are private to this process (heap,
//    anonymous or file-backed MAP_PRIVATE mappings, read-only ones, the
//    stack). A new memfd ("uroce-mr") of exactly those pages gets their
//    current contents, is sealed against shrinking (F_SEAL_SHRINK |
//    F_SEAL_SEAL: a daemon's mapping can never lose its pages) and is mapped
//    MAP_SHARED | MAP_FIXED over them with their protection. Pointers stay
//    valid; the memory is now shared with whoever maps the fd.
//      - all pages already on one memfd of a live registration, at
//        consistent offsets: that memfd is reused (reference counted);
//      - pages that start on a live memfd and run on past its end into
//        movable writable pages (the next heap buffer): the memfd grows;
//      - pages of the calling thread's own stack: the copy and the remap run
//        64 KiB below those pages (the stack pointer moved down with
//        alloca), so every frame that runs meanwhile, a signal handler's
//        included, lies below them and the frames in them are suspended;
//        on the main thread's growable stack that also leaves a growable
//        part below. When the last registration of such a memfd goes (on
//        the thread whose stack it is), its pages become private anonymous
//        memory again the same way, so a child forked later gets its own
//        frames.
// 2. Shared object (MrSource::kProcessMapping): the pages map one object the
//    process shares itself (MAP_SHARED file or memfd, anonymous shared
//    memory, a SysV segment including SHM_HUGETLB), contiguously. Nothing
//    moves: the daemon maps the same object itself, found through this
//    process's /proc/PID/maps and map_files (apps/uroced/mr_memory.h).
// Errors: a write registration (local write, remote write or atomic) of a
// page that is not writable gives EFAULT, as rxe's ib_umem_get does; an
// unmapped or unreadable page EFAULT; a range mixing writable and read-only
// private pages, mixing private and shared pages, reaching below or across
// live memfds, or a special mapping ([vdso], [vvar]) EINVAL.
// The result names the memfd (borrowed; send it with SCM_RIGHTS), map_len
// (the bytes of it the daemon maps, from file offset 0) and map_offset
// (where addr lies in that mapping), as RegMrReq wants them; for a shared
// object only the source.
// release() drops a reference; the last one closes our fd (the pages stay
// mapped, still shared with nobody once the daemon unmapped them).
//
// Caveats of the remap (documented, not hidden): bytes another thread writes
// into the buffer between the copy and the remap are lost; the new mapping
// does not carry MADV_DONTFORK or mlock state of the old one; a child forked
// later shares these pages instead of copying them (for a stack buffer still
// registered, the child's frames in those pages are the parent's: do not
// fork while one is registered).
//
// Threading: acquire/release serialise on the registry's mutex (address
// space changes and the maps walk happen under it). Control path only. One
// registry serves the whole process (process_memfds()).
#pragma once

#include <pthread.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "datapath/shm/proc_maps.h"

namespace uroce::provider {

using shm::MapsLine;
using shm::parse_maps_line;

// The memfd name our registrations use ("/memfd:<name> (deleted)" in maps).
inline constexpr char kMrMemfdName[] = "uroce-mr";

struct MemfdEntry;

// What reaches the daemon (ctl::MrSource).
enum class MrSource : std::uint8_t { kMemfd, kProcessMapping };

struct MrBacking {
  MrSource source = MrSource::kMemfd;
  MemfdEntry* entry = nullptr;  // kMemfd only
  int fd = -1;                  // borrowed from the entry
  std::uint64_t map_len = 0;    // page multiple
  std::uint64_t map_offset = 0;
};

class MemfdRegistry {
 public:
  MemfdRegistry() = default;
  ~MemfdRegistry();  // closes every fd still held
  MemfdRegistry(const MemfdRegistry&) = delete;
  MemfdRegistry& operator=(const MemfdRegistry&) = delete;

  // Returns 0 or errno (EINVAL, EFAULT, ENOMEM, or a system call's errno).
  // `write`: the registration asks for local write, remote write or atomic
  // access, which read-only pages refuse.
  int acquire(const void* addr, std::size_t len, MrBacking* out, bool write = true);
  void release(const MrBacking& b);

  // Live memfds (tests).
  std::size_t entries();

 private:
  int acquire_locked(std::uintptr_t addr, std::size_t len, bool write, MrBacking* out);
  int remap(std::uintptr_t start, std::uintptr_t end, int prot, MemfdEntry** out);
  int extend(MemfdEntry* e, std::uintptr_t from, std::uintptr_t to, int prot);
  MemfdEntry* find(dev_t dev, std::uint64_t inode) const;

  pthread_mutex_t mu_ = PTHREAD_MUTEX_INITIALIZER;
  MemfdEntry* head_ = nullptr;
};

// The registry every context of the process shares: a buffer registered on
// two devices (two contexts) must stay on one memfd, or the second
// registration would move the pages away from the first daemon's mapping.
MemfdRegistry& process_memfds();

}  // namespace uroce::provider
