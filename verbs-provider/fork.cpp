#include "verbs-provider/fork.h"

#include <pthread.h>

#include <atomic>

namespace uroce::provider {

namespace {

std::atomic<std::uint32_t> g_generation{0};

void in_child() { g_generation.fetch_add(1, std::memory_order_relaxed); }

// Installed once, when the library is loaded (this object comes with
// fork_generation(), which every control connection uses). glibc removes
// the handler again if the library is unloaded.
struct Installer {
  Installer() { pthread_atfork(nullptr, nullptr, in_child); }
};
Installer g_installer;

}  // namespace

std::uint32_t fork_generation() { return g_generation.load(std::memory_order_relaxed); }

}  // namespace uroce::provider
