// rte_intr_handle's accessors (rte_intr_fd_get and the rest) are marked
// experimental in DPDK 22.11, though the memif PMD lives by them. The macro
// must come before any DPDK header.
#define ALLOW_EXPERIMENTAL_API 1

#include "datapath/port/memif_intr_guard.h"

#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <mutex>

#include "datapath/port/got_patch.h"
#include "datapath/port/memif_args.h"

namespace uroce::port {

namespace {

struct Registration {
  int fd = -1;  // -1: a free slot
  rte_intr_callback_fn cb = nullptr;
  void* arg = nullptr;
  const rte_intr_handle* handle = nullptr;  // the PMD's, as it registered
};

// A memif port holds at most one control channel and the listener socket
// its server role shares; a process with more registrations at once than
// this has many ports, and the rest go untracked (counted).
constexpr std::size_t kTableSize = 128;

// The lock is never held while EAL's functions run: EAL calls the PMD back
// (and so guarded_close) with its interrupt lock held, and the PMD calls
// the guarded functions, which take EAL's lock, from the interrupt thread.
// The PMD's removals of one channel's callback do not race each other
// (memif_disconnect holds the port's control-channel lock).
std::mutex g_mu;
std::array<Registration, kTableSize> g_table;
std::atomic<std::uint64_t> g_released{0};
// release_before_close's rounds of unregister / unregister_pending; each
// ends only when the callback's source changed state in between.
constexpr int kReleaseTries = 1000;
std::atomic<std::uint64_t> g_untracked{0};
std::atomic<std::uint64_t> g_freed_closed{0};

std::once_flag g_install_once;
int g_install_rc = 0;
std::string g_install_error;

// EAL's wildcard argument: every callback of that function on the fd.
bool arg_matches(void* registered, void* asked) {
  return asked == reinterpret_cast<void*>(-1) || registered == asked;
}

// Takes the matching entries out of the table into `out` (at most
// kTableSize); returns how many. `handle`, when given, must be the one
// the entry was registered with.
std::size_t take(int fd, rte_intr_callback_fn cb, void* arg, bool any_callback,
                 std::array<Registration, kTableSize>& out,
                 const rte_intr_handle* handle = nullptr) {
  std::size_t n = 0;
  std::lock_guard<std::mutex> lk(g_mu);
  for (Registration& r : g_table) {
    if (r.fd == fd && (any_callback || (r.cb == cb && arg_matches(r.arg, arg))) &&
        (handle == nullptr || r.handle == handle)) {
      out[n++] = r;
      r = Registration{};
    }
  }
  return n;
}

// Unregisters the `n` entries taken out for `fd` from EAL; returns how
// many EAL removed.
int unregister_taken(int fd, const std::array<Registration, kTableSize>& mine, std::size_t n) {
  // EAL finds a callback's source by descriptor only; a private handle
  // (plain malloc) that names the fd is enough, whatever the PMD has freed.
  rte_intr_handle* h = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
  if (h == nullptr) return 0;
  int released = 0;
  if (rte_intr_fd_set(h, fd) == 0 && rte_intr_type_set(h, RTE_INTR_HANDLE_EXT) == 0) {
    for (std::size_t i = 0; i < n; ++i) {
      // A running source refuses the first (-EAGAIN), an idle one the
      // second: the callback may return between the two, so ask again.
      int rc = -EAGAIN;
      for (int tries = 0; rc == -EAGAIN && tries < kReleaseTries; ++tries) {
        rc = rte_intr_callback_unregister(h, mine[i].cb, mine[i].arg);
        if (rc == -EAGAIN) {
          rc = rte_intr_callback_unregister_pending(h, mine[i].cb, mine[i].arg, nullptr);
        }
      }
      if (rc > 0) ++released;
    }
  }
  rte_intr_instance_free(h);
  g_released.fetch_add(static_cast<std::uint64_t>(released), std::memory_order_relaxed);
  return released;
}

// Unregisters the table's callbacks on `fd` (only those registered through
// `handle`, when given) and, if there were any, closes `fd`; returns how
// many EAL removed.
int release_and_close(int fd, const rte_intr_handle* handle) {
  if (fd < 0) return 0;
  std::array<Registration, kTableSize> mine;
  const std::size_t n = take(fd, nullptr, nullptr, true, mine, handle);
  if (n == 0) return 0;
  const int released = unregister_taken(fd, mine, n);
  close(fd);
  g_freed_closed.fetch_add(1, std::memory_order_relaxed);
  return released;
}

// Puts entries taken out back into free slots (an EAL call that removed
// nothing).
void put_back(const std::array<Registration, kTableSize>& taken, std::size_t n) {
  std::lock_guard<std::mutex> lk(g_mu);
  std::size_t i = 0;
  for (Registration& r : g_table) {
    if (i == n) return;
    if (r.fd < 0) r = taken[i++];
  }
  g_untracked.fetch_add(n - i, std::memory_order_relaxed);
}

}  // namespace

namespace detail {

// Every table change comes before EAL's call (and is undone after it when
// EAL changed nothing): EAL may run the callback, or call the PMD back
// under its interrupt lock (whose close reaches release_before_close), as
// soon as its call has made the change; by then the table must already
// say so, or release_before_close would call EAL under EAL's own lock.
int guarded_register(const rte_intr_handle* handle, rte_intr_callback_fn cb, void* arg) noexcept {
  const int fd = rte_intr_fd_get(handle);
  Registration* slot = nullptr;
  {
    std::lock_guard<std::mutex> lk(g_mu);
    for (Registration& r : g_table) {
      if (r.fd < 0) {
        r = Registration{fd, cb, arg, handle};
        slot = &r;
        break;
      }
    }
  }
  if (slot == nullptr) g_untracked.fetch_add(1, std::memory_order_relaxed);
  const int rc = rte_intr_callback_register(handle, cb, arg);
  if (rc != 0 && slot != nullptr) {
    std::lock_guard<std::mutex> lk(g_mu);
    if (slot->fd == fd && slot->cb == cb && slot->arg == arg) *slot = Registration{};
  }
  return rc;
}

int guarded_unregister(const rte_intr_handle* handle, rte_intr_callback_fn cb, void* arg) noexcept {
  std::array<Registration, kTableSize> taken;
  const std::size_t n = take(rte_intr_fd_get(handle), cb, arg, false, taken);
  const int rc = rte_intr_callback_unregister(handle, cb, arg);
  if (rc <= 0) put_back(taken, n);
  return rc;
}

int guarded_unregister_pending(const rte_intr_handle* handle, rte_intr_callback_fn cb, void* arg,
                               rte_intr_unregister_callback_fn ucb) noexcept {
  std::array<Registration, kTableSize> taken;
  const std::size_t n = take(rte_intr_fd_get(handle), cb, arg, false, taken);
  // Marked: EAL removes it (and calls `ucb`, which may close the fd, under
  // its lock) once the running callback returns; nothing is left for a
  // close to release.
  const int rc = rte_intr_callback_unregister_pending(handle, cb, arg, ucb);
  if (rc <= 0) put_back(taken, n);
  return rc;
}

int release_before_close(int fd) noexcept {
  if (fd < 0) return 0;
  std::array<Registration, kTableSize> mine;
  const std::size_t n = take(fd, nullptr, nullptr, true, mine);
  return n == 0 ? 0 : unregister_taken(fd, mine, n);
}

void guarded_instance_free(rte_intr_handle* handle) noexcept {
  // The handle was the PMD's only record of the descriptor.
  if (handle != nullptr) (void)release_and_close(rte_intr_fd_get(handle), handle);
  rte_intr_instance_free(handle);
}

}  // namespace detail

int release_orphaned_memif_callbacks() {
  int released = 0;
  for (;;) {
    int fd = -1;
    {
      std::lock_guard<std::mutex> lk(g_mu);
      for (const Registration& r : g_table) {
        if (r.fd >= 0) {
          fd = r.fd;
          break;
        }
      }
    }
    if (fd < 0) return released;
    released += release_and_close(fd, nullptr);
  }
}

int install_memif_intr_guard(std::string* error) {
  std::call_once(g_install_once, [] {
    struct Hook {
      const char* symbol;
      void* fn;
    };
    // Removals first: should a later patch fail, the table never sees a
    // registration whose removal it misses.
    const Hook hooks[] = {
        {"rte_intr_instance_free", reinterpret_cast<void*>(&detail::guarded_instance_free)},
        {"rte_intr_callback_unregister", reinterpret_cast<void*>(&detail::guarded_unregister)},
        {"rte_intr_callback_unregister_pending",
         reinterpret_cast<void*>(&detail::guarded_unregister_pending)},
        {"rte_intr_callback_register", reinterpret_cast<void*>(&detail::guarded_register)},
    };
    // All or none: a table that sees registrations but not their
    // removals would release callbacks the PMD already unregistered.
    for (const Hook& h : hooks) {
      if (got_slot_targets(kMemifPmdObject, h.symbol).empty()) {
        g_install_rc = -ENOENT;
        g_install_error =
            std::string(kMemifPmdObject) + " is not loaded or does not call " + h.symbol;
        return;
      }
    }
    for (const Hook& h : hooks) {
      const int rc = patch_got(kMemifPmdObject, h.symbol, h.fn, &g_install_error);
      if (rc < 0) {
        g_install_rc = rc;
        return;
      }
    }
  });
  if (g_install_rc != 0) *error = g_install_error;
  return g_install_rc;
}

std::uint64_t memif_intr_callbacks_released() { return g_released.load(std::memory_order_relaxed); }

std::uint64_t memif_intr_handles_closed() { return g_freed_closed.load(std::memory_order_relaxed); }

std::uint64_t memif_intr_registrations_untracked() {
  return g_untracked.load(std::memory_order_relaxed);
}

}  // namespace uroce::port
