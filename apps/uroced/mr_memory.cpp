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
#include "datapath/base/page_touch.h"
#include "datapath/ctl/protocol.h"
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

namespace {

// The engine's first touch of each page would otherwise land on a message
// (docs/first-lap.md, "The first lap of a receive queue"). Only the pages the
// object holds: a client's sparse object is not filled in. Best effort: a
// range that cannot be checked is only touched later, as before.
void touch_mapping(void* p, std::uint64_t len, std::uint64_t page) {
  (void)base::touch_pages(p, len, page);
}

}  // namespace

int MrMemory::from_memfd(int fd, std::uint64_t map_len, std::uint64_t map_offset, MrMemory* out) {
  shm::SharedRegion region;
  const shm::ShmStatus st = shm::SharedRegion::map_fd(fd, map_len, &region);
  if (!st.ok()) return st.err == shm::ShmError::kMap && st.sys_errno == ENOMEM ? ENOMEM : EINVAL;
  out->reset();
  out->host_ = static_cast<std::uint8_t*>(region.data()) + map_offset;
  out->len_ = map_len;
  out->writable_ = true;
  out->region_ = static_cast<shm::SharedRegion&&>(region);
  touch_mapping(out->region_.data(), map_len, static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)));
  return 0;
}

namespace {

// One object the client maps contiguously under part of a registration:
// [start, end) of the client's addresses, the object's offset of `start`.
struct ClientRun {
  shm::MapsLine first;  // the run's first VMA; name is not kept (it points into the freed text)
  std::uintptr_t start = 0;
  std::uintptr_t end = 0;
  std::uint64_t offset = 0;
  bool writable = false;
};

// Splits the client's pages under [start, end) into runs of one shared
// object each, as its maps say. EFAULT: a hole or an unreadable page;
// EINVAL: a page of no shared object (private memory, which the provider
// moves first), or more than kMaxMrObjects runs.
int client_runs(pid_t pid, std::uintptr_t start, std::uintptr_t end, ClientRun* runs,
                unsigned* count) {
  char* text = nullptr;
  std::size_t len = 0;
  const int rd = shm::read_maps(pid, &text, &len, end);
  if (rd != 0) return rd == ENOENT ? ESRCH : rd;
  shm::SharedObjectSpan span;
  unsigned n = 0;
  bool readable = true;
  bool shared = true;  // every page on a shared object, in at most kMaxMrObjects runs
  const bool mapped = shm::for_each_line({text, len}, start, end, [&](const shm::MapsLine& m) {
    readable = readable && m.read;
    const std::uintptr_t from = m.start > start ? m.start : start;
    const std::uintptr_t to = m.end < end ? m.end : end;
    shm::SharedObjectSpan grown = span;
    grown.add(m);
    if (n > 0 && grown.ok()) {
      span = grown;
      runs[n - 1].end = to;
      runs[n - 1].writable = runs[n - 1].writable && m.write;
      return true;
    }
    span = shm::SharedObjectSpan{};
    span.add(m);
    // Walk on: a hole or an unreadable page further on is EFAULT first.
    if (!span.ok() || n == ctl::kMaxMrObjects) {
      shared = false;
      return true;
    }
    ClientRun& r = runs[n++];
    r.first = m;
    r.first.name = {};
    r.start = from;
    r.end = to;
    r.offset = span.offset_of(from);
    r.writable = m.write;
    return true;
  });
  std::free(text);
  if (!mapped || !readable) return EFAULT;
  if (!shared) return EINVAL;
  *count = n;
  return 0;
}

// The object under a run, opened through /proc/PID/map_files and checked
// to be the one the maps line named (not something mapped there since).
struct OpenedObject {
  int fd = -1;
  std::uint64_t size = 0;
  std::uint64_t align = 0;  // the object's page size: huge pages map (and are replaced) whole
  bool sealed = false;      // against shrinking: it cannot SIGBUS us
};

int open_object(pid_t pid, const ClientRun& run, std::uint64_t page, OpenedObject* out) {
  char path[96];
  std::snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", static_cast<int>(pid),
                static_cast<unsigned long>(run.first.start),
                static_cast<unsigned long>(run.first.end));
  const int fd = ::open(path, (run.writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? EFAULT : errno;  // the mapping went away meanwhile
  struct stat sb {};
  struct statfs fs {};
  int rc = 0;
  if (::fstat(fd, &sb) != 0 || ::fstatfs(fd, &fs) != 0) rc = errno;
  if (rc == 0 && (!S_ISREG(sb.st_mode) || sb.st_dev != run.first.dev ||
                  static_cast<std::uint64_t>(sb.st_ino) != run.first.inode)) {
    rc = EINVAL;
  }
  const int seals = rc == 0 ? ::fcntl(fd, F_GET_SEALS) : -1;
  if (rc != 0) {
    ::close(fd);
    return rc;
  }
  out->fd = fd;
  out->size = static_cast<std::uint64_t>(sb.st_size);
  out->align = fs.f_type == HUGETLBFS_MAGIC ? static_cast<std::uint64_t>(sb.st_blksize) : page;
  out->sealed = seals >= 0 && (seals & F_SEAL_SHRINK) != 0;
  return out->align == 0 ? (::close(fd), EINVAL) : 0;
}

int prot_of(bool writable) { return PROT_READ | (writable ? PROT_WRITE : 0); }

// A fresh mapping of a registration's pages, before MrMemory takes it.
struct Mapped {
  void* p = nullptr;
  std::uint64_t len = 0;
  std::uint64_t host_offset = 0;  // where the registration's first byte lies in it
  std::uint64_t align = 0;
  bool sealed = false;  // every object under it sealed against shrinking
  bool writable = false;
};

// One object: its pages under the range, aligned to its page size.
int map_one(pid_t pid, const ClientRun& run, std::uint64_t addr, std::uint64_t length,
            Mapped* out) {
  const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  OpenedObject obj;
  int rc = open_object(pid, run, page, &obj);
  if (rc != 0) return rc;
  const std::uint64_t pos = run.offset + (addr - run.start);
  const std::uint64_t mstart = pos / obj.align * obj.align;
  const std::uint64_t mend = (pos + length + obj.align - 1) / obj.align * obj.align;
  void* p = MAP_FAILED;
  if (mend > obj.size) {
    rc = EINVAL;
  } else {
    p = ::mmap(nullptr, mend - mstart, prot_of(run.writable), MAP_SHARED, obj.fd,
               static_cast<off_t>(mstart));
    if (p == MAP_FAILED) rc = errno;
  }
  ::close(obj.fd);
  if (rc != 0) return rc;
  *out = Mapped{p, mend - mstart, pos - mstart, obj.align, obj.sealed, run.writable};
  return 0;
}

// Several objects side by side (a buffer on pages the provider moved at
// different registrations): each run mapped at its place in one reserved
// range, so the engine still sees one contiguous buffer. Huge pages only
// alone (their alignment would not line up with the neighbours').
int map_runs(pid_t pid, const ClientRun* runs, unsigned n, std::uint64_t addr, Mapped* out) {
  const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  const std::uintptr_t start = runs[0].start;
  const std::uint64_t len = runs[n - 1].end - start;
  void* base = ::mmap(nullptr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) return errno;
  bool sealed = true;
  bool writable = true;
  int rc = 0;
  for (unsigned i = 0; i < n && rc == 0; ++i) {
    OpenedObject obj;
    rc = open_object(pid, runs[i], page, &obj);
    if (rc != 0) break;
    const std::uint64_t run_len = runs[i].end - runs[i].start;
    if (obj.align != page || runs[i].offset + run_len > obj.size) {
      rc = EINVAL;
    } else if (::mmap(static_cast<std::uint8_t*>(base) + (runs[i].start - start), run_len,
                      prot_of(runs[i].writable), MAP_SHARED | MAP_FIXED, obj.fd,
                      static_cast<off_t>(runs[i].offset)) == MAP_FAILED) {
      rc = errno;
    }
    ::close(obj.fd);
    sealed = sealed && obj.sealed;
    writable = writable && runs[i].writable;
  }
  if (rc != 0) {
    ::munmap(base, len);
    return rc;
  }
  *out = Mapped{base, len, addr - start, page, sealed, writable};
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
  ClientRun runs[ctl::kMaxMrObjects];
  unsigned n = 0;
  int rc = client_runs(pid, start, end, runs, &n);
  if (rc != 0) return rc;
  bool writable = true;
  for (unsigned i = 0; i < n; ++i) writable = writable && runs[i].writable;
  if (write && !writable) return EFAULT;  // rxe: ib_umem_get's FOLL_WRITE pin fails
  Mapped m;
  rc = n == 1 ? map_one(pid, runs[0], addr, length, &m) : map_runs(pid, runs, n, addr, &m);
  if (rc != 0) return rc;
  rc = out->adopt(m.p, m.len, m.host_offset, m.sealed, m.align, m.writable);
  // After adopt: a page the client truncates meanwhile is the guard's.
  if (rc == 0) touch_mapping(m.p, m.len, m.align);
  return rc;
}

// Takes the mapping [p, p + len) (guarded against SIGBUS unless every
// object under it is sealed against shrinking).
int MrMemory::adopt(void* p, std::uint64_t len, std::uint64_t host_offset, bool sealed,
                    std::uint64_t align, bool writable) {
  int slot = -1;
  if (!sealed) {
    slot = sigbus_guard::add(p, len, align);
    if (slot < 0) {
      ::munmap(p, len);
      return ENOMEM;
    }
  }
  reset();
  addr_ = p;
  len_ = len;
  host_ = static_cast<std::uint8_t*>(p) + host_offset;
  slot_ = slot;
  writable_ = writable;
  return 0;
}

}  // namespace uroce::daemon
