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

#include "datapath/base/page_touch.h"

namespace uroce::provider {

// A memfd we moved a run of private pages onto, while some registration
// references it. `shadow` is a private, PROT_NONE mapping of the whole file
// made before its descriptor was closed: the only handle on the file the
// process keeps. Moving (parts of) it over the run (privatize()) makes those
// pages private again with no copy.
struct MemfdEntry {
  MemfdEntry* next = nullptr;
  dev_t dev = 0;
  std::uint64_t inode = 0;
  std::uint64_t size = 0;
  std::uint32_t refs = 0;
  std::uintptr_t addr = 0;    // where file offset 0 is mapped
  std::uintptr_t shadow = 0;  // the private mapping of offsets [0, size)
  int prot = 0;               // as registered
  bool stack = false;         // pages of a thread's stack: never idle
  std::uint64_t done = 0;     // privatize_all: offsets below are moved or unmapped
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

std::size_t MemfdRegistry::referenced() {
  pthread_mutex_lock(&mu_);
  std::size_t n = 0;
  for (MemfdEntry* e = head_; e != nullptr; e = e->next) n += e->refs != 0 ? 1 : 0;
  pthread_mutex_unlock(&mu_);
  return n;
}

MemfdEntry* MemfdRegistry::find(dev_t dev, std::uint64_t inode) const {
  for (MemfdEntry* e = head_; e != nullptr; e = e->next) {
    if (e->dev == dev && e->inode == inode) return e;
  }
  return nullptr;
}

int MemfdRegistry::acquire(const void* addr, std::size_t len, MrBacking* out, bool write,
                           bool dontfork) {
  if (len == 0 || addr == nullptr) return EINVAL;
  pthread_mutex_lock(&mu_);
  const int rc = acquire_locked(reinterpret_cast<std::uintptr_t>(addr), len, write, dontfork, out);
  pthread_mutex_unlock(&mu_);
  return rc;
}

int MemfdRegistry::acquire_locked(std::uintptr_t addr, std::size_t len, bool write, bool dontfork,
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
    if (m.shared && !shm::is_shared_object(m)) special = true;
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
  // keeps a descriptor. Pages already on one of our memfds take a reference
  // on it; an application's shared object needs none.
  MrBacking got;
  for (unsigned i = 0; i < n; ++i) {
    MemfdEntry* e = nullptr;
    int rc = 0;
    if (!runs[i].shared) {
      rc = remap(runs[i].start, runs[i].end, runs[i].prot, dontfork, &e);
    } else {
      e = find(runs[i].dev, runs[i].inode);
      if (e != nullptr && e->refs++ == 0) idle_bytes_ -= e->size;  // idle no more
    }
    if (e != nullptr) got.entries[got.count++] = e;
    if (rc != 0) {
      release_locked(got);
      return rc;
    }
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
// old pages: the process keeps its bytes at its addresses. The new mapping
// starts with no page mapped, so each page's next touch by the application
// would fault (a receive queue's buffers one by one, on their first lap:
// base/page_touch.h has the cost). They are mapped here instead, where an
// RNIC's pinning maps them too. The copy made every page of the file, so
// touch_pages maps them all; that it fails is harmless (the pages fault in
// as before).
int move_pages(int fd, std::uintptr_t start, std::size_t size, int prot) {
  const int rc = copy_pages_into(fd, start, size);
  if (rc != 0) return rc;
  void* at = ::mmap(reinterpret_cast<void*>(start), size, prot, MAP_SHARED | MAP_FIXED, fd, 0);
  if (at == MAP_FAILED) return errno;
  (void)base::touch_pages(at, size, base::base_page_bytes());
  return 0;
}

struct MoveJob {
  int fd;
  std::uintptr_t start;
  std::size_t size;
  int prot;
};

int run_job(const MoveJob& j) { return move_pages(j.fd, j.start, j.size, j.prot); }

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

int MemfdRegistry::remap(std::uintptr_t start, std::uintptr_t end, int prot, bool dontfork,
                         MemfdEntry** out) {
  *out = nullptr;
  const std::size_t size = end - start;
  // The entry first: pages we moved but could not track would stay shared
  // with every child forked later.
  void* mem = std::malloc(sizeof(MemfdEntry));
  if (mem == nullptr) return ENOMEM;
  const int fd = ::memfd_create(kMrMemfdName, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) {
    const int err = errno;
    std::free(mem);
    return err;
  }
  // Never shrinking: a daemon mapping could SIGBUS. Nobody grows it either
  // (a registration running past its end moves the next pages onto a memfd
  // of their own), but sealing against growth would gain nothing.
  int rc = 0;
  struct stat st {};
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0 ||
      ::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) != 0 || ::fstat(fd, &st) != 0) {
    rc = errno;
  }
  // The shadow, while there is a descriptor to map: PROT_NONE reserves no
  // memory, and nothing ever reads through it.
  void* shadow = MAP_FAILED;
  if (rc == 0) {
    shadow = ::mmap(nullptr, size, PROT_NONE, MAP_PRIVATE, fd, 0);
    if (shadow == MAP_FAILED) rc = errno;
  }
  bool stack = false;
  if (rc == 0) rc = run_job_safely(MoveJob{fd, start, size, prot}, &stack);
  // The mappings keep the file; the descriptor is no longer needed.
  ::close(fd);
  if (rc != 0) {
    if (shadow != MAP_FAILED) ::munmap(shadow, size);
    std::free(mem);
    return rc;
  }
  auto* e = new (mem) MemfdEntry;
  e->addr = start;
  e->prot = prot;
  e->dev = st.st_dev;
  e->inode = st.st_ino;
  e->size = size;
  e->shadow = reinterpret_cast<std::uintptr_t>(shadow);
  e->stack = stack;
  e->refs = 1;
  e->next = head_;
  head_ = e;
  *out = e;
  // ibv_fork_init: libibverbs marked the old pages MADV_DONTFORK before
  // calling us, and the new mapping does not inherit that. Marked again, a
  // child gets no mapping here, as under rxe.
  if (dontfork && ::madvise(reinterpret_cast<void*>(start), size, MADV_DONTFORK) != 0) {
    return errno;
  }
  return 0;
}

namespace {

// Moves the shadow's part for [from, to) over those pages, with `prot`: the
// pages become a private mapping of the file that shows its bytes until
// written. One mremap: no copy, and no moment at which a store of another
// thread could be lost (before it, the store went into the file the new
// mapping shows; after it, into the private page).
void privatize_part(const MemfdEntry& e, std::uintptr_t from, std::uintptr_t to, int prot) {
  void* part = reinterpret_cast<void*>(e.shadow + (from - e.addr));
  if (::mprotect(part, to - from, prot) != 0 ||
      ::mremap(part, to - from, to - from, MREMAP_MAYMOVE | MREMAP_FIXED,
               reinterpret_cast<void*>(from)) == MAP_FAILED) {
    ::munmap(part, to - from);
  }
}

// Unmaps what is left of e's shadow between offsets done and to: never a
// part already moved, whose addresses another thread's mmap may have taken.
void unmap_shadow(MemfdEntry& e, std::uint64_t to) {
  if (to > e.done) ::munmap(reinterpret_cast<void*>(e.shadow + e.done), to - e.done);
  if (to > e.done) e.done = to;
}

// Makes every entry of `list` (linked by next) private where `maps` (our
// /proc/self/maps) shows its file at its own offsets, and unmaps the rest
// of each shadow. One pass over the lines.
void privatize_all(MemfdEntry* list, std::string_view maps) {
  for (MemfdEntry* e = list; e != nullptr; e = e->next) e->done = 0;
  while (!maps.empty()) {
    const std::size_t nl = maps.find('\n');
    const std::string_view line = maps.substr(0, nl);
    maps.remove_prefix(nl == std::string_view::npos ? maps.size() : nl + 1);
    MapsLine m;
    if (!parse_maps_line(line, &m) || !m.shared || m.name.substr(0, 7) != "/memfd:") continue;
    for (MemfdEntry* e = list; e != nullptr; e = e->next) {
      if (e->dev != m.dev || e->inode != m.inode) continue;
      const std::uintptr_t from = m.start > e->addr ? m.start : e->addr;
      const std::uintptr_t to = m.end < e->addr + e->size ? m.end : e->addr + e->size;
      // Only where the file is still mapped at its own offsets, and in
      // address order (what the application moved elsewhere stays).
      if (from >= to || m.offset + (from - m.start) != from - e->addr || from - e->addr < e->done) {
        break;
      }
      unmap_shadow(*e, from - e->addr);
      privatize_part(*e, from, to, prot_of(m));
      e->done = to - e->addr;
      break;
    }
  }
  for (MemfdEntry* e = list; e != nullptr; e = e->next) unmap_shadow(*e, e->size);
}

// Constructed when the provider is loaded, destroyed at exit (atexit, from
// libc).
MemfdRegistry g_process_memfds;

// Its fork handlers (fork.h), installed with it; glibc removes them again
// if the provider is unloaded.
void prepare_fork() { g_process_memfds.before_fork(); }
void parent_after_fork() { g_process_memfds.after_fork_in_parent(); }
void child_after_fork() { g_process_memfds.after_fork_in_child(); }
struct ForkHandlers {
  ForkHandlers() { pthread_atfork(prepare_fork, parent_after_fork, child_after_fork); }
};
ForkHandlers g_fork_handlers;
}  // namespace

MemfdRegistry& process_memfds() { return g_process_memfds; }

void MemfdRegistry::release(const MrBacking& b) {
  if (b.count == 0) return;
  pthread_mutex_lock(&mu_);
  release_locked(b);
  pthread_mutex_unlock(&mu_);
}

void MemfdRegistry::release_locked(const MrBacking& b) {
  bool stack_gone = false;
  for (unsigned i = 0; i < b.count; ++i) {
    MemfdEntry* e = head_;
    while (e != nullptr && e != b.entries[i]) e = e->next;
    if (e == nullptr || --e->refs != 0) continue;
    // The last registration on these pages is gone (the daemon unmapped
    // them): idle, still shared, so that registering them again moves
    // nothing; the idle ones beyond the budget become private now. Stack
    // pages never idle: their frames come and go, private at once.
    idle_bytes_ += e->size;
    if (e->stack) stack_gone = true;
  }
  if (idle_bytes_ > idle_budget_ || stack_gone) trim_idle_locked();
}

void MemfdRegistry::trim_idle_locked() {
  // One maps read for all. Without it (ENOMEM) the idle entries stay,
  // shared, for the next release or fork to privatize.
  char* text = nullptr;
  std::size_t text_len = 0;
  if (shm::read_maps(0, &text, &text_len) != 0) return;
  // First the idle entries whose pages the application unmapped (freed
  // buffers: their shadows only hold memory) and those of a stack. `done`
  // marks the entries still mapped.
  for (MemfdEntry* e = head_; e != nullptr; e = e->next) e->done = 0;
  std::string_view maps{text, text_len};
  while (!maps.empty()) {
    const std::size_t nl = maps.find('\n');
    MapsLine m;
    if (parse_maps_line(maps.substr(0, nl), &m) && m.shared) {
      MemfdEntry* e = find(m.dev, m.inode);
      if (e != nullptr && m.start < e->addr + e->size && e->addr < m.end) e->done = 1;
    }
    maps.remove_prefix(nl == std::string_view::npos ? maps.size() : nl + 1);
  }
  MemfdEntry* evict = nullptr;
  auto take = [&](MemfdEntry** link) {
    MemfdEntry* e = *link;
    *link = e->next;
    idle_bytes_ -= e->size;
    e->next = evict;
    evict = e;
  };
  for (MemfdEntry** link = &head_; *link != nullptr;) {
    if ((*link)->refs == 0 && ((*link)->done == 0 || (*link)->stack)) {
      take(link);
    } else {
      link = &(*link)->next;
    }
  }
  // Then the oldest (nearest the tail) until the rest fits the budget.
  while (idle_bytes_ > idle_budget_) {
    MemfdEntry** oldest = nullptr;
    for (MemfdEntry** link = &head_; *link != nullptr; link = &(*link)->next) {
      if ((*link)->refs == 0) oldest = link;
    }
    take(oldest);
  }
  privatize_all(evict, {text, text_len});
  std::free(text);
  while (evict != nullptr) {
    MemfdEntry* e = evict;
    evict = e->next;
    e->~MemfdEntry();
    std::free(e);
  }
}

void MemfdRegistry::before_fork() { pthread_mutex_lock(&mu_); }

void MemfdRegistry::after_fork_in_parent() { pthread_mutex_unlock(&mu_); }

namespace {

// /proc/self/maps, whole, into an anonymous mapping (*buf, *cap bytes):
// no malloc, for the child of a multithreaded fork. 0 or errno.
int read_maps_no_malloc(char** buf, std::size_t* len, std::size_t* cap) {
  *cap = std::size_t{1} << 20;
  *len = 0;
  void* p = ::mmap(nullptr, *cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return errno;
  *buf = static_cast<char*>(p);
  const int fd = ::open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  int rc = fd < 0 ? errno : 0;
  while (rc == 0) {
    if (*len == *cap) {
      p = ::mremap(*buf, *cap, 2 * *cap, MREMAP_MAYMOVE);
      if (p == MAP_FAILED) {
        rc = errno;
        break;
      }
      *buf = static_cast<char*>(p);
      *cap *= 2;
    }
    const ssize_t n = ::read(fd, *buf + *len, *cap - *len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) rc = errno;
    if (n <= 0) break;
    *len += static_cast<std::size_t>(n);
  }
  if (fd >= 0) ::close(fd);
  if (rc != 0) ::munmap(*buf, *cap);
  return rc;
}

}  // namespace

void MemfdRegistry::after_fork_in_child() {
  // Only this thread exists, and before_fork() left mu_ held by it: no
  // registration is half done. Only system calls from here on.
  char* text = nullptr;
  std::size_t len = 0;
  std::size_t cap = 0;
  if (head_ != nullptr) {
    if (read_maps_no_malloc(&text, &len, &cap) == 0) {
      privatize_all(head_, {text, len});
      ::munmap(text, cap);
    } else {
      // No maps to check against (a child at its descriptor limit): every
      // range is still where its registration put it, except what the
      // application unmapped while registered, which this would replace
      // in the child only. The parent's memory comes first.
      for (MemfdEntry* e = head_; e != nullptr; e = e->next) {
        e->done = 0;
        privatize_part(*e, e->addr, e->addr + e->size, e->prot);
      }
    }
  }
  // The entries are the parent's registrations: the child holds none. Its
  // copies of them are dropped, not freed (no free() in a fork handler).
  head_ = nullptr;
  idle_bytes_ = 0;
  pthread_mutex_init(&mu_, nullptr);
}

}  // namespace uroce::provider
