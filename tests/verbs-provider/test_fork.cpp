// fork() and registered memory (verbs-provider/fork.h, mr_remap.h): the
// pthread_atfork handlers act on process_memfds(), the registry every
// context uses, so these tests register through it. Each child reports by
// its exit status (no gtest in a child).
#include "verbs-provider/fork.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "verbs-provider/ctl_client.h"
#include "verbs-provider/mr_remap.h"

namespace uroce::provider {
namespace {

constexpr std::size_t kLen = 64 * 1024;
constexpr unsigned char kP = 0x50;  // the parent's bytes
constexpr unsigned char kQ = 0x51;  // the child's

bool all_are(const unsigned char* p, std::size_t len, unsigned char v) {
  for (std::size_t i = 0; i < len; ++i) {
    if (p[i] != v) return false;
  }
  return true;
}

// What /proc/self/maps says about our memfds: mappings shared with the
// daemon (`rw-s`) and shadows (`---p`), and whether `p` is mapped at all.
struct MemfdLines {
  std::size_t shared = 0;
  std::size_t shadows = 0;
  bool mapped = false;
  bool shared_at_p = false;
};
MemfdLines scan(const void* p) {
  MemfdLines r;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  while (std::getline(maps, line)) {
    MapsLine m;
    if (!parse_maps_line(line, &m)) continue;
    const bool ours = line.find("/memfd:uroce-mr") != std::string::npos;
    if (ours && m.shared) ++r.shared;
    if (ours && !m.read && !m.write) ++r.shadows;
    if (m.start <= a && a < m.end) {
      r.mapped = true;
      r.shared_at_p = m.shared;
    }
  }
  return r;
}

// Child: exit codes name what failed.
enum ChildExit : int {
  kOk = 0,
  kStillShared = 10,  // a registered range still shared with the parent
  kShadowLeft = 11,
  kRegistryNotEmpty = 12,
  kWrongGeneration = 13,
  kBadBytes = 14,
  kMapped = 15,  // dontfork: the child has a mapping where it must have none
};

int wait_child(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Parent writes P, forks; the child checks its view, writes Q into its
// copy and exits. Returns the child's exit code.
int fork_and_write(unsigned char* buf, bool expect_mapped) {
  std::memset(buf, kP, kLen);
  const std::uint32_t gen = fork_generation();
  const pid_t pid = fork();
  if (pid == 0) {
    const MemfdLines l = scan(buf);
    if (fork_generation() != gen + 1) _exit(kWrongGeneration);
    if (process_memfds().entries() != 0) _exit(kRegistryNotEmpty);
    if (l.shared != 0) _exit(kStillShared);
    if (l.shadows != 0) _exit(kShadowLeft);
    if (!expect_mapped) _exit(l.mapped ? kMapped : kOk);
    if (!all_are(buf, kLen, kP)) _exit(kBadBytes);
    std::memset(buf, kQ, kLen);
    _exit(all_are(buf, kLen, kQ) ? kOk : kBadBytes);
  }
  return wait_child(pid);
}

TEST(AfterForkInChild_Registered, ChildWritesNeverReachTheParent) {
  auto* buf = static_cast<unsigned char*>(std::malloc(kLen));
  MrBacking b;
  ASSERT_EQ(process_memfds().acquire(buf, kLen, &b), 0);
  ASSERT_TRUE(scan(buf).shared_at_p);
  EXPECT_EQ(fork_and_write(buf, true), kOk);
  EXPECT_TRUE(all_are(buf, kLen, kP));
  // The parent's registration is as it was: still on the shared memfd.
  EXPECT_TRUE(scan(buf).shared_at_p);
  process_memfds().release(b);
  EXPECT_TRUE(all_are(buf, kLen, kP));
  std::free(buf);
}

TEST(AfterForkInChild_Deregistered, ChildWritesNeverReachTheParent) {
  auto* buf = static_cast<unsigned char*>(std::malloc(kLen));
  MrBacking b;
  ASSERT_EQ(process_memfds().acquire(buf, kLen, &b), 0);
  process_memfds().release(b);
  // Idle (kIdleBudget): still shared in the parent, private in the child.
  EXPECT_TRUE(scan(buf).shared_at_p);
  EXPECT_EQ(fork_and_write(buf, true), kOk);
  EXPECT_TRUE(all_are(buf, kLen, kP));
  std::free(buf);
}

TEST(AfterForkInChild_DontFork, ChildHasNoMappingThere) {
  // Whole pages of our own: under ibv_fork_init the child has no mapping
  // at the registered pages (neighbouring heap chunks would vanish too).
  auto* buf = static_cast<unsigned char*>(
      mmap(nullptr, kLen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(buf, MAP_FAILED);
  MrBacking b;
  ASSERT_EQ(process_memfds().acquire(buf, kLen, &b, true, true), 0);
  EXPECT_EQ(fork_and_write(buf, false), kOk);
  EXPECT_TRUE(all_are(buf, kLen, kP));
  process_memfds().release(b);
  // Deregistered, and MADV_DOFORK again as ibv_dereg_mr does: the child's
  // copy is private.
  ASSERT_EQ(madvise(buf, kLen, MADV_DOFORK), 0);
  EXPECT_EQ(fork_and_write(buf, true), kOk);
  EXPECT_TRUE(all_are(buf, kLen, kP));
  munmap(buf, kLen);
}

TEST(AfterForkInChild_Overlap, PagesStillRegisteredByAnotherRangeArePrivateInTheChild) {
  auto* buf = static_cast<unsigned char*>(
      mmap(nullptr, kLen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(buf, MAP_FAILED);
  MrBacking whole, part;
  ASSERT_EQ(process_memfds().acquire(buf, kLen, &whole), 0);
  ASSERT_EQ(process_memfds().acquire(buf + 4096, 100, &part), 0);
  process_memfds().release(whole);  // the memfd stays, for `part`
  EXPECT_TRUE(scan(buf).shared_at_p);
  EXPECT_EQ(fork_and_write(buf, true), kOk);
  EXPECT_TRUE(all_are(buf, kLen, kP));
  process_memfds().release(part);
  munmap(buf, kLen);
}

// fork() from a multithreaded program while another thread registers and
// deregisters: every child finds no page shared with its parent and no
// half-done registration (the prepare handler holds the registry's lock).
TEST(AfterForkInChild_Threads, ForkDuringRegistrationsLeavesNothingShared) {
  std::atomic<bool> stop{false};
  std::thread worker([&] {
    auto* heap = static_cast<unsigned char*>(std::malloc(8 * kLen));
    while (!stop.load()) {
      MrBacking b;
      if (process_memfds().acquire(heap + 100, 4 * kLen, &b) == 0) process_memfds().release(b);
    }
    std::free(heap);
  });
  auto* buf = static_cast<unsigned char*>(std::malloc(kLen));
  MrBacking mine;
  ASSERT_EQ(process_memfds().acquire(buf, kLen, &mine), 0);
  for (int i = 0; i < 30; ++i) {
    ASSERT_EQ(fork_and_write(buf, true), kOk) << i;
    ASSERT_TRUE(all_are(buf, kLen, kP)) << i;
  }
  stop = true;
  worker.join();
  process_memfds().release(mine);
  std::free(buf);
}

TEST(CtlClientInherited, CallInAChildAnswersEioWithoutTouchingTheSocket) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
  {
    CtlClient c;
    c.adopt(sv[0]);
    EXPECT_FALSE(c.inherited());
    const pid_t pid = fork();
    if (pid == 0) {
      ctl::AllocPdReq req{};
      ctl::AllocPdRep rep{};
      const int rc = c.call<ctl::Op::kAllocPd>(req, &rep);
      _exit(c.inherited() && rc == EIO ? 0 : 1);
    }
    EXPECT_EQ(wait_child(pid), 0);
    // Nothing was sent on the parent's connection.
    char byte = 0;
    EXPECT_EQ(recv(sv[1], &byte, 1, MSG_DONTWAIT), -1);
    EXPECT_EQ(errno, EAGAIN);
  }
  close(sv[1]);
}

}  // namespace
}  // namespace uroce::provider
