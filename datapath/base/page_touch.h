// Mapping memory in before the data path first touches it: populate the
// page tables of the pages a range's object already holds, then read one
// byte of each of them.
//
// Why both (docs/first-lap.md, "The first lap of a receive queue"): a page's
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

namespace detail {

// glibc headers older than the kernel may lack the name; the value is ABI.
#ifdef MADV_POPULATE_READ
inline constexpr int kPopulateRead = MADV_POPULATE_READ;
#else
inline constexpr int kPopulateRead = 22;
#endif

#ifdef MADV_POPULATE_WRITE
inline constexpr int kPopulateWrite = MADV_POPULATE_WRITE;
#else
inline constexpr int kPopulateWrite = 23;
#endif

// One byte of each `page` of [from, from + n) read into `sink`. Not
// instrumented by AddressSanitizer: a page of a registered buffer also
// holds bytes of the heap around it (other chunks, the sanitizer's own
// redzones), which the read touches on purpose and never uses.
__attribute__((no_sanitize("address"))) inline void read_pages(const void* from, std::size_t n,
                                                               std::size_t page,
                                                               std::uint8_t* sink) {
  const auto* v = static_cast<const volatile std::uint8_t*>(from);
  for (std::size_t k = 0; k < n; k += page) *sink = *sink ^ v[k];
}

// [from, from + n): pages the object holds; populated at once, then one
// byte of each `page` read.
inline void touch_run(std::uint8_t* from, std::size_t n, std::size_t page, std::uint8_t* sink) {
  (void)::madvise(from, n, kPopulateRead);
  read_pages(from, n, page, sink);
}

}  // namespace detail

// Populates and reads, one byte per `page` bytes, the pages of [addr, addr
// + len) that the mapped object holds now. `addr` must be aligned to
// `page`, a multiple of the base page size (a huge page size for
// hugetlbfs, whose pages an object holds whole or not at all). Returns 0,
// EINVAL (bad page size) or the errno of mincore (ENOMEM: part of the
// range is not mapped; the pages before it may have been read). Where
// MADV_POPULATE_READ is missing (Linux before 5.14) the reads alone map
// the pages.
inline int touch_pages(void* addr, std::size_t len, std::size_t page) {
  const std::size_t base = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  if (page == 0 || page % base != 0) return EINVAL;
  auto* const p = static_cast<std::uint8_t*>(addr);
  // mincore's vector has a byte per base page: windows of this many.
  constexpr std::size_t kWindowPages = 4096;
  unsigned char resident[kWindowPages];
  const std::size_t step = page / base;
  std::uint8_t sink = 0;
  if (step >= kWindowPages) {
    // Pages of 16 MiB or more (1 GiB hugetlbfs): one at a time, each
    // asked for by its first base page.
    for (std::size_t off = 0; off < len; off += page) {
      if (::mincore(p + off, base, resident) != 0) return errno;
      if ((resident[0] & 1) != 0)
        detail::touch_run(p + off, std::min(page, len - off), page, &sink);
    }
    asm volatile("" ::"r"(sink));
    return 0;
  }
  for (std::size_t off = 0; off < len;) {
    const std::size_t pages = std::min((len - off + base - 1) / base, kWindowPages / step * step);
    const std::size_t bytes = std::min(pages * base, len - off);
    if (::mincore(p + off, bytes, resident) != 0) return errno;
    std::size_t run = 0;  // the current run of held pages: its first base page
    for (std::size_t i = 0; i < pages + step; i += step) {
      if (i < pages && (resident[i] & 1) != 0) continue;
      const std::size_t end = std::min(i, pages);
      if (end > run) {
        detail::touch_run(p + off + run * base, std::min((end - run) * base, bytes - run * base),
                          page, &sink);
      }
      run = i + step;
    }
    off += bytes;
  }
  asm volatile("" ::"r"(sink));
  return 0;
}

// The system's base page size.
inline std::size_t base_page_bytes() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }

// The one exception to "a hole stays a hole" above, for memory whose pages
// the caller is to own and use whole (a CQ ring the engine writes; the
// rings a provider writes into its own mapping): every page of [addr,
// addr + len) allocated and mapped writable at once (MADV_POPULATE_WRITE,
// which leaves the contents as they are), then one byte of each `page`
// read, as touch_pages does. The pages are charged to the caller's memory
// cgroup. `addr` aligned to `page`, a multiple of the base page size.
// Returns 0, EINVAL (bad page size) or the errno of madvise (ENOMEM: out of
// memory; nothing is read then, so that no read faults a hole in). Where
// MADV_POPULATE_WRITE is missing (Linux before 5.14: EINVAL) the reads
// alone map the pages.
inline int populate_pages(void* addr, std::size_t len, std::size_t page) {
  const std::size_t base = base_page_bytes();
  if (page == 0 || page % base != 0) return EINVAL;
  if (::madvise(addr, len, detail::kPopulateWrite) != 0 && errno != EINVAL) return errno;
  std::uint8_t sink = 0;
  detail::read_pages(addr, len, page, &sink);
  asm volatile("" ::"r"(sink));
  return 0;
}

}  // namespace uroce::base
