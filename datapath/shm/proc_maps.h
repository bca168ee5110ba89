// /proc/PID/maps, read by both ends of a memory registration: the provider
// to choose how a buffer reaches the daemon (verbs-provider/mr_remap.h), the
// daemon to check what a client says about its own memory before it maps it
// (apps/uroced/mr_memory.h). One parser and one range walk serve both.
//
// Control path only; no exceptions, no libstdc++ allocation (the provider
// uses this too): the file is read into a malloc'ed buffer.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace uroce::shm {

// One line of /proc/PID/maps.
struct MapsLine {
  std::uintptr_t start = 0;
  std::uintptr_t end = 0;
  bool read = false;
  bool write = false;
  bool exec = false;
  bool shared = false;
  std::uint64_t offset = 0;
  dev_t dev = 0;
  std::uint64_t inode = 0;
  std::string_view name;  // path or [heap]/[stack]/..., empty when anonymous
};

// Parses one line (without or with its newline); false when malformed.
bool parse_maps_line(std::string_view line, MapsLine* out);

// /proc/<pid>/maps (pid 0: this process) in a malloc'ed, NUL-terminated
// buffer the caller frees, up to the first line that starts at or above
// `until` (the whole file by default). The kernel writes the text as it is
// read, so a registration that needs only the lines below its end stops
// there instead of having thousands of later mappings formatted. 0 or errno.
int read_maps(pid_t pid, char** out, std::size_t* len, std::uintptr_t until = UINTPTR_MAX);

// Calls f(const MapsLine&) for every line overlapping [start, end), in
// address order. Returns false when some page of the range is not mapped
// (a hole) or f returned false.
template <class F>
bool for_each_line(std::string_view text, std::uintptr_t start, std::uintptr_t end, F&& f) {
  std::uintptr_t cursor = start;
  while (!text.empty() && cursor < end) {
    const std::size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    MapsLine m;
    if (!parse_maps_line(line, &m) || m.end <= cursor) continue;
    if (m.start > cursor) return false;  // a hole
    cursor = m.end < end ? m.end : end;
    if (!f(m)) return false;
  }
  return cursor >= end;
}

// Whether a run of maps lines maps one shared object (a file, a memfd,
// anonymous shared memory, a SysV segment) contiguously: every line shared,
// one device and inode, and file offset = address + base throughout.
class SharedObjectSpan {
 public:
  void add(const MapsLine& m);
  // True when at least one line was added and all of them qualify.
  bool ok() const { return lines_ > 0 && ok_; }
  // The first line (its VMA names the object in /proc/PID/map_files).
  const MapsLine& first() const { return first_; }
  // The object's offset of address `a` (any address of the span).
  std::uint64_t offset_of(std::uintptr_t a) const { return a - first_.start + first_.offset; }
  bool all_writable() const { return writable_; }
  bool all_readable() const { return readable_; }

 private:
  MapsLine first_;
  unsigned lines_ = 0;
  bool ok_ = true;
  bool writable_ = true;
  bool readable_ = true;
};

// SysV shared memory shows as "/SYSV<key in hex> (deleted)", inode = shmid.
bool is_sysv(const MapsLine& m);
// A line of a shared object: shared, and an inode that names it. SysV
// segment 0 (often the first one after boot) has inode 0 like anonymous
// private memory, and is a shared object all the same.
bool is_shared_object(const MapsLine& m);

}  // namespace uroce::shm
