// Test support for the uroced configuration tests (test_config.cpp,
// test_config_toml.cpp): a valid two-device file and helpers to break it.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "apps/uroced/config.h"

namespace uroce::daemon {

inline constexpr const char* kTwoDevices = R"(
[daemon]
run_dir = "/tmp/uroce-test"
poll = "busy"
backoff_max_us = 50
log_level = "debug"

[eal]
lcore = 0
args = ["--no-huge", "--no-pci", "-m", "256"]
file_prefix = "t1"

[[device]]
name = "uroce0"
port = "ring:p0"
mac = "02:00:00:00:00:01"
ipv4 = "10.0.0.1"
mtu = 9000

[[device]]
name = "uroce1"
port = "ring:p0"
mac = "02:00:00:00:00:02"
ipv4 = "10.0.0.2"
)";

// Loads `text` over the defaults and validates; "" or the first error.
inline std::string load_and_validate(const std::string& text, DaemonConfig* cfg) {
  std::string err = load_toml(text, "t.toml", cfg);
  return err.empty() ? validate(*cfg) : err;
}

// kTwoDevices with the first occurrence of `from` replaced by `to`.
inline std::string with(const std::string& from, const std::string& to) {
  std::string s = kTwoDevices;
  const auto pos = s.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  s.replace(pos, from.size(), to);
  return s;
}

inline std::string error_of(const std::string& text) {
  DaemonConfig cfg;
  return load_and_validate(text, &cfg);
}

}  // namespace uroce::daemon
