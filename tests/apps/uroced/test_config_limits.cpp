// The [limits] key table, through both of its readers: the TOML file and
// --limit KEY=VALUE.
#include <gtest/gtest.h>

#include "apps/uroced/config.h"
#include "apps/uroced/config_values.h"

namespace uroce::daemon {
namespace {

using config_detail::parse_limit_arg;

TEST(LoadToml_Limits, ReadsTheTable) {
  DaemonConfig cfg;
  ASSERT_EQ(load_toml("[limits]\nconnections = 12\nuser_qps = 5\nclient_map_bytes = "
                      "140737488355328\n",
                      "t.toml", &cfg),
            "");
  EXPECT_EQ(cfg.limits.connections, 12u);
  EXPECT_EQ(cfg.limits.user_qps, 5u);
  EXPECT_EQ(cfg.limits.client_map_bytes, std::uint64_t{1} << 47);
  EXPECT_EQ(load_toml("[limits]\nuser_reg_bytes = 140737488355329\n", "t.toml", &cfg),
            "limits.user_reg_bytes: 140737488355329 is outside 0..140737488355328 (0 = 16 TiB)");
}

TEST(LoadToml_Limits, DefaultsWithoutTheTable) {
  DaemonConfig cfg;
  ASSERT_EQ(load_toml("", "t.toml", &cfg), "");
  EXPECT_EQ(cfg.limits.connections, 256u);
}

TEST(LoadToml_Limits, OutOfRangeAndUnknownNameTheKey) {
  DaemonConfig cfg;
  EXPECT_EQ(load_toml("[limits]\nconnections = 0\n", "t.toml", &cfg),
            "limits.connections: 0 is outside 1..65536");
  EXPECT_EQ(load_toml("[limits]\nthreads = 3\n", "t.toml", &cfg),
            "limits.threads: unknown key (expected connections, user_connections, user_qps, "
            "user_cqs, user_mrs, user_reg_bytes, user_map_bytes, client_qps, client_cqs, "
            "client_mrs, client_reg_bytes or client_map_bytes)");
}

TEST(ParseLimitArg_Valid, SetsTheKey) {
  Limits l;
  EXPECT_EQ(parse_limit_arg("connections=7", &l), "");
  EXPECT_EQ(l.connections, 7u);
}

TEST(ParseLimitArg_Errors, NameTheOption) {
  Limits l;
  EXPECT_EQ(parse_limit_arg("connections", &l), "--limit: \"connections\" is not KEY=VALUE");
  EXPECT_EQ(parse_limit_arg("connections=x", &l), "--limit connections: \"x\" is not an integer");
  EXPECT_EQ(parse_limit_arg("connections=70000", &l),
            "--limit connections: 70000 is outside 1..65536");
  EXPECT_EQ(parse_limit_arg("bogus=1", &l),
            "--limit bogus: unknown limit (expected one of connections, user_connections, "
            "user_qps, user_cqs, user_mrs, user_reg_bytes, user_map_bytes, client_qps, "
            "client_cqs, client_mrs, client_reg_bytes or client_map_bytes)");
  EXPECT_EQ(l.connections, 256u);
}

TEST(ParseLimitArg_Negative, Rejected) {
  Limits l;
  EXPECT_EQ(parse_limit_arg("connections=-1", &l), "--limit connections: -1 is outside 1..65536");
  EXPECT_EQ(l.connections, 256u);
}

TEST(ApplyCommandLine_Limit, OverridesTheFile) {
  DaemonConfig cfg;
  ASSERT_EQ(load_toml("[limits]\nconnections = 12\n", "t.toml", &cfg), "");
  CommandLine cl;
  cl.limits = {"connections=3"};
  ASSERT_EQ(apply_command_line(cl, &cfg), "");
  EXPECT_EQ(cfg.limits.connections, 3u);
}

TEST(ParseCommandLine_Limit, Collected) {
  const char* argv[] = {"uroced", "--limit", "connections=3", "--limit", "connections=4"};
  CommandLine cl;
  ASSERT_EQ(parse_command_line(5, const_cast<char**>(argv), &cl), -1);
  EXPECT_EQ(cl.limits, (std::vector<std::string>{"connections=3", "connections=4"}));
}

}  // namespace
}  // namespace uroce::daemon
