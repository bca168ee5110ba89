#include "apps/uroced/reserve_fd.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

namespace uroce::daemon {
namespace {

// Runs `body` in a child process (its descriptor limit lowered there, not
// in the test runner) and returns its exit status: 0 when every step held,
// else the number of the step that failed.
template <typename Body>
int in_child(Body body) {
  const pid_t pid = fork();
  if (pid == 0) _exit(body());
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// Lowers the soft descriptor limit to a few above the highest descriptor
// open now, then opens /dev/null until none is left; returns them.
std::vector<int> use_every_descriptor() {
  int highest = 2;
  for (int fd = 3; fd < 4096; ++fd) {
    if (fcntl(fd, F_GETFD) >= 0) highest = fd;
  }
  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  lim.rlim_cur = static_cast<rlim_t>(highest + 8);
  setrlimit(RLIMIT_NOFILE, &lim);
  std::vector<int> fds;
  for (int fd; (fd = open("/dev/null", O_RDONLY)) >= 0;) fds.push_back(fd);
  return fds;
}

TEST(ReserveFd_Take, HeldUntilGiven) {
  ReserveFd r;
  EXPECT_FALSE(r.held());
  EXPECT_TRUE(r.take());
  EXPECT_TRUE(r.held());
  EXPECT_TRUE(r.take());  // held already: nothing opened
  r.give();
  EXPECT_FALSE(r.held());
}

// The slot given up is taken by someone else: take() fails, and succeeds
// at the first descriptor freed afterwards.
TEST(ReserveFd_Take, ComesBackAtTheFirstFreeSlot) {
  EXPECT_EQ(in_child([] {
              ReserveFd r;
              if (!r.take()) return 1;
              std::vector<int> fds = use_every_descriptor();
              if (fds.empty()) return 2;
              r.give();
              const int thief = open("/dev/null", O_RDONLY);
              if (thief < 0) return 3;
              if (r.take() || r.held()) return 4;
              close(fds.back());
              if (!r.take() || !r.held()) return 5;
              if (open("/dev/null", O_RDONLY) >= 0) return 6;  // it holds the only slot
              r.give();
              if (open("/dev/null", O_RDONLY) < 0) return 7;  // given back
              return 0;
            }),
            0);
}

}  // namespace
}  // namespace uroce::daemon
