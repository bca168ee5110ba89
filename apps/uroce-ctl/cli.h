// uroce-ctl's command line as data: its commands (what each asks the
// daemon for and how its answer is printed) and its options. main.cpp
// parses with them; the man page generator (apps/man) lists them, so
// uroce-ctl(8) names exactly what the parser accepts.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace CLI {
class App;
}

namespace uroce::ctl_tool {

struct Command {
  std::string_view name;
  std::string_view help;
  std::uint32_t status_flags = 0;  // ctl::kStatus* bits of the Status request
  // The table printed from the daemon's status; null for `keys`, which
  // needs no daemon.
  std::string (*render)(const nlohmann::json&) = nullptr;
};

std::span<const Command> commands();
const Command* find_command(std::string_view name);

// The values of uroce-ctl's options.
struct Options {
  std::string run_dir;  // --run-dir's default: $UROCE_RUN_DIR, else /run/uroce
  std::string socket;
  int pid = 0;  // --pid: a program's embedded engine (embedded_target.h)
  std::string command;
  bool json = false;
  bool markdown = false;
};

// Adds every option and the command argument to `app`, storing into `o`.
void add_options(CLI::App& app, Options* o);

// The application's one-line description (its --help header).
inline constexpr const char* kAppHelp =
    "uroce-ctl: status, counters, QPs and clients of a running uroced";

}  // namespace uroce::ctl_tool
