// A memif peer that leaves must not crash this process.
//
// DPDK's memif PMD (22.11) handles a peer's departure on EAL's interrupt
// thread (memif_disconnect): it clears the port's "connected" flag, then
// unmaps the shared region that holds the rings and packet buffers
// (memif_free_regions) and frees its descriptors. Its RX and TX bursts test
// the flag once, at their start, and then read the rings. An engine thread
// that passed the test and was preempted before its burst ended resumes in
// unmapped memory: SIGSEGV. Seen: uroced busy-polling a memif server port
// beside three busy loops died in rte_eth_rx_burst after 18 departures of
// embedded clients (docs/port.md, "A memif peer that leaves"); an embedded
// ibv_rc_pingpong server died so once in CI's suite. DPDK has no event or
// lock that orders the two.
//
// The guard routes the PMD's own calls of munmap (its GOT, got_patch.h)
// through guarded_munmap: on EAL's interrupt thread it first runs the
// process's quiesce function, which returns once every engine has passed
// a point outside its bursts (Engine::barrier on each). The flag was cleared
// before the unmap, so a burst that starts after that point returns at its
// test without touching the region, and the unmap pulls nothing from under
// an engine. On any other thread (a port closed by its owner once the
// engines stopped, or before they exist) munmap runs as before.
//
// Process-wide: one quiesce function at a time (EngineHost's, while its
// engines exist). Setting another, or none, waits for a guarded unmap in
// progress, so the engines a running quiesce calls outlive it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace uroce::port {

// Points the loaded memif PMD's munmap at the guard. Idempotent (the first
// call's result is kept). 0, or a negative errno with `error` saying why
// (-ENOENT: no memif PMD loaded in this process).
int install_memif_unmap_guard(std::string* error);

// The function a guarded unmap runs first on EAL's interrupt thread; an
// empty one clears it. It must not throw, and must not wait for anything
// that waits for EAL's interrupt thread.
void set_memif_unmap_quiesce(std::function<void()> fn);

// Runs `fn` unless a guarded unmap is in progress, and returns whether it
// ran. While `fn` runs, a guarded unmap waits on EAL's interrupt thread, so
// `fn` may read a memif region found mapped (port/prefault.h: a link probe
// populating a region while its peer leaves died of SIGSEGV). It does not
// wait, because a quiesce in progress may wait for the caller's engine.
bool run_between_unmaps(const std::function<void()>& fn);

// Guarded unmaps that ran the quiesce function, since the process started.
std::uint64_t memif_unmaps_quiesced();

namespace detail {
// What the PMD's munmap calls reach once the guard is installed.
int guarded_munmap(void* addr, std::size_t len) noexcept;
}  // namespace detail

}  // namespace uroce::port
