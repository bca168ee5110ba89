#include "datapath/shm/arena_map.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace uroce::shm {

namespace {

// Chunk sizes a peer may announce: a page multiple up to 1 GiB (a ring is
// at most tens of MiB), so that chunk_bytes * max_chunks cannot overflow.
constexpr std::uint64_t kPageBytes = 4096;
constexpr std::uint64_t kMaxChunkBytes = std::uint64_t{1} << 30;
constexpr std::uint32_t kMaxChunks = 1u << 16;

class Lock {
 public:
  explicit Lock(pthread_mutex_t* mu) : mu_(mu) { pthread_mutex_lock(mu_); }
  ~Lock() { pthread_mutex_unlock(mu_); }
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;

 private:
  pthread_mutex_t* mu_;
};

// The file `fd` may back shared memory: a regular file sealed against
// shrinking; *size is its current length.
ShmStatus check_file(int fd, std::uint64_t* size) {
  struct stat sb {};
  if (::fstat(fd, &sb) != 0) return {ShmError::kStat, errno};
  if (!S_ISREG(sb.st_mode)) return {ShmError::kNotRegular, 0};
  const int seals = ::fcntl(fd, F_GET_SEALS);
  if (seals < 0) return {ShmError::kStat, errno};
  if ((seals & F_SEAL_SHRINK) == 0) return {ShmError::kNotSealed, 0};
  *size = sb.st_size < 0 ? 0 : static_cast<std::uint64_t>(sb.st_size);
  return {};
}

}  // namespace

ShmStatus ArenaMap::init(int fd, std::uint64_t chunk_bytes, std::uint32_t max_chunks) {
  if (chunk_bytes == 0 || chunk_bytes % kPageBytes != 0 || chunk_bytes > kMaxChunkBytes ||
      max_chunks == 0 || max_chunks > kMaxChunks) {
    ::close(fd);
    return {ShmError::kBadSize, 0};
  }
  void** chunks = static_cast<void**>(std::calloc(max_chunks, sizeof(void*)));
  if (chunks == nullptr) {
    ::close(fd);
    return {ShmError::kMap, ENOMEM};
  }
  reset();
  Lock lk(&mu_);
  fd_ = fd;
  chunk_bytes_ = chunk_bytes;
  max_chunks_ = max_chunks;
  chunks_ = chunks;
  return {};
}

ShmStatus ArenaMap::create(const char* name, std::uint64_t chunk_bytes, std::uint32_t max_chunks) {
  const int fd = ::memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return {ShmError::kCreate, errno};
  if (::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) != 0) {
    const ShmStatus st{ShmError::kSeal, errno};
    ::close(fd);
    return st;
  }
  return init(fd, chunk_bytes, max_chunks);
}

ShmStatus ArenaMap::adopt(int fd, std::uint64_t chunk_bytes, std::uint32_t max_chunks) {
  std::uint64_t size = 0;
  const ShmStatus st = check_file(fd, &size);
  if (!st.ok()) {
    ::close(fd);
    return st;
  }
  return init(fd, chunk_bytes, max_chunks);
}

ShmStatus ArenaMap::map_chunk_locked(std::uint32_t i) {
  if (chunks_[i] != nullptr) return {};
  std::uint64_t size = 0;
  const ShmStatus st = check_file(fd_, &size);
  if (!st.ok()) return st;
  const std::uint64_t end = (static_cast<std::uint64_t>(i) + 1) * chunk_bytes_;
  if (size < end) return {ShmError::kTooSmall, 0};
  void* p = ::mmap(nullptr, chunk_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_,
                   static_cast<off_t>(end - chunk_bytes_));
  if (p == MAP_FAILED) return {ShmError::kMap, errno};
  chunks_[i] = p;
  return {};
}

ShmStatus ArenaMap::grow(std::uint32_t* index) {
  Lock lk(&mu_);
  if (fd_ < 0) return {ShmError::kStat, EBADF};
  if (grown_ == max_chunks_) return {ShmError::kFull, 0};
  const std::uint64_t end = (static_cast<std::uint64_t>(grown_) + 1) * chunk_bytes_;
  std::uint64_t size = 0;
  ShmStatus st = check_file(fd_, &size);
  if (!st.ok()) return st;
  // The peer may have grown the file already (harmless); shrinking it back
  // would fail (the seal), so only ever extend.
  if (size < end && ::ftruncate(fd_, static_cast<off_t>(end)) != 0) {
    return {ShmError::kTruncate, errno};
  }
  st = map_chunk_locked(grown_);
  if (!st.ok()) return st;
  *index = grown_++;
  return {};
}

ShmStatus ArenaMap::locate(std::uint64_t offset, std::uint64_t bytes, void** addr) {
  Lock lk(&mu_);
  if (fd_ < 0) return {ShmError::kStat, EBADF};
  if (bytes == 0 || bytes > chunk_bytes_) return {ShmError::kOutOfRange, 0};
  const std::uint64_t i = offset / chunk_bytes_;
  const std::uint64_t in = offset % chunk_bytes_;
  if (i >= max_chunks_ || in + bytes > chunk_bytes_) return {ShmError::kOutOfRange, 0};
  const ShmStatus st = map_chunk_locked(static_cast<std::uint32_t>(i));
  if (!st.ok()) return st;
  *addr = static_cast<std::byte*>(chunks_[i]) + in;
  return {};
}

std::uint32_t ArenaMap::mapped() const {
  Lock lk(&mu_);
  std::uint32_t n = 0;
  for (std::uint32_t i = 0; i < max_chunks_; ++i) n += chunks_[i] != nullptr ? 1 : 0;
  return n;
}

void ArenaMap::reset() {
  Lock lk(&mu_);
  for (std::uint32_t i = 0; i < max_chunks_; ++i) {
    if (chunks_[i] != nullptr) ::munmap(chunks_[i], chunk_bytes_);
  }
  std::free(chunks_);
  chunks_ = nullptr;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  chunk_bytes_ = 0;
  max_chunks_ = 0;
  grown_ = 0;
}

}  // namespace uroce::shm
