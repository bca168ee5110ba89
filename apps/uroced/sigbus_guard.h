// The daemon's defence against a client truncating a file it registered.
//
// A registration of a client's own shared object (apps/uroced/mr_memory.h)
// maps a file the client can still ftruncate (a file in /tmp or /dev/shm, an
// unsealed memfd). A page of the daemon's mapping past the new end raises
// SIGBUS on the engine's next access, which would kill the daemon and every
// other client's connections. Guarded ranges avoid that: the process-wide
// SIGBUS handler looks the faulting address up among them and, when it lies
// in one, maps anonymous zero-filled memory over that page (of the range's
// page size: a huge page for hugetlbfs) and returns; the access is retried
// and succeeds on the new page. The client that truncated its own file gets
// zeros and loses what is written there afterwards; nobody else notices. A
// SIGBUS outside every guarded range gets the default action (the handler
// restores it and returns, so the access faults again, fatally).
//
// Threading: add() and remove() run on control threads and serialise on a
// mutex; the handler reads the table lock-free (release stores, acquire
// loads). A range is removed only after the engine stopped using the
// registration, and unmapped only after it is removed.
#pragma once

#include <cstddef>
#include <cstdint>

namespace uroce::daemon::sigbus_guard {

// Ranges guarded at once (one per registration of a truncatable file).
inline constexpr int kSlots = 4096;

// Guards [base, base + len), replaced in units of `page` bytes (base and len
// are multiples of it). Installs the handler on first use. Returns the slot,
// or -1 when every slot is taken or the handler cannot be installed.
int add(void* base, std::size_t len, std::size_t page);
// Stops guarding a slot add() returned (-1 is ignored).
void remove(int slot);

// Pages replaced since start (the status and tests read it).
std::uint64_t replaced_pages();

}  // namespace uroce::daemon::sigbus_guard
