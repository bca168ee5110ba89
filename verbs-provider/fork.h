// What fork() does to the provider (docs/shm.md, "fork"). The provider
// installs pthread_atfork handlers when it is loaded:
// - prepare: takes the memory registry's mutex (mr_remap.h), so that no
//   registration is half done when the address space is copied;
// - parent: releases it;
// - child: makes every registered page private in the child
//   (MemfdRegistry::after_fork_in_child) and starts a new fork generation.
// Objects made before the fork (a context's control connection, its
// embedded engine) belong to the parent: in the child they answer EIO and
// never run the engine (CtlClient::inherited()).
#pragma once

#include <cstdint>

namespace uroce::provider {

// How many fork()s lie between the process's start and now: 0 in the
// process that loaded the provider, one more in each child.
std::uint32_t fork_generation();

}  // namespace uroce::provider
