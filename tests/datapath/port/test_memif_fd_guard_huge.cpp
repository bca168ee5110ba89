// memif_fd_guard.h against EAL's real memory descriptors: this executable's
// EAL runs in 2 MiB hugepages (--in-memory --single-file-segments, as a
// memif zero-copy client's does), which test_port's --no-huge EAL cannot.
// It makes the hugepages it needs free (root, /proc/sys/vm/nr_hugepages)
// and puts the previous count back at exit.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <rte_memory.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <string>

#include "datapath/port/eal.h"
#include "datapath/port/eal_config.h"
#include "datapath/port/memif_fd_guard.h"

namespace uroce::port {
namespace {

constexpr const char* kNrHugepages = "/proc/sys/vm/nr_hugepages";
constexpr long kPages = 16;  // EAL's -m 16 takes 8; the rest is slack

long read_count(const char* path) {
  std::ifstream f(path);
  long v = -1;
  f >> v;
  return v;
}

bool write_count(const char* path, long v) {
  std::ofstream f(path);
  f << v;
  f.close();
  return !f.fail();
}

long free_hugepages() {
  return read_count("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages");
}

class MemifFdGuardHuge : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    before_ = read_count(kNrHugepages);
    ASSERT_GE(before_, 0) << "cannot read " << kNrHugepages;
    const long more = kPages - free_hugepages();
    if (more > 0) {
      ASSERT_TRUE(write_count(kNrHugepages, before_ + more))
          << "cannot raise " << kNrHugepages << " (the test needs root)";
      raised_ = true;
    }
    ASSERT_GE(free_hugepages(), kPages) << "the kernel gave fewer 2 MiB hugepages than asked";
    EalConfig eal;
    eal.lcores = "0";
    eal.memory_mb = 16;
    eal.hugepages = true;
    eal.in_memory = true;
    eal.log_level = "error";
    eal.extra_args = {"--single-file-segments"};
    std::string err;
    ASSERT_EQ(eal_init(eal, &err), 0) << err;
    started_ = true;
  }
  static void TearDownTestSuite() {
    if (started_) eal_cleanup();
    if (raised_) write_count(kNrHugepages, before_);
  }
  static inline long before_ = -1;
  static inline bool raised_ = false;
  static inline bool started_ = false;
};

// The descriptor EAL keeps for the first memory segment that has one.
int first_memseg_fd() {
  int fd = -1;
  const auto first = [](const rte_memseg_list*, const rte_memseg* ms, void* arg) -> int {
    const int f = rte_memseg_get_fd_thread_unsafe(ms);
    if (f < 0) return 0;
    *static_cast<int*>(arg) = f;
    return 1;
  };
  rte_memseg_walk(first, &fd);
  return fd;
}

TEST_F(MemifFdGuardHuge, IsEalMemoryFd_TheDescriptorOfASegment) {
  const int fd = first_memseg_fd();
  ASSERT_GE(fd, 0) << "EAL keeps no descriptor for its hugepage memory";
  EXPECT_TRUE(is_eal_memory_fd(fd));
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  EXPECT_FALSE(is_eal_memory_fd(p[0]));
  close(p[0]);
  close(p[1]);
}

TEST_F(MemifFdGuardHuge, GuardedClose_LeavesEalsDescriptorOpen) {
  const int fd = first_memseg_fd();
  ASSERT_GE(fd, 0);
  const std::uint64_t refused = memif_closes_refused();
  EXPECT_EQ(detail::guarded_close(fd), 0);
  EXPECT_NE(fcntl(fd, F_GETFD), -1) << "EAL's descriptor was closed";
  EXPECT_EQ(memif_closes_refused(), refused + 1);
  // EAL can still use it: the segment is still what the walk returns.
  EXPECT_EQ(first_memseg_fd(), fd);
}

}  // namespace
}  // namespace uroce::port
