// Cleaning the EAL runtime directory a killed predecessor left
// (stale_runtime.h), in a temporary ".../dpdk/<prefix>" tree.
#include "apps/uroced/stale_runtime.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace uroce::daemon {
namespace {

namespace fs = std::filesystem;

class StaleRuntimeTest : public ::testing::Test {
 protected:
  StaleRuntimeTest() {
    char tmpl[] = "/tmp/uroce_test_stale.XXXXXX";
    base_ = mkdtemp(tmpl);
    dir_ = base_ + "/dpdk/uroced-" + std::to_string(getpid());
    fs::create_directories(dir_);
    std::ofstream(dir_ + "/config") << "x";
    record_ = base_ + "/eal_runtime";
  }
  ~StaleRuntimeTest() override {
    std::error_code ec;
    fs::remove_all(base_, ec);
  }
  // A pid that no process has: a child that already exited and was reaped.
  static long dead_pid() {
    const pid_t p = fork();
    if (p == 0) _exit(0);
    waitpid(p, nullptr, 0);
    return p;
  }
  std::string base_, dir_, record_;
};

TEST_F(StaleRuntimeTest, CleanStaleRuntime_NoRecord_NothingToDo) {
  std::string removed = "x";
  EXPECT_EQ(clean_stale_runtime(record_, &removed), "");
  EXPECT_EQ(removed, "");
  EXPECT_TRUE(fs::exists(dir_));
}

TEST_F(StaleRuntimeTest, CleanStaleRuntime_DeadWriter_DirAndRecordRemoved) {
  ASSERT_EQ(write_runtime_record(record_, dead_pid(), dir_), "");
  std::string removed;
  EXPECT_EQ(clean_stale_runtime(record_, &removed), "");
  EXPECT_EQ(removed, dir_);
  EXPECT_FALSE(fs::exists(dir_));
  EXPECT_FALSE(fs::exists(record_));
}

TEST_F(StaleRuntimeTest, CleanStaleRuntime_DirAlreadyGone_RecordRemoved) {
  ASSERT_EQ(write_runtime_record(record_, dead_pid(), dir_ + "x"), "");
  std::string removed;
  EXPECT_EQ(clean_stale_runtime(record_, &removed), "");
  EXPECT_EQ(removed, "");
  EXPECT_FALSE(fs::exists(record_));
}

TEST_F(StaleRuntimeTest, CleanStaleRuntime_WriterAlive_Kept) {
  ASSERT_EQ(write_runtime_record(record_, getpid(), dir_), "");
  std::string removed;
  EXPECT_EQ(clean_stale_runtime(record_, &removed), "the process that wrote " + record_ + " (pid " +
                                                        std::to_string(getpid()) + ") still runs");
  EXPECT_TRUE(fs::exists(dir_));
  EXPECT_TRUE(fs::exists(record_));
}

TEST_F(StaleRuntimeTest, CleanStaleRuntime_ConfigLocked_Kept) {
  // Another process holds EAL's lock on the config file: the prefix is in
  // use, whatever the record says.
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t holder = fork();
  if (holder == 0) {
    const int fd = open((dir_ + "/config").c_str(), O_RDWR);
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    (void)fcntl(fd, F_SETLK, &fl);
    (void)write(ready[1], "x", 1);
    pause();
    _exit(0);
  }
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  ASSERT_EQ(write_runtime_record(record_, dead_pid(), dir_), "");
  std::string removed;
  EXPECT_EQ(clean_stale_runtime(record_, &removed),
            dir_ + " is in use (its config file is locked)");
  EXPECT_TRUE(fs::exists(dir_));
  kill(holder, SIGKILL);
  waitpid(holder, nullptr, 0);
  close(ready[0]);
  close(ready[1]);
}

TEST_F(StaleRuntimeTest, CleanStaleRuntime_NotADpdkDir_Refused) {
  for (const std::string& bad :
       {std::string("/etc"), base_ + "/dpdk/../dpdk/x", std::string("x")}) {
    ASSERT_EQ(write_runtime_record(record_, dead_pid(), bad), "");
    std::string removed;
    EXPECT_EQ(clean_stale_runtime(record_, &removed),
              record_ + ": not a record of an EAL runtime directory")
        << bad;
  }
  EXPECT_TRUE(fs::exists("/etc"));
}

TEST_F(StaleRuntimeTest, WriteRuntimeRecord_Unwritable_SaysWhy) {
  EXPECT_EQ(write_runtime_record(base_ + "/no/such/dir/rec", 1, dir_),
            "cannot write " + base_ + "/no/such/dir/rec: No such file or directory");
}

}  // namespace
}  // namespace uroce::daemon
