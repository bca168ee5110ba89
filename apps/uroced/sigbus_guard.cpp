#include "apps/uroced/sigbus_guard.h"

#include <signal.h>
#include <sys/mman.h>

#include <atomic>
#include <mutex>

namespace uroce::daemon::sigbus_guard {

namespace {

struct Slot {
  // start != 0 marks a live slot; end and page are written before it.
  std::atomic<std::uintptr_t> start{0};
  std::atomic<std::uintptr_t> end{0};
  std::atomic<std::size_t> page{0};
};

Slot g_slots[kSlots];
std::atomic<std::uint64_t> g_replaced{0};
std::mutex g_mu;  // add/remove; never taken by the handler
bool g_installed = false;

void on_sigbus(int, siginfo_t* si, void*) {
  const auto a = reinterpret_cast<std::uintptr_t>(si->si_addr);
  for (Slot& s : g_slots) {
    const std::uintptr_t start = s.start.load(std::memory_order_acquire);
    if (start == 0 || a < start || a >= s.end.load(std::memory_order_relaxed)) continue;
    const std::size_t page = s.page.load(std::memory_order_relaxed);
    const std::uintptr_t at = start + (a - start) / page * page;
    void* p = ::mmap(reinterpret_cast<void*>(at), page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (p != MAP_FAILED) {
      g_replaced.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    break;
  }
  // Not ours (or no memory for the page): the retried access dies as usual.
  ::signal(SIGBUS, SIG_DFL);
}

bool install_locked() {
  if (g_installed) return true;
  struct sigaction sa {};
  sa.sa_sigaction = on_sigbus;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  if (::sigaction(SIGBUS, &sa, nullptr) != 0) return false;
  g_installed = true;
  return true;
}

}  // namespace

int add(void* base, std::size_t len, std::size_t page) {
  const std::lock_guard lock(g_mu);
  if (!install_locked()) return -1;
  for (int i = 0; i < kSlots; ++i) {
    Slot& s = g_slots[i];
    if (s.start.load(std::memory_order_relaxed) != 0) continue;
    const auto b = reinterpret_cast<std::uintptr_t>(base);
    s.page.store(page, std::memory_order_relaxed);
    s.end.store(b + len, std::memory_order_relaxed);
    s.start.store(b, std::memory_order_release);
    return i;
  }
  return -1;
}

void remove(int slot) {
  if (slot < 0 || slot >= kSlots) return;
  const std::lock_guard lock(g_mu);
  g_slots[slot].start.store(0, std::memory_order_release);
}

std::uint64_t replaced_pages() { return g_replaced.load(std::memory_order_relaxed); }

}  // namespace uroce::daemon::sigbus_guard
