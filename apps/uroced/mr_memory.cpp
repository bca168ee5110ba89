#include "apps/uroced/mr_memory.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "apps/uroced/sigbus_guard.h"
#include "datapath/shm/proc_maps.h"

namespace uroce::daemon {

MrMemory& MrMemory::operator=(MrMemory&& o) noexcept {
  if (this != &o) {
    reset();
    region_ = static_cast<shm::SharedRegion&&>(o.region_);
    addr_ = o.addr_;
    host_ = o.host_;
    len_ = o.len_;
    slot_ = o.slot_;
    writable_ = o.writable_;
    o.addr_ = nullptr;
    o.host_ = nullptr;
    o.len_ = 0;
    o.slot_ = -1;
  }
  return *this;
}

void MrMemory::reset() {
  sigbus_guard::remove(slot_);
  if (addr_ != nullptr) ::munmap(addr_, len_);
  region_.reset();
  addr_ = nullptr;
  host_ = nullptr;
  len_ = 0;
  slot_ = -1;
}

void MrMemory::leak() {
  if (region_.valid()) new shm::SharedRegion(static_cast<shm::SharedRegion&&>(region_));
  addr_ = nullptr;
  host_ = nullptr;
  len_ = 0;
  slot_ = -1;
}

int MrMemory::from_memfd(int fd, std::uint64_t map_len, std::uint64_t map_offset, MrMemory* out) {
  shm::SharedRegion region;
  const shm::ShmStatus st = shm::SharedRegion::map_fd(fd, map_len, &region);
  if (!st.ok()) return st.err == shm::ShmError::kMap && st.sys_errno == ENOMEM ? ENOMEM : EINVAL;
  out->reset();
  out->host_ = static_cast<std::uint8_t*>(region.data()) + map_offset;
  out->len_ = map_len;
  out->writable_ = true;
  out->region_ = static_cast<shm::SharedRegion&&>(region);
  return 0;
}

namespace {

// The client's pages under [start, end): one shared object, as its maps say.
struct ClientSpan {
  shm::MapsLine first;       // name is not kept (it points into the freed text)
  std::uint64_t offset = 0;  // the object's offset of `start`
  bool writable = false;
};

int client_span(pid_t pid, std::uintptr_t start, std::uintptr_t end, ClientSpan* out) {
  char* text = nullptr;
  std::size_t len = 0;
  const int rd = shm::read_maps(pid, &text, &len);
  if (rd != 0) return rd == ENOENT ? ESRCH : rd;
  shm::SharedObjectSpan span;
  const bool mapped = shm::for_each_line({text, len}, start, end, [&](const shm::MapsLine& m) {
    span.add(m);
    return true;
  });
  std::free(text);
  if (!mapped) return EFAULT;
  if (!span.ok()) return EINVAL;
  if (!span.all_readable()) return EFAULT;
  out->first = span.first();
  out->first.name = {};
  out->offset = span.offset_of(start);
  out->writable = span.all_writable();
  return 0;
}

}  // namespace

int MrMemory::from_process(pid_t pid, std::uint64_t addr, std::uint64_t length, bool write,
                           MrMemory* out) {
  const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  if (pid <= 0 || length == 0 || addr + length < addr || addr + length > UINTPTR_MAX - page) {
    return EINVAL;
  }
  const std::uintptr_t start = addr & ~(page - 1);
  const std::uintptr_t end = (addr + length + page - 1) & ~(page - 1);
  ClientSpan span;
  int rc = client_span(pid, start, end, &span);
  if (rc != 0) return rc;
  if (write && !span.writable) return EFAULT;  // rxe: ib_umem_get's FOLL_WRITE pin fails

  char path[96];
  std::snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", static_cast<int>(pid),
                static_cast<unsigned long>(span.first.start),
                static_cast<unsigned long>(span.first.end));
  const int fd = ::open(path, (span.writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? EFAULT : errno;  // the mapping went away meanwhile
  struct stat sb {};
  struct statfs fs {};
  if (::fstat(fd, &sb) != 0 || ::fstatfs(fd, &fs) != 0) rc = errno;
  // The same object the maps line named (not something mapped there since).
  if (rc == 0 && (!S_ISREG(sb.st_mode) || sb.st_dev != span.first.dev ||
                  static_cast<std::uint64_t>(sb.st_ino) != span.first.inode)) {
    rc = EINVAL;
  }
  // Huge pages map (and are replaced) whole.
  const std::uint64_t align =
      fs.f_type == HUGETLBFS_MAGIC ? static_cast<std::uint64_t>(sb.st_blksize) : page;
  const std::uint64_t pos = span.offset + (addr - start);
  const std::uint64_t mstart = pos / align * align;
  const std::uint64_t mend = (pos + length + align - 1) / align * align;
  if (rc == 0 && (align == 0 || mend > static_cast<std::uint64_t>(sb.st_size))) rc = EINVAL;
  const int seals = rc == 0 ? ::fcntl(fd, F_GET_SEALS) : -1;
  void* p = MAP_FAILED;
  if (rc == 0) {
    p = ::mmap(nullptr, mend - mstart, PROT_READ | (span.writable ? PROT_WRITE : 0), MAP_SHARED, fd,
               static_cast<off_t>(mstart));
    if (p == MAP_FAILED) rc = errno;
  }
  ::close(fd);
  if (rc != 0) return rc;
  int slot = -1;
  if (seals < 0 || (seals & F_SEAL_SHRINK) == 0) {
    slot = sigbus_guard::add(p, mend - mstart, align);
    if (slot < 0) {
      ::munmap(p, mend - mstart);
      return ENOMEM;
    }
  }
  out->reset();
  out->addr_ = p;
  out->len_ = mend - mstart;
  out->host_ = static_cast<std::uint8_t*>(p) + (pos - mstart);
  out->slot_ = slot;
  out->writable_ = span.writable;
  return 0;
}

}  // namespace uroce::daemon
