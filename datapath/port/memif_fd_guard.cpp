#include "datapath/port/memif_fd_guard.h"

#include <rte_eal.h>
#include <rte_memory.h>
#include <unistd.h>

#include <atomic>
#include <mutex>

#include "datapath/port/got_patch.h"
#include "datapath/port/memif_args.h"
#include "datapath/port/memif_intr_guard.h"

namespace uroce::port {

namespace {

std::atomic<std::uint64_t> g_refused{0};

std::once_flag g_install_once;
int g_install_rc = 0;
std::string g_install_error;

}  // namespace

bool is_eal_memory_fd(int fd) {
  // With --no-huge EAL keeps no descriptors, and its 4 KiB segments (128 Ki
  // of them for -m 512) would make the walk long for nothing.
  if (fd < 0 || rte_eal_has_hugepages() == 0) return false;
  // rte_memseg_walk holds EAL's memory lock for reading; inside it only the
  // _thread_unsafe accessors may be called.
  int target = fd;
  const auto match = [](const rte_memseg_list*, const rte_memseg* ms, void* arg) -> int {
    return rte_memseg_get_fd_thread_unsafe(ms) == *static_cast<int*>(arg) ? 1 : 0;
  };
  return rte_memseg_walk(match, &target) == 1;
}

std::uint64_t memif_closes_refused() { return g_refused.load(std::memory_order_relaxed); }

namespace detail {

int guarded_close(int fd) noexcept {
  if (is_eal_memory_fd(fd)) {
    g_refused.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  (void)release_before_close(fd);
  return ::close(fd);
}

}  // namespace detail

int install_memif_fd_guard(std::string* error) {
  std::call_once(g_install_once, [] {
    const int rc = patch_got(kMemifPmdObject, "close",
                             reinterpret_cast<void*>(&detail::guarded_close), &g_install_error);
    g_install_rc = rc < 0 ? rc : 0;
  });
  if (g_install_rc != 0) *error = g_install_error;
  return g_install_rc;
}

}  // namespace uroce::port
