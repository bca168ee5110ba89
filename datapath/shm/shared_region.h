// Memory two processes share: a memfd mapped MAP_SHARED, owned by an RAII
// object that unmaps and closes on destruction.
//
// The creating side (the daemon, for rings) calls create(): memfd_create,
// ftruncate to the exact size, then seals the size (F_SEAL_SHRINK,
// F_SEAL_GROW, F_SEAL_SEAL) before anyone else sees the fd, and maps it. The
// fd then goes to the peer with SCM_RIGHTS. The receiving side calls
// map_fd(), which checks with fstat that the file is a regular file at least
// as long as expected and that it is sealed against shrinking, then maps
// exactly the expected length.
//
// Why the shrink seal is required: the peer holds the same file and could
// ftruncate it; any access to a mapped page past the new end raises SIGBUS in
// the other process. With F_SEAL_SHRINK that truncation fails, so a mapping
// once validated stays valid for its whole life.
//
// Not on the data path: these are called when objects are created.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

namespace uroce::shm {

enum class ShmError : std::uint8_t {
  kOk = 0,
  kBadSize,     // zero size requested
  kCreate,      // memfd_create failed
  kTruncate,    // ftruncate failed
  kSeal,        // adding the seals failed
  kStat,        // fstat or F_GET_SEALS failed (not a valid fd)
  kNotRegular,  // the fd is not a regular file (memfd)
  kTooSmall,    // the file is shorter than expected
  kNotSealed,   // the file can still be shrunk by its other holders
  kMap,         // mmap failed
  kOutOfRange,  // an arena range outside one chunk, or past the last (arena_map.h)
  kFull,        // an arena that already has its largest number of chunks
};

const char* to_string(ShmError e);

struct ShmStatus {
  ShmError err = ShmError::kOk;
  int sys_errno = 0;  // errno of the failing call, 0 when none failed
  bool ok() const { return err == ShmError::kOk; }
};

class SharedRegion {
 public:
  SharedRegion() = default;
  ~SharedRegion() { reset(); }
  SharedRegion(SharedRegion&& o) noexcept { *this = std::move(o); }
  SharedRegion& operator=(SharedRegion&& o) noexcept;
  SharedRegion(const SharedRegion&) = delete;
  SharedRegion& operator=(const SharedRegion&) = delete;

  // A new sealed memfd of `size` bytes (zero-filled), close-on-exec, mapped
  // read-write. `name` shows in /proc/PID/fd (debugging only).
  static ShmStatus create(const char* name, std::size_t size, SharedRegion* out);

  // Maps `fd` (received from a peer) read-write, `expected_size` bytes.
  // Always takes ownership of `fd`: on failure it is closed.
  static ShmStatus map_fd(int fd, std::size_t expected_size, SharedRegion* out);

  bool valid() const { return addr_ != nullptr; }
  void* data() const { return addr_; }
  std::size_t size() const { return size_; }
  // The fd to pass with SCM_RIGHTS (the region keeps owning it).
  int fd() const { return fd_; }

  // Unmaps and closes; the region becomes empty.
  void reset();

 private:
  void* addr_ = nullptr;
  std::size_t size_ = 0;
  int fd_ = -1;
};

}  // namespace uroce::shm
