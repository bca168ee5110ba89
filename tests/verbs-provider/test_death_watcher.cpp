#include "verbs-provider/death_watcher.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <rdma/ib_user_verbs.h>
#include <sys/socket.h>
#include <unistd.h>

namespace uroce::provider {
namespace {

struct Rig {
  Rig() {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) std::abort();
    client.adopt(sv[0]);
    server = sv[1];
    int p[2];
    if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) std::abort();
    async_rd = p[0];
    async_wr = p[1];
  }
  ~Rig() {
    watcher.stop();
    if (server >= 0) close(server);
    close(async_rd);
    close(async_wr);
  }
  // Waits up to `ms` for an async record; true with *ev filled.
  bool read_event(ib_uverbs_async_event_desc* ev, int ms) {
    pollfd pf{async_rd, POLLIN, 0};
    if (poll(&pf, 1, ms) != 1) return false;
    return read(async_rd, ev, sizeof(*ev)) == static_cast<ssize_t>(sizeof(*ev));
  }
  CtlClient client;
  DeathWatcher watcher;
  int server = -1;
  int async_rd = -1;
  int async_wr = -1;
};

TEST(DeathWatcher_HangUp, MarksDeadAndWritesOneDeviceFatal) {
  Rig rig;
  ASSERT_EQ(rig.watcher.start(&rig.client, rig.async_wr), 0);
  EXPECT_FALSE(rig.client.dead());
  close(rig.server);
  rig.server = -1;
  ib_uverbs_async_event_desc ev{};
  ASSERT_TRUE(rig.read_event(&ev, 5000));
  EXPECT_EQ(ev.event_type, static_cast<std::uint32_t>(IBV_EVENT_DEVICE_FATAL));
  EXPECT_EQ(ev.element, 0u);
  EXPECT_TRUE(rig.client.dead());
  EXPECT_FALSE(rig.read_event(&ev, 100));  // exactly one
  rig.watcher.stop();
  EXPECT_FALSE(rig.watcher.running());
}

TEST(DeathWatcher_HangUp, ShutdownByThePeerCountsToo) {
  Rig rig;
  ASSERT_EQ(rig.watcher.start(&rig.client, rig.async_wr), 0);
  shutdown(rig.server, SHUT_RDWR);
  ib_uverbs_async_event_desc ev{};
  ASSERT_TRUE(rig.read_event(&ev, 5000));
  EXPECT_EQ(ev.event_type, static_cast<std::uint32_t>(IBV_EVENT_DEVICE_FATAL));
}

TEST(DeathWatcher_Stop, JoinsWithoutWritingAnything) {
  Rig rig;
  ASSERT_EQ(rig.watcher.start(&rig.client, rig.async_wr), 0);
  rig.watcher.stop();
  rig.watcher.stop();  // idempotent
  ib_uverbs_async_event_desc ev{};
  EXPECT_FALSE(rig.read_event(&ev, 50));
  EXPECT_FALSE(rig.client.dead());
}

TEST(DeathWatcher_Poll, ReadableRepliesDoNotWakeIt) {
  Rig rig;
  ASSERT_EQ(rig.watcher.start(&rig.client, rig.async_wr), 0);
  const char msg[4] = {1, 2, 3, 4};
  ASSERT_EQ(send(rig.server, msg, sizeof(msg), 0), 4);
  ib_uverbs_async_event_desc ev{};
  EXPECT_FALSE(rig.read_event(&ev, 100));
  EXPECT_FALSE(rig.client.dead());
  char got[4];
  EXPECT_EQ(recv(rig.client.fd(), got, sizeof(got), 0), 4);  // still there for the client
}

TEST(DeathWatcher_Start, SecondStartGivesEbusy) {
  Rig rig;
  ASSERT_EQ(rig.watcher.start(&rig.client, rig.async_wr), 0);
  EXPECT_EQ(rig.watcher.start(&rig.client, rig.async_wr), EBUSY);
}

TEST(WriteDeviceFatal_FullPipe, ReturnsFalseInsteadOfBlocking) {
  int p[2];
  ASSERT_EQ(pipe2(p, O_NONBLOCK), 0);
  int n = 0;
  while (write_device_fatal(p[1])) ++n;
  EXPECT_GT(n, 0);
  // Only whole records went in.
  ib_uverbs_async_event_desc ev;
  int got = 0;
  while (read(p[0], &ev, sizeof(ev)) == static_cast<ssize_t>(sizeof(ev))) ++got;
  EXPECT_EQ(got, n);
  close(p[0]);
  close(p[1]);
}

}  // namespace
}  // namespace uroce::provider
