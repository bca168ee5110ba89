#include "verbs-provider/mr_remap.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

namespace uroce::provider {

struct MemfdEntry {
  MemfdEntry* next = nullptr;
  int fd = -1;
  dev_t dev = 0;
  std::uint64_t inode = 0;
  std::uint64_t size = 0;
  std::uint32_t refs = 0;
  // Pages of a thread's stack: made private again when the last
  // registration goes (a child forked later must not share the frames).
  bool stack = false;
  std::uintptr_t addr = 0;  // where file offset 0 is mapped
  int prot = 0;
};

namespace {

bool is_our_memfd(const MapsLine& m) {
  constexpr std::string_view kPrefix = "/memfd:uroce-mr";
  return m.shared && m.name.substr(0, kPrefix.size()) == kPrefix;
}

bool is_stack(const MapsLine& m) { return m.name.substr(0, 6) == "[stack"; }

// Pages we may move onto a fresh memfd: private and readable (a copy keeps
// what the process sees), not a kernel special mapping ([vdso], [vvar],
// [vsyscall]; named anonymous memory, "[anon:...]", is ordinary); or one of
// our own memfds that no live registration owns.
bool movable(const MapsLine& m) {
  if (!m.read) return false;
  if (m.shared) return is_our_memfd(m);
  return m.name.empty() || m.name.front() != '[' || m.name == "[heap]" || is_stack(m) ||
         m.name.substr(0, 6) == "[anon:";
}

}  // namespace

MemfdRegistry::~MemfdRegistry() {
  while (head_ != nullptr) {
    MemfdEntry* e = head_;
    head_ = e->next;
    ::close(e->fd);
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
  const int rd = shm::read_maps(0, &text, &text_len);
  if (rd != 0) return rd;

  // Classify the (address-ordered) lines over [start, end): on a live memfd
  // of ours, movable, or neither; and whether they map one shared object.
  bool exec = false;
  bool readable = true;
  bool writable = true;
  bool read_only = true;  // no writable page at all
  bool seen_movable = false;
  bool seen_other = false;
  bool live_after_movable = false;
  bool mixed_live = false;  // two memfds, or one at inconsistent offsets
  MemfdEntry* live = nullptr;
  std::uint64_t live_base = 0;  // file offset of address A is live_base + A
  std::uintptr_t live_end = 0;  // where the last live line ends
  std::uint64_t live_file_end = 0;
  shm::SharedObjectSpan object;
  const bool mapped = shm::for_each_line({text, text_len}, start, end, [&](const MapsLine& m) {
    exec = exec || m.exec;
    readable = readable && m.read;
    writable = writable && m.write;
    read_only = read_only && !m.write;
    object.add(m);
    MemfdEntry* e = m.shared ? find(m.dev, m.inode) : nullptr;
    if (e != nullptr) {
      const std::uint64_t base = m.offset - m.start;
      if (live != nullptr && (live != e || live_base != base)) mixed_live = true;
      if (seen_movable) live_after_movable = true;
      live = e;
      live_base = base;
      live_end = m.end;
      live_file_end = m.offset + (m.end - m.start);
    } else if (movable(m)) {
      seen_movable = true;
    } else {
      seen_other = true;
    }
    return true;
  });
  std::free(text);
  if (!mapped || !readable) return EFAULT;
  if (write && !writable) return EFAULT;  // rxe: ib_umem_get's FOLL_WRITE pin fails
  if (seen_other) {
    // Not movable: served zero-copy only when it is one object the process
    // shares itself, which the daemon then maps too.
    if (live != nullptr || seen_movable || !object.ok()) return EINVAL;
    *out = MrBacking{};
    out->source = MrSource::kProcessMapping;
    return 0;
  }
  if (mixed_live) return EINVAL;
  if (!writable && !read_only) return EINVAL;  // one protection for the whole memfd mapping
  const int prot = PROT_READ | (writable ? PROT_WRITE : 0) | (exec ? PROT_EXEC : 0);

  MemfdEntry* e = live;
  if (live == nullptr) {
    // Nothing registered there yet: a memfd of exactly these pages.
    const int rc = remap(start, end, prot, &e);
    if (rc != 0) return rc;
    live_base = -static_cast<std::uint64_t>(start);
  } else if (seen_movable) {
    // The range starts on a live memfd and runs past its end (the next heap
    // buffer after an earlier registration): grow that memfd over the rest,
    // which keeps every earlier registration where it is. Any other overlap
    // would need earlier registrations moved to a new memfd.
    if (live_after_movable || live_end >= end || live_file_end != live->size || !writable) {
      return EINVAL;
    }
    const int rc = extend(live, live_end, end, prot);
    if (rc != 0) return rc;
    ++live->refs;
  } else {
    ++live->refs;
  }
  const std::uint64_t off = live_base + addr;
  *out = MrBacking{};
  out->entry = e;
  out->fd = e->fd;
  out->map_len = e->size;
  out->map_offset = off;
  return 0;
}

namespace {

// Copies [start, start + size) of our own address space into `fd` at
// `offset`. Whole pages: they hold bytes outside the registration too
// (neighbouring heap chunks), which must move with them. The raw system
// call, not pwrite(): sanitizers check pwrite's buffer against the objects
// they know and would flag those neighbours.
int copy_pages_into(int fd, std::uintptr_t start, std::size_t size, std::uint64_t offset) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::syscall(SYS_pwrite64, fd, reinterpret_cast<const void*>(start + done),
                                size - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

// Copies [start, start + size) into `fd` at `offset`, then maps the file
// there over the old pages: the process keeps its bytes at its addresses.
int move_pages(int fd, std::uintptr_t start, std::size_t size, std::uint64_t offset, int prot) {
  const int rc = copy_pages_into(fd, start, size, offset);
  if (rc != 0) return rc;
  void* at = ::mmap(reinterpret_cast<void*>(start), size, prot, MAP_SHARED | MAP_FIXED, fd,
                    static_cast<off_t>(offset));
  return at == MAP_FAILED ? errno : 0;
}

// Replaces the memfd's pages at [start, start + size) (file offset 0 there)
// with private anonymous pages holding the same bytes, read from the file
// (the raw call again: no sanitizer check of the stack's redzones).
int make_private(int fd, std::uintptr_t start, std::size_t size, int prot) {
  void* tmp = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (tmp == MAP_FAILED) return errno;
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::syscall(SYS_pread64, fd, static_cast<char*>(tmp) + done, size - done,
                                static_cast<off_t>(done));
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
  std::uint64_t offset;
  int prot;
};

int run_job(const MoveJob& j) {
  return j.back ? make_private(j.fd, j.start, j.size, j.prot)
                : move_pages(j.fd, j.start, j.size, j.offset, j.prot);
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

int move_pages_safely(int fd, std::uintptr_t start, std::size_t size, std::uint64_t offset,
                      int prot, bool* stack) {
  return run_job_safely(MoveJob{false, fd, start, size, offset, prot}, stack);
}

}  // namespace

int MemfdRegistry::extend(MemfdEntry* e, std::uintptr_t from, std::uintptr_t to, int prot) {
  const std::size_t add = to - from;
  if (::ftruncate(e->fd, static_cast<off_t>(e->size + add)) != 0) return errno;
  bool stack = false;
  const int rc = move_pages_safely(e->fd, from, add, e->size, prot, &stack);
  if (rc != 0) {
    // Nobody maps the new tail yet (the old pages are still in place unless
    // mmap replaced them, which it does only on success): give it back.
    ::ftruncate(e->fd, static_cast<off_t>(e->size));
    return rc;
  }
  e->size += add;
  e->stack = e->stack || stack;
  return 0;
}

int MemfdRegistry::remap(std::uintptr_t start, std::uintptr_t end, int prot, MemfdEntry** out) {
  const std::size_t size = end - start;
  void* mem = std::malloc(sizeof(MemfdEntry));
  if (mem == nullptr) return ENOMEM;
  auto* e = new (mem) MemfdEntry;
  auto fail = [&](int err) {
    if (e->fd >= 0) ::close(e->fd);
    e->~MemfdEntry();
    std::free(mem);
    return err;
  };
  e->fd = ::memfd_create(kMrMemfdName, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (e->fd < 0) return fail(errno);
  if (::ftruncate(e->fd, static_cast<off_t>(size)) != 0) return fail(errno);
  // Never shrinking (a daemon mapping could SIGBUS), but free to grow: a
  // later registration may extend it over the pages that follow (extend()).
  if (::fcntl(e->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) != 0) {
    return fail(errno);
  }
  struct stat st {};
  if (::fstat(e->fd, &st) != 0) return fail(errno);
  const int moved = move_pages_safely(e->fd, start, size, 0, prot, &e->stack);
  if (moved != 0) return fail(moved);
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
  if (b.entry == nullptr) return;
  pthread_mutex_lock(&mu_);
  MemfdEntry** link = &head_;
  while (*link != nullptr && *link != b.entry) link = &(*link)->next;
  MemfdEntry* e = *link;
  if (e != nullptr && --e->refs == 0) {
    *link = e->next;
    if (e->stack) {
      // Private again, below those pages: frames of ours live there. Only
      // by the thread whose stack it is (another thread's frames there may
      // be running); otherwise, or on failure, the pages stay shared, as
      // heap pages always do.
      bool own = false;
      const MoveJob job{true, e->fd, e->addr, e->size, 0, e->prot};
      std::uintptr_t lo = 0, hi = 0;
      if (own_stack(&lo, &hi) && e->addr >= lo && e->addr + e->size <= hi) {
        (void)run_job_safely(job, &own);
      }
    }
    ::close(e->fd);
    e->~MemfdEntry();
    std::free(e);
  }
  pthread_mutex_unlock(&mu_);
}

}  // namespace uroce::provider
