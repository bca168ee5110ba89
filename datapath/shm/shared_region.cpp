#include "datapath/shm/shared_region.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace uroce::shm {

const char* to_string(ShmError e) {
  switch (e) {
    case ShmError::kOk: return "ok";
    case ShmError::kBadSize: return "bad size";
    case ShmError::kCreate: return "memfd_create failed";
    case ShmError::kTruncate: return "ftruncate failed";
    case ShmError::kSeal: return "sealing failed";
    case ShmError::kStat: return "fstat failed";
    case ShmError::kNotRegular: return "not a regular file";
    case ShmError::kTooSmall: return "file too small";
    case ShmError::kNotSealed: return "file not sealed against shrinking";
    case ShmError::kMap: return "mmap failed";
    case ShmError::kOutOfRange: return "range outside one arena chunk";
    case ShmError::kFull: return "arena has its largest number of chunks";
  }
  return "unknown shm error";
}

namespace {

// Closes `fd` without letting close() overwrite the errno being reported.
ShmStatus fail_closing(int fd, ShmError err) {
  const ShmStatus st{err, errno};
  if (fd >= 0) ::close(fd);
  return st;
}

// Maps `fd` shared read-write; closes it on failure.
ShmStatus map_owned(int fd, std::size_t size, void** addr) {
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return fail_closing(fd, ShmError::kMap);
  *addr = p;
  return {};
}

}  // namespace

SharedRegion& SharedRegion::operator=(SharedRegion&& o) noexcept {
  if (this != &o) {
    reset();
    addr_ = o.addr_;
    size_ = o.size_;
    fd_ = o.fd_;
    o.addr_ = nullptr;
    o.size_ = 0;
    o.fd_ = -1;
  }
  return *this;
}

void SharedRegion::reset() {
  if (addr_ != nullptr) ::munmap(addr_, size_);
  if (fd_ >= 0) ::close(fd_);
  addr_ = nullptr;
  size_ = 0;
  fd_ = -1;
}

ShmStatus SharedRegion::create(const char* name, std::size_t size, SharedRegion* out) {
  if (size == 0) return {ShmError::kBadSize, 0};
  const int fd = ::memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return {ShmError::kCreate, errno};
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    return fail_closing(fd, ShmError::kTruncate);
  }
  if (::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    return fail_closing(fd, ShmError::kSeal);
  }
  void* addr = nullptr;
  const ShmStatus st = map_owned(fd, size, &addr);
  if (!st.ok()) return st;
  out->reset();
  out->addr_ = addr;
  out->size_ = size;
  out->fd_ = fd;
  return {};
}

ShmStatus SharedRegion::map_fd(int fd, std::size_t expected_size, SharedRegion* out) {
  if (expected_size == 0) return fail_closing(fd, ShmError::kBadSize);
  struct stat sb {};
  if (::fstat(fd, &sb) != 0) return fail_closing(fd, ShmError::kStat);
  if (!S_ISREG(sb.st_mode)) return fail_closing(fd, ShmError::kNotRegular);
  if (sb.st_size < 0 || static_cast<std::uint64_t>(sb.st_size) < expected_size) {
    return fail_closing(fd, ShmError::kTooSmall);
  }
  const int seals = ::fcntl(fd, F_GET_SEALS);
  if (seals < 0) return fail_closing(fd, ShmError::kStat);
  if ((seals & F_SEAL_SHRINK) == 0) return fail_closing(fd, ShmError::kNotSealed);
  void* addr = nullptr;
  const ShmStatus st = map_owned(fd, expected_size, &addr);
  if (!st.ok()) return st;
  out->reset();
  out->addr_ = addr;
  out->size_ = expected_size;
  out->fd_ = fd;
  return {};
}

}  // namespace uroce::shm
