// One client's shared memory: a single memfd, shared by uroced and that
// client's provider, mapped chunk by chunk on both sides. Every ring of the
// client (and its doorbell page) lives at an offset in it, so a context
// costs each side one descriptor however many QPs, CQs and SRQs it has.
//
// Layout: chunk i is the file range [i * chunk_bytes, (i + 1) * chunk_bytes).
// Nothing ever spans two chunks, so each side maps a chunk on its own, when
// it first needs it, and an address never moves once handed out: the daemon
// adds chunks at the end (grow: ftruncate, then map), the provider maps the
// chunk an offset names (locate). At most max_chunks chunks.
//
// Seals: the daemon seals the new file with F_SEAL_SHRINK | F_SEAL_SEAL
// before the fd leaves the process. Without SHRINK the peer could truncate
// the file under the other side's mappings (SIGBUS); without SEAL it could
// add F_SEAL_GROW or F_SEAL_FUTURE_WRITE and make the daemon's next chunk
// fail. Growing is left open (the daemon grows the file; a peer that grows
// it too only adds sparse size). A peer may punch holes: that zeroes its own
// rings, which both sides already treat as untrusted contents. Before
// mapping a chunk, locate checks that the file is a regular file, covers the
// chunk and is sealed against shrinking.
//
// Threading: grow and locate may be called from any thread (a mutex guards
// the chunk table); addresses stay valid until reset or destruction.
// No exceptions, no libstdc++ (the provider links this): pthread and malloc.
#pragma once

#include <pthread.h>

#include <cstddef>
#include <cstdint>

#include "datapath/shm/shared_region.h"

namespace uroce::shm {

class ArenaMap {
 public:
  ArenaMap() = default;
  ~ArenaMap() { reset(); }
  ArenaMap(const ArenaMap&) = delete;
  ArenaMap& operator=(const ArenaMap&) = delete;

  // Daemon: a new empty memfd (no chunk yet), close-on-exec, sealed as above.
  // chunk_bytes: a non-zero page multiple; max_chunks >= 1.
  ShmStatus create(const char* name, std::uint64_t chunk_bytes, std::uint32_t max_chunks);
  // Provider: adopts `fd` received from the daemon (always takes ownership;
  // closed on failure). Checks it is a regular file sealed against
  // shrinking; maps nothing yet.
  ShmStatus adopt(int fd, std::uint64_t chunk_bytes, std::uint32_t max_chunks);

  // Daemon: extends the file by one chunk and maps it; *index is its number.
  // kFull once max_chunks exist.
  ShmStatus grow(std::uint32_t* index);
  // The address of [offset, offset + bytes), mapping its chunk first if this
  // side has not yet. kOutOfRange when the range is empty, crosses a chunk
  // boundary or lies past max_chunks; kTooSmall when the file does not cover
  // the chunk.
  ShmStatus locate(std::uint64_t offset, std::uint64_t bytes, void** addr);

  bool valid() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  std::uint64_t chunk_bytes() const { return chunk_bytes_; }
  std::uint32_t max_chunks() const { return max_chunks_; }
  // Chunks this side has grown (daemon).
  std::uint32_t grown() const { return grown_; }
  // Chunks this side has mapped.
  std::uint32_t mapped() const;

  // Unmaps every chunk and closes the fd.
  void reset();

 private:
  ShmStatus init(int fd, std::uint64_t chunk_bytes, std::uint32_t max_chunks);
  ShmStatus map_chunk_locked(std::uint32_t i);

  mutable pthread_mutex_t mu_ = PTHREAD_MUTEX_INITIALIZER;
  int fd_ = -1;
  std::uint64_t chunk_bytes_ = 0;
  std::uint32_t max_chunks_ = 0;
  std::uint32_t grown_ = 0;
  void** chunks_ = nullptr;  // max_chunks_ entries, null: not mapped here
};

}  // namespace uroce::shm
