#include "verbs-provider/fork.h"

#include <pthread.h>

#include <atomic>

#include "verbs-provider/mr_remap.h"

namespace uroce::provider {

namespace {

std::atomic<std::uint32_t> g_generation{0};

void prepare() { process_memfds().before_fork(); }
void in_parent() { process_memfds().after_fork_in_parent(); }
void in_child() {
  process_memfds().after_fork_in_child();
  g_generation.fetch_add(1, std::memory_order_relaxed);
}

// Installed once, when the provider is loaded (a static library's object
// that fork_generation() pulls in). glibc removes the handlers again if the
// object is unloaded.
struct Installer {
  Installer() { pthread_atfork(prepare, in_parent, in_child); }
};
Installer g_installer;

}  // namespace

std::uint32_t fork_generation() { return g_generation.load(std::memory_order_relaxed); }

}  // namespace uroce::provider
