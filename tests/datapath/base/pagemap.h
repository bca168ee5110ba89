// Tests' view of their own page tables: which pages of a range this process
// maps now (bit 63 of each /proc/self/pagemap entry, "present", readable
// without privilege).
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace uroce::test {

// Pages of [m, m + len) present in the page tables; SIZE_MAX if pagemap
// cannot be read. `m` page-aligned.
inline std::size_t mapped_pages(const void* m, std::size_t len) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return SIZE_MAX;
  std::vector<std::uint64_t> e(len / page);
  const off_t at = static_cast<off_t>(reinterpret_cast<std::uintptr_t>(m) / page * 8);
  const ssize_t n = pread(fd, e.data(), e.size() * 8, at);
  close(fd);
  if (n != static_cast<ssize_t>(e.size() * 8)) return SIZE_MAX;
  std::size_t present = 0;
  for (std::uint64_t v : e) present += (v >> 63) & 1;
  return present;
}

}  // namespace uroce::test
