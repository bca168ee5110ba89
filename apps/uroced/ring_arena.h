// The daemon's side of one client's shared memory (shm::ArenaMap): hands out
// page-aligned extents for the client's doorbell page and rings, and takes
// them back when the object is destroyed, so that a client creating and
// destroying objects in a loop reuses the same pages instead of growing the
// file.
//
// Allocation: first fit in address order over the free extents (lowest
// offset first, which keeps a client's memory packed into its first
// chunks); a request that fits no free extent grows the arena by one chunk.
// Free extents never span two chunks (each chunk enters the free list on its
// own and coalescing stops at chunk boundaries), so no extent handed out
// does either.
//
// Release: the extent's pages are punched out of the file
// (FALLOC_FL_PUNCH_HOLE): the memory goes back to the kernel and the next
// object placed there starts from zero-filled pages, as a fresh memfd did
// (ring_init and a zero CqNotify word rely on it).
//
// Trust: the arena is this client's alone; offsets and sizes come from the
// daemon, never from the client, which can only write to memory it may
// write anyway.
//
// Threading: the session's own thread only. Not on the data path.
#pragma once

#include <cstdint>
#include <map>

#include "datapath/shm/arena_map.h"

namespace uroce::daemon {

struct ArenaExtent {
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;  // a page multiple, 0: none
  void* addr = nullptr;     // the daemon's address of its first byte
  bool valid() const { return bytes != 0; }
};

class RingArena {
 public:
  // Chunks of 64 MiB (the largest ring, an SQ of 16,384 WQEs of 1 KiB, is
  // 32 MiB) and up to 1,024 of them (64 GiB of rings per client, enough for
  // a thousand QPs of the largest size). The memfd is sparse: pages exist
  // only once written or populated, by whoever writes the ring (the
  // session populates a CQ's, the provider an SQ's or RQ's).
  static constexpr std::uint64_t kChunkBytes = std::uint64_t{64} << 20;
  static constexpr std::uint32_t kMaxChunks = 1024;

  // Creates the memfd (no chunk yet). 0 or an errno.
  int create(const char* name, std::uint64_t chunk_bytes = kChunkBytes,
             std::uint32_t max_chunks = kMaxChunks);
  // `bytes` (rounded up to a page), zero-filled. 0, EINVAL (0 or more than
  // a chunk) or ENOMEM (the arena has all its chunks, or the file cannot
  // grow or be mapped).
  int alloc(std::uint64_t bytes, ArenaExtent* out);
  // Gives an extent back (punches its pages out of the file).
  void release(const ArenaExtent& e);

  const shm::ArenaMap& map() const { return map_; }
  int fd() const { return map_.fd(); }
  std::uint64_t bytes_in_use() const { return in_use_; }
  std::size_t free_extents() const { return free_.size(); }

 private:
  void insert_free(std::uint64_t offset, std::uint64_t bytes);

  shm::ArenaMap map_;
  std::map<std::uint64_t, std::uint64_t> free_;  // offset -> bytes
  std::uint64_t in_use_ = 0;
};

}  // namespace uroce::daemon
