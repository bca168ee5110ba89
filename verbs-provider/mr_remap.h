// How a registered buffer reaches the daemon (docs/shm.md, "Memory
// registration"). acquire(addr, len, write) rounds [addr, addr + len) out to
// whole pages, finds what backs them in /proc/self/maps, and leaves every
// page on a shared object the daemon can map itself through this process's
// /proc/PID/maps and map_files (ctl::MrSource::kProcessMapping,
// apps/uroced/mr_memory.h). The range is split into runs (at most
// kMaxMrRuns):
//
// - Private pages (heap, anonymous or file-backed MAP_PRIVATE mappings,
//   read-only ones, the stack), each run of one protection: a new memfd
//   ("uroce-mr") of exactly those pages gets their current contents, is
//   sealed against shrinking (F_SEAL_SHRINK | F_SEAL_SEAL: a daemon's
//   mapping can never lose its pages), is mapped MAP_SHARED | MAP_FIXED over
//   them with their protection, and its descriptor is closed: the mapping
//   keeps the file, and the daemon opens it through map_files. Pointers stay
//   valid. A registration therefore holds no descriptor in either process.
// - Shared pages, each run one object at consistent offsets: the
//   application's own (MAP_SHARED file or memfd, anonymous shared memory, a
//   SysV segment including SHM_HUGETLB) or a memfd of an earlier
//   registration (overlapping registrations, the next heap buffer sharing
//   the previous one's last page): nothing moves.
// - Pages of the calling thread's own stack: the copy and the remap run
//   64 KiB below those pages (the stack pointer moved down with alloca), so
//   every frame that runs meanwhile, a signal handler's included, lies below
//   them and the frames in them are suspended; on the main thread's growable
//   stack that also leaves a growable part below.
// Every memfd we create is tracked (an entry, reference counted by the
// registrations on its pages) with a "shadow": a PROT_NONE MAP_PRIVATE
// mapping of the whole file, made before the descriptor is closed. It is
// the process's only handle on the file, and what makes fork safe
// (docs/shm.md, "fork"):
// - Privatizing a memfd moves the shadow with mremap over the pages (where
//   /proc/self/maps still shows the file at its own offsets): they become a
//   private mapping of the file, with the same bytes, no copy, and no
//   window in which another thread's store to a neighbouring heap chunk
//   could be lost.
// - When the last registration on a memfd goes, it is idle: still shared,
//   so that registering those pages again (the same buffer, or the next
//   malloc at the same address) moves nothing; not the calling thread's
//   stack pages, which become private at once. When idle memfds pass
//   kIdleBudget bytes in all, those whose pages the application unmapped
//   are dropped, then the oldest privatized until the rest fits.
// - In a child of fork() (after_fork_in_child, a pthread_atfork handler,
//   fork.h), every memfd, registered or idle, is privatized: the child's
//   pages are copy-on-write and never write the parent's file. Under ibv_fork_init
//   (`dontfork`) the remapped pages are MADV_DONTFORK again, as libibverbs
//   made the old ones: the child has no mapping there, as under rxe.
// Errors: a write registration (local write, remote write or atomic) of a
// page that is not writable gives EFAULT, as rxe's ib_umem_get does; an
// unmapped or unreadable page EFAULT; a special mapping ([vdso], [vvar]) or
// more than kMaxMrRuns runs EINVAL.
// release() drops the registration's references; a memfd nobody references
// any more becomes idle (above).
//
// Caveats of the remap (documented, not hidden): bytes another thread writes
// into the buffer between the copy and the remap are lost; the new mapping
// does not carry mlock state of the old one (MADV_DONTFORK it does, when
// asked); pages made private again keep the file's pages beside the ones
// written since (up to twice the memory of those pages until unmapped); an
// idle memfd whose pages the application unmapped keeps its memory (the
// shadow holds the file) until the budget pushes it out.
//
// Threading: acquire/release serialise on the registry's mutex (address
// space changes and the maps walk happen under it); before_fork() takes it
// too, so a child never sees a registration half done. Control path only.
// One registry serves the whole process (process_memfds()).
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

// Most pieces (runs of private pages of one protection, or of one shared
// object) a registered range may consist of: ctl::kMaxMrObjects.
inline constexpr unsigned kMaxMrRuns = 16;

// Bytes of idle memfds a registry keeps shared (MemfdRegistry's constructor).
inline constexpr std::uint64_t kIdleBudget = std::uint64_t{128} << 20;

// What a registration holds: a reference on each of our memfds under it.
struct MrBacking {
  MemfdEntry* entries[kMaxMrRuns] = {};
  unsigned count = 0;
};

class MemfdRegistry {
 public:
  // Idle memfds (no registration left on them) are kept shared up to
  // `idle_budget` bytes in all, so that registering the same pages again
  // moves nothing; beyond it the oldest become private at once.
  explicit MemfdRegistry(std::uint64_t idle_budget = kIdleBudget) : idle_budget_(idle_budget) {}
  ~MemfdRegistry();
  MemfdRegistry(const MemfdRegistry&) = delete;
  MemfdRegistry& operator=(const MemfdRegistry&) = delete;

  // Returns 0 or errno (EINVAL, EFAULT, ENOMEM, or a system call's errno).
  // `write`: the registration asks for local write, remote write or atomic
  // access, which read-only pages refuse. `dontfork`: libibverbs' fork
  // support is on (ibv_fork_init, RDMAV_FORK_SAFE): pages we move are
  // marked MADV_DONTFORK.
  int acquire(const void* addr, std::size_t len, MrBacking* out, bool write = true,
              bool dontfork = false);
  void release(const MrBacking& b);

  // The pthread_atfork handlers (installed for process_memfds() when the
  // provider is loaded, fork.h). before_fork() holds the mutex across fork(); the
  // child's handler makes every registered page private in the child and
  // empties its registry (the registrations are the parent's), with system
  // calls only: no malloc, no lock another thread could hold.
  void before_fork();
  void after_fork_in_parent();
  void after_fork_in_child();

  // Our memfds, registered or idle, and those a registration references
  // (tests).
  std::size_t entries();
  std::size_t referenced();

 private:
  int acquire_locked(std::uintptr_t addr, std::size_t len, bool write, bool dontfork,
                     MrBacking* out);
  void release_locked(const MrBacking& b);
  // Drops the idle memfds the application unmapped, then makes the oldest
  // private until idle_bytes_ fits the budget.
  void trim_idle_locked();
  // Moves [start, end) onto a fresh memfd and tracks it (*out, also when a
  // later step fails: release it).
  int remap(std::uintptr_t start, std::uintptr_t end, int prot, bool dontfork, MemfdEntry** out);
  MemfdEntry* find(dev_t dev, std::uint64_t inode) const;

  pthread_mutex_t mu_ = PTHREAD_MUTEX_INITIALIZER;
  MemfdEntry* head_ = nullptr;
  const std::uint64_t idle_budget_;
  std::uint64_t idle_bytes_ = 0;  // of entries with no reference
};

// The registry every context of the process shares: a buffer registered on
// two devices (two contexts) must stay on one memfd, or the second
// registration would move the pages away from the first daemon's mapping.
MemfdRegistry& process_memfds();

}  // namespace uroce::provider
