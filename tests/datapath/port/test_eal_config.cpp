#include "datapath/port/eal_config.h"

#include <gtest/gtest.h>
#include <toml++/toml.h>

namespace uroce::port {
namespace {

TEST(EalArgv_Defaults, NoHugeNoPciNoTelemetry) {
  EalConfig c;
  c.lcores = "1";
  c.file_prefix = "t1";
  c.vdevs = {"net_ring0"};
  const auto a = eal_argv(c, "prog");
  const std::vector<std::string> want = {
      "prog",        "-l",        "1",           "-m",
      "512",         "--file-prefix", "t1",      "--no-huge",
      "--no-pci",    "--no-telemetry", "--log-level=notice",
      "--vdev=net_ring0"};
  EXPECT_EQ(a, want);
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

TEST(EalConfigFromToml_Valid, FillsFields) {
  const auto t = toml::parse(R"(
    lcores = "1-2"
    memory_mb = 1024
    file_prefix = "x"
    vdevs = ["net_memif0,role=server", "net_ring1"]
    pci = true
    allow = ["0000:03:00.0"]
  )");
  EalConfig c;
  ASSERT_EQ(eal_config_from_toml(t, c), "");
  EXPECT_EQ(c.lcores, "1-2");
  EXPECT_EQ(c.memory_mb, 1024u);
  EXPECT_EQ(c.vdevs.size(), 2u);
  EXPECT_TRUE(c.pci);
  EXPECT_EQ(c.allow.at(0), "0000:03:00.0");
}

TEST(EalConfigFromToml_Invalid, NamesTheKey) {
  EalConfig c;
  EXPECT_EQ(eal_config_from_toml(toml::parse("lcorse = \"1\""), c),
            "eal: unknown key 'lcorse'");
  EXPECT_EQ(eal_config_from_toml(toml::parse("memory_mb = 4"), c),
            "eal.memory_mb: expected an integer from 16 to 1048576");
  EXPECT_EQ(eal_config_from_toml(toml::parse("pci = 1"), c),
            "eal.pci: expected true or false");
  EXPECT_EQ(eal_config_from_toml(toml::parse("vdevs = [1]"), c),
            "eal.vdevs: expected an array of strings");
  EXPECT_EQ(eal_config_from_toml(toml::parse("lcores = 3"), c),
            "eal.lcores: expected a string");
  EXPECT_EQ(eal_config_from_toml(toml::parse("lcores = \"\""), c),
            "eal.lcores: must not be empty");
}

}  // namespace
}  // namespace uroce::port
