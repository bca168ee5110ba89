// Zero-copy memory registration: the pages of a registered buffer are moved
// onto a memfd that the daemon maps too, so the engine reads and writes the
// application's bytes directly (FreeFlow-style; docs/ctl.md).
//
// acquire(addr, len) rounds [addr, addr + len) out to whole pages and finds
// what backs them in /proc/self/maps:
//   - all pages private and writable (heap, anonymous mmap, a program's
//     data; not the stack), or pages of one of our own earlier memfds that
//     no registration uses any more: a new memfd ("uroce-mr") of exactly
//     those pages gets their current contents, is sealed against shrinking
//     (F_SEAL_SHRINK | F_SEAL_SEAL: a daemon's mapping can never lose its
//     pages) and is mapped MAP_SHARED | MAP_FIXED over them, keeping their
//     protection. The application's pointers stay valid; its memory is now
//     shared with whoever maps the fd.
//   - all pages already on one memfd of a live registration, at consistent
//     offsets: that memfd is reused (reference counted), with map_offset =
//     the file offset of addr.
//   - pages that start on a live memfd and run on past its end into movable
//     pages (the next heap buffer, registered after the one before it): the
//     memfd grows over the rest, so earlier registrations stay untouched.
//   - anything else (a range reaching below a live memfd or across two, a
//     memfd or file the application shares itself, the stack, read-only
//     memory): EINVAL; an unmapped hole: EFAULT.
// The result names the memfd (borrowed; send it with SCM_RIGHTS), map_len
// (the bytes of it the daemon maps, from file offset 0) and map_offset
// (where addr lies in that mapping), as RegMrReq wants them.
// release() drops a reference; the last one closes our fd (the pages stay
// mapped, still shared with nobody once the daemon unmapped them).
//
// Caveats (documented, not hidden): bytes another thread writes into the
// buffer between the copy and the remap are lost; the new mapping does not
// carry MADV_DONTFORK or mlock state of the old one; a child forked later
// shares these pages instead of copying them.
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

namespace uroce::provider {

// One line of /proc/PID/maps.
struct MapsLine {
  std::uintptr_t start = 0;
  std::uintptr_t end = 0;
  bool read = false;
  bool write = false;
  bool exec = false;
  bool shared = false;
  std::uint64_t offset = 0;
  dev_t dev = 0;
  std::uint64_t inode = 0;
  std::string_view name;  // path or [heap]/[stack]/..., empty when anonymous
};

// Parses one line (without or with its newline); false when malformed.
bool parse_maps_line(std::string_view line, MapsLine* out);

// The memfd name our registrations use ("/memfd:<name> (deleted)" in maps).
inline constexpr char kMrMemfdName[] = "uroce-mr";

struct MemfdEntry;

struct MrBacking {
  MemfdEntry* entry = nullptr;
  int fd = -1;                // borrowed from the entry
  std::uint64_t map_len = 0;  // page multiple
  std::uint64_t map_offset = 0;
};

class MemfdRegistry {
 public:
  MemfdRegistry() = default;
  ~MemfdRegistry();  // closes every fd still held
  MemfdRegistry(const MemfdRegistry&) = delete;
  MemfdRegistry& operator=(const MemfdRegistry&) = delete;

  // Returns 0 or errno (EINVAL, EFAULT, ENOMEM, or a system call's errno).
  int acquire(const void* addr, std::size_t len, MrBacking* out);
  void release(const MrBacking& b);

  // Live memfds (tests).
  std::size_t entries();

 private:
  int acquire_locked(std::uintptr_t addr, std::size_t len, MrBacking* out);
  int remap(std::uintptr_t start, std::uintptr_t end, bool exec, MemfdEntry** out);
  int extend(MemfdEntry* e, std::uintptr_t from, std::uintptr_t to, bool exec);
  MemfdEntry* find(dev_t dev, std::uint64_t inode) const;

  pthread_mutex_t mu_ = PTHREAD_MUTEX_INITIALIZER;
  MemfdEntry* head_ = nullptr;
};

// The registry every context of the process shares: a buffer registered on
// two devices (two contexts) must stay on one memfd, or the second
// registration would move the pages away from the first daemon's mapping.
MemfdRegistry& process_memfds();

}  // namespace uroce::provider
