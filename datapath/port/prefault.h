// Populating the page tables of memory a port shares with its peer, as its
// link comes up, so that no data-path access takes a page fault.
//
// Why (docs/first-lap.md, "Page faults on the first lap"): DPDK's memif PMD
// creates its region (rings and packet buffers: memfd "memif_region_N") when
// the link connects, and maps it without populating it. Every packet
// buffer's page then faults the first time each process touches it: the
// sender's write allocates the page, the receiver's read maps it. A ring of
// 1,024 slots takes about 1,000 round trips to go round once, each with a
// fault or two on each side (a few microseconds each in this VM): a
// ping-pong's first 1,000 round trips, 5 % of a 20,000-iteration perftest,
// were that slow. The engine's own memory (mbuf pools, rings) is written at
// setup already; these regions are the PMD's and appear only at connect.
//
// MADV_POPULATE_WRITE (Linux 5.14) maps every page writable without
// changing its contents, so it is safe while the peer already moves frames
// through the region; a read of each page then (base::touch_pages) keeps a
// VM that shadows page tables from charging the first touch again.
// Control path only: it walks /proc/self/maps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace uroce::port {

struct MappedRange {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;  // one past the last byte
  std::size_t bytes() const { return end - begin; }
  bool operator==(const MappedRange&) const = default;
};

// The writable shared mappings of memif regions in the text of a
// /proc/PID/maps file: lines whose path is "/memfd:memif_region_<N>" (with
// or without " (deleted)") and whose permissions are "rw-s". Malformed
// lines are skipped.
std::vector<MappedRange> memif_regions_in_maps(std::string_view maps);

struct PrefaultResult {
  std::size_t regions = 0;  // mappings populated
  std::size_t bytes = 0;    // their total size
  int error = 0;            // the first failure's errno (0: none)
  bool skipped = false;     // a memif peer was leaving: nothing populated
};

// Populates `range` (MADV_POPULATE_WRITE) and reads each page. Returns 0
// or the errno.
int prefault_range(const MappedRange& range);

// Populates every memif region this process maps now. A region mapped again
// (after a reconnect) is simply populated again; one already populated
// costs a walk of its page tables. Runs between the PMD's guarded unmaps
// (port/memif_unmap_guard.h), or not at all while one is in progress: a
// peer that leaves unmaps its region on EAL's interrupt thread, and a page
// read after that would be a SIGSEGV.
PrefaultResult prefault_memif_regions();

}  // namespace uroce::port
