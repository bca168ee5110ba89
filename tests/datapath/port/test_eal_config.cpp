#include "datapath/port/eal_config.h"

#include <gtest/gtest.h>

namespace uroce::port {
namespace {

TEST(EalArgv_Defaults, NoHugeNoPciNoTelemetry) {
  EalConfig c;
  c.lcores = "1";
  c.file_prefix = "t1";
  c.vdevs = {"net_ring0"};
  const auto a = eal_argv(c, "prog");
  const std::vector<std::string> want = {"prog",
                                         "-l",
                                         "1",
                                         "-m",
                                         "512",
                                         "--file-prefix",
                                         "t1",
                                         "--no-huge",
                                         "--no-pci",
                                         "--no-telemetry",
                                         "--log-level=notice",
                                         "--vdev=net_ring0"};
  EXPECT_EQ(a, want);
}

TEST(EalArgv_MainLcore, FollowsTheLcoreList) {
  EalConfig c;
  c.lcores = "2,1";
  c.main_lcore = 2;
  const auto a = eal_argv(c, "prog");
  const std::vector<std::string> head(a.begin(), a.begin() + 7);
  EXPECT_EQ(head,
            (std::vector<std::string>{"prog", "-l", "2,1", "-m", "512", "--main-lcore", "2"}));
  c.main_lcore = -1;
  const auto b = eal_argv(c, "prog");
  EXPECT_EQ(std::find(b.begin(), b.end(), "--main-lcore"), b.end());
}

TEST(EalArgv_NoPrefix, UsesNoShconf) {
  EalConfig c;
  const auto a = eal_argv(c);
  EXPECT_NE(std::find(a.begin(), a.end(), "--no-shconf"), a.end());
}

TEST(EalArgv_Hugepages, InMemoryOnlyWithHugepages) {
  EalConfig c;
  c.in_memory = true;
  auto a = eal_argv(c);
  EXPECT_EQ(std::find(a.begin(), a.end(), "--in-memory"), a.end());
  c.hugepages = true;
  a = eal_argv(c);
  EXPECT_NE(std::find(a.begin(), a.end(), "--in-memory"), a.end());
  EXPECT_EQ(std::find(a.begin(), a.end(), "--no-huge"), a.end());
}

}  // namespace
}  // namespace uroce::port
