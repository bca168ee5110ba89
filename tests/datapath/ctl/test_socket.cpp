#include "datapath/ctl/socket.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace uroce::ctl {
namespace {

class SocketPair : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fd_), 0);
  }
  void TearDown() override {
    if (fd_[0] >= 0) close(fd_[0]);
    if (fd_[1] >= 0) close(fd_[1]);
  }
  int fd_[2] = {-1, -1};
};

std::span<const std::byte> bytes_of(const std::string& s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

int open_fd_count() {
  int n = 0;
  for (int fd = 0; fd < 1024; ++fd) {
    if (fcntl(fd, F_GETFD) != -1) ++n;
  }
  return n;
}

TEST_F(SocketPair, SendRecv_MessageAndFdsArrive) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  const std::string msg = "hello";
  const int fds[] = {p[1]};
  ASSERT_TRUE(send_msg(fd_[0], bytes_of(msg), fds).ok());
  close(p[1]);

  std::array<std::byte, 64> buf{};
  std::array<int, 4> got{-1, -1, -1, -1};
  const IoResult r = recv_msg(fd_[1], buf, got);
  ASSERT_TRUE(r.ok()) << to_string(r.err);
  EXPECT_EQ(r.bytes, msg.size());
  ASSERT_EQ(r.nfds, 1);
  EXPECT_EQ(std::memcmp(buf.data(), msg.data(), msg.size()), 0);
  // The received fd is the pipe's write end, close-on-exec.
  EXPECT_EQ(fcntl(got[0], F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  ASSERT_EQ(write(got[0], "x", 1), 1);
  char c = 0;
  ASSERT_EQ(read(p[0], &c, 1), 1);
  EXPECT_EQ(c, 'x');
  close(got[0]);
  close(p[0]);
}

TEST_F(SocketPair, RecvMsg_TooLongMessageIsTruncatedNotHalfRead) {
  const std::string msg(100, 'a');
  ASSERT_TRUE(send_msg(fd_[0], bytes_of(msg)).ok());
  ASSERT_TRUE(send_msg(fd_[0], bytes_of("next")).ok());
  std::array<std::byte, 16> buf{};
  const IoResult r = recv_msg(fd_[1], buf, {});
  EXPECT_EQ(r.err, IoError::kTruncated);
  // The rest of the long message is gone; the next one is intact.
  const IoResult r2 = recv_msg(fd_[1], buf, {});
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(r2.bytes, 4u);
}

TEST_F(SocketPair, RecvMsg_SurplusFdsAreClosedNotLeaked) {
  const int before = open_fd_count();
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  const int fds[] = {p[0], p[1], p[0]};
  ASSERT_TRUE(send_msg(fd_[0], bytes_of("x"), fds).ok());
  close(p[0]);
  close(p[1]);
  std::array<std::byte, 16> buf{};
  std::array<int, 1> got{-1};
  const IoResult r = recv_msg(fd_[1], buf, got);
  EXPECT_EQ(r.err, IoError::kTooManyFds);
  EXPECT_EQ(open_fd_count(), before);
}

TEST_F(SocketPair, RecvMsg_FdsWithTruncatedMessageAreClosed) {
  const int before = open_fd_count();
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  const int fds[] = {p[1]};
  ASSERT_TRUE(send_msg(fd_[0], bytes_of(std::string(64, 'z')), fds).ok());
  close(p[0]);
  close(p[1]);
  std::array<std::byte, 8> buf{};
  std::array<int, 4> got{};
  EXPECT_EQ(recv_msg(fd_[1], buf, got).err, IoError::kTruncated);
  EXPECT_EQ(open_fd_count(), before);
}

TEST_F(SocketPair, RecvMsg_ReceiverAtFdLimit_FdsLostMessageKept) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  const int fds[] = {p[0], p[1]};
  ASSERT_TRUE(send_msg(fd_[0], bytes_of("reply"), fds).ok());
  close(p[0]);
  close(p[1]);
  const int before = open_fd_count();
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
  rlimit none = old;
  none.rlim_cur = 0;  // no new descriptor can be installed
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &none), 0);
  std::array<std::byte, 16> buf{};
  std::array<int, 4> got{};
  const IoResult r = recv_msg(fd_[1], buf, got);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
  EXPECT_EQ(r.err, IoError::kFdsLost);
  EXPECT_EQ(r.bytes, 5u);
  EXPECT_EQ(r.nfds, 0);
  EXPECT_EQ(open_fd_count(), before);
}

TEST_F(SocketPair, RecvMsg_PeerClosedIsReported) {
  close(fd_[0]);
  fd_[0] = -1;
  std::array<std::byte, 8> buf{};
  EXPECT_EQ(recv_msg(fd_[1], buf, {}).err, IoError::kClosed);
}

TEST_F(SocketPair, SendMsg_ClosedPeerIsEpipeNotSignal) {
  close(fd_[1]);
  fd_[1] = -1;
  const IoResult r = send_msg(fd_[0], bytes_of("x"));
  EXPECT_EQ(r.err, IoError::kSys);
  EXPECT_EQ(r.sys_errno, EPIPE);
}

TEST_F(SocketPair, SendMsg_MoreThanSixteenFdsRefused) {
  std::vector<int> fds(17, 0);
  EXPECT_EQ(send_msg(fd_[0], bytes_of("x"), fds).err, IoError::kTooManyFds);
}

TEST_F(SocketPair, PeerCred_IsThisProcess) {
  PeerCred c;
  ASSERT_TRUE(peer_cred(fd_[1], &c));
  EXPECT_EQ(c.pid, getpid());
  EXPECT_EQ(c.uid, getuid());
  EXPECT_EQ(c.gid, getgid());
}

TEST(ListenAt, ConnectRoundTripAndModeApplied) {
  char dir[] = "/tmp/uroce-ctl-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/s.sock";
  const int l = listen_at(path.c_str(), 0666);
  ASSERT_GE(l, 0) << std::strerror(errno);
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666u);
  const int c = connect_to(path.c_str());
  ASSERT_GE(c, 0);
  const int a = accept4(l, nullptr, nullptr, SOCK_CLOEXEC);
  ASSERT_GE(a, 0);
  ASSERT_TRUE(send_msg(c, bytes_of("ping")).ok());
  std::array<std::byte, 8> buf{};
  const IoResult r = recv_msg(a, buf, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.bytes, 4u);
  close(a);
  close(c);
  close(l);
  // A second listener replaces a stale socket file.
  const int l2 = listen_at(path.c_str(), 0600);
  EXPECT_GE(l2, 0);
  close(l2);
  unlink(path.c_str());
  rmdir(dir);
}

TEST(ConnectTo, MissingSocketIsEnoent) {
  EXPECT_EQ(connect_to("/tmp/uroce-no-such-dir/none.sock"), -1);
  EXPECT_EQ(errno, ENOENT);
}

TEST(ConnectTo, OverlongPathIsEnametoolong) {
  const std::string p(200, 'a');
  EXPECT_EQ(connect_to(p.c_str()), -1);
  EXPECT_EQ(errno, ENAMETOOLONG);
}

TEST_F(SocketPair, RecvMsg_PassCredentials_NamesTheSender) {
  const std::string msg = "who";
  std::array<std::byte, 16> buf{};
  // Off: no sender.
  ASSERT_TRUE(send_msg(fd_[0], bytes_of(msg)).ok());
  IoResult r = recv_msg(fd_[1], buf, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.sender.pid, 0);
  // On: the process that sent each message, not the one that made the
  // socket (a child that inherited it).
  ASSERT_TRUE(pass_credentials(fd_[1]));
  const pid_t child = fork();
  if (child == 0) _exit(send_msg(fd_[0], bytes_of(msg)).ok() ? 0 : 1);
  int st = 0;
  ASSERT_EQ(waitpid(child, &st, 0), child);
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  const int fds[] = {p[0]};
  ASSERT_TRUE(send_msg(fd_[0], bytes_of(msg), fds).ok());
  close(p[0]);
  close(p[1]);
  r = recv_msg(fd_[1], buf, {});
  ASSERT_TRUE(r.ok()) << to_string(r.err);
  EXPECT_EQ(r.sender.pid, child);
  EXPECT_EQ(r.sender.uid, getuid());
  std::array<int, 2> got{-1, -1};
  r = recv_msg(fd_[1], buf, got);
  ASSERT_TRUE(r.ok()) << to_string(r.err);
  EXPECT_EQ(r.nfds, 1);  // the credentials take no fd's place
  EXPECT_EQ(r.sender.pid, getpid());
  EXPECT_EQ(r.sender.gid, getgid());
  close(got[0]);
}

}  // namespace
}  // namespace uroce::ctl
