#include "apps/uroce-ctl/cli.h"

#include <gtest/gtest.h>
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace uroce::ctl_tool {
namespace {

// Parses `args` as uroce-ctl would and returns check_options' verdict, or
// "parse: " and CLI11's message when the parser itself refuses.
std::string check(std::vector<std::string> args, Options* o = nullptr) {
  CLI::App app{kAppHelp};
  Options local;
  Options& opt = o != nullptr ? *o : local;
  add_options(app, &opt);
  std::vector<const char*> argv{"uroce-ctl"};
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    return std::string("parse: ") + e.what();
  }
  return check_options(app, opt);
}

TEST(CheckOptions_Capture, DeviceAndOptionsAccepted) {
  Options o;
  EXPECT_EQ(check({"capture", "uroce0", "-w", "f.pcapng", "-c", "100", "--snaplen", "128"}, &o),
            "");
  EXPECT_EQ(o.device, "uroce0");
  EXPECT_EQ(o.write, "f.pcapng");
  EXPECT_EQ(o.count, 100u);
  EXPECT_EQ(o.snaplen, 128u);
  EXPECT_EQ(find_command("capture")->run != nullptr, true);
}

TEST(CheckOptions_Capture, NeedsADevice) {
  EXPECT_EQ(check({"capture", "-w", "f"}),
            "capture needs a DEVICE (uroce-ctl capture uroce0 -w FILE)");
}

TEST(CheckOptions_Capture, JsonRefused) {
  EXPECT_EQ(check({"capture", "uroce0", "--json"}),
            "--json does not go with capture (its output is pcapng)");
}

TEST(CheckOptions_Capture, SnaplenBelowTheMinimumRefusedByTheParser) {
  EXPECT_EQ(check({"capture", "uroce0", "--snaplen", "63"}),
            "parse: --snaplen: Value 63 not in range 64 to 4294967295");
}

TEST(CheckOptions_Capture, ZeroCountRefusedByTheParser) {
  EXPECT_EQ(check({"capture", "uroce0", "-c", "0"}),
            "parse: --count: Value 0 not in range 1 to 18446744073709551615");
}

TEST(CheckOptions_Other, CaptureOptionsRefused) {
  EXPECT_EQ(check({"status", "-w", "f"}), "-w goes with capture only");
  EXPECT_EQ(check({"counters", "-c", "3"}), "-c goes with capture only");
  EXPECT_EQ(check({"qps", "--snaplen", "100"}), "--snaplen goes with capture only");
  EXPECT_EQ(check({"status", "uroce0"}), "status takes no DEVICE: only capture does");
  EXPECT_EQ(check({"status", "--json"}), "");
}

TEST(SocketPath_Options, SocketElseRunDir) {
  Options o;
  o.run_dir = "/run/u";
  EXPECT_EQ(socket_path(o), "/run/u/uroced.sock");
  o.socket = "/tmp/s";
  EXPECT_EQ(socket_path(o), "/tmp/s");
}

}  // namespace
}  // namespace uroce::ctl_tool
