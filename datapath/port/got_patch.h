// Redirecting one loaded shared object's calls of one imported function:
// the object's GOT slots for the symbol (its PLT's JUMP_SLOT and, built
// with -fno-plt, GLOB_DAT relocations) are rewritten to point at a
// replacement. Every other object keeps calling the real function.
//
// Why (memif_unmap_guard.h): a PMD that DPDK loads as a plugin does work on
// EAL's threads that races the engine's bursts, and DPDK offers no hook to
// order the two; the PMD's own call of a libc function is the one place to
// step in without touching the rest of the process (an LD_PRELOAD or an
// exported definition would replace the function for every library, the
// application's included in embedded mode).
//
// The slots of a library linked with -z relro -z now are read-only after
// relocation: they are made writable for the store and read-only again.
// A slot the lazy binder has not resolved yet is simply overwritten (the
// PLT jumps through it, the binder is no longer asked). A pointer store is
// atomic on the supported targets, so a thread calling through the slot
// meanwhile gets the old or the new function.
//
// Control path only: walks the loaded objects and their relocations.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace uroce::port {

// The current targets of the GOT slots through which the loaded object
// whose file name starts with `object` (e.g. "librte_net_memif.so") calls
// `symbol`. Empty when the object is not loaded or does not import it.
std::vector<void*> got_slot_targets(std::string_view object, std::string_view symbol);

// Points every such slot at `replacement`. Returns the number of slots
// rewritten (at least 1), or -ENOENT with `error` saying that the object is
// not loaded or imports no such symbol, or another negative errno of
// mprotect.
int patch_got(std::string_view object, std::string_view symbol, void* replacement,
              std::string* error);

}  // namespace uroce::port
