#include "verbs-provider/mr_remap.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
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
};

namespace {

// Consumes an integer in `base` from the front of `s`.
template <class T>
bool take_num(std::string_view* s, int base, T* out) {
  const char* b = s->data();
  const char* e = b + s->size();
  const auto r = std::from_chars(b, e, *out, base);
  if (r.ec != std::errc{} || r.ptr == b) return false;
  s->remove_prefix(static_cast<std::size_t>(r.ptr - b));
  return true;
}

bool take_char(std::string_view* s, char c) {
  if (s->empty() || s->front() != c) return false;
  s->remove_prefix(1);
  return true;
}

void skip_spaces(std::string_view* s) {
  while (!s->empty() && (s->front() == ' ' || s->front() == '\t')) s->remove_prefix(1);
}

// The whole of /proc/self/maps in a malloc'ed, NUL-terminated buffer.
int read_self_maps(char** out, std::size_t* len) {
  const int fd = ::open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  std::size_t cap = 64 * 1024;
  std::size_t n = 0;
  char* buf = static_cast<char*>(std::malloc(cap));
  if (buf == nullptr) {
    ::close(fd);
    return ENOMEM;
  }
  for (;;) {
    if (cap - n < 4096) {
      char* bigger = static_cast<char*>(std::realloc(buf, cap * 2));
      if (bigger == nullptr) {
        std::free(buf);
        ::close(fd);
        return ENOMEM;
      }
      buf = bigger;
      cap *= 2;
    }
    const ssize_t r = ::read(fd, buf + n, cap - n - 1);
    if (r < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      std::free(buf);
      ::close(fd);
      return err;
    }
    if (r == 0) break;
    n += static_cast<std::size_t>(r);
  }
  ::close(fd);
  buf[n] = '\0';
  *out = buf;
  *len = n;
  return 0;
}

bool is_our_memfd(const MapsLine& m) {
  constexpr std::string_view kPrefix = "/memfd:uroce-mr";
  return m.shared && m.name.substr(0, kPrefix.size()) == kPrefix;
}

bool is_stack(const MapsLine& m) { return m.name.substr(0, 6) == "[stack"; }

// Pages we may move onto a fresh memfd.
bool movable(const MapsLine& m) {
  if (!m.read || !m.write) return false;
  if (!m.shared) return !is_stack(m);
  return is_our_memfd(m);  // reused only when no live registration owns it
}

}  // namespace

bool parse_maps_line(std::string_view s, MapsLine* out) {
  MapsLine m;
  std::uint64_t start = 0, end = 0;
  if (!take_num(&s, 16, &start) || !take_char(&s, '-') || !take_num(&s, 16, &end)) return false;
  if (end <= start || !take_char(&s, ' ') || s.size() < 4) return false;
  m.start = static_cast<std::uintptr_t>(start);
  m.end = static_cast<std::uintptr_t>(end);
  m.read = s[0] == 'r';
  m.write = s[1] == 'w';
  m.exec = s[2] == 'x';
  if (s[3] != 's' && s[3] != 'p') return false;
  m.shared = s[3] == 's';
  s.remove_prefix(4);
  unsigned maj = 0, min = 0;
  if (!take_char(&s, ' ') || !take_num(&s, 16, &m.offset) || !take_char(&s, ' ') ||
      !take_num(&s, 16, &maj) || !take_char(&s, ':') || !take_num(&s, 16, &min) ||
      !take_char(&s, ' ') || !take_num(&s, 10, &m.inode)) {
    return false;
  }
  m.dev = makedev(maj, min);
  skip_spaces(&s);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  m.name = s;
  *out = m;
  return true;
}

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

int MemfdRegistry::acquire(const void* addr, std::size_t len, MrBacking* out) {
  if (len == 0 || addr == nullptr) return EINVAL;
  pthread_mutex_lock(&mu_);
  const int rc = acquire_locked(reinterpret_cast<std::uintptr_t>(addr), len, out);
  pthread_mutex_unlock(&mu_);
  return rc;
}

int MemfdRegistry::acquire_locked(std::uintptr_t addr, std::size_t len, MrBacking* out) {
  const std::uintptr_t page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  if (addr + len < addr || addr + len > UINTPTR_MAX - page) return EINVAL;
  const std::uintptr_t start = addr & ~(page - 1);
  const std::uintptr_t end = (addr + len + page - 1) & ~(page - 1);

  char* text = nullptr;
  std::size_t text_len = 0;
  const int rd = read_self_maps(&text, &text_len);
  if (rd != 0) return rd;

  // Walk the (address-ordered) lines that overlap [start, end) and classify
  // the pages: on a live memfd of ours, movable, or neither.
  std::uintptr_t cursor = start;
  bool exec = false;
  bool seen_movable = false;
  bool seen_other = false;
  bool live_after_movable = false;
  bool mixed_live = false;  // two memfds, or one at inconsistent offsets
  MemfdEntry* live = nullptr;
  std::uint64_t live_base = 0;  // file offset of address A is live_base + A
  std::uintptr_t live_end = 0;  // where the last live line ends
  std::uint64_t live_file_end = 0;
  std::string_view rest{text, text_len};
  while (!rest.empty() && cursor < end) {
    const std::size_t nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    MapsLine m;
    if (!parse_maps_line(line, &m) || m.end <= cursor) continue;
    if (m.start > cursor) break;  // a hole
    cursor = m.end < end ? m.end : end;
    exec = exec || m.exec;
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
  }
  std::free(text);
  if (cursor < end) return EFAULT;
  if (seen_other || mixed_live) return EINVAL;

  MemfdEntry* e = live;
  if (live == nullptr) {
    // Nothing registered there yet: a memfd of exactly these pages.
    const int rc = remap(start, end, exec, &e);
    if (rc != 0) return rc;
    live_base = -static_cast<std::uint64_t>(start);
  } else if (seen_movable) {
    // The range starts on a live memfd and runs past its end (the next heap
    // buffer after an earlier registration): grow that memfd over the rest,
    // which keeps every earlier registration where it is. Any other overlap
    // would need earlier registrations moved to a new memfd.
    if (live_after_movable || live_end >= end || live_file_end != live->size) return EINVAL;
    const int rc = extend(live, live_end, end, exec);
    if (rc != 0) return rc;
    ++live->refs;
  } else {
    ++live->refs;
  }
  const std::uint64_t off = live_base + addr;
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

}  // namespace

int MemfdRegistry::extend(MemfdEntry* e, std::uintptr_t from, std::uintptr_t to, bool exec) {
  const std::size_t add = to - from;
  if (::ftruncate(e->fd, static_cast<off_t>(e->size + add)) != 0) return errno;
  int rc = copy_pages_into(e->fd, from, add, e->size);
  if (rc == 0) {
    const int prot = PROT_READ | PROT_WRITE | (exec ? PROT_EXEC : 0);
    void* at = ::mmap(reinterpret_cast<void*>(from), add, prot, MAP_SHARED | MAP_FIXED, e->fd,
                      static_cast<off_t>(e->size));
    if (at == MAP_FAILED) rc = errno;
  }
  if (rc != 0) {
    // Nobody maps the new tail yet (the old pages are still in place unless
    // mmap replaced them, which it does only on success): give it back.
    ::ftruncate(e->fd, static_cast<off_t>(e->size));
    return rc;
  }
  e->size += add;
  return 0;
}

int MemfdRegistry::remap(std::uintptr_t start, std::uintptr_t end, bool exec, MemfdEntry** out) {
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
  const int copied = copy_pages_into(e->fd, start, size, 0);
  if (copied != 0) return fail(copied);
  // Never shrinking (a daemon mapping could SIGBUS), but free to grow: a
  // later registration may extend it over the pages that follow (extend()).
  if (::fcntl(e->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) != 0) {
    return fail(errno);
  }
  struct stat st {};
  if (::fstat(e->fd, &st) != 0) return fail(errno);
  const int prot = PROT_READ | PROT_WRITE | (exec ? PROT_EXEC : 0);
  void* at = ::mmap(reinterpret_cast<void*>(start), size, prot, MAP_SHARED | MAP_FIXED, e->fd, 0);
  if (at == MAP_FAILED) return fail(errno);
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
    ::close(e->fd);
    e->~MemfdEntry();
    std::free(e);
  }
  pthread_mutex_unlock(&mu_);
}

}  // namespace uroce::provider
