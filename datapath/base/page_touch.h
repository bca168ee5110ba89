// Mapping memory in before the data path first touches it: populate the
// page tables of the pages a range's object already holds, then read one
// byte of each of them.
//
// Why both (docs/tails.md, "The first lap of a receive queue"): a page's
// first touch through a mapping costs a fault, and under a hypervisor that
// shadows the guest's page tables also a hidden exit, even when the guest's
// page tables are already populated. On the project's VM (2026-12-01):
// first write to a 4 KiB page of a fresh shared memfd mapping 15.9 us;
// after MADV_POPULATE_WRITE 7.7 us; after one read of the page 0.03 us.
// A receive queue of 4,095 buffers of 8 KiB (UCX's default) then costs
// 4-15 us per message for its first lap round the queue. Touching at setup
// moves that cost to registration, where an RNIC's pinning pays it too.
//
// Only pages the object holds (mincore: resident in its page cache) are
// populated and read: a hole stays a hole. A client that registers a
// sparse 64 GiB memfd must not make the daemon allocate it (test
// verbs_quota); populating a shared mapping's hole, by MADV_POPULATE_* or
// by a read, would. A page the object gets later faults on its first touch
// as before.
//
// The reads are ordinary loads: another thread may write the bytes
// meanwhile (the application owns them), and nothing is written. A page
// truncated between the check and the read raises SIGBUS: callers whose
// object can shrink guard the range first (apps/uroced/sigbus_guard.h).
// Control path only: cost grows with the range.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace uroce::base {

// Populates and reads, one byte per `page` bytes, the pages of [addr, addr
// + len) that the mapped object holds now. `addr` must be aligned to
// `page`, a multiple of the base page size (a huge page size for
// hugetlbfs). Returns 0, EINVAL (bad page size) or the errno of mincore
// (ENOMEM: some of the range is not mapped; nothing is read then). Where
// MADV_POPULATE_READ is missing (Linux before 5.14) the reads alone map
// the pages.
inline int touch_pages(void* addr, std::size_t len, std::size_t page) {
  // glibc headers older than the kernel may lack the name; the value is ABI.
#ifndef MADV_POPULATE_READ
  constexpr int MADV_POPULATE_READ = 22;
#endif
  const std::size_t base = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  if (page == 0 || page % base != 0) return EINVAL;
  auto* const p = static_cast<std::uint8_t*>(addr);
  // mincore in windows: its vector has a byte per base page.
  constexpr std::size_t kWindowPages = 4096;
  unsigned char resident[kWindowPages];
  const std::size_t step = page / base;
  std::uint8_t sink = 0;
  for (std::size_t off = 0; off < len;) {
    const std::size_t pages = std::min((len - off + base - 1) / base, kWindowPages / step * step);
    const std::size_t bytes = std::min(pages * base, len - off);
    if (::mincore(p + off, bytes, resident) != 0) return errno;
    // Runs of resident pages: populated at once, then read page by page.
    const auto flush = [&](std::size_t from_page, std::size_t to_page) {
      if (from_page >= to_page) return;
      std::uint8_t* const from = p + off + from_page * base;
      const std::size_t n = std::min((to_page - from_page) * base, bytes - from_page * base);
      (void)::madvise(from, n, MADV_POPULATE_READ);
      const auto* v = static_cast<const volatile std::uint8_t*>(from);
      for (std::size_t k = 0; k < n; k += page) sink = sink ^ v[k];
    };
    std::size_t run = 0;  // the current run's first page
    for (std::size_t i = 0; i < pages; i += step) {
      if ((resident[i] & 1) != 0) continue;
      flush(run, i);
      run = i + step;
    }
    flush(run, pages);
    off += bytes;
  }
  asm volatile("" ::"r"(sink));
  return 0;
}

}  // namespace uroce::base
