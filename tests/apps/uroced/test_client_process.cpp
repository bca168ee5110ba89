#include "apps/uroced/client_process.h"

#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace uroce::daemon {
namespace {

constexpr uid_t kNobody = 65534;

// A child that stops at each byte it reads from `go` and reports each step
// done on `done`: step 1 drops to kNobody (dumpable again, as a user's
// process is), step 2 makes itself non-dumpable. It exits on end of file.
class Child {
 public:
  Child() {
    EXPECT_EQ(pipe(go_), 0);
    EXPECT_EQ(pipe(done_), 0);
    pid_ = fork();
    if (pid_ == 0) {
      close(go_[1]);
      close(done_[0]);
      char c;
      int step = 0;
      while (read(go_[0], &c, 1) == 1) {
        ++step;
        bool ok = true;
        if (step == 1) {
          ok = setresgid(kNobody, kNobody, kNobody) == 0 &&
               setresuid(kNobody, kNobody, kNobody) == 0 && prctl(PR_SET_DUMPABLE, 1) == 0;
        } else if (step == 2) {
          ok = prctl(PR_SET_DUMPABLE, 0) == 0;
        }
        const char r = ok ? 'y' : 'n';
        if (write(done_[1], &r, 1) != 1) _exit(2);
      }
      _exit(0);
    }
    close(go_[0]);
    close(done_[1]);
  }
  ~Child() { reap(); }
  // Runs the next step; true when the child did it.
  bool step() {
    const char c = 's';
    char r = 0;
    return write(go_[1], &c, 1) == 1 && read(done_[0], &r, 1) == 1 && r == 'y';
  }
  // Makes the child exit and waits for it (the pid may then be reused).
  void reap() {
    if (pid_ <= 0) return;
    close(go_[1]);
    close(done_[0]);
    int st;
    waitpid(pid_, &st, 0);
    pid_ = -1;
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int go_[2] = {-1, -1};
  int done_[2] = {-1, -1};
};

TEST(ReadProcessIds, Self_MatchesGetresuid) {
  ProcessIds ids;
  ASSERT_EQ(read_process_ids(getpid(), &ids), 0);
  uid_t r, e, s;
  gid_t gr, ge, gs;
  ASSERT_EQ(getresuid(&r, &e, &s), 0);
  ASSERT_EQ(getresgid(&gr, &ge, &gs), 0);
  EXPECT_EQ(ids.uid[0], r);
  EXPECT_EQ(ids.uid[1], e);
  EXPECT_EQ(ids.uid[2], s);
  EXPECT_EQ(ids.gid[0], gr);
  EXPECT_EQ(ids.gid[1], ge);
  EXPECT_EQ(ids.gid[2], gs);
  EXPECT_EQ(ids.owner, e);
}

TEST(ReadProcessIds, NoProcess_Esrch) {
  ProcessIds ids;
  EXPECT_EQ(read_process_ids(0, &ids), ESRCH);
  EXPECT_EQ(read_process_ids(-1, &ids), ESRCH);
  Child c;
  const pid_t gone = c.pid();
  c.reap();
  EXPECT_EQ(read_process_ids(gone, &ids), ESRCH);
}

TEST(ClientProcess, Open_SelfAsItsUser_Ok) {
  ClientProcess p;
  ASSERT_EQ(p.open(getpid(), geteuid()), 0);
  EXPECT_EQ(p.unchanged(), 0);
  EXPECT_EQ(p.pid(), getpid());
}

TEST(ClientProcess, Open_NoProcess_Esrch) {
  ClientProcess zero;
  EXPECT_EQ(zero.open(0, geteuid()), ESRCH);
  Child c;
  const pid_t gone = c.pid();
  c.reap();
  ClientProcess p;
  EXPECT_EQ(p.open(gone, geteuid()), ESRCH);
}

TEST(ClientProcess, Open_AnotherUsersProcess_Eperm) {
  // Our process, asked for by a connection of another (non-root) user.
  ClientProcess p;
  EXPECT_EQ(p.open(getpid(), geteuid() == 12345 ? 12346 : 12345), EPERM);
}

TEST(ClientProcess, Unchanged_ProcessExited_Esrch) {
  Child c;
  ClientProcess p;
  ASSERT_EQ(p.open(c.pid(), geteuid()), 0);
  EXPECT_EQ(p.unchanged(), 0);
  c.reap();
  EXPECT_EQ(p.unchanged(), ESRCH);
}

TEST(ClientProcess, Unchanged_IdsChanged_Eperm) {
  if (geteuid() != 0) GTEST_SKIP() << "the child changes its ids (root)";
  // A root connection's process that turns into another user's between the
  // two checks (as a set-user-ID exec would, the other way round).
  Child c;
  ClientProcess p;
  ASSERT_EQ(p.open(c.pid(), 0), 0);
  ASSERT_TRUE(c.step());
  EXPECT_EQ(p.unchanged(), EPERM);
}

TEST(ClientProcess, Open_UsersProcess_DumpableOnly) {
  if (geteuid() != 0) GTEST_SKIP() << "the child changes its ids (root)";
  Child c;
  ASSERT_TRUE(c.step());  // nobody's, dumpable
  ClientProcess dumpable;
  EXPECT_EQ(dumpable.open(c.pid(), kNobody), 0);
  EXPECT_EQ(dumpable.unchanged(), 0);
  ClientProcess as_other;
  EXPECT_EQ(as_other.open(c.pid(), kNobody + 1), EPERM);
  ASSERT_TRUE(c.step());  // not dumpable: its /proc files are root's now
  EXPECT_EQ(dumpable.unchanged(), EPERM);
  ClientProcess not_dumpable;
  EXPECT_EQ(not_dumpable.open(c.pid(), kNobody), EPERM);
  // A root connection may still read it.
  ClientProcess as_root;
  EXPECT_EQ(as_root.open(c.pid(), 0), 0);
}

}  // namespace
}  // namespace uroce::daemon
