#include "verbs-provider/mr_remap.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

namespace uroce::provider {

// A memfd we moved pages of a thread's stack onto: made private again when
// the last registration on it goes (a child forked later must not share the
// frames). Other memfds need nothing back and are not tracked.
struct MemfdEntry {
  MemfdEntry* next = nullptr;
  dev_t dev = 0;
  std::uint64_t inode = 0;
  std::uint64_t size = 0;
  std::uint32_t refs = 0;
  std::uintptr_t addr = 0;  // where file offset 0 is mapped
  int prot = 0;
};

namespace {

bool is_stack(const MapsLine& m) { return m.name.substr(0, 6) == "[stack"; }

// Private pages we may move onto a fresh memfd: readable (a copy keeps
// what the process sees) and not a kernel special mapping ([vdso], [vvar],
// [vsyscall]; named anonymous memory, "[anon:...]", is ordinary).
bool movable(const MapsLine& m) {
  if (!m.read || m.shared) return false;
  return m.name.empty() || m.name.front() != '[' || m.name == "[heap]" || is_stack(m) ||
         m.name.substr(0, 6) == "[anon:";
}

int prot_of(const MapsLine& m) {
  return (m.read ? PROT_READ : 0) | (m.write ? PROT_WRITE : 0) | (m.exec ? PROT_EXEC : 0);
}

// A stretch of the registered range: private pages to move onto one memfd
// (one protection), or one shared object mapped contiguously (ours or the
// application's), which the daemon maps as it is.
struct Run {
  std::uintptr_t start = 0;
  std::uintptr_t end = 0;
  bool shared = false;
  int prot = 0;             // private runs
  dev_t dev = 0;            // shared runs
  std::uint64_t inode = 0;  // shared runs
  std::uint64_t base = 0;   // shared runs: file offset of address A is base + A
};

// Whether line m continues run r.
bool continues(const Run& r, const MapsLine& m) {
  if (r.shared)
    return m.shared && m.dev == r.dev && m.inode == r.inode && m.offset - m.start == r.base;
  return !m.shared && prot_of(m) == r.prot;
}

}  // namespace

MemfdRegistry::~MemfdRegistry() {
  while (head_ != nullptr) {
    MemfdEntry* e = head_;
    head_ = e->next;
    e->~MemfdEntry();
    std::free(e);
  }
  pthread_mutex_destroy(&mu_);
}

std::size_t MemfdRegistry::entries() {
  pthread_mutex_lock(&mu_);
  std::size_t n = 0;
  for (MemfdEntry* e = head_; e != nullptr; e = e->next) ++n;
  pthread_mutex_unlock(&mu_);
  return n;
}

MemfdEntry* MemfdRegistry::find(dev_t dev, std::uint64_t inode) const {
  for (MemfdEntry* e = head_; e != nullptr; e = e->next) {
    if (e->dev == dev && e->inode == inode) return e;
  }
  return nullptr;
}

int MemfdRegistry::acquire(const void* addr, std::size_t len, MrBacking* out, bool write) {
  if (len == 0 || addr == nullptr) return EINVAL;
  pthread_mutex_lock(&mu_);
  const int rc = acquire_locked(reinterpret_cast<std::uintptr_t>(addr), len, write, out);
  pthread_mutex_unlock(&mu_);
  return rc;
}

int MemfdRegistry::acquire_locked(std::uintptr_t addr, std::size_t len, bool write,
                                  MrBacking* out) {
  const std::uintptr_t page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  if (addr + len < addr || addr + len > UINTPTR_MAX - page) return EINVAL;
  const std::uintptr_t start = addr & ~(page - 1);
  const std::uintptr_t end = (addr + len + page - 1) & ~(page - 1);

  char* text = nullptr;
  std::size_t text_len = 0;
  const int rd = shm::read_maps(0, &text, &text_len, end);
  if (rd != 0) return rd;

  // Split the (address-ordered) lines over [start, end) into runs: private
  // pages of one protection, or one shared object at consistent offsets.
  Run runs[kMaxMrRuns];
  unsigned n = 0;
  bool readable = true;
  bool writable = true;
  bool special = false;
  const bool mapped = shm::for_each_line({text, text_len}, start, end, [&](const MapsLine& m) {
    readable = readable && m.read;
    writable = writable && m.write;
    if (!m.shared && !movable(m)) special = special || m.read;
    if (m.shared && m.inode == 0) special = true;
    const std::uintptr_t to = m.end < end ? m.end : end;
    if (n > 0 && continues(runs[n - 1], m)) {
      runs[n - 1].end = to;
      return true;
    }
    if (n == kMaxMrRuns) {
      special = true;
      return false;
    }
    Run& r = runs[n++];
    r.start = m.start > start ? m.start : start;
    r.end = to;
    r.shared = m.shared;
    r.prot = prot_of(m);
    r.dev = m.dev;
    r.inode = m.inode;
    r.base = m.offset - m.start;
    return true;
  });
  std::free(text);
  if (special && readable) return EINVAL;  // [vdso], too many pieces
  if (!mapped || !readable) return EFAULT;
  if (write && !writable) return EFAULT;  // rxe: ib_umem_get's FOLL_WRITE pin fails

  // Private runs move onto memfds of their own, closed once mapped: the
  // daemon maps every run through /proc/PID/map_files, so neither side
  // keeps a descriptor. Pages of a live stack memfd take a reference.
  MrBacking got;
  for (unsigned i = 0; i < n; ++i) {
    MemfdEntry* e = nullptr;
    if (!runs[i].shared) {
      const int rc = remap(runs[i].start, runs[i].end, runs[i].prot, &e);
      if (rc != 0) {
        release_locked(got);
        return rc;
      }
    } else {
      e = find(runs[i].dev, runs[i].inode);
      if (e != nullptr) ++e->refs;
    }
    if (e != nullptr) got.entries[got.count++] = e;
  }
  *out = got;
  return 0;
}

namespace {

// Copies [start, start + size) of our own address space into `fd` from
// offset 0. Whole pages: they hold bytes outside the registration too
// (neighbouring heap chunks), which must move with them. The raw system
// call, not pwrite(): sanitizers check pwrite's buffer against the objects
// they know and would flag those neighbours.
int copy_pages_into(int fd, std::uintptr_t start, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::syscall(SYS_pwrite64, fd, reinterpret_cast<const void*>(start + done),
                                size - done, static_cast<off_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

// Copies [start, start + size) into `fd`, then maps the file there over the
// old pages: the process keeps its bytes at its addresses.
int move_pages(int fd, std::uintptr_t start, std::size_t size, int prot) {
  const int rc = copy_pages_into(fd, start, size);
  if (rc != 0) return rc;
  void* at = ::mmap(reinterpret_cast<void*>(start), size, prot, MAP_SHARED | MAP_FIXED, fd, 0);
  return at == MAP_FAILED ? errno : 0;
}

// Replaces the shared pages at [start, start + size) with private anonymous
// pages holding the same bytes. Read through process_vm_readv on ourselves,
// the raw call: no descriptor is left to read the memfd by, and the
// sanitizers would check a memcpy from the stack against its redzones.
int make_private(std::uintptr_t start, std::size_t size, int prot) {
  void* tmp = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (tmp == MAP_FAILED) return errno;
  std::size_t done = 0;
  while (done < size) {
    iovec local{static_cast<char*>(tmp) + done, size - done};
    iovec remote{reinterpret_cast<void*>(start + done), size - done};
    const long n = ::syscall(SYS_process_vm_readv, ::getpid(), &local, 1UL, &remote, 1UL, 0UL);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      ::munmap(tmp, size);
      return n < 0 ? errno : EIO;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::mprotect(tmp, size, prot) != 0 || ::mremap(tmp, size, size, MREMAP_MAYMOVE | MREMAP_FIXED,
                                                   reinterpret_cast<void*>(start)) == MAP_FAILED) {
    const int err = errno;
    ::munmap(tmp, size);
    return err;
  }
  return 0;
}

struct MoveJob {
  bool back;  // make_private instead of move_pages
  int fd;
  std::uintptr_t start;
  std::size_t size;
  int prot;
};

int run_job(const MoveJob& j) {
  return j.back ? make_private(j.start, j.size, j.prot) : move_pages(j.fd, j.start, j.size, j.prot);
}

// Runs the job `drop` bytes further down the stack: every frame that runs
// during the copy and the remap (this one's callees, a signal handler's)
// then lies below the pages being moved, and the frames above them are
// suspended, so the copy sees their final bytes. On the main thread the
// touch at the bottom also grows the stack mapping down to there, so a
// growable part stays below the moved pages.
[[gnu::noinline]] int run_job_below(std::size_t drop, const MoveJob& j) {
  auto* pad = static_cast<volatile char*>(__builtin_alloca(drop));
  pad[0] = 0;
  const int rc = run_job(j);
  asm volatile("" ::"r"(pad) : "memory");  // the block lives until here
  return rc;
}

// The calling thread's stack [lo, hi), or false. For the main thread, glibc
// derives the bottom from the mapping below the stack, which our own remap
// of stack pages changes: there the bottom is the top minus RLIMIT_STACK.
bool own_stack(std::uintptr_t* lo, std::uintptr_t* hi) {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return false;
  void* base = nullptr;
  std::size_t size = 0;
  const bool got = pthread_attr_getstack(&attr, &base, &size) == 0;
  pthread_attr_destroy(&attr);
  if (!got) return false;
  *lo = reinterpret_cast<std::uintptr_t>(base);
  *hi = *lo + size;
  if (::getpid() == static_cast<pid_t>(::syscall(SYS_gettid))) {
    constexpr rlim_t kMaxMain = rlim_t{1} << 30;
    rlimit rl{};
    const rlim_t limit =
        ::getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur < kMaxMain ? rl.rlim_cur : kMaxMain;
    *lo = *hi > limit ? *hi - limit : 0;
  }
  return true;
}

// Runs the job; when [start, start + size) overlaps the calling thread's
// own stack (*stack is set then), below those pages (run_job_below), or
// ENOMEM when the stack has no room for that.
int run_job_safely(const MoveJob& j, bool* stack) {
  std::uintptr_t lo = 0, hi = 0;
  *stack = own_stack(&lo, &hi) && j.start < hi && lo < j.start + j.size;
  if (!*stack) return run_job(j);
  constexpr std::size_t kMargin = 64 * 1024;  // our callees' frames, a signal handler's
  const auto sp = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  const std::size_t drop = (sp > j.start ? sp - j.start : 0) + kMargin;
  if (sp < lo + drop + kMargin) return ENOMEM;
  return run_job_below(drop, j);
}

}  // namespace

int MemfdRegistry::remap(std::uintptr_t start, std::uintptr_t end, int prot, MemfdEntry** out) {
  const std::size_t size = end - start;
  const int fd = ::memfd_create(kMrMemfdName, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return errno;
  // Never shrinking: a daemon mapping could SIGBUS. Nobody grows it either
  // (a registration running past its end moves the next pages onto a memfd
  // of their own), but sealing against growth would gain nothing.
  int rc = 0;
  struct stat st {};
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0 ||
      ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) != 0 || ::fstat(fd, &st) != 0) {
    rc = errno;
  }
  bool stack = false;
  if (rc == 0) rc = run_job_safely(MoveJob{false, fd, start, size, prot}, &stack);
  // The mapping keeps the file; the descriptor is no longer needed.
  ::close(fd);
  *out = nullptr;
  if (rc != 0 || !stack) return rc;
  void* mem = std::malloc(sizeof(MemfdEntry));
  if (mem == nullptr) return 0;  // untracked: stays shared, as heap pages do
  auto* e = new (mem) MemfdEntry;
  e->addr = start;
  e->prot = prot;
  e->dev = st.st_dev;
  e->inode = st.st_ino;
  e->size = size;
  e->refs = 1;
  e->next = head_;
  head_ = e;
  *out = e;
  return 0;
}

namespace {
// Constructed when the provider is loaded, destroyed at exit (atexit, from
// libc): it closes the fds of registrations the application never undid.
MemfdRegistry g_process_memfds;
}  // namespace

MemfdRegistry& process_memfds() { return g_process_memfds; }

void MemfdRegistry::release(const MrBacking& b) {
  if (b.count == 0) return;
  pthread_mutex_lock(&mu_);
  release_locked(b);
  pthread_mutex_unlock(&mu_);
}

void MemfdRegistry::release_locked(const MrBacking& b) {
  for (unsigned i = 0; i < b.count; ++i) {
    MemfdEntry** link = &head_;
    while (*link != nullptr && *link != b.entries[i]) link = &(*link)->next;
    MemfdEntry* e = *link;
    if (e == nullptr || --e->refs != 0) continue;
    *link = e->next;
    // Private again, below those pages: frames of ours live there. Only by
    // the thread whose stack it is (another thread's frames there may be
    // running); otherwise, or on failure, the pages stay shared, as heap
    // pages always do.
    bool own = false;
    std::uintptr_t lo = 0, hi = 0;
    if (own_stack(&lo, &hi) && e->addr >= lo && e->addr + e->size <= hi) {
      (void)run_job_safely(MoveJob{true, -1, e->addr, e->size, e->prot}, &own);
    }
    e->~MemfdEntry();
    std::free(e);
  }
}

}  // namespace uroce::provider
