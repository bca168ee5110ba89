#include "datapath/shm/proc_maps.h"

#include <fcntl.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>

namespace uroce::shm {

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

namespace {

// Whether a complete line in [from, to) starts at or above `until`; *next is
// where the first incomplete line begins.
bool passed(const char* buf, std::size_t from, std::size_t to, std::uintptr_t until,
            std::size_t* next) {
  std::size_t line = from;
  for (std::size_t i = from; i < to; ++i) {
    if (buf[i] != '\n') continue;
    if (std::strtoull(buf + line, nullptr, 16) >= until) return true;
    line = i + 1;
  }
  *next = line;
  return false;
}

}  // namespace

int read_maps(pid_t pid, char** out, std::size_t* len, std::uintptr_t until) {
  char path[48];
  if (pid == 0) {
    std::snprintf(path, sizeof(path), "/proc/self/maps");
  } else {
    std::snprintf(path, sizeof(path), "/proc/%d/maps", static_cast<int>(pid));
  }
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  std::size_t cap = 64 * 1024;
  std::size_t n = 0;
  std::size_t line = 0;  // where the first line not yet looked at begins
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
    const std::size_t from = line;
    n += static_cast<std::size_t>(r);
    if (until != UINTPTR_MAX && passed(buf, from, n, until, &line)) break;
  }
  ::close(fd);
  buf[n] = '\0';
  *out = buf;
  *len = n;
  return 0;
}

void SharedObjectSpan::add(const MapsLine& m) {
  if (lines_++ == 0) {
    first_ = m;
  } else if (m.dev != first_.dev || m.inode != first_.inode ||
             m.offset - m.start != first_.offset - first_.start) {
    ok_ = false;
  }
  if (!is_shared_object(m)) ok_ = false;
  writable_ = writable_ && m.write;
  readable_ = readable_ && m.read;
}

bool is_sysv(const MapsLine& m) { return m.name.substr(0, 5) == "/SYSV"; }

bool is_shared_object(const MapsLine& m) { return m.shared && (m.inode != 0 || is_sysv(m)); }

}  // namespace uroce::shm
