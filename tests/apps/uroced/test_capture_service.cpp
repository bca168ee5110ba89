#include "apps/uroced/capture_service.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace uroce::daemon {
namespace {

// The refusals come before any DPDK object is made: no EAL needed here.
// (A capture that runs is tests/integration/verbs/capture.sh's.)
class CaptureServiceFixture : public ::testing::Test {
 protected:
  CaptureServiceFixture()
      : svc_({CaptureTarget{.device = "uroce0",
                            .port_id = 0,
                            .queues = 1,
                            .max_frame = 9022,
                            .quiesce = [this] { ++quiesced_; }}},
             "test") {}

  // A stream socket pair; the service takes [1].
  void SetUp() override { ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv_), 0); }
  void TearDown() override { close(sv_[0]); }

  static bool is_open(int fd) { return fcntl(fd, F_GETFD) != -1; }

  CaptureService svc_;
  int sv_[2] = {-1, -1};
  int quiesced_ = 0;
  ctl::CaptureRep rep_{};
};

using CaptureService_Start = CaptureServiceFixture;
using CaptureService_Status = CaptureServiceFixture;

TEST_F(CaptureService_Start, UnknownDeviceIsEnodevAndTheSocketIsClosed) {
  EXPECT_EQ(svc_.start("uroce7", 0, 0, sv_[1], &rep_), ENODEV);
  EXPECT_FALSE(is_open(sv_[1]));
  EXPECT_EQ(quiesced_, 0);
}

TEST_F(CaptureService_Start, SnaplenBelowTheMinimumIsEinval) {
  EXPECT_EQ(svc_.start("uroce0", 0, ctl::kMinSnaplen - 1, sv_[1], &rep_), EINVAL);
  EXPECT_FALSE(is_open(sv_[1]));
}

TEST_F(CaptureService_Start, PipeIsNotAStreamSocket) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  EXPECT_EQ(svc_.start("uroce0", 0, 0, p[1], &rep_), ENOTSOCK);
  EXPECT_FALSE(is_open(p[1]));
  close(p[0]);
  close(sv_[1]);
}

TEST_F(CaptureService_Start, AfterStopIsEshutdown) {
  svc_.stop();
  EXPECT_EQ(svc_.start("uroce0", 0, 0, sv_[1], &rep_), ESHUTDOWN);
  EXPECT_FALSE(is_open(sv_[1]));
  svc_.stop();  // idempotent
}

TEST_F(CaptureService_Status, NoneRunning) {
  EXPECT_TRUE(svc_.status().empty());
  close(sv_[1]);
}

}  // namespace
}  // namespace uroce::daemon
