#include "datapath/port/prefault.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <fstream>
#include <iterator>
#include <string>

#include "datapath/base/page_touch.h"
#include "datapath/port/memif_unmap_guard.h"

namespace uroce::port {

namespace {

constexpr std::string_view kMemifPath = "/memfd:memif_region_";

bool parse_hex(std::string_view s, std::uintptr_t* v) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), *v, 16);
  return r.ec == std::errc{} && r.ptr == s.data() + s.size();
}

// One maps line: "begin-end perms offset dev inode   path".
bool memif_line(std::string_view line, MappedRange* out) {
  const std::size_t sp1 = line.find(' ');
  if (sp1 == std::string_view::npos) return false;
  const std::string_view range = line.substr(0, sp1);
  const std::size_t dash = range.find('-');
  if (dash == std::string_view::npos) return false;
  const std::string_view perms = line.substr(sp1 + 1, 4);
  if (perms != "rw-s") return false;
  const std::size_t path_at = line.find(kMemifPath);
  if (path_at == std::string_view::npos) return false;
  // The path is the last field: the region's number and an optional
  // " (deleted)" follow the prefix, nothing else.
  std::string_view rest = line.substr(path_at + kMemifPath.size());
  if (rest.ends_with(" (deleted)")) rest.remove_suffix(std::string_view(" (deleted)").size());
  if (rest.empty() || rest.find_first_not_of("0123456789") != std::string_view::npos) return false;
  MappedRange r;
  if (!parse_hex(range.substr(0, dash), &r.begin) || !parse_hex(range.substr(dash + 1), &r.end) ||
      r.end <= r.begin) {
    return false;
  }
  *out = r;
  return true;
}

}  // namespace

std::vector<MappedRange> memif_regions_in_maps(std::string_view maps) {
  std::vector<MappedRange> out;
  while (!maps.empty()) {
    const std::size_t nl = maps.find('\n');
    const std::string_view line = maps.substr(0, nl);
    MappedRange r;
    if (memif_line(line, &r)) out.push_back(r);
    if (nl == std::string_view::npos) break;
    maps.remove_prefix(nl + 1);
  }
  return out;
}

int prefault_range(const MappedRange& range) {
  // glibc headers older than the kernel may lack the name; the value is ABI.
#ifndef MADV_POPULATE_WRITE
  constexpr int MADV_POPULATE_WRITE = 23;
#endif
  // NOLINTNEXTLINE(performance-no-int-to-ptr): an address read from maps.
  void* addr = reinterpret_cast<void*>(range.begin);
  if (madvise(addr, range.bytes(), MADV_POPULATE_WRITE) != 0) return errno;
  // Every page exists now; a read of each maps it for good on a VM that
  // shadows page tables (base/page_touch.h).
  return base::touch_pages(addr, range.bytes(), static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)));
}

PrefaultResult prefault_memif_regions() {
  PrefaultResult res;
  // The maps are read and the regions touched with no unmap between.
  res.skipped = !run_between_unmaps([&res] {
    std::ifstream f("/proc/self/maps");
    if (!f) {
      res.error = ENOENT;
      return;
    }
    const std::string maps{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
    for (const MappedRange& r : memif_regions_in_maps(maps)) {
      if (const int e = prefault_range(r); e != 0) {
        if (res.error == 0) res.error = e;
        continue;
      }
      ++res.regions;
      res.bytes += r.bytes();
    }
  });
  return res;
}

}  // namespace uroce::port
