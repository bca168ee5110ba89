#include "verbs-provider/comp_channel.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/verbs-provider/fake_daemon.h"

namespace uroce::provider {
namespace {

using testing::FakeContext;

// A channel as the interposer makes it: the read end of a pipe whose write
// end is already closed.
int interposer_style_pipe() {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) std::abort();
  close(p[1]);
  return p[0];
}

TEST(ReopenPipeForWrite_Pipe, NewWriteEndReachesTheReadEnd) {
  const int rd = interposer_style_pipe();
  const int wr = reopen_pipe_for_write(rd);
  ASSERT_GE(wr, 0) << strerror(-wr);
  EXPECT_EQ(fcntl(wr, F_GETFL) & O_ACCMODE, O_WRONLY);
  EXPECT_NE(fcntl(wr, F_GETFL) & O_NONBLOCK, 0);
  EXPECT_EQ(fcntl(wr, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  const std::uint64_t rec = 0x1122334455667788ull;
  ASSERT_EQ(write(wr, &rec, sizeof(rec)), 8);
  std::uint64_t got = 0;
  ASSERT_EQ(read(rd, &got, sizeof(got)), 8);
  EXPECT_EQ(got, rec);
  // Once the only write end is gone, the reader sees EOF: what
  // ibv_get_cq_event reports after the daemon died.
  close(wr);
  EXPECT_EQ(read(rd, &got, sizeof(got)), 0);
  close(rd);
}

TEST(ReopenPipeForWrite_NotAPipe, RegularFileGivesEinvalBadFdGivesEbadf) {
  const int fd = memfd_create("not-a-pipe", MFD_CLOEXEC);
  EXPECT_EQ(reopen_pipe_for_write(fd), -EINVAL);
  close(fd);
  EXPECT_EQ(reopen_pipe_for_write(-1), -EBADF);
}

TEST(ChannelCacheHandleFor_Register, OncePerPipeAndTheDaemonEndWorks) {
  FakeContext fc;
  const int ch1 = interposer_style_pipe();
  const int ch2 = interposer_style_pipe();
  std::uint32_t h1 = 0, h1again = 0, h2 = 0;
  ASSERT_EQ(fc.st()->channels.handle_for(&fc.st()->ctl, ch1, &h1), 0);
  ASSERT_EQ(fc.st()->channels.handle_for(&fc.st()->ctl, ch1, &h1again), 0);
  // A dup of the same read end names the same pipe.
  const int ch1dup = dup(ch1);
  std::uint32_t h1dup = 0;
  ASSERT_EQ(fc.st()->channels.handle_for(&fc.st()->ctl, ch1dup, &h1dup), 0);
  ASSERT_EQ(fc.st()->channels.handle_for(&fc.st()->ctl, ch2, &h2), 0);
  EXPECT_EQ(h1, h1again);
  EXPECT_EQ(h1, h1dup);
  EXPECT_NE(h1, h2);
  EXPECT_EQ(fc.st()->channels.size(), 2u);
  int registrations = 0;
  for (ctl::Op op : fc.server().ops()) registrations += op == ctl::Op::kCreateCompChannel;
  EXPECT_EQ(registrations, 2);
  // The daemon's copy of the first write end delivers into the first pipe.
  std::uint64_t rec = 7;
  {
    std::lock_guard<std::mutex> g(fc.daemon.mu);
    ASSERT_EQ(fc.daemon.channel_fds.size(), 2u);
    ASSERT_EQ(write(fc.daemon.channel_fds[0], &rec, 8), 8);
  }
  std::uint64_t got = 0;
  ASSERT_EQ(read(ch1, &got, 8), 8);
  EXPECT_EQ(got, 7u);
  close(ch1);
  close(ch1dup);
  close(ch2);
}

TEST(ChannelCacheHandleFor_Errors, DaemonRefusalIsReturnedAndNotCached) {
  FakeContext fc;
  fc.daemon.refuse.push_back(ctl::Op::kCreateCompChannel);
  const int ch = interposer_style_pipe();
  std::uint32_t h = 0;
  EXPECT_EQ(fc.st()->channels.handle_for(&fc.st()->ctl, ch, &h), EINVAL);
  EXPECT_EQ(fc.st()->channels.size(), 0u);
  fc.daemon.refuse.clear();
  EXPECT_EQ(fc.st()->channels.handle_for(&fc.st()->ctl, ch, &h), 0);
  EXPECT_EQ(fc.st()->channels.size(), 1u);
  close(ch);
}

TEST(ChannelCacheHandleFor_Errors, NotAPipeGivesEinvalWithoutAsking) {
  FakeContext fc;
  const int fd = memfd_create("x", MFD_CLOEXEC);
  std::uint32_t h = 0;
  EXPECT_EQ(fc.st()->channels.handle_for(&fc.st()->ctl, fd, &h), EINVAL);
  for (ctl::Op op : fc.server().ops()) EXPECT_NE(op, ctl::Op::kCreateCompChannel);
  close(fd);
}

TEST(ChannelCacheRelease_PreloadChannel, DestroyCallbackTellsTheDaemonOnce) {
  FakeContext fc;
  PreloadChannel pc{};
  pc.ch = ibv_comp_channel{fc.ctx(), interposer_style_pipe(), 0};
  pc.magic = kPreloadChannelMagic;
  std::uint32_t h = 0, destroyed = 0;
  fc.daemon.tweak = [&](const testing::Request& r, testing::Reply&) {
    if (r.op == ctl::Op::kDestroyCompChannel)
      destroyed = r.as<ctl::DestroyCompChannelReq>().channel_handle;
  };
  ASSERT_EQ(fc.st()->channels.handle_for(&fc.st()->ctl, &pc.ch, &h), 0);
  ASSERT_NE(pc.on_destroy, nullptr);
  EXPECT_EQ(pc.cookie, &fc.st()->channels);
  // What the interposed ibv_destroy_comp_channel does before closing.
  pc.on_destroy(pc.cookie, &pc.ch);
  EXPECT_EQ(destroyed, h);
  EXPECT_EQ(fc.st()->channels.size(), 0u);
  // A second release of the same pipe has nothing left to tell.
  const std::size_t ops = fc.server().ops().size();
  EXPECT_EQ(fc.st()->channels.release(&fc.st()->ctl, pc.ch.fd), 0);
  EXPECT_EQ(fc.server().ops().size(), ops);
  close(pc.ch.fd);
}

TEST(ChannelCacheRelease_ContextFirst, ClosingTheContextClearsTheCallback) {
  PreloadChannel pc{};
  {
    FakeContext fc;
    pc.ch = ibv_comp_channel{fc.ctx(), interposer_style_pipe(), 0};
    pc.magic = kPreloadChannelMagic;
    std::uint32_t h = 0;
    ASSERT_EQ(fc.st()->channels.handle_for(&fc.st()->ctl, &pc.ch, &h), 0);
    ASSERT_NE(pc.on_destroy, nullptr);
  }
  EXPECT_EQ(pc.on_destroy, nullptr);
  EXPECT_EQ(pc.cookie, nullptr);
  close(pc.ch.fd);
}

TEST(ChannelCacheHandleFor_ForeignChannel, NoMagicNoCallback) {
  FakeContext fc;
  PreloadChannel pc{};
  pc.ch = ibv_comp_channel{fc.ctx(), interposer_style_pipe(), 0};
  std::uint32_t h = 0;
  ASSERT_EQ(fc.st()->channels.handle_for(&fc.st()->ctl, &pc.ch, &h), 0);
  EXPECT_EQ(pc.on_destroy, nullptr);
  EXPECT_EQ(fc.st()->channels.size(), 1u);
  close(pc.ch.fd);
}

}  // namespace
}  // namespace uroce::provider
