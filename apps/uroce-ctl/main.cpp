// uroce-ctl: what a running uroced is doing.
//
//   uroce-ctl [--run-dir DIR | --socket PATH | --pid PID]
//             status|counters|pfc|qps|sched|homa|clients|metrics [--json]
//   uroce-ctl keys [--markdown]
//   uroce-ctl capture DEVICE [-w FILE] [-c N] [--snaplen N]
//
// Connects to RUN/uroced.sock (RUN: --run-dir, else $UROCE_RUN_DIR, else
// /run/uroce; --pid: the run directory of that program's embedded engine,
// embedded_target.h), sends one Status request and prints the answer as a
// table (metrics: as Prometheus text), or the daemon's JSON unchanged with
// --json. Exit 0 on success, 1 when the daemon cannot be reached or
// refuses, 2 on a usage error. `keys` needs no
// daemon: it prints uroced's configuration keys from their tables
// (apps/uroced/config_keys.h), as text or, with --markdown, as
// docs/config-keys.md. `capture` streams a device's frames as pcapng
// (capture_client.h).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "apps/uroce-ctl/cli.h"
#include "apps/uroce-ctl/embedded_target.h"
#include "apps/uroce-ctl/status_client.h"
#include "apps/uroced/config_keys.h"

int main(int argc, char** argv) {
  using namespace uroce;
  CLI::App app{ctl_tool::kAppHelp};
  ctl_tool::Options o;
  const char* env_run = std::getenv("UROCE_RUN_DIR");
  o.run_dir = env_run != nullptr ? env_run : "/run/uroce";
  ctl_tool::add_options(app, &o);
  // CLI11 reports usage errors by exception: turned into exit code 2 here.
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (const std::string bad = ctl_tool::check_options(app, o); !bad.empty()) {
    std::fprintf(stderr, "uroce-ctl: %s\n", bad.c_str());
    return 2;
  }
  const ctl_tool::Command* cmd = ctl_tool::find_command(o.command);
  if (cmd->render == nullptr && cmd->run == nullptr) {  // keys
    const std::string out = o.markdown ? daemon::keys_markdown() : daemon::keys_text();
    std::fputs(out.c_str(), stdout);
    return 0;
  }
  if (o.pid != 0) {
    if (std::string err = ctl_tool::embedded_run_dir(o.pid, &o.run_dir); !err.empty()) {
      std::fprintf(stderr, "uroce-ctl: %s\n", err.c_str());
      return 1;
    }
  }
  if (cmd->run != nullptr) return cmd->run(o);
  const std::string socket = ctl_tool::socket_path(o);
  std::string body, err;
  if (ctl_tool::fetch_status(socket, cmd->status_flags, &body, &err) != 0) {
    std::fprintf(stderr, "uroce-ctl: %s\n", err.c_str());
    return 1;
  }
  if (o.json) {
    std::printf("%s\n", body.c_str());
    return 0;
  }
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded()) {
    std::fprintf(stderr, "uroce-ctl: the daemon's status is not valid JSON\n");
    return 1;
  }
  std::fputs(cmd->render(j).c_str(), stdout);
  return 0;
}
