// Mapping memory in before the data path first touches it: populate the
// page tables of a range, then read one byte of every page.
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
// The reads are ordinary loads: another thread may write the bytes
// meanwhile (the application owns them), and nothing is written.
// Control path only: cost grows with the range.
#pragma once

#include <sys/mman.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace uroce::base {

// Populates [addr, addr + len) for writing (write) or reading, then reads
// one byte per `page` bytes. `addr` must be page-aligned. Returns 0 or the
// errno of the populate (the range is then not read: ENOMEM means some of
// it is not mapped). A kernel without MADV_POPULATE_* (before 5.14,
// EINVAL) only has its pages read.
inline int touch_pages(void* addr, std::size_t len, std::size_t page, bool write) {
  // glibc headers older than the kernel may lack the names; values are ABI.
#ifndef MADV_POPULATE_READ
  constexpr int MADV_POPULATE_READ = 22;
#endif
#ifndef MADV_POPULATE_WRITE
  constexpr int MADV_POPULATE_WRITE = 23;
#endif
  if (len == 0) return 0;
  if (page == 0) return EINVAL;
  if (::madvise(addr, len, write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ) != 0 &&
      errno != EINVAL) {
    return errno;
  }
  const auto* p = static_cast<const volatile std::uint8_t*>(addr);
  std::uint8_t sink = 0;
  for (std::size_t off = 0; off < len; off += page) sink = sink ^ p[off];
  asm volatile("" ::"r"(sink));
  return 0;
}

}  // namespace uroce::base
