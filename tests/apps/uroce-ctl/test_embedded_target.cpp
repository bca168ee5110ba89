#include "apps/uroce-ctl/embedded_target.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

namespace uroce::ctl_tool {
namespace {

using namespace std::string_literals;

TEST(RunDirFromEnviron, TheDirectoryAboveTheSysfsTree) {
  std::string dir;
  EXPECT_EQ(run_dir_from_environ("HOME=/root\0SYSFS_PATH=/tmp/uroce-embedded.ab12/sysfs\0X=1\0"s,
                                 42, &dir),
            "");
  EXPECT_EQ(dir, "/tmp/uroce-embedded.ab12");
}

TEST(RunDirFromEnviron, NoSysfsPath) {
  std::string dir;
  EXPECT_EQ(run_dir_from_environ("HOME=/root\0PATH=/bin\0"s, 42, &dir),
            "process 42 runs no embedded uroce engine (no SYSFS_PATH from uroce-run "
            "--embedded in its environment)");
}

TEST(RunDirFromEnviron, AnotherSysfsTree) {
  std::string dir;
  EXPECT_EQ(run_dir_from_environ("SYSFS_PATH=/sys\0"s, 7, &dir),
            "process 7: SYSFS_PATH=/sys is not the sysfs tree of uroce-run --embedded "
            "(RUN/sysfs)");
}

TEST(EmbeddedRunDir, NoSuchProcess) {
  std::string dir;
  // pid_max is at most 2^22: this one cannot exist.
  EXPECT_EQ(embedded_run_dir(1 << 23, &dir), "/proc/8388608/environ: No such file or directory");
}

TEST(EmbeddedRunDir, ThisProcess) {
  // Whatever this test's environment says, it is read and judged.
  std::string dir;
  const std::string err = embedded_run_dir(getpid(), &dir);
  EXPECT_TRUE(err.empty() ? !dir.empty() : err.find("process ") == 0) << err;
}

}  // namespace
}  // namespace uroce::ctl_tool
