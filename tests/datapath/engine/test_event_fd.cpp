#include "datapath/engine/event_fd.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>

namespace uroce::engine {
namespace {

struct PipeFds {
  int fd[2] = {-1, -1};
  PipeFds() { EXPECT_EQ(::pipe(fd), 0); }
  ~PipeFds() {
    for (int f : fd) {
      if (f >= 0) ::close(f);
    }
  }
};

TEST(EventFd_SetNonblocking, SetsTheFlag) {
  PipeFds p;
  EXPECT_EQ(::fcntl(p.fd[1], F_GETFL) & O_NONBLOCK, 0);
  EXPECT_EQ(set_nonblocking(p.fd[1]), 0);
  EXPECT_NE(::fcntl(p.fd[1], F_GETFL) & O_NONBLOCK, 0);
  EXPECT_EQ(set_nonblocking(p.fd[1]), 0);  // idempotent
  EXPECT_EQ(set_nonblocking(-1), 0);
  EXPECT_EQ(set_nonblocking(1 << 20), EBADF);
}

TEST(EventFd_Write, CompAndAsyncRecords) {
  PipeFds p;
  ASSERT_EQ(write_comp_event(p.fd[1], 0x1122334455667788ull), FdWrite::kOk);
  ASSERT_EQ(write_async_event(p.fd[1], 0xAABB, 15), FdWrite::kOk);
  std::uint8_t buf[24];
  ASSERT_EQ(::read(p.fd[0], buf, sizeof(buf)), 24);
  ib_uverbs_comp_event_desc c;
  std::memcpy(&c, buf, 8);
  EXPECT_EQ(c.cq_handle, 0x1122334455667788ull);
  ib_uverbs_async_event_desc a;
  std::memcpy(&a, buf + 8, 16);
  EXPECT_EQ(a.element, 0xAABBu);
  EXPECT_EQ(a.event_type, 15u);
  EXPECT_EQ(a.reserved, 0u);
}

TEST(EventFd_Write, FailuresByReason) {
  EXPECT_EQ(write_comp_event(-1, 1), FdWrite::kNoFd);
  PipeFds p;
  ASSERT_EQ(set_nonblocking(p.fd[1]), 0);
  FdWrite r = FdWrite::kOk;
  for (int i = 0; i < 100000 && r == FdWrite::kOk; ++i) r = write_comp_event(p.fd[1], 1);
  EXPECT_EQ(r, FdWrite::kFull);
  ::close(p.fd[0]);
  p.fd[0] = -1;
  struct sigaction ign {
  }, old{};
  ign.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ign, &old);
  EXPECT_EQ(write_comp_event(p.fd[1], 1), FdWrite::kClosed);
  ::sigaction(SIGPIPE, &old, nullptr);
  EXPECT_EQ(write_comp_event(1 << 20, 1), FdWrite::kError);  // EBADF
}

}  // namespace
}  // namespace uroce::engine
