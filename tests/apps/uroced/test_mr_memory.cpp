// The daemon's mapping of a registration's bytes (mr_memory.h), against this
// very process's memory as the client's.
#include "apps/uroced/mr_memory.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "datapath/ctl/protocol.h"
#include "tests/datapath/base/pagemap.h"

namespace uroce::daemon {
namespace {

const std::size_t kPage = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));

// Skips when this process may not open /proc/PID/map_files (the daemon runs
// as root; a test run by a user cannot).
bool map_files_allowed() {
  void* p = mmap(nullptr, kPage, PROT_READ, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  char path[96];
  std::snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx",
                reinterpret_cast<unsigned long>(p), reinterpret_cast<unsigned long>(p) + kPage);
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  munmap(p, kPage);
  if (fd < 0) return false;
  close(fd);
  return true;
}

#define SKIP_WITHOUT_MAP_FILES() \
  if (!map_files_allowed()) GTEST_SKIP() << "no access to /proc/PID/map_files (not root)"

TEST(MrMemoryFromProcess, AnonymousSharedIsTheSamePages) {
  SKIP_WITHOUT_MAP_FILES();
  auto* p = static_cast<std::uint8_t*>(
      mmap(nullptr, 4 * kPage, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(p, MAP_FAILED);
  p[kPage + 100] = 9;
  MrMemory m;
  ASSERT_EQ(MrMemory::from_process(getpid(), reinterpret_cast<std::uintptr_t>(p + kPage + 100), 500,
                                   true, &m),
            0);
  EXPECT_EQ(m.host()[0], 9);
  m.host()[1] = 77;  // the engine's write shows in the client's pages
  EXPECT_EQ(p[kPage + 101], 77);
  EXPECT_EQ(m.map_len(), kPage);
  EXPECT_TRUE(m.writable());
  EXPECT_TRUE(m.guarded());  // anonymous shared memory is not sealed
  munmap(p, 4 * kPage);
}

TEST(MrMemoryFromProcess, SealedMemfdIsNotGuarded) {
  SKIP_WITHOUT_MAP_FILES();
  const int fd = memfd_create("t", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(2 * kPage)), 0);
  ASSERT_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
  auto* p = static_cast<std::uint8_t*>(
      mmap(nullptr, 2 * kPage, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  ASSERT_NE(p, MAP_FAILED);
  MrMemory m;
  ASSERT_EQ(MrMemory::from_process(getpid(), reinterpret_cast<std::uintptr_t>(p), 2 * kPage, true,
                                   &m),
            0);
  EXPECT_FALSE(m.guarded());
  EXPECT_EQ(m.map_len(), 2 * kPage);
  munmap(p, 2 * kPage);
  close(fd);
}

TEST(MrMemoryFromProcess, ReadOnlyPagesRefuseWriteAndMapReadOnly) {
  SKIP_WITHOUT_MAP_FILES();
  char path[] = "/tmp/uroce-test-mr-memory-XXXXXX";
  const int fd = mkstemp(path);
  unlink(path);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(kPage)), 0);
  void* p = mmap(nullptr, kPage, PROT_READ, MAP_SHARED, fd, 0);
  ASSERT_NE(p, MAP_FAILED);
  MrMemory m;
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  EXPECT_EQ(MrMemory::from_process(getpid(), a, 64, true, &m), EFAULT);
  ASSERT_EQ(MrMemory::from_process(getpid(), a, 64, false, &m), 0);
  EXPECT_FALSE(m.writable());
  munmap(p, kPage);
  close(fd);
}

TEST(MrMemoryFromProcess, PrivateHoleAndMixedRangesAreRefused) {
  SKIP_WITHOUT_MAP_FILES();
  MrMemory m;
  auto* priv = static_cast<std::uint8_t*>(
      mmap(nullptr, 3 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(priv, MAP_FAILED);
  const auto a = reinterpret_cast<std::uintptr_t>(priv);
  // Private memory is nobody's shared object (the provider remaps it).
  EXPECT_EQ(MrMemory::from_process(getpid(), a, kPage, true, &m), EINVAL);
  ASSERT_EQ(munmap(priv + kPage, kPage), 0);
  EXPECT_EQ(MrMemory::from_process(getpid(), a, 3 * kPage, true, &m), EFAULT);  // a hole
  // Shared then private pages.
  ASSERT_NE(mmap(priv + kPage, kPage, PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
            MAP_FAILED);
  EXPECT_EQ(MrMemory::from_process(getpid(), a + kPage, 2 * kPage, true, &m), EINVAL);
  EXPECT_EQ(MrMemory::from_process(getpid(), a, 0, true, &m), EINVAL);
  EXPECT_EQ(MrMemory::from_process(0, a, kPage, true, &m), EINVAL);
  munmap(priv, 3 * kPage);
}

// A sealed memfd of `pages` pages, each byte its offset's low bits plus `tag`.
int tagged_memfd(std::size_t pages, int tag) {
  const int fd = memfd_create("t", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  std::vector<std::uint8_t> bytes(pages * kPage);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(i + tag);
  if (pwrite(fd, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size())) return -1;
  fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK);
  return fd;
}

TEST(MrMemoryFromProcess, ObjectsSideBySideMapAsOneBuffer) {
  SKIP_WITHOUT_MAP_FILES();
  // Page 0: memfd a's page 1; pages 1..2: memfd b's pages 0..1 (what the
  // provider leaves after registering the next heap buffer).
  const int a = tagged_memfd(2, 0), b = tagged_memfd(2, 100);
  ASSERT_GE(a, 0);
  ASSERT_GE(b, 0);
  auto* p = static_cast<std::uint8_t*>(
      mmap(nullptr, 3 * kPage, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(p, MAP_FAILED);
  ASSERT_NE(mmap(p, kPage, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, a,
                 static_cast<off_t>(kPage)),
            MAP_FAILED);
  ASSERT_NE(mmap(p + kPage, 2 * kPage, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, b, 0),
            MAP_FAILED);
  const int fds = [] {
    int n = 0;
    for (int fd = 0; fd < 1024; ++fd) n += fcntl(fd, F_GETFD) >= 0 ? 1 : 0;
    return n;
  }();
  MrMemory m;
  ASSERT_EQ(MrMemory::from_process(getpid(), reinterpret_cast<std::uintptr_t>(p + 10),
                                   3 * kPage - 20, true, &m),
            0);
  EXPECT_EQ(m.map_len(), 3 * kPage);
  EXPECT_TRUE(m.writable());
  EXPECT_FALSE(m.guarded());  // both sealed
  EXPECT_EQ(m.host()[0], p[10]);
  EXPECT_EQ(m.host()[kPage], p[kPage + 10]);
  EXPECT_EQ(m.host()[2 * kPage], p[2 * kPage + 10]);
  m.host()[kPage - 11] = 0xEE;  // a's last byte
  m.host()[kPage - 10] = 0xDD;  // b's first
  EXPECT_EQ(p[kPage - 1], 0xEE);
  EXPECT_EQ(p[kPage], 0xDD);
  m.reset();
  int after = 0;
  for (int fd = 0; fd < 1024; ++fd) after += fcntl(fd, F_GETFD) >= 0 ? 1 : 0;
  EXPECT_EQ(after, fds);  // the daemon keeps no descriptor either
  munmap(p, 3 * kPage);
  close(a);
  close(b);
}

TEST(MrMemoryFromProcess, MoreObjectsThanTheProtocolAllowsAreRefused) {
  SKIP_WITHOUT_MAP_FILES();
  // Pages alternating between two memfds: one run each.
  const std::size_t pages = ctl::kMaxMrObjects + 1;
  const int a = tagged_memfd(pages, 0), b = tagged_memfd(pages, 1);
  auto* p = static_cast<std::uint8_t*>(
      mmap(nullptr, pages * kPage, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(p, MAP_FAILED);
  for (std::size_t i = 0; i < pages; ++i) {
    ASSERT_NE(mmap(p + i * kPage, kPage, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                   i % 2 ? b : a, static_cast<off_t>(i * kPage)),
              MAP_FAILED);
  }
  MrMemory m;
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  EXPECT_EQ(MrMemory::from_process(getpid(), at, pages * kPage, true, &m), EINVAL);
  ASSERT_EQ(MrMemory::from_process(getpid(), at, (pages - 1) * kPage, true, &m), 0);
  EXPECT_EQ(m.host()[kPage + 3], static_cast<std::uint8_t>(kPage + 3 + 1));
  m.reset();
  munmap(p, pages * kPage);
  close(a);
  close(b);
}

TEST(MrMemoryFromProcess, SysvSegmentIncludingHugePages) {
  SKIP_WITHOUT_MAP_FILES();
  for (const bool huge : {false, true}) {
    const std::size_t len = huge ? std::size_t{2} << 20 : 4 * kPage;
    const int id = shmget(IPC_PRIVATE, len, IPC_CREAT | 0600 | (huge ? SHM_HUGETLB : 0));
    if (id < 0 && huge) {
      std::printf("SHM_HUGETLB not tested: %s\n", std::strerror(errno));
      continue;
    }
    ASSERT_GE(id, 0);
    auto* p = static_cast<std::uint8_t*>(shmat(id, nullptr, 0));
    shmctl(id, IPC_RMID, nullptr);
    ASSERT_NE(p, reinterpret_cast<void*>(-1));
    p[len - 1] = 5;
    MrMemory m;
    ASSERT_EQ(MrMemory::from_process(getpid(), reinterpret_cast<std::uintptr_t>(p + len - 10), 10,
                                     true, &m),
              0)
        << (huge ? "huge" : "small");
    EXPECT_EQ(m.host()[9], 5);
    EXPECT_EQ(m.map_len(), huge ? len : kPage);  // huge pages map whole
    m.reset();
    shmdt(p);
  }
}

// SysV segment 0, the first of a fresh IPC namespace (or of a machine after
// boot), has inode 0 in the maps; it maps like any other segment. In a
// child in an IPC namespace of its own, so that the segment is number 0.
TEST(MrMemoryFromProcess, SysvSegmentZero) {
  SKIP_WITHOUT_MAP_FILES();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (unshare(CLONE_NEWIPC) != 0) _exit(77);
    const int id = shmget(IPC_PRIVATE, 4 * kPage, IPC_CREAT | 0600);
    if (id != 0) _exit(2);
    auto* p = static_cast<std::uint8_t*>(shmat(id, nullptr, 0));
    shmctl(id, IPC_RMID, nullptr);
    if (p == reinterpret_cast<void*>(-1)) _exit(3);
    p[kPage + 1] = 7;
    MrMemory m;
    const int rc = MrMemory::from_process(getpid(), reinterpret_cast<std::uintptr_t>(p + kPage),
                                          2 * kPage, true, &m);
    if (rc != 0) _exit(10 + rc);
    _exit(m.host()[1] == 7 && m.map_len() == 2 * kPage ? 0 : 4);
  }
  int st = 0;
  ASSERT_EQ(waitpid(child, &st, 0), child);
  ASSERT_TRUE(WIFEXITED(st));
  if (WEXITSTATUS(st) == 77) GTEST_SKIP() << "no IPC namespace (unshare: not permitted)";
  // 10 + errno when from_process refused it: 32 (EINVAL) before segment 0
  // counted as a shared object.
  EXPECT_EQ(WEXITSTATUS(st), 0);
}

// The engine's first touch of a page would otherwise land on a message
// (docs/first-lap.md, "The first lap of a receive queue").
TEST(MrMemoryFromProcess, MapsEveryPageAtRegistration) {
  SKIP_WITHOUT_MAP_FILES();
  auto* p = static_cast<std::uint8_t*>(
      mmap(nullptr, 16 * kPage, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(p, MAP_FAILED);
  std::memset(p, 3, 16 * kPage);
  MrMemory m;
  ASSERT_EQ(MrMemory::from_process(getpid(), reinterpret_cast<std::uintptr_t>(p), 16 * kPage, true,
                                   &m),
            0);
  EXPECT_EQ(test::mapped_pages(m.host(), m.map_len()), 16u);
  EXPECT_EQ(m.host()[5 * kPage], 3);
  munmap(p, 16 * kPage);
}

// A client's sparse object stays sparse: the daemon maps what the object
// holds and allocates nothing for its holes (tests/integration/verbs/quota.sh
// registers 64 GiB memfds).
TEST(MrMemoryFromProcess, LeavesASparseObjectsHolesUnallocated) {
  SKIP_WITHOUT_MAP_FILES();
  const int fd = memfd_create("t", MFD_CLOEXEC);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(256 * kPage)), 0);
  auto* p = static_cast<std::uint8_t*>(
      mmap(nullptr, 256 * kPage, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  ASSERT_NE(p, MAP_FAILED);
  p[3 * kPage] = 1;
  struct stat before {};
  ASSERT_EQ(fstat(fd, &before), 0);
  MrMemory m;
  ASSERT_EQ(MrMemory::from_process(getpid(), reinterpret_cast<std::uintptr_t>(p), 256 * kPage, true,
                                   &m),
            0);
  struct stat after {};
  ASSERT_EQ(fstat(fd, &after), 0);
  EXPECT_EQ(after.st_blocks, before.st_blocks);
  EXPECT_EQ(test::mapped_pages(m.host(), m.map_len()), 1u);
  munmap(p, 256 * kPage);
  close(fd);
}

TEST(MrMemoryFromMemfd, MapsEveryPageAtRegistration) {
  const int fd = memfd_create("t", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  const std::vector<unsigned char> bytes(8 * kPage, 4);
  ASSERT_EQ(pwrite(fd, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  ASSERT_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
  MrMemory m;
  ASSERT_EQ(MrMemory::from_memfd(fd, 8 * kPage, 0, &m), 0);  // takes fd
  EXPECT_EQ(test::mapped_pages(m.host(), m.map_len()), 8u);
}

TEST(MrMemoryFromMemfd, UnsealedIsRefused) {
  MrMemory m;
  const int fd = memfd_create("u", MFD_CLOEXEC);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(kPage)), 0);
  EXPECT_EQ(MrMemory::from_memfd(fd, kPage, 0, &m), EINVAL);  // takes fd
}

}  // namespace
}  // namespace uroce::daemon
