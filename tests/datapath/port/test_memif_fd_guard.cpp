#include "datapath/port/memif_fd_guard.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>

#include "datapath/port/got_patch.h"
#include "datapath/port/memif_args.h"
#include "tests/datapath/port/eal_once.h"

namespace uroce::port {
namespace {

class MemifFdGuard : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ASSERT_EQ(test::start_eal_once(), ""); }
};

bool open_fd(int fd) { return fcntl(fd, F_GETFD) != -1; }

TEST_F(MemifFdGuard, IsEalMemoryFd_NoneWithoutHugepages) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  EXPECT_FALSE(is_eal_memory_fd(p[0]));
  EXPECT_FALSE(is_eal_memory_fd(p[1]));
  EXPECT_FALSE(is_eal_memory_fd(-1));
  close(p[0]);
  close(p[1]);
}

TEST_F(MemifFdGuard, GuardedClose_ClosesADescriptorNotOfEal) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  const std::uint64_t refused = memif_closes_refused();
  EXPECT_EQ(detail::guarded_close(p[0]), 0);
  EXPECT_FALSE(open_fd(p[0]));
  EXPECT_EQ(errno, EBADF);
  EXPECT_EQ(memif_closes_refused(), refused);
  // A descriptor already closed fails as close(2) does.
  EXPECT_EQ(detail::guarded_close(p[0]), -1);
  EXPECT_EQ(errno, EBADF);
  close(p[1]);
}

TEST_F(MemifFdGuard, Install_PointsThePmdsCloseAtTheGuard) {
  // Debian's EAL loads every PMD of its plugin directory at start.
  ASSERT_FALSE(got_slot_targets(kMemifPmdObject, "close").empty())
      << "the memif PMD is not loaded or does not call close";
  std::string err;
  ASSERT_EQ(install_memif_fd_guard(&err), 0) << err;
  for (void* t : got_slot_targets(kMemifPmdObject, "close")) {
    EXPECT_EQ(t, reinterpret_cast<void*>(&detail::guarded_close));
  }
  EXPECT_EQ(install_memif_fd_guard(&err), 0);  // idempotent
}

}  // namespace
}  // namespace uroce::port
