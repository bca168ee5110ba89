// rte_intr_handle's accessors are experimental in DPDK 22.11
// (memif_intr_guard.cpp).
#define ALLOW_EXPERIMENTAL_API 1

#include "datapath/port/memif_intr_guard.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <rte_alarm.h>
#include <rte_dev.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "datapath/port/got_patch.h"
#include "datapath/port/intr_thread_hold.h"
#include "datapath/port/memif_args.h"
#include "datapath/port/memif_fd_guard.h"
#include "tests/datapath/port/eal_once.h"

namespace uroce::port {
namespace {

class MemifIntrGuard : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ASSERT_EQ(test::start_eal_once(), ""); }
};

void nothing(void*) {}

// A handle naming `fd`, as the PMD makes them.
struct Handle {
  explicit Handle(int fd) : h(rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE)) {
    if (h != nullptr) {
      rte_intr_fd_set(h, fd);
      rte_intr_type_set(h, RTE_INTR_HANDLE_EXT);
    }
  }
  ~Handle() { rte_intr_instance_free(h); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  rte_intr_handle* h;
};

// Whether `fd` still names an eventfd. After a close, EAL's interrupt
// thread may take the number at once for the epoll set it rebuilds (an
// unregistration makes it rebuild), so "closed" is "no eventfd there".
bool names_an_eventfd(int fd) {
  std::array<char, 64> target{};
  const std::string link = "/proc/self/fd/" + std::to_string(fd);
  const ssize_t n = readlink(link.c_str(), target.data(), target.size() - 1);
  return n > 0 && std::string(target.data(), static_cast<std::size_t>(n)) == "anon_inode:[eventfd]";
}

// Waits for `done` (EAL's interrupt thread sets it) for up to 10 s.
bool wait_for(const std::atomic<bool>& done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done.load() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return done.load();
}

TEST_F(MemifIntrGuard, ReleaseBeforeClose_UnregistersWhatWasLeftRegistered) {
  const int fd = eventfd(0, EFD_NONBLOCK);
  ASSERT_GE(fd, 0);
  Handle h(fd);
  ASSERT_NE(h.h, nullptr);
  int arg = 0;
  const std::uint64_t before = memif_intr_callbacks_released();
  ASSERT_EQ(detail::guarded_register(h.h, nothing, &arg), 0);
  EXPECT_EQ(detail::release_before_close(fd), 1);
  EXPECT_EQ(memif_intr_callbacks_released(), before + 1);
  // EAL no longer knows the descriptor.
  EXPECT_EQ(rte_intr_callback_unregister(h.h, nothing, &arg), -ENOENT);
  EXPECT_EQ(detail::release_before_close(fd), 0);
  close(fd);
}

TEST_F(MemifIntrGuard, ReleaseBeforeClose_NothingOnceUnregistered) {
  const int fd = eventfd(0, EFD_NONBLOCK);
  ASSERT_GE(fd, 0);
  Handle h(fd);
  ASSERT_NE(h.h, nullptr);
  int arg = 0;
  ASSERT_EQ(detail::guarded_register(h.h, nothing, &arg), 0);
  EXPECT_EQ(detail::guarded_unregister(h.h, nothing, &arg), 1);
  const std::uint64_t before = memif_intr_callbacks_released();
  EXPECT_EQ(detail::release_before_close(fd), 0);
  EXPECT_EQ(memif_intr_callbacks_released(), before);
  EXPECT_EQ(detail::release_before_close(-1), 0);
  close(fd);
}

// A callback that closes its own descriptor, as the PMD's do when a peer's
// message says goodbye: its source is running, so it is marked for
// removal when it returns.
TEST_F(MemifIntrGuard, ReleaseBeforeClose_ARunningCallbackIsRemovedWhenItReturns) {
  struct Job {
    int fd = -1;
    Handle* h = nullptr;
    std::atomic<int> released{-100};
    std::atomic<bool> done{false};
  } job;
  job.fd = eventfd(0, EFD_NONBLOCK);
  ASSERT_GE(job.fd, 0);
  Handle h(job.fd);
  ASSERT_NE(h.h, nullptr);
  job.h = &h;
  const auto cb = [](void* a) {
    auto* j = static_cast<Job*>(a);
    eventfd_t v;
    (void)eventfd_read(j->fd, &v);
    j->released.store(detail::release_before_close(j->fd));
    j->done.store(true);
  };
  ASSERT_EQ(detail::guarded_register(h.h, cb, &job), 0);
  ASSERT_EQ(eventfd_write(job.fd, 1), 0);
  ASSERT_TRUE(wait_for(job.done));
  EXPECT_EQ(job.released.load(), 1);
  // EAL removes it after the callback returned; once it has, it knows the
  // descriptor no more.
  int rc = 0;
  for (int i = 0; i < 1000 && (rc = rte_intr_callback_unregister(h.h, cb, &job)) != -ENOENT; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(rc, -ENOENT);
  close(job.fd);
}

// The PMD's way of leaving on a peer's goodbye: its callback marks itself
// for removal (unregister_pending) with a function that EAL calls under its
// interrupt lock and that closes the descriptor. That close must not call
// EAL again (its lock is not recursive: the interrupt thread would spin
// forever), so the table forgets the callback before EAL marks it.
struct PendingJob {
  int fd = -1;
  rte_intr_handle* h = nullptr;
  std::atomic<int> marked{-100};
  std::atomic<int> closed{-100};
  std::atomic<bool> done{false};
};

void pending_ucb(rte_intr_handle*, void* a) {
  auto* j = static_cast<PendingJob*>(a);
  j->closed.store(detail::guarded_close(j->fd));
  j->done.store(true);
}

void pending_cb(void* a) {
  auto* j = static_cast<PendingJob*>(a);
  eventfd_t v;
  (void)eventfd_read(j->fd, &v);
  j->marked.store(detail::guarded_unregister_pending(j->h, pending_cb, a, pending_ucb));
}

TEST_F(MemifIntrGuard, GuardedClose_UnderEalsLockCallsNoEal) {
  PendingJob job;
  job.fd = eventfd(0, EFD_NONBLOCK);
  ASSERT_GE(job.fd, 0);
  Handle h(job.fd);
  ASSERT_NE(h.h, nullptr);
  job.h = h.h;
  ASSERT_EQ(detail::guarded_register(h.h, pending_cb, &job), 0);
  const std::uint64_t released = memif_intr_callbacks_released();
  ASSERT_EQ(eventfd_write(job.fd, 1), 0);
  ASSERT_TRUE(wait_for(job.done));
  EXPECT_EQ(job.marked.load(), 1);
  EXPECT_EQ(job.closed.load(), 0);
  EXPECT_FALSE(names_an_eventfd(job.fd));
  EXPECT_EQ(memif_intr_callbacks_released(), released);
  // EAL's interrupt thread goes on.
  EXPECT_TRUE(test::interrupt_thread_runs());
}

TEST_F(MemifIntrGuard, Install_PointsThePmdsCallsAtTheGuard) {
  // Debian's EAL loads every PMD of its plugin directory at start.
  std::string err;
  ASSERT_EQ(install_memif_intr_guard(&err), 0) << err;
  const std::pair<const char*, void*> hooks[] = {
      {"rte_intr_callback_register", reinterpret_cast<void*>(&detail::guarded_register)},
      {"rte_intr_callback_unregister", reinterpret_cast<void*>(&detail::guarded_unregister)},
      {"rte_intr_callback_unregister_pending",
       reinterpret_cast<void*>(&detail::guarded_unregister_pending)},
      {"rte_intr_instance_free", reinterpret_cast<void*>(&detail::guarded_instance_free)},
  };
  for (const auto& [symbol, fn] : hooks) {
    const auto targets = got_slot_targets(kMemifPmdObject, symbol);
    ASSERT_FALSE(targets.empty()) << symbol;
    for (void* t : targets) EXPECT_EQ(t, fn) << symbol;
  }
  EXPECT_EQ(install_memif_intr_guard(&err), 0);  // idempotent
}

// The failure the guard exists for, made to happen: a peer connects to a
// memif server port and closes while EAL's interrupt thread is held, so
// the PMD accepts a connection whose peer is gone, its hello fails with
// EPIPE, and it closes the socket with its callback registered. Unguarded,
// EAL's interrupt thread panics when it rebuilds its epoll set (this test
// process dies); guarded, the close released the callback and the
// interrupt thread goes on.
TEST_F(MemifIntrGuard, GuardedClose_APeerGoneBeforeItsHelloLeavesNoCallback) {
  std::string err;
  ASSERT_EQ(install_memif_intr_guard(&err), 0) << err;
  ASSERT_EQ(install_memif_fd_guard(&err), 0) << err;
  const test::SigpipeIgnored no_sigpipe;

  char dir_template[] = "/tmp/uroce-intr-guard-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  const std::string path = dir + "/memif.sock";
  const std::string dev = "net_memif_intr_guard";
  ASSERT_EQ(rte_dev_probe((dev + ",role=server,socket=" + path + ",socket-abstract=no").c_str()),
            0);

  // Hold the interrupt thread in an alarm until the peer has come and gone.
  struct Hold {
    std::atomic<bool> entered{false}, release{false};
  } hold;
  ASSERT_EQ(rte_eal_alarm_set(
                1,
                [](void* a) {
                  auto* x = static_cast<Hold*>(a);
                  x->entered.store(true);
                  while (!x->release.load())
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
                },
                &hold),
            0);
  ASSERT_TRUE(wait_for(hold.entered));
  const std::uint64_t before = memif_intr_callbacks_released();
  const int s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
  ASSERT_GE(s, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << strerror(errno);
  close(s);
  hold.release.store(true);

  // The PMD's close released the callback it left...
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (memif_intr_callbacks_released() == before && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(memif_intr_callbacks_released(), before + 1);
  // ...and EAL's interrupt thread still runs callbacks.
  EXPECT_TRUE(test::interrupt_thread_runs());

  EXPECT_EQ(rte_eal_hotplug_remove("vdev", dev.c_str()), 0);
  unlink(path.c_str());
  rmdir(dir.c_str());
}

TEST_F(MemifIntrGuard, GuardedInstanceFree_ReleasesWhatWasRegisteredThroughIt) {
  const int fd = eventfd(0, EFD_NONBLOCK);
  ASSERT_GE(fd, 0);
  rte_intr_handle* h = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_SHARED);
  ASSERT_NE(h, nullptr);
  rte_intr_fd_set(h, fd);
  rte_intr_type_set(h, RTE_INTR_HANDLE_EXT);
  int arg = 0;
  ASSERT_EQ(detail::guarded_register(h, nothing, &arg), 0);
  const std::uint64_t released = memif_intr_callbacks_released();
  const std::uint64_t closed = memif_intr_handles_closed();
  detail::guarded_instance_free(h);
  EXPECT_EQ(memif_intr_callbacks_released(), released + 1);
  EXPECT_EQ(memif_intr_handles_closed(), closed + 1);
  EXPECT_FALSE(names_an_eventfd(fd));
  // EAL no longer knows the descriptor.
  Handle other(fd);
  EXPECT_EQ(rte_intr_callback_unregister(other.h, nothing, &arg), -ENOENT);
}

TEST_F(MemifIntrGuard, GuardedInstanceFree_LeavesAnotherHandlesRegistration) {
  const int fd = eventfd(0, EFD_NONBLOCK);
  ASSERT_GE(fd, 0);
  Handle registered(fd);
  rte_intr_handle* h = rte_intr_instance_alloc(RTE_INTR_INSTANCE_F_PRIVATE);
  ASSERT_NE(h, nullptr);
  rte_intr_fd_set(h, fd);
  int arg = 0;
  ASSERT_EQ(detail::guarded_register(registered.h, nothing, &arg), 0);
  const std::uint64_t closed = memif_intr_handles_closed();
  // Same descriptor, another handle (a stale one whose number was reused).
  detail::guarded_instance_free(h);
  detail::guarded_instance_free(nullptr);
  EXPECT_EQ(memif_intr_handles_closed(), closed);
  EXPECT_TRUE(names_an_eventfd(fd));
  EXPECT_EQ(detail::guarded_unregister(registered.h, nothing, &arg), 1);
  close(fd);
}

// A memif server's listener, which the PMD frees with its last port on the
// socket without unregistering its callback or closing it: the guard does
// both, so a peer that connects afterwards is refused instead of being
// accepted by a callback on the freed socket.
TEST_F(MemifIntrGuard, GuardedInstanceFree_AServersListenerGoesWithItsLastPort) {
  std::string err;
  ASSERT_EQ(install_memif_intr_guard(&err), 0) << err;
  ASSERT_EQ(install_memif_fd_guard(&err), 0) << err;
  const test::SigpipeIgnored no_sigpipe;
  const std::string name = "uroce-listener-" + std::to_string(getpid());
  const std::string dev = "net_memif_listener";
  ASSERT_EQ(rte_dev_probe((dev + ",role=server,socket=" + name).c_str()), 0);
  auto connect_abstract = [&name] {
    const int s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path + 1, name.data(), name.size());
    const socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
    const int rc = connect(s, reinterpret_cast<sockaddr*>(&addr), len);
    const int e = rc == 0 ? 0 : errno;
    close(s);
    return e;
  };
  ASSERT_EQ(connect_abstract(), 0);
  const std::uint64_t closed = memif_intr_handles_closed();
  {
    // As EthPort closes a memif port: no handler of the PMD runs meanwhile
    // (its accept of the peer above and its hello, which fails: SIGPIPE,
    // ignored as uroced and the embedded engine's threads do).
    const IntrThreadHold hold;
    ASSERT_TRUE(hold.held());
    ASSERT_EQ(rte_eal_hotplug_remove("vdev", dev.c_str()), 0);
  }
  EXPECT_EQ(memif_intr_handles_closed(), closed + 1);
  EXPECT_EQ(connect_abstract(), ECONNREFUSED);
  // EAL's interrupt thread goes on.
  EXPECT_TRUE(test::interrupt_thread_runs());
}

TEST_F(MemifIntrGuard, ReleaseOrphaned_UnregistersAndClosesEveryDescriptor) {
  const int a = eventfd(0, EFD_NONBLOCK);
  const int b = eventfd(0, EFD_NONBLOCK);
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  Handle ha(a), hb(b);
  int x = 0, y = 0;
  ASSERT_EQ(detail::guarded_register(ha.h, nothing, &x), 0);
  ASSERT_EQ(detail::guarded_register(ha.h, nothing, &y), 0);
  ASSERT_EQ(detail::guarded_register(hb.h, nothing, &x), 0);
  ASSERT_TRUE(names_an_eventfd(a));
  const std::uint64_t closed = memif_intr_handles_closed();
  // At least these three (a test before may have left a registration).
  EXPECT_GE(release_orphaned_memif_callbacks(), 3);
  EXPECT_GE(memif_intr_handles_closed(), closed + 2);
  EXPECT_FALSE(names_an_eventfd(a));
  EXPECT_FALSE(names_an_eventfd(b));
  EXPECT_EQ(rte_intr_callback_unregister(ha.h, nothing, &x), -ENOENT);
  EXPECT_EQ(rte_intr_callback_unregister(hb.h, nothing, &x), -ENOENT);
  EXPECT_EQ(release_orphaned_memif_callbacks(), 0);
}

}  // namespace
}  // namespace uroce::port
