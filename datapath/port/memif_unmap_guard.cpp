#include "datapath/port/memif_unmap_guard.h"

#include <rte_interrupts.h>
#include <sys/mman.h>

#include <atomic>
#include <cerrno>
#include <mutex>

#include "datapath/port/got_patch.h"
#include "datapath/port/memif_args.h"

namespace uroce::port {

namespace {

// Held while a guarded unmap runs (its quiesce and the munmap), to replace
// the quiesce, and by run_between_unmaps.
std::mutex g_mu;
std::function<void()> g_quiesce;
std::atomic<std::uint64_t> g_quiesced{0};

std::once_flag g_install_once;
int g_install_rc = 0;
std::string g_install_error;

}  // namespace

namespace detail {

int guarded_munmap(void* addr, std::size_t len) noexcept {
  if (rte_thread_is_intr() != 0) {
    std::lock_guard<std::mutex> lk(g_mu);
    if (g_quiesce) {
      // Nothing may throw into the PMD (C code calls this): a quiesce that
      // throws (its log line out of memory) has still waited, or the unmap
      // goes on unguarded as it would without the guard.
      try {
        g_quiesce();
      } catch (...) {
      }
      g_quiesced.fetch_add(1, std::memory_order_relaxed);
    }
  }
  return ::munmap(addr, len);
}

}  // namespace detail

int install_memif_unmap_guard(std::string* error) {
  std::call_once(g_install_once, [] {
    const int rc = patch_got(kMemifPmdObject, "munmap",
                             reinterpret_cast<void*>(&detail::guarded_munmap), &g_install_error);
    g_install_rc = rc < 0 ? rc : 0;
  });
  if (g_install_rc != 0) *error = g_install_error;
  return g_install_rc;
}

void set_memif_unmap_quiesce(std::function<void()> fn) {
  std::lock_guard<std::mutex> lk(g_mu);
  g_quiesce = std::move(fn);
}

bool run_between_unmaps(const std::function<void()>& fn) {
  std::unique_lock<std::mutex> lk(g_mu, std::try_to_lock);
  if (!lk.owns_lock()) return false;
  fn();
  return true;
}

std::uint64_t memif_unmaps_quiesced() { return g_quiesced.load(std::memory_order_relaxed); }

}  // namespace uroce::port
