#include "apps/uroced/ring_arena.h"

#include <fcntl.h>

#include <cerrno>
#include <cstring>
#include <iterator>

namespace uroce::daemon {

namespace {

constexpr std::uint64_t kPageBytes = 4096;

}  // namespace

int RingArena::create(const char* name, std::uint64_t chunk_bytes, std::uint32_t max_chunks) {
  free_.clear();
  in_use_ = 0;
  const shm::ShmStatus st = map_.create(name, chunk_bytes, max_chunks);
  if (st.ok()) return 0;
  if (st.err == shm::ShmError::kBadSize) return EINVAL;
  return st.sys_errno == EMFILE || st.sys_errno == ENFILE ? st.sys_errno : ENOMEM;
}

int RingArena::alloc(std::uint64_t bytes, ArenaExtent* out) {
  const std::uint64_t want = (bytes + kPageBytes - 1) / kPageBytes * kPageBytes;
  if (want == 0 || want > map_.chunk_bytes()) return EINVAL;
  auto it = free_.begin();
  while (it != free_.end() && it->second < want) ++it;
  if (it == free_.end()) {
    std::uint32_t chunk = 0;
    if (!map_.grow(&chunk).ok()) return ENOMEM;
    const std::uint64_t base = static_cast<std::uint64_t>(chunk) * map_.chunk_bytes();
    insert_free(base, map_.chunk_bytes());
    it = free_.find(base);
    // A fresh chunk follows every other, so it cannot have merged with a
    // free extent before it (coalescing stops at chunk boundaries).
  }
  const std::uint64_t offset = it->first;
  const std::uint64_t left = it->second - want;
  free_.erase(it);
  if (left != 0) free_.emplace(offset + want, left);
  void* addr = nullptr;
  if (!map_.locate(offset, want, &addr).ok()) {
    insert_free(offset, want);
    return ENOMEM;
  }
  in_use_ += want;
  *out = ArenaExtent{offset, want, addr};
  return 0;
}

void RingArena::release(const ArenaExtent& e) {
  if (!e.valid()) return;
  // Punching cannot fail on a memfd the client cannot seal further
  // (F_SEAL_SEAL); should it anyway, zeroing keeps the promise that a new
  // extent starts zero-filled, at the cost of keeping the pages.
  if (::fallocate(map_.fd(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                  static_cast<off_t>(e.offset), static_cast<off_t>(e.bytes)) != 0) {
    std::memset(e.addr, 0, e.bytes);
  }
  in_use_ -= e.bytes;
  insert_free(e.offset, e.bytes);
}

void RingArena::insert_free(std::uint64_t offset, std::uint64_t bytes) {
  const std::uint64_t chunk = offset / map_.chunk_bytes();
  auto next = free_.lower_bound(offset);
  if (next != free_.end() && next->first == offset + bytes &&
      next->first / map_.chunk_bytes() == chunk) {
    bytes += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == offset && prev->first / map_.chunk_bytes() == chunk) {
      prev->second += bytes;
      return;
    }
  }
  free_.emplace(offset, bytes);
}

}  // namespace uroce::daemon
