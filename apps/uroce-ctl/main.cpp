// uroce-ctl: what a running uroced is doing.
//
//   uroce-ctl [--run-dir DIR | --socket PATH]
//             status|counters|pfc|qps|sched|homa|clients [--json]
//   uroce-ctl keys [--markdown]
//
// Connects to RUN/uroced.sock (RUN: --run-dir, else $UROCE_RUN_DIR, else
// /run/uroce), sends one Status request and prints the answer as a table,
// or the daemon's JSON unchanged with --json. Exit 0 on success, 1 when the
// daemon cannot be reached or refuses, 2 on a usage error. `keys` needs no
// daemon: it prints uroced's configuration keys from their tables
// (apps/uroced/config_keys.h), as text or, with --markdown, as
// docs/config-keys.md.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "apps/uroce-ctl/status_client.h"
#include "apps/uroce-ctl/tables.h"
#include "apps/uroced/config_keys.h"
#include "datapath/ctl/protocol.h"

int main(int argc, char** argv) {
  using namespace uroce;
  CLI::App app{"uroce-ctl: status, counters, QPs and clients of a running uroced"};
  const char* env_run = std::getenv("UROCE_RUN_DIR");
  std::string run_dir = env_run != nullptr ? env_run : "/run/uroce";
  std::string socket;
  std::string command;
  bool json_out = false;
  auto* o_run = app.add_option("--run-dir", run_dir,
                               "the daemon's run directory (default $UROCE_RUN_DIR or /run/uroce)");
  auto* o_sock = app.add_option("--socket", socket, "the daemon's control socket");
  o_run->excludes(o_sock);
  bool markdown = false;
  app.add_option("command", command,
                 "status | counters | pfc | qps | sched | homa | clients | keys")
      ->required()
      ->check(
          CLI::IsMember({"status", "counters", "pfc", "qps", "sched", "homa", "clients", "keys"}));
  app.add_flag("--json", json_out, "print the daemon's JSON instead of tables");
  app.add_flag("--markdown", markdown, "keys: print docs/config-keys.md");
  // CLI11 reports usage errors by exception: turned into exit code 2 here.
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (command == "keys") {
    const std::string out = markdown ? daemon::keys_markdown() : daemon::keys_text();
    std::fputs(out.c_str(), stdout);
    return 0;
  }
  if (socket.empty()) socket = run_dir + "/uroced.sock";
  std::uint32_t flags = 0;
  if (command == "qps" || command == "sched" || command == "homa") flags = ctl::kStatusQps;
  if (command == "clients") flags = ctl::kStatusClients;
  std::string body, err;
  if (ctl_tool::fetch_status(socket, flags, &body, &err) != 0) {
    std::fprintf(stderr, "uroce-ctl: %s\n", err.c_str());
    return 1;
  }
  if (json_out) {
    std::printf("%s\n", body.c_str());
    return 0;
  }
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded()) {
    std::fprintf(stderr, "uroce-ctl: the daemon's status is not valid JSON\n");
    return 1;
  }
  std::string out;
  if (command == "status") out = ctl_tool::render_status(j);
  if (command == "counters") out = ctl_tool::render_counters(j);
  if (command == "pfc") out = ctl_tool::render_pfc(j);
  if (command == "qps") out = ctl_tool::render_qps(j);
  if (command == "sched") out = ctl_tool::render_sched(j);
  if (command == "homa") out = ctl_tool::render_homa(j);
  if (command == "clients") out = ctl_tool::render_clients(j);
  std::fputs(out.c_str(), stdout);
  return 0;
}
