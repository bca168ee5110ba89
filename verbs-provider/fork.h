// What fork() does to the provider (docs/shm.md, "fork"). Two sets of
// pthread_atfork handlers, installed when the library is loaded:
// - fork.cpp's, in the provider and in the interposer (both make control
//   connections): the child starts a new fork generation. Objects made
//   before the fork (a control connection, the embedded engine's progress
//   calls behind a context) belong to the parent: in the child they answer
//   EIO and never run the engine (CtlClient::inherited(), ContextState).
// - mr_remap.cpp's, for the process's memory registry: prepare takes its
//   mutex, so that no registration is half done when the address space is
//   copied; the parent's handler releases it; the child's makes every
//   registered page private in the child (after_fork_in_child).
#pragma once

#include <cstdint>

namespace uroce::provider {

// How many fork()s lie between the process's start and now: 0 in the
// process that loaded the library, one more in each child.
std::uint32_t fork_generation();

}  // namespace uroce::provider
