// A memif client in zero-copy mode must not close EAL's memory.
//
// DPDK's memif PMD (22.11) in zero-copy mode (a client with zero-copy=yes)
// offers the peer EAL's hugepage memory as its packet-buffer regions: each
// region's descriptor is the one EAL keeps for a memory segment list
// (rte_memseg_get_fd_thread_unsafe), not a duplicate. When the PMD frees
// its regions (memif_free_regions: a peer that leaves, a port closed) it
// closes those descriptors too. EAL still owns them, and the next
// connection offers the same numbers, which by then name whatever the
// process opened since: seen in ucx_perftest over an embedded engine
// (UCX opens and closes the device, and with it the port, several times),
// where the client offered its own control socket as a region and the
// server's mmap of it failed with ENODEV on every retry, the link never
// came up (docs/port.md, "A memif peer that leaves").
//
// The guard routes the PMD's own calls of close (its GOT, got_patch.h)
// through guarded_close, which leaves open a descriptor that backs EAL's
// memory and closes every other, after unregistering any interrupt
// callback the PMD left registered on it (memif_intr_guard.h). A memif
// server never offers EAL's memory, so the first rule costs it a walk of
// EAL's segments per close and changes nothing; the second is for both
// roles.
#pragma once

#include <cstdint>
#include <string>

namespace uroce::port {

// Points the loaded memif PMD's close at the guard. Idempotent (the first
// call's result is kept). 0, or a negative errno with `error` saying why
// (-ENOENT: no memif PMD loaded in this process).
int install_memif_fd_guard(std::string* error);

// Whether `fd` is the descriptor of one of EAL's memory segments (with
// hugepages; EAL keeps none with --no-huge). Walks the segments: control
// path only.
bool is_eal_memory_fd(int fd);

// Closes the guard refused, since the process started.
std::uint64_t memif_closes_refused();

namespace detail {
// What the PMD's close calls reach once the guard is installed. A
// descriptor of EAL's memory is left open (0, counted); any other is closed
// once release_before_close (memif_intr_guard.h) has run for it.
int guarded_close(int fd) noexcept;
}  // namespace detail

}  // namespace uroce::port
